//! Format 10's step, in a store with sketches: each run's docs blocks written again with
//! their sketches in the run's sketch area (see [`crate::format::block::sketch_area`]), the
//! id filter and the postings copied as they are, the shard files hard-linked.

use std::path::Path;

use super::{append_counted, copy_id_filter, link_shard_files};
use crate::error::{Error, Result};
use crate::format::block::docs::SketchedDoc;
use crate::format::block::entries::Keys;
use crate::format::block::entry_writer::EntryWriter;
use crate::format::catalog::RunMeta;
use crate::format::layout;
use crate::run::run_file::{AreaAppender, RunFile};
use crate::run::{RunReader, DOCS, POSTINGS};
use crate::sys::writeback::Cached;

/// Writes `old`, a format 9 run of a store with sketches (whose docs entries hold them) stored
/// in `old_dir`, as run `id` in `run_dir` in format 10: its docs blocks written again with
/// each sketch in the sketch area instead, the id filter and the postings copied as they are,
/// the shard files hard-linked; returns the new run's description. Memory: a docs block and
/// its sketches.
pub(crate) fn sketches_into_area(
    old: &RunReader,
    old_dir: &Path,
    run_dir: &Path,
    id: u64,
    sketch_bytes: u16,
) -> Result<RunMeta> {
    let meta = old.meta();
    link_shard_files(meta, old_dir, run_dir)?;
    let file = RunFile::create(&layout::docs_file(run_dir), Cached::Keep)?;
    let docs = old.docs()?;
    let mut area = AreaAppender::new(&file, usize::from(sketch_bytes));
    let mut sketches = 0u64;
    let docs_bytes = append_counted(&file, DOCS, |mut counted| {
        let mut writer = EntryWriter::new(Keys::IdHashes)
            .with_sketch_area(usize::from(sketch_bytes))
            .compressed();
        let mut scan = docs.scan_documents_as::<SketchedDoc>(0, u64::MAX)?;
        let mut block = Vec::new();
        while scan.next_block(&mut block)? {
            for (hash, id, doc) in &block {
                sketches += u64::from(doc.sketch.is_some());
                writer.push(*hash, id.as_bytes(), doc, &mut counted)?;
            }
            area.take(&mut writer)?;
        }
        writer.finish(&mut counted)
    })?;
    let sketches_bytes = area.finish()?;
    if sketches != meta.sketches {
        return Err(Error::corrupt(format!(
            "run {} holds {sketches} sketches of its documents; the catalog says {}",
            meta.id, meta.sketches
        ))
        .in_file(&layout::docs_file(old_dir)));
    }
    copy_id_filter(&file, docs)?;
    let postings_bytes = append_counted(&file, POSTINGS, |emit| {
        docs.for_each_postings_block(|key, block| emit(key, block))
    })?;
    file.finish()?;
    layout::sync_dir(run_dir)?;
    Ok(RunMeta {
        id,
        docs_bytes,
        postings_bytes,
        sketches,
        sketches_bytes,
        ..meta.clone()
    })
}
