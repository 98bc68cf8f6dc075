//! The audit at a glance (feature `plot`): how large the clusters are (a log-log distribution:
//! real corpora have a long tail of pages copied thousands of times), how far apart the pairs
//! are (a histogram by distance), and the headline counts a dedup decision needs.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::near_duplicates::NearDuplicates;
use crate::error::Result;
use crate::io::picture::{self, Drawn, Picture, COLOURS, FONT};

const SIZE: (u32, u32) = (1400, 640);

impl NearDuplicates {
    /// Draws the audit's report into `path`, SVG or PNG by its extension (feature `plot`):
    /// the cluster-size distribution (log-log), the histogram of pair distances, and the
    /// headline counts (documents, duplicates, share dropped, largest cluster). The file is
    /// written whole or not at all.
    pub fn write_report(&self, path: &Path) -> Result<()> {
        picture::write(self, path, SIZE)
    }

    /// Checks that `path` names a report [`NearDuplicates::write_report`] can draw (`.svg` or
    /// `.png`), before the audit.
    pub fn check_report_path(path: &Path) -> Result<()> {
        picture::check_path(path)
    }

    /// How many clusters have each size (two or more members), by size.
    fn cluster_sizes(&self) -> BTreeMap<u64, u64> {
        let mut sizes = BTreeMap::new();
        self.for_each_cluster(|c| {
            if c.members.len() > 1 {
                *sizes.entry(c.members.len() as u64).or_insert(0) += 1;
            }
            Ok::<_, std::convert::Infallible>(())
        })
        .unwrap_or_else(|never| match never {});
        sizes
    }
}

impl Picture for NearDuplicates {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Drawn<DB> {
        root.fill(&WHITE)?;
        let s = self.summary();
        let dropped = if s.documents == 0 {
            0.0
        } else {
            100.0 * s.duplicates as f64 / s.documents as f64
        };
        let title = format!(
            "{} documents: {} duplicates ({dropped:.2}% dropped), {} kept, largest cluster {}; \
             {} pairs{}",
            thousands(s.documents),
            thousands(s.duplicates),
            thousands(s.kept),
            thousands(s.largest_cluster),
            thousands(s.pairs),
            if self.is_verified() {
                " (verified)"
            } else {
                ""
            }
        );
        let root = root.titled(&title, (FONT, 20))?;
        if s.pairs == 0 {
            // Empty axes say nothing: say it in words.
            let (width, height) = root.dim_in_pixel();
            let centre = (width as i32 / 2, height as i32 / 2);
            let style =
                TextStyle::from((FONT, 32).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
            root.draw(&Text::new("no near duplicates", centre, style))?;
            return Ok(());
        }
        let (left, right) = root.split_horizontally(SIZE.0 / 2);
        draw_cluster_sizes(&left, &self.cluster_sizes())?;
        draw_distances(&right, self.pairs_by_distance())?;
        Ok(())
    }
}

/// The bars of the cluster-size chart: each size 2 to 10 alone, then decades.
fn size_bins(sizes: &BTreeMap<u64, u64>) -> Vec<(String, u64)> {
    let mut bins: Vec<(String, u64)> = (2..=10).map(|n| (n.to_string(), 0)).collect();
    let mut low = 11;
    let largest = sizes.keys().last().copied().unwrap_or(0);
    while low <= largest {
        let high = (low - 1) * 10;
        bins.push((format!("≤{}", short(high)), 0));
        low = high + 1;
    }
    for (&size, &count) in sizes {
        let bin = match size {
            2..=10 => size as usize - 2,
            // 11-100, 101-1000, ...: by the digits of size - 1.
            _ => 9 + (size - 1).to_string().len() - 2,
        };
        if let Some(b) = bins.get_mut(bin) {
            b.1 += count;
        }
    }
    bins
}

/// Clusters by size: a bar for each size 2 to 10 and each decade above, the count on each
/// bar, the count axis logarithmic (clusters of two outnumber the rest).
fn draw_cluster_sizes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    sizes: &BTreeMap<u64, u64>,
) -> Drawn<DB> {
    let bins = size_bins(sizes);
    let counts: Vec<u64> = bins.iter().map(|(_, n)| *n).collect();
    let x_desc = "documents in the cluster (≤1k: 101 to 1,000)";
    draw_bars(
        area,
        "clusters by size",
        x_desc,
        "clusters",
        &counts,
        &|i| {
            bins.get(i)
                .map(|(name, _)| name.clone())
                .unwrap_or_default()
        },
        COLOURS[0],
    )
}

/// Pairs by distance, the count axis logarithmic (a hot page's pairs at distance 0 would
/// flatten every other bar), the count on each bar.
fn draw_distances<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, pairs: &[u64]) -> Drawn<DB> {
    let last = pairs.iter().rposition(|&n| n > 0).unwrap_or(0);
    draw_bars(
        area,
        "pairs by distance (bits)",
        "distance",
        "pairs",
        &pairs[..=last],
        &|i| i.to_string(),
        COLOURS[1],
    )
}

/// A bar chart of `counts`, bar `i` named `name(i)`, its count written above it; the count
/// axis logarithmic, labelled at every power of ten.
fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    x_desc: &str,
    y_desc: &str,
    counts: &[u64],
    name: &dyn Fn(usize) -> String,
    colour: RGBColor,
) -> Drawn<DB> {
    let most = counts.iter().max().copied().unwrap_or(1).max(1) as f64;
    let top = 10f64.powf((most * 3.0).log10().ceil());
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 17))
        .margin(18)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            -0.5f64..counts.len() as f64 - 0.5,
            (0.8f64..top).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(counts.len())
        .x_label_formatter(&|x| {
            let i = x.round();
            match (i - x).abs() < 1e-6 && i >= 0.0 {
                true => name(i as usize),
                false => String::new(),
            }
        })
        .y_labels(12)
        .y_label_formatter(&|y| {
            // Powers of ten only: 1, 10, 100, 1,000, ...
            let power = y.log10();
            match (power - power.round()).abs() < 1e-6 {
                true => thousands(y.round() as u64),
                false => String::new(),
            }
        })
        .disable_x_mesh()
        .label_style((FONT, 14))
        .draw()?;
    chart.draw_series(
        counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| {
                let i = i as f64;
                Rectangle::new([(i - 0.35, 0.8), (i + 0.35, n as f64)], colour.filled())
            }),
    )?;
    let label = TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
    chart.draw_series(
        counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| Text::new(thousands(n), (i as f64, n as f64 * 1.08), label.clone())),
    )?;
    Ok(())
}

/// A power of ten as a bar's label says it: 100, 1k, 10k, 1M, ...
fn short(n: u64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

/// `n` with thousands separated by commas.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_fall_in_their_bars() {
        let sizes = BTreeMap::from([(2, 5), (10, 1), (11, 2), (100, 1), (101, 3), (1500, 1)]);
        let bins = size_bins(&sizes);
        let names: Vec<&str> = bins.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["2", "3", "4", "5", "6", "7", "8", "9", "10", "≤100", "≤1k", "≤10k"]
        );
        let counts: Vec<u64> = bins.iter().map(|(_, c)| *c).collect();
        assert_eq!(counts, [5, 0, 0, 0, 0, 0, 0, 0, 1, 3, 3, 1]);
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }
}
