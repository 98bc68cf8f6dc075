//! The checks of a run's docs file: its docs, postings and sketches tables and its id filter,
//! every block, the catalog's counts and sizes, and the postings, sketches and filter against
//! the documents.

use std::path::Path;

use super::digest::{document_hash, Digest};
use super::report::Report;
use crate::error::Result;
use crate::format::block::docs::{DocState, SketchedDoc};
use crate::format::block::entries::{self, Payload};
use crate::format::block::id_filter;
use crate::format::block::keys::KeyBlock;
use crate::format::block::named_postings::{self, NamedPosting};
use crate::format::block::postings::{self, Posting, SketchedPosting};
use crate::format::block::sketch_area;
use crate::format::layout::docs_file;
use crate::run::{
    EntryScan, NamedScan, RunReader, DOCS_TABLE, IDS, POSTINGS_TABLE, SKETCHES_TABLE,
    SKETCH_AREA_TABLE,
};

/// Walks every block of entry table `table` of `file`: checks each block and the
/// order across blocks, calls `f` on each entry, and compares the block bytes with `bytes`
/// from the catalog. Returns the number of entries.
fn check_entries<P: Payload>(
    mut scan: EntryScan<P>,
    file: &Path,
    table: &str,
    catalog_bytes: u64,
    report: &mut Report,
    mut f: impl FnMut(u64, &str, &P),
) -> Result<u64> {
    let mut block = Vec::new();
    let mut previous: Option<(u64, String)> = None;
    let mut entries = 0;
    loop {
        report.blocks += 1;
        match scan.next_block(&mut block) {
            Ok(false) => {
                report.blocks -= 1;
                break;
            }
            Ok(true) => {}
            Err(e) => {
                report.absorb(Err(e))?;
                continue;
            }
        }
        if let (Some(prev), Some(first)) = (&previous, block.first()) {
            if (first.0, first.1.as_str()) <= (prev.0, prev.1.as_str()) {
                report.find(
                    file,
                    Some(table),
                    format!("entry {:016x} {:?} is out of order", first.0, first.1),
                );
            }
        }
        for (key, id, payload) in &block {
            entries += 1;
            f(*key, id, payload);
        }
        if let Some((key, id, _)) = block.last() {
            previous = Some((*key, id.clone()));
        }
    }
    if scan.bytes != catalog_bytes {
        report.find(
            file,
            Some(table),
            format!(
                "holds {} block bytes; the catalog says {catalog_bytes}",
                scan.bytes
            ),
        );
    }
    Ok(entries)
}

/// Walks every block of a table of named postings (format 8) as [`check_entries`] does.
fn check_named_postings(
    mut scan: NamedScan,
    file: &Path,
    catalog_bytes: u64,
    report: &mut Report,
    mut f: impl FnMut(NamedPosting),
) -> Result<()> {
    let (mut block, mut previous) = (Vec::new(), None::<NamedPosting>);
    loop {
        report.blocks += 1;
        match scan.next_block(&mut block) {
            Ok(false) => {
                report.blocks -= 1;
                break;
            }
            Ok(true) => {}
            Err(e) => {
                report.absorb(Err(e))?;
                continue;
            }
        }
        if let (Some(prev), Some(first)) = (previous, block.first()) {
            if (first.fingerprint, first.prefix) <= (prev.fingerprint, prev.prefix) {
                let problem = format!("posting {:016x} is out of order", first.fingerprint);
                report.find(file, Some(POSTINGS_TABLE), problem);
            }
        }
        block.iter().for_each(|&p| f(p));
        previous = block.last().copied().or(previous);
    }
    if scan.bytes != catalog_bytes {
        let problem = format!(
            "holds {} block bytes; the catalog says {catalog_bytes}",
            scan.bytes
        );
        report.find(file, Some(POSTINGS_TABLE), problem);
    }
    Ok(())
}

/// A named posting as a digest item.
fn named_posting_hash(p: NamedPosting) -> u64 {
    let name = p.prefix << 1 | u32::from(p.shared);
    xxhash_rust::xxh3::xxh3_64_with_seed(&name.to_le_bytes(), p.fingerprint)
}

