//! `tune`'s picture: precision against recall for every scheme, and F1 against the distance,
//! as SVG or PNG (feature `plot`).
//!
//! The best few schemes are drawn in colour with a legend, the rest in grey, so the picture
//! stays readable with thirty schemes; the recommended settings are ringed.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::register_font as register_font_bytes;

use super::{Choice, SchemeScores, Score, TruthSource, Tuning};
use crate::error::{Error, Result};

/// Schemes drawn in colour: the best by F1 from fingerprints alone (plus any recommended one).
const HIGHLIGHTED: usize = 6;

/// Tableau's ten colours: distinct, and readable by most colour-blind readers.
const COLOURS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

const SIZE: (u32, u32) = (1400, 640);
const FONT: &str = "sans-serif";

impl Tuning {
    /// Draws the scores into `path`, as SVG or PNG by its extension (feature `plot`). The
    /// file is written whole or not at all (a temporary file renamed into place).
    pub fn write_plot(&self, path: &Path) -> Result<()> {
        write_plot(self, path)
    }

    /// Checks that `path` names a plot [`Tuning::write_plot`] can draw (`.svg` or `.png`),
    /// before the work whose result it will plot.
    pub fn check_plot_path(path: &Path) -> Result<()> {
        is_svg(path).map(|_| ())
    }
}

fn write_plot(tuning: &Tuning, path: &Path) -> Result<()> {
    let svg = is_svg(path)?;
    register_font()?;
    let failed = |e: &dyn std::fmt::Display| {
        Error::input(format!("{}: cannot draw the plot: {e}", path.display()))
    };
    let temporary = temporary_path(path);
    let written = if svg {
        let mut text = String::new();
        let area = SVGBackend::with_string(&mut text, SIZE).into_drawing_area();
        draw(area, tuning)
            .map_err(|e| failed(&e))
            .and_then(|()| std::fs::write(&temporary, text).map_err(|e| Error::io(path, e)))
    } else {
        let area = BitMapBackend::new(&temporary, SIZE).into_drawing_area();
        draw(area.clone(), tuning)
            .and_then(|()| area.present())
            .map_err(|e| failed(&e))
    };
    let renamed =
        written.and_then(|()| std::fs::rename(&temporary, path).map_err(|e| Error::io(path, e)));
    if renamed.is_err() {
        // Nothing half-written is left behind.
        let _ = std::fs::remove_file(&temporary);
    }
    renamed
}

/// Whether `path` names an SVG (true) or a PNG (false) file; an error for any other name.
/// Callers check it before the work whose result they will plot.
fn is_svg(path: &Path) -> Result<bool> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("svg") => Ok(true),
        Some("png") => Ok(false),
        _ => Err(Error::input(format!(
            "{}: the plot is SVG or PNG: name the file .svg or .png",
            path.display()
        ))),
    }
}

/// A name beside `path` with the same extension (the PNG encoder goes by it).
fn temporary_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(
        ".{}.{}.tmp.{}",
        name.unwrap_or_default(),
        std::process::id(),
        path.extension()
            .map(|e| e.to_string_lossy())
            .unwrap_or_default()
    ))
}

/// Text needs a TrueType font (plotters measures and, for PNG, draws the glyphs): the first
/// of the usual sans-serif fonts found, else any `.ttf` under the system's font directory.
fn register_font() -> Result<()> {
    // What went wrong, if registering failed (a message kept for every later plot).
    static FAILURE: OnceLock<Option<String>> = OnceLock::new();
    let failure = FAILURE.get_or_init(|| register_first_font().err().map(|e| e.to_string()));
    match failure {
        Some(why) => Err(Error::input(why.clone())),
        None => Ok(()),
    }
}

/// Registers the first font found, or says why none could be.
fn register_first_font() -> Result<()> {
    let known = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        "/System/Library/Fonts/Supplemental/Arial.ttf",
        "/Library/Fonts/Arial.ttf",
    ];
    let found = known
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .or_else(|| any_ttf(Path::new("/usr/share/fonts"), 4));
    let path = found.ok_or_else(|| {
        Error::input(
            "no TrueType font found for the plot's text (looked in /usr/share/fonts): install \
             one, e.g. Debian's fonts-dejavu-core",
        )
    })?;
    let bytes =
        std::fs::read(&path).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    // The registry keeps fonts for the life of the process.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    register_font_bytes(FONT, FontStyle::Normal, bytes)
        .map_err(|_| Error::input(format!("{}: not a font plotters can read", path.display())))
}

fn any_ttf(dir: &Path, depth: u32) -> Option<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    entries
        .iter()
        .find(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("ttf")))
        .cloned()
        .or_else(|| {
            (depth > 0)
                .then(|| {
                    entries
                        .iter()
                        .filter(|p| p.is_dir())
                        .find_map(|d| any_ttf(d, depth - 1))
                })
                .flatten()
        })
}

type Drawn<DB> = std::result::Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

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
    let (left, right) = root.split_horizontally(SIZE.0 / 2);
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
    let how = if choice.min_jaccard.is_some() {
        "verified"
    } else {
        "fingerprints"
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
