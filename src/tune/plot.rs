//! `tune`'s picture: precision against recall for every scheme, F1 against the distance, and
//! (when sketches were measured) F1 against the bytes each document costs on disk, as SVG or
//! PNG (feature `plot`).
//!
//! The best few schemes are drawn in colour with a legend, the rest in grey, so the picture
//! stays readable with thirty schemes; the recommended settings are ringed.

use std::ops::Range;
use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Choice, SchemeScores, Score, TruthSource, Tuning};
use crate::error::Result;
use crate::format::settings::Settings;
use crate::io::picture::{self, Drawn, Picture, COLOURS, FONT};

/// Schemes drawn in colour: the best by F1 from fingerprints alone (plus any recommended one).
const HIGHLIGHTED: usize = 6;

/// The size of each panel.
const PANEL: (u32, u32) = (700, 640);

impl Tuning {
    /// Draws the scores into `path`, as SVG or PNG by its extension (feature `plot`). The
    /// file is written whole or not at all (a temporary file renamed into place).
    pub fn write_plot(&self, path: &Path) -> Result<()> {
        let panels = if self.sketched.is_some() { 3 } else { 2 };
        picture::write(self, path, (PANEL.0 * panels, PANEL.1))
    }

    /// Checks that `path` names a plot [`Tuning::write_plot`] can draw (`.svg` or `.png`),
    /// before the work whose result it will plot.
    pub fn check_plot_path(path: &Path) -> Result<()> {
        picture::check_path(path)
    }
}

impl Picture for Tuning {
    fn draw<DB: DrawingBackend>(&self, area: DrawingArea<DB, Shift>) -> Drawn<DB> {
        draw(area, self)
    }
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, tuning: &Tuning) -> Drawn<DB> {
    root.fill(&WHITE)?;
    let truth = match &tuning.truth {
        TruthSource::Exact => "exact Jaccard of the texts".to_string(),
        TruthSource::Gold { path, .. } => format!("gold pairs {}", path.display()),
    };
    let title = format!(
        "simhashdb tune: {} documents{}, {} pairs at J >= {} ({truth})",
        tuning.documents,
        if tuning.sampled {
            format!(" sampled of {}", tuning.corpus_documents)
        } else {
            String::new()
        },
        tuning.true_pairs,
        tuning.min_jaccard
    );
    let root = root.titled(&title, (FONT, 22))?;
    let (left, rest) = root.split_horizontally(PANEL.0);
    let (right, third) = rest.split_horizontally(PANEL.0);
    if let Some(sketched) = &tuning.sketched {
        draw_frontier(&third, tuning, sketched)?;
    }
    let highlighted = highlighted(tuning);
    let colour = |i: usize| {
        highlighted
            .iter()
            .position(|&h| h == i)
            .map(|p| COLOURS[p % 10])
    };
    let recommended = [&tuning.fingerprints_only, &tuning.verified];

    // Left: precision against recall, one line per scheme through k = 0, 1, ...
    let mut chart = new_chart(
        &left,
        "Precision and recall, fingerprints alone (k = 0, 1, ...)",
        0.0..1.0,
    )?;
    chart
        .configure_mesh()
        .x_desc("recall")
        .y_desc("precision")
        .light_line_style(WHITE)
        .draw()?;
    let pr = |scores: &[Score]| points(scores, |s| (s.recall, s.precision));
    draw_others_grey(&mut chart, tuning, &highlighted, pr)?;
    for &i in &highlighted {
        let scheme = &tuning.schemes[i];
        let c = colour(i).expect("highlighted");
        chart
            .draw_series(LineSeries::new(pr(&scheme.fingerprints), c.stroke_width(2)))?
            .label(scheme.scheme.name())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        chart.draw_series(
            pr(&scheme.fingerprints)
                .into_iter()
                .map(|p| Circle::new(p, 3, c.filled())),
        )?;
    }
    let best = &tuning.fingerprints_only.score;
    chart.draw_series(std::iter::once(Circle::new(
        (best.recall, best.precision),
        9,
        BLACK.stroke_width(2),
    )))?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 15))
        .draw()?;

    // Right: F1 against k, fingerprints alone (solid) and verified (dashed).
    let max_k = tuning.schemes[0].fingerprints.len().saturating_sub(1) as f64;
    let mut chart = new_chart(
        &right,
        "F1 against k: fingerprints alone (solid), verified by Jaccard (dashed)",
        0.0..max_k,
    )?;
    chart
        .configure_mesh()
        .x_desc("k (bits)")
        .y_desc("F1")
        .x_labels(max_k as usize + 1)
        .x_label_formatter(&|k| format!("{k:.0}"))
        .light_line_style(WHITE)
        .draw()?;
    let f1 = |scores: &[Score]| points(scores, |s| (f64::from(s.distance), s.f1));
    draw_others_grey(&mut chart, tuning, &highlighted, f1)?;
    for &i in &highlighted {
        let scheme: &SchemeScores = &tuning.schemes[i];
        let c = colour(i).expect("highlighted");
        chart.draw_series(LineSeries::new(f1(&scheme.fingerprints), c.stroke_width(2)))?;
        chart.draw_series(DashedLineSeries::new(
            f1(&scheme.verified),
            6,
            4,
            c.stroke_width(2),
        ))?;
    }
    // The recommendations: ringed, and named in a box where the curves are low.
    chart.draw_series(std::iter::once(Rectangle::new(
        [(0.1, 0.02), (max_k * 0.55, 0.17)],
        WHITE.mix(0.9).filled(),
    )))?;
    for (row, choice) in recommended.iter().enumerate() {
        let point = (f64::from(choice.distance()), choice.score.f1);
        chart.draw_series(std::iter::once(Circle::new(
            point,
            9,
            BLACK.stroke_width(2),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            label(choice),
            (0.3, 0.13 - 0.06 * row as f64),
            (FONT, 15),
        )))?;
    }
    root.present()
}