/// The live documents of one id-hash prefix, as the docs table lists them (in hash order, so
/// a prefix's documents are together): the named postings they make.
#[derive(Default)]
struct NamedGroup {
    prefix: Option<u32>,
    fingerprints: Vec<u64>,
}

impl NamedGroup {
    fn add(&mut self, prefix: u32, fingerprint: u64, digest: &mut Digest) {
        if self.prefix != Some(prefix) {
            self.flush(digest);
            self.prefix = Some(prefix);
        }
        self.fingerprints.push(fingerprint);
    }

    /// Adds the group's postings to `digest`.
    fn flush(&mut self, digest: &mut Digest) {
        let Some(prefix) = self.prefix.take() else {
            return;
        };
        self.fingerprints.sort_unstable();
        for (i, &fingerprint) in self.fingerprints.iter().enumerate() {
            if i > 0 && self.fingerprints[i - 1] == fingerprint {
                continue;
            }
            let shared = self.fingerprints.get(i + 1) == Some(&fingerprint);
            digest.add(named_posting_hash(NamedPosting {
                fingerprint,
                prefix,
                shared,
            }));
        }
        self.fingerprints.clear();
    }
}

/// The id filter of one run (format 6): every block, the order across blocks, the catalog's
/// bytes, and its prefixes against `expected`, those of the run's document entries (None when
/// some of those were damaged).
fn check_id_filter(
    run: &RunReader,
    path: &Path,
    expected: Option<Digest>,
    report: &mut Report,
) -> Result<()> {
    let (mut found, mut bytes, mut previous) = (Digest::default(), 0u64, None);
    let mut damaged = false;
    let walked = run.docs()?.for_each_id_filter_block(|last, block| {
        report.blocks += 1;
        bytes += block.len() as u64;
        let mut keys = Vec::new();
        let parsed = KeyBlock::parse(block).and_then(|b| b.for_each(|k| keys.push(k)));
        if let Err(e) = parsed {
            damaged = true;
            return report.absorb(Err(e.at(path, IDS, Some(format!("{last:016x}")))));
        }
        if keys.last() != Some(&last) || previous.is_some_and(|p| keys[0] <= p) {
            report.find(
                path,
                Some(IDS),
                format!("block {last:016x} is out of order"),
            );
        }
        previous = Some(last);
        keys.iter().for_each(|&k| found.add(k));
        Ok(())
    })?;
    if walked.is_none() {
        return Ok(());
    }
    if bytes != run.meta().ids_bytes {
        let says = run.meta().ids_bytes;
        let problem = format!("holds {bytes} block bytes; the catalog says {says}");
        report.find(path, Some(IDS), problem);
    }
    match expected {
        Some(expected) if !damaged && found != expected => {
            let problem = format!(
                "the id filter ({} prefixes) differs from the document entries' ({})",
                found.count, expected.count
            );
            report.find(path, Some(IDS), problem);
        }
        _ => {}
    }
    Ok(())
}

