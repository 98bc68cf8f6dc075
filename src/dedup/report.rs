//! The audit at a glance (feature `plot`): how large the clusters are (a log-log distribution:
//! real corpora have a long tail of pages copied thousands of times), how far apart the pairs
//! are (a histogram by distance), and the headline counts a dedup decision needs.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

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
            "{} documents: {} duplicates ({dropped:.2}% dropped), {} kept, one per cluster, \
             largest {}; {} pairs{}",
            s.documents,
            s.duplicates,
            s.kept,
            s.largest_cluster,
            s.pairs,
            if self.is_verified() {
                " (verified)"
            } else {
                ""
            }
        );
        let root = root.titled(&title, (FONT, 20))?;
        let (left, right) = root.split_horizontally(SIZE.0 / 2);
        draw_cluster_sizes(&left, &self.cluster_sizes())?;
        draw_distances(&right, self.pairs_by_distance())?;
        Ok(())
    }
}

/// Clusters by size, both axes logarithmic.
fn draw_cluster_sizes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    sizes: &BTreeMap<u64, u64>,
) -> Drawn<DB> {
    let largest = sizes.keys().last().copied().unwrap_or(2).max(2) as f64;
    let most = sizes.values().max().copied().unwrap_or(1).max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption("clusters by size", (FONT, 17))
        .margin(18)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (1.5f64..largest * 1.5).log_scale(),
            (0.8f64..most * 1.5).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("documents in the cluster")
        .y_desc("clusters")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style((FONT, 14))
        .draw()?;
    chart.draw_series(
        sizes.iter().map(|(&size, &count)| {
            Circle::new((size as f64, count as f64), 4, COLOURS[0].filled())
        }),
    )?;
    Ok(())
}

/// Pairs by distance, the count axis logarithmic (a hot page's pairs at distance 0 would
/// flatten every other bar).
fn draw_distances<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, pairs: &[u64]) -> Drawn<DB> {
    let last = pairs.iter().rposition(|&n| n > 0).unwrap_or(0) as u32;
    let most = pairs.iter().max().copied().unwrap_or(1).max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption("pairs by distance (bits)", (FONT, 17))
        .margin(18)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(
            -0.5f64..f64::from(last) + 0.5,
            (0.8f64..most * 1.5).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("distance")
        .y_desc("pairs")
        .x_labels(last as usize + 1)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .disable_x_mesh()
        .label_style((FONT, 14))
        .draw()?;
    chart.draw_series(
        pairs
            .iter()
            .enumerate()
            .take(last as usize + 1)
            .filter(|(_, &n)| n > 0)
            .map(|(d, &n)| {
                let d = d as f64;
                Rectangle::new([(d - 0.35, 0.8), (d + 0.35, n as f64)], COLOURS[1].filled())
            }),
    )?;
    Ok(())
}