/// F1 against the disk bytes per document of every setting (the tables of distance k at the
/// planned size, plus the sketch), and the frontier of each use: the settings no cheaper one
/// beats, from fingerprints alone and with sketches. The recommended sketch setting is ringed.
fn draw_frontier<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    tuning: &Tuning,
    sketched: &Choice,
) -> Drawn<DB> {
    let size = sketched.expected_size;
    let tables = |k: u8| {
        Settings::for_size(k.max(1), size)
            .map(|s| s.disk_bytes_per_document())
            .unwrap_or(f64::NAN)
    };
    let fingerprints: Vec<(f64, f64)> = tuning
        .schemes
        .iter()
        .flat_map(|s| s.fingerprints.iter())
        .map(|score| (tables(score.distance), score.f1))
        .filter(|p| p.0.is_finite())
        .collect();
    let sketches: Vec<(f64, f64)> = tuning
        .schemes
        .iter()
        .flat_map(|s| s.sketched.iter().flatten())
        .filter_map(|score| {
            let (bytes, _) = score.sketch?;
            Some((
                tables(score.distance) + Settings::sketch_disk_bytes(bytes),
                score.f1,
            ))
        })
        .filter(|p| p.0.is_finite())
        .collect();
    let most = sketches
        .iter()
        .chain(&fingerprints)
        .map(|p| p.0)
        .fold(0.0, f64::max);
    // From the lowest point of either frontier, in tenths, to 1.
    let low = frontier(&fingerprints)
        .iter()
        .chain(&frontier(&sketches))
        .map(|p| p.1)
        .fold(1.0, f64::min);
    let low = ((low - 0.05) * 10.0).floor().clamp(0.0, 9.0) / 10.0;
    let mut chart = ChartBuilder::on(area)
        .caption(
            "F1 against disk bytes per document (tables + sketch)",
            (FONT, 17),
        )
        .margin(18)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..most * 1.05, low..1.0)?;
    chart
        .configure_mesh()
        .x_desc(format!("bytes per document at {size} documents"))
        .y_desc("F1")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .light_line_style(WHITE)
        .draw()?;
    let grey = RGBColor(200, 200, 200);
    for (points, colour, name) in [
        (&fingerprints, COLOURS[0], "fingerprints alone"),
        (&sketches, COLOURS[1], "verified by a sketch"),
    ] {
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 2, grey.filled())))?;
        let frontier = frontier(points);
        chart
            .draw_series(LineSeries::new(frontier.clone(), colour.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
            });
        chart.draw_series(
            frontier
                .into_iter()
                .map(|p| Circle::new(p, 4, colour.filled())),
        )?;
    }
    let at = (sketched.disk_bytes_per_document(), sketched.score.f1);
    chart.draw_series(std::iter::once(Circle::new(at, 9, BLACK.stroke_width(2))))?;
    chart.draw_series(std::iter::once(Text::new(
        label(sketched),
        (most * 0.05, low + (1.0 - low) * 0.06),
        (FONT, 15),
    )))?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::MiddleRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 15))
        .draw()?;
    Ok(())
}