/// The docs and postings tables of one run.
pub(super) fn check_docs(run: &RunReader, run_dir: &Path, report: &mut Report) -> Result<()> {
    let path = docs_file(run_dir);
    let docs = run.docs()?;
    let named = docs.names_documents();
    let mut live = Digest::default();
    // Format 8: the postings the live documents make, a prefix's documents at a time.
    let mut group = NamedGroup::default();
    let (bits, mut prefixes, mut last_prefix) = (run.meta().id_bits, Digest::default(), None);
    let findings_before = report.findings.len();
    let entries = check_entries(
        docs.scan_documents()?,
        &path,
        DOCS_TABLE,
        run.meta().docs_bytes,
        report,
        |hash, id, state| {
            if let DocState::Live { fingerprint, batch } = state {
                if named {
                    group.add(named_postings::prefix_of(hash), *fingerprint, &mut live);
                } else {
                    live.add(document_hash(*fingerprint, id, *batch));
                }
            }
            if bits > 0 {
                let prefix = id_filter::prefix(hash, bits);
                if last_prefix != Some(prefix) {
                    prefixes.add(prefix);
                    last_prefix = Some(prefix);
                }
            }
        },
    )?;
    // Damaged docs blocks are a finding already: the filter is compared with intact ones only.
    let expected = (report.findings.len() == findings_before).then_some(prefixes);
    check_id_filter(run, &path, expected, report)?;
    if entries != run.meta().documents {
        report.find(
            &path,
            Some(DOCS_TABLE),
            format!(
                "holds {entries} entries; the catalog says {}",
                run.meta().documents
            ),
        );
    }
    group.flush(&mut live);
    let mut postings = Digest::default();
    // In format 7 the postings blocks hold the sketches too.
    let mut postings_bytes = run.meta().postings_bytes;
    if docs.sketches_in_postings() {
        postings_bytes += run.meta().sketches_bytes;
    }
    if named {
        let scan = docs.scan_named_postings_in(0, u64::MAX)?;
        check_named_postings(scan, &path, postings_bytes, report, |p| {
            postings.add(named_posting_hash(p));
        })?;
    } else {
        check_entries(
            docs.scan_postings()?,
            &path,
            POSTINGS_TABLE,
            postings_bytes,
            report,
            |fp, id, posting| postings.add(document_hash(fp, id, posting.batch)),
        )?;
    }
    if postings != live {
        report.find(
            &path,
            None,
            format!(
                "the postings ({} entries) differ from the live document entries ({})",
                postings.count, live.count
            ),
        );
    }
    Ok(())
}

/// The sketches table of one run (format 4): every block, the catalog's counts, each sketch
/// of the store's size and belonging to a posting of the run with its batch (the postings and
/// the sketches are walked together, both in `(fingerprint, id)` order).
pub(super) fn check_sketches(
    run: &RunReader,
    run_dir: &Path,
    sketch_bytes: u16,
    report: &mut Report,
) -> Result<()> {
    let path = docs_file(run_dir);
    let docs = run.docs()?;
    if docs.sketches_in_postings() {
        return check_sketches_in_postings(run, &path, sketch_bytes, report);
    }
    if docs.sketches_in_docs() {
        return check_sketches_in_docs(run, &path, sketch_bytes, report);
    }
    let Some(scan) = docs.scan_sketches_in(0, u64::MAX)? else {
        if run.meta().sketches > 0 {
            let problem = format!(
                "the table is missing; the catalog says it holds {} sketches",
                run.meta().sketches
            );
            report.find(&path, Some(SKETCHES_TABLE), problem);
        }
        return Ok(());
    };
    let mut postings = docs.scan_postings()?;
    let mut block: Vec<(u64, String, Posting)> = Vec::new();
    let (mut at, mut postings_readable) = (0, true);
    let (mut orphans, mut misfits) = (0u64, 0u64);
    let mut first_orphan: Option<String> = None;
    let entries = check_entries(
        scan,
        &path,
        SKETCHES_TABLE,
        run.meta().sketches_bytes,
        report,
        |fp, id, entry| {
            if entry.sketch.len() != usize::from(sketch_bytes) {
                misfits += 1;
            }
            // The first posting at or after (fp, id).
            while postings_readable {
                if let Some((pf, pid, _)) = block.get(at) {
                    if (*pf, pid.as_str()) < (fp, id) {
                        at += 1;
                        continue;
                    }
                    break;
                }
                at = 0;
                // A damaged postings block is check_docs' finding; stop matching there.
                postings_readable = matches!(postings.next_block(&mut block), Ok(true));
            }
            let posted = block.get(at).is_some_and(|(pf, pid, posting)| {
                *pf == fp && pid == id && posting.batch == entry.batch
            });
            if postings_readable && !posted {
                orphans += 1;
                first_orphan
                    .get_or_insert_with(|| format!("{fp:016x} {id:?} batch {}", entry.batch));
            }
        },
    )?;
    if entries != run.meta().sketches {
        let problem = format!(
            "holds {entries} sketches; the catalog says {}",
            run.meta().sketches
        );
        report.find(&path, Some(SKETCHES_TABLE), problem);
    }
    if misfits > 0 {
        let problem = format!("{misfits} sketches are not of the store's {sketch_bytes} bytes");
        report.find(&path, Some(SKETCHES_TABLE), problem);
    }
    if let Some(first) = first_orphan {
        let problem =
            format!("{orphans} sketches belong to no posting of the run (the first: {first})");
        report.find(&path, Some(SKETCHES_TABLE), problem);
    }
    Ok(())
}