/// The points no cheaper (smaller x) point beats in y, by x ascending.
fn frontier(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for p in sorted {
        if out.last().is_none_or(|last| p.1 > last.1) {
            out.push(p);
        }
    }
    out
}

/// One point per distance.
fn points(scores: &[Score], at: impl Fn(&Score) -> (f64, f64)) -> Vec<(f64, f64)> {
    scores.iter().map(at).collect()
}

/// The schemes not highlighted, as thin grey lines of their fingerprints-alone scores: the
/// background the highlighted ones stand out from.
fn draw_others_grey<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    tuning: &Tuning,
    highlighted: &[usize],
    line: impl Fn(&[Score]) -> Vec<(f64, f64)>,
) -> Drawn<DB> {
    let grey = RGBColor(200, 200, 200);
    for (i, scheme) in tuning.schemes.iter().enumerate() {
        if !highlighted.contains(&i) {
            chart.draw_series(LineSeries::new(
                line(&scheme.fingerprints),
                grey.stroke_width(1),
            ))?;
        }
    }
    Ok(())
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn new_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    x: Range<f64>,
) -> std::result::Result<Chart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    ChartBuilder::on(area)
        .caption(caption, (FONT, 17))
        .margin(18)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(x, 0.0..1.0)
}

/// The recommended setting, in a few words.
fn label(choice: &Choice) -> String {
    let how = match (choice.sketch_bytes, choice.min_jaccard) {
        (Some(bytes), _) => format!("{bytes}-byte sketch"),
        (None, Some(_)) => "verified".to_string(),
        (None, None) => "fingerprints".to_string(),
    };
    format!(
        "recommended, {how}: {} k = {}, F1 {:.3}",
        choice.scheme.name(),
        choice.distance(),
        choice.score.f1
    )
}

/// The indexes of the schemes drawn in colour: the recommended ones, then the best by F1
/// from fingerprints alone, up to [`HIGHLIGHTED`].
fn highlighted(tuning: &Tuning) -> Vec<usize> {
    let best_f1 = |s: &SchemeScores| s.fingerprints.iter().map(|x| x.f1).fold(0.0, f64::max);
    let mut order: Vec<usize> = (0..tuning.schemes.len()).collect();
    order.sort_by(|&a, &b| best_f1(&tuning.schemes[b]).total_cmp(&best_f1(&tuning.schemes[a])));
    let recommended = [tuning.fingerprints_only.scheme, tuning.verified.scheme];
    let mut chosen: Vec<usize> = (0..tuning.schemes.len())
        .filter(|&i| recommended.contains(&tuning.schemes[i].scheme))
        .collect();
    for i in order {
        if chosen.len() >= HIGHLIGHTED {
            break;
        }
        if !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    chosen
}