/// The sketches in the postings of one run (formats 7 and 8): the catalog's count and bytes, and
/// each of the store's size. Each belongs to its posting by where it is; the blocks and the
/// postings themselves are [`check_docs`]' to check.
fn check_sketches_in_postings(
    run: &RunReader,
    path: &Path,
    sketch_bytes: u16,
    report: &mut Report,
) -> Result<()> {
    let scan = run
        .docs()?
        .scan_postings_as::<SketchedPosting>(0, u64::MAX)?;
    let found = sketches_of(scan, |p| p.sketch.as_deref(), sketch_bytes);
    let bytes = found.bytes_in_postings;
    let meta = run.meta();
    if (found.sketches, bytes) != (meta.sketches, meta.sketches_bytes) {
        let problem = format!(
            "holds {} sketches of {bytes} bytes; the catalog says {} of {}",
            found.sketches, meta.sketches, meta.sketches_bytes
        );
        report.find(path, Some(POSTINGS_TABLE), problem);
    }
    found.report_misfits(path, POSTINGS_TABLE, sketch_bytes, report);
    Ok(())
}

/// The sketches in the docs entries of one run (format 9): the catalog's count (and no bytes
/// of their own: the docs blocks' are theirs), and each of the store's size. Each belongs to
/// its document by where it is; the blocks themselves are [`check_docs`]' to check.
fn check_sketches_in_docs(
    run: &RunReader,
    path: &Path,
    sketch_bytes: u16,
    report: &mut Report,
) -> Result<()> {
    let docs = run.docs()?;
    let scan = docs.scan_documents_as::<SketchedDoc>(0, u64::MAX)?;
    let found = sketches_of(scan, |d| d.sketch.as_deref(), sketch_bytes);
    let meta = run.meta();
    // Format 10's sketches have bytes of their own, which the area's check counts.
    let own_bytes = if docs.has_sketch_area() {
        meta.sketches_bytes
    } else {
        0
    };
    if (found.sketches, own_bytes) != (meta.sketches, meta.sketches_bytes) {
        let problem = format!(
            "holds {} sketches in its entries; the catalog says {} of {} bytes of their own",
            found.sketches, meta.sketches, meta.sketches_bytes
        );
        report.find(path, Some(DOCS_TABLE), problem);
    }
    found.report_misfits(path, DOCS_TABLE, sketch_bytes, report);
    if docs.has_sketch_area() {
        // A docs block whose sketches cannot be read (its own damage is check_docs' finding
        // too): their area's blocks, or its marks and count, disagree.
        if let Some(first) = &found.first_unreadable {
            let problem = format!(
                "the sketches of {} blocks cannot be read (the first: {first})",
                found.unreadable
            );
            report.find(path, Some(DOCS_TABLE), problem);
        }
        check_sketch_area(run, path, sketch_bytes, report)?;
    }
    Ok(())
}

/// The sketch area of one run (format 10): its blocks numbered from 0, each intact and full
/// but the last, holding the catalog's count and bytes of sketches; and each docs block's
/// first sketch where the blocks before it end. That a docs block marks as many entries as it
/// says it has sketches is checked where they are read with it ([`check_sketches_in_docs`]).
fn check_sketch_area(
    run: &RunReader,
    path: &Path,
    sketch_bytes: u16,
    report: &mut Report,
) -> Result<()> {
    let docs = run.docs()?;
    let each = usize::from(sketch_bytes);
    let per_block = sketch_area::per_block(each);
    let (mut sketches, mut bytes, mut next) = (0u64, 0u64, 0u64);
    let mut short: Option<u64> = None;
    let mut problems = Vec::new();
    docs.for_each_sketch_area_block(|key, block| {
        bytes += block.len() as u64;
        let number = key.try_into().map_or(u64::MAX, u64::from_be_bytes);
        if number != next {
            problems.push(format!("block {number} is where block {next} belongs"));
        }
        if let Some(short) = short.take() {
            problems.push(format!(
                "block {short} holds fewer sketches than a block does and is not the last"
            ));
        }
        match sketch_area::decode(key, block, each) {
            Ok(held) => {
                let held = held.len() / each;
                sketches += held as u64;
                short = (held < per_block).then_some(number);
            }
            Err(e) => {
                problems.push(format!("block {number}: {e}"));
                sketches += per_block as u64;
            }
        }
        next = number.saturating_add(1);
        Ok(())
    })?;
    let meta = run.meta();
    if (sketches, bytes) != (meta.sketches, meta.sketches_bytes) {
        problems.push(format!(
            "holds {sketches} sketches in {bytes} bytes; the catalog says {} in {}",
            meta.sketches, meta.sketches_bytes
        ));
    }
    for problem in problems {
        report.find(path, Some(SKETCH_AREA_TABLE), problem);
    }
    // Each docs block's sketches start where the last intact block's end (a damaged block is
    // check_docs' finding: the next intact one is taken as it is).
    let mut expected = Some(0u64);
    let mut misplaced = 0u64;
    docs.for_each_docs_block(|_, block| {
        match entries::sketch_area_of(block) {
            Ok(Some((first, count))) => {
                misplaced += u64::from(expected.is_some_and(|e| e != first));
                expected = first.checked_add(u64::from(count));
            }
            Ok(None) => misplaced += 1,
            Err(_) => expected = None,
        }
        Ok(())
    })?;
    if misplaced > 0 {
        let problem = format!(
            "{misplaced} blocks do not start their sketches in the sketch area where the \
             blocks before them end"
        );
        report.find(path, Some(DOCS_TABLE), problem);
    }
    Ok(())
}

/// What the sketches of an entry table hold.
#[derive(Default)]
struct SketchesFound {
    sketches: u64,
    /// The bytes they add to postings with sketch flags (formats 7 and 8).
    bytes_in_postings: u64,
    /// Those not of the store's size.
    misfits: u64,
    /// Blocks that could not be read, and the first's error.
    unreadable: u64,
    first_unreadable: Option<String>,
}

impl SketchesFound {
    fn report_misfits(&self, path: &Path, table: &str, sketch_bytes: u16, report: &mut Report) {
        if self.misfits > 0 {
            let problem = format!(
                "{} sketches are not of the store's {sketch_bytes} bytes",
                self.misfits
            );
            report.find(path, Some(table), problem);
        }
    }
}

/// The sketches `sketch_of` finds in the entries `scan` reads, a block at a time; a block
/// that cannot be read is counted and passed over (a damaged one is [`check_docs`]' finding
/// too).
fn sketches_of<P: Payload>(
    mut scan: EntryScan<P>,
    sketch_of: impl Fn(&P) -> Option<&[u8]>,
    sketch_bytes: u16,
) -> SketchesFound {
    let mut found = SketchesFound::default();
    let mut block = Vec::new();
    loop {
        match scan.next_block(&mut block) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                found.unreadable += 1;
                found.first_unreadable.get_or_insert_with(|| e.to_string());
                continue;
            }
        }
        for sketch in block.iter().filter_map(|(_, _, p)| sketch_of(p)) {
            found.sketches += 1;
            found.bytes_in_postings += postings::sketch_bytes_in_posting(sketch.len());
            if sketch.len() != usize::from(sketch_bytes) {
                found.misfits += 1;
            }
        }
    }
    found
}
