//! Reading what is intact in a damaged run, for `repair`.
//!
//! Every block is read on its own: a block that fails its checksum or structure is skipped and
//! its key range recorded, a table redb cannot read past is recorded from the last good block
//! to its end, and a file that is missing or that redb refuses to open counts as wholly lost.
//! Nothing is written.

use std::path::{Path, PathBuf};

use redb::{ReadOnlyDatabase, ReadableDatabase, TableDefinition};

use std::cell::{Cell, RefCell};

use super::read::SketchArea;
use super::{
    table_name, DOCS, DOCS_TABLE, IDS, POSTINGS, POSTINGS_TABLE, SKETCHES, SKETCHES_TABLE,
    SKETCH_AREA, SKETCH_AREA_TABLE,
};
use crate::error::{guard_redb, Error, Result};
use crate::format::block::docs::{DocState, SketchedDoc};
use crate::format::block::entries::{self, Payload, SketchSource};
use crate::format::block::id_filter;
use crate::format::block::keys::KeyBlock;
use crate::format::block::named_postings::{self, NamedPosting};
use crate::format::block::postings::SketchedPosting;
use crate::format::block::sketches::SketchEntry;
use crate::format::catalog::{RunFormat, RunMeta};
use crate::format::layout;
use crate::tables::permutation::Permutations;

/// What could be read of one run.
#[derive(Debug, Default)]
pub(crate) struct Salvaged {
    /// The document entries of intact blocks, in key order.
    pub documents: Vec<(u64, String, DocState)>,
    /// The postings `(fingerprint, id, batch)` of intact blocks, in key order.
    pub postings: Vec<(u64, String, u64)>,
    /// The named postings (format 8) of intact blocks, in key order: they name no id, but
    /// those of a lost docs range tell the fingerprints of its lost documents.
    pub named_postings: Vec<NamedPosting>,
    /// Every fingerprint found in an intact block of any permuted table, ascending, distinct.
    pub fingerprints: Vec<u64>,
    /// Id-hash ranges (inclusive) of the docs table whose entries were lost.
    pub lost_documents: Vec<(u64, u64)>,
    /// The sketches `(fingerprint, id, entry)` of intact blocks, ordered by `(fingerprint,
    /// id)` (format 4 on; formats 7 and 8 from their postings, format 9 from its docs
    /// entries, format 10 from the sketch area its docs entries name).
    pub sketches: Vec<(u64, String, SketchEntry)>,
    /// Fingerprint ranges (inclusive) of the sketches table (formats 7 and 8: the postings)
    /// whose entries were lost (format 9: none, its sketches are lost with their documents;
    /// format 10: the fingerprints of documents whose sketches were in damaged blocks of the
    /// sketch area).
    pub lost_sketches: Vec<(u64, u64)>,
    /// What is damaged, one line per place.
    pub damage: Vec<String>,
}

impl Salvaged {
    /// Whether anything of the run was lost.
    pub(crate) fn is_damaged(&self) -> bool {
        !self.damage.is_empty()
    }
}

/// Reads every intact block of the run `meta` in `run_dir` (laid out as `format` says); with
/// `keep` false only the damage is recorded (to find which runs need repair without holding
/// their contents).
pub(crate) fn salvage(
    run_dir: &Path,
    (meta, format): (&RunMeta, RunFormat),
    perms: &Permutations,
    keep: bool,
) -> Result<Salvaged> {
    let mut out = Salvaged::default();
    let docs_path = layout::docs_file(run_dir);
    match open(&docs_path, &mut out)? {
        Some(db) => {
            // The distinct id-hash prefixes of the intact docs entries, for the filter's check.
            let mut prefixes = Sequence::default();
            let area = format
                .sketch_area
                .then(|| LenientArea::open(&db, &docs_path, format));
            // Documents whose sketches were in damaged blocks of the sketch area (format 10).
            let mut sketches_lost = Vec::new();
            out.lost_documents = guarded(&docs_path, DOCS_TABLE, &mut out, |out| {
                entries_of::<SketchedDoc>(
                    &db,
                    (DOCS, DOCS_TABLE, area.as_ref()),
                    &docs_path,
                    keep,
                    out,
                    |out, k, id, doc, sketch_lost| {
                        if meta.id_bits > 0 {
                            prefixes.add_distinct(id_filter::prefix(k, meta.id_bits));
                        }
                        let (Some(id), Some(doc)) = (id, doc) else {
                            return;
                        };
                        // Format 9 keeps the sketches in the docs entries, format 10 reaches
                        // them through them.
                        if let (DocState::Live { fingerprint, batch }, Some(sketch)) =
                            (doc.state, doc.sketch)
                        {
                            if sketch_lost {
                                sketches_lost.push((fingerprint, fingerprint));
                            } else {
                                let entry = SketchEntry { batch, sketch };
                                out.sketches.push((fingerprint, id.clone(), entry));
                            }
                        }
                        out.documents.push((k, id, doc.state));
                    },
                )
            });
            if let Some(area) = area {
                out.damage.extend(area.damage.into_inner());
                sketches_lost.sort_unstable();
                sketches_lost.dedup();
                out.lost_sketches = sketches_lost;
            }
            // Sketches are listed in (fingerprint, id) order, as their tables hold them. One
            // lost with its docs entry has no document left to miss it.
            out.sketches
                .sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            // Lost postings come back from the docs entries: only the damage is kept, and (in
            // format 7) the ranges whose sketches are lost with them. Named postings (format
            // 8) hold no ids, so they bring back nothing: only their damage is recorded.
            let lost_postings = guarded(&docs_path, POSTINGS_TABLE, &mut out, |out| {
                if format.named_postings {
                    named_postings_damage(&db, &docs_path, keep, out);
                    return Vec::new();
                }
                entries_of::<SketchedPosting>(
                    &db,
                    (POSTINGS, POSTINGS_TABLE, None),
                    &docs_path,
                    keep,
                    out,
                    |out, k, id, posting, _| {
                        if let (Some(id), Some(posting)) = (id, posting) {
                            let batch = posting.batch;
                            if let Some(sketch) = posting.sketch {
                                let entry = SketchEntry { batch, sketch };
                                out.sketches.push((k, id.clone(), entry));
                            }
                            out.postings.push((k, id, batch));
                        }
                    },
                )
            });
            if format.sketches_in_postings && meta.sketches > 0 {
                out.lost_sketches = lost_postings;
            }
            if meta.id_bits > 0 {
                // A lost filter comes back from the docs entries: only the damage is kept. One
                // whose blocks are intact must hold exactly the docs entries' prefixes.
                let damage_before = out.damage.len();
                let mut filter = Sequence::default();
                guarded(&docs_path, IDS, &mut out, |out| {
                    keys_of(&db, (IDS, true), &docs_path, out, |_, key| filter.add(key));
                    Vec::new()
                });
                let intact = out.damage.len() == damage_before && out.lost_documents.is_empty();
                if intact && filter != prefixes {
                    out.damage.push(format!(
                        "{} table {IDS}: holds {} prefixes, not the {} of the docs entries",
                        docs_path.display(),
                        filter.count,
                        prefixes.count
                    ));
                }
            }
            if meta.sketches > 0 && !format.sketches_in_postings && !format.sketches_in_docs {
                out.lost_sketches = guarded(&docs_path, SKETCHES_TABLE, &mut out, |out| {
                    entries_of::<SketchEntry>(
                        &db,
                        (SKETCHES, SKETCHES_TABLE, None),
                        &docs_path,
                        keep,
                        out,
                        |out, k, id, entry, _| {
                            if let (Some(id), Some(entry)) = (id, entry) {
                                out.sketches.push((k, id, entry));
                            }
                        },
                    )
                });
            }
        }
        None => {
            out.lost_documents = vec![(0, u64::MAX)];
            if meta.sketches > 0 {
                out.lost_sketches = vec![(0, u64::MAX)];
            }
        }
    }
    for &f in &meta.present_files {
        let path = layout::shard_file(run_dir, usize::from(f));
        let Some(db) = open(&path, &mut out)? else {
            continue;
        };
        for (t, table) in perms.tables().iter().enumerate() {
            let name = table_name(t);
            // Lost keys come back from the other tables: only the damage is kept.
            guarded(&path, &name, &mut out, |out| {
                keys_of(&db, (&name, false), &path, out, |out, key| {
                    if keep {
                        out.fingerprints.push(table.unpermute(key));
                    }
                });
                Vec::new()
            });
        }
    }
    out.fingerprints.sort_unstable();
    out.fingerprints.dedup();
    Ok(out)
}

/// Runs `read` on one table, which returns the key ranges it lost; a panic of redb on damaged
/// pages loses the whole table (what was read of it before stays).
fn guarded(
    path: &Path,
    table: &str,
    out: &mut Salvaged,
    read: impl FnOnce(&mut Salvaged) -> Vec<(u64, u64)>,
) -> Vec<(u64, u64)> {
    match crate::error::guard_redb(path, || Ok(read(&mut *out))) {
        Ok(lost) => lost,
        Err(e) => {
            out.damage
                .push(format!("{} table {table}: {e}", path.display()));
            vec![(0, u64::MAX)]
        }
    }
}

/// Opens a run file read-only, for reading what is intact in it.
///
/// A missing file is lost (recorded in `out`, None). A file redb refuses to open, or panics on,
/// is opened from a private copy that redb's own recovery has repaired, if it can (the damage
/// is recorded either way). Any other failure to read the file (permissions, too many open
/// files, an I/O error) is an error: repair must not take an unreadable file for a lost one.
fn open(path: &Path, out: &mut Salvaged) -> Result<Option<ReadOnlyDatabase>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            out.damage.push(format!("{}: {e}", path.display()));
            return Ok(None);
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    let opened = guard_redb(path, || {
        let backend = redb::backends::FileBackend::new(file).map_err(|e| Error::redb(path, e))?;
        redb::Builder::new()
            .open_read_only_with_backend(backend)
            .map_err(|e| Error::redb(path, e))
    });
    let why = match opened {
        Ok(db) => return Ok(Some(db)),
        Err(e) => e,
    };
    out.damage
        .push(format!("{}: redb cannot open it: {why}", path.display()));
    // redb's recovery rewrites the file it opens: give it a copy, kept while it is read (the
    // open file stays readable after the directory is removed).
    let scratch = tempfile::Builder::new()
        .prefix("simhashdb-repair-")
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let copy = scratch.path().join("copy.redb");
    std::fs::copy(path, &copy).map_err(|e| Error::io(&copy, e))?;
    let recovered = guard_redb(path, || {
        drop(redb::Database::open(&copy).map_err(|e| Error::redb(&copy, e))?);
        let file = std::fs::File::open(&copy).map_err(|e| Error::io(&copy, e))?;
        let backend = redb::backends::FileBackend::new(file).map_err(|e| Error::redb(&copy, e))?;
        redb::Builder::new()
            .open_read_only_with_backend(backend)
            .map_err(|e| Error::redb(&copy, e))
    });
    match recovered {
        Ok(db) => {
            out.damage.push(format!(
                "{}: read from a copy that redb's recovery repaired",
                path.display()
            ));
            Ok(Some(db))
        }
        Err(e) => {
            out.damage.push(format!(
                "{}: redb's recovery failed too: {e}",
                path.display()
            ));
            Ok(None)
        }
    }
}

/// A sequence of keys, as much of it as two copies of one sequence must agree on.
#[derive(Default, PartialEq, Eq)]
struct Sequence {
    count: u64,
    hash: u64,
    last: Option<u64>,
}

impl Sequence {
    fn add(&mut self, key: u64) {
        self.count += 1;
        self.hash = (self.hash ^ key)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
        self.last = Some(key);
    }

    /// Adds `key` unless it repeats the last one.
    fn add_distinct(&mut self, key: u64) {
        if self.last != Some(key) {
            self.add(key);
        }
    }
}

/// A run's sketch area (format 10) as salvage reads it: a damaged block loses the sketches of
/// the docs blocks that name it, not their documents.
struct LenientArea {
    area: Option<SketchArea>,
    path: PathBuf,
    sketch_bytes: usize,
    /// Whether the last read failed (its sketches were filled with zeros).
    failed: Cell<bool>,
    damage: RefCell<Vec<String>>,
}

impl LenientArea {
    fn open(db: &ReadOnlyDatabase, path: &Path, format: RunFormat) -> Self {
        let damage = RefCell::new(Vec::new());
        let table = db.begin_read().map_err(|e| e.to_string()).and_then(|txn| {
            match txn.open_table(SKETCH_AREA) {
                Ok(table) => Ok(Some(table)),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
                Err(e) => Err(e.to_string()),
            }
        });
        let area = match table {
            Ok(table) => Some(SketchArea::new(
                path,
                table,
                usize::from(format.sketch_bytes),
            )),
            Err(why) => {
                let table = SKETCH_AREA_TABLE;
                damage.borrow_mut().push(format!(
                    "{} table {table}: unreadable: {why}",
                    path.display()
                ));
                None
            }
        };
        LenientArea {
            area,
            path: path.to_path_buf(),
            sketch_bytes: usize::from(format.sketch_bytes),
            failed: Cell::new(false),
            damage,
        }
    }

    /// Whether a read failed since the last call.
    fn take_failed(&self) -> bool {
        self.failed.replace(false)
    }
}

impl SketchSource for LenientArea {
    fn read(&self, first: u64, count: usize, out: &mut Vec<u8>) -> Result<()> {
        let start = out.len();
        // A panic of redb on a damaged page loses this read's sketches, not the docs table.
        let read = match &self.area {
            Some(area) => guard_redb(&self.path, || area.read(first, count, out)),
            None => Err(Error::corrupt("the sketch area is unreadable")),
        };
        if let Err(e) = read {
            // One line per damaged place, however many docs blocks in a row name it.
            let mut damage = self.damage.borrow_mut();
            let line = e.to_string();
            if count > 0 && self.area.is_some() && damage.last() != Some(&line) {
                damage.push(line);
            }
            self.failed.set(count > 0);
            out.truncate(start);
            out.resize(start + count * self.sketch_bytes(), 0);
        }
        Ok(())
    }

    fn sketch_bytes(&self) -> usize {
        self.sketch_bytes
    }
}

/// Reads the intact blocks of an entry table, handing each entry's key to `push`, with its id
/// and payload when `keep`, and whether its sketch in `area` (format 10's docs) was lost;
/// returns the key-hash ranges whose entries were lost.
fn entries_of<P: Payload>(
    db: &ReadOnlyDatabase,
    (def, name, area): (TableDefinition<&[u8], &[u8]>, &str, Option<&LenientArea>),
    path: &Path,
    keep: bool,
    out: &mut Salvaged,
    mut push: impl FnMut(&mut Salvaged, u64, Option<String>, Option<P>, bool),
) -> Vec<(u64, u64)> {
    let place = format!("{} table {name}", path.display());
    let mut lost = Vec::new();
    let range = db
        .begin_read()
        .map_err(|e| e.to_string())
        .and_then(|txn| txn.open_table(def).map_err(|e| e.to_string()))
        .and_then(|table| table.range::<&[u8]>(..).map_err(|e| e.to_string()));
    let range = match range {
        Ok(range) => range,
        Err(why) => {
            out.damage.push(format!("{place}: unreadable: {why}"));
            return vec![(0, u64::MAX)];
        }
    };
    // Blocks are filed under their last entry: a lost block held the keys after the previous
    // block's last one, up to its own.
    let mut after = 0u64;
    let mut block_entries: Vec<(u64, String, P)> = Vec::new();
    for item in range {
        let (key, block) = match item {
            Ok(item) => item,
            Err(e) => {
                out.damage.push(format!(
                    "{place}: unreadable past key hash {after:016x}: {e}"
                ));
                lost.push((after, u64::MAX));
                return lost;
            }
        };
        let filed = key.value();
        let last = filed.get(..8).map_or(u64::MAX, |b| {
            u64::from_be_bytes(b.try_into().expect("8 bytes"))
        });
        block_entries.clear();
        let source = area.map(|a| a as &dyn SketchSource);
        let decoded = entries::decode_from::<P>(block.value(), source, |k, id, payload| {
            block_entries.push((k, id.to_string(), payload));
            true
        });
        let sketches_lost = area.is_some_and(LenientArea::take_failed);
        // A block filed under a key that is not its last entry's is misplaced: its entries are
        // intact (their checksum held) but the run must be rebuilt to file them right.
        let misfiled = block_entries
            .last()
            .is_some_and(|(k, id, _)| entries::block_key(*k, id.as_bytes()) != filed);
        if decoded.is_ok() && misfiled {
            out.damage.push(format!(
                "{place}: block {last:016x}: filed under a key that is not its last entry's"
            ));
        }
        match decoded {
            Ok(()) if keep => {
                for (k, id, payload) in block_entries.drain(..) {
                    push(out, k, Some(id), Some(payload), sketches_lost);
                }
            }
            Ok(()) => {
                for (k, _, _) in block_entries.drain(..) {
                    push(out, k, None, None, sketches_lost);
                }
            }
            Err(e) => {
                out.damage.push(format!("{place}: block {last:016x}: {e}"));
                lost.push((after, last));
            }
        }
        after = last;
    }
    lost
}

/// Records the damaged blocks of a table of named postings (format 8) in `out.damage`, and
/// with `keep` the postings of the intact ones in `out.named_postings`.
fn named_postings_damage(db: &ReadOnlyDatabase, path: &Path, keep: bool, out: &mut Salvaged) {
    let place = format!("{} table {POSTINGS_TABLE}", path.display());
    let range = db
        .begin_read()
        .map_err(|e| e.to_string())
        .and_then(|txn| txn.open_table(POSTINGS).map_err(|e| e.to_string()))
        .and_then(|table| table.range::<&[u8]>(..).map_err(|e| e.to_string()));
    let range = match range {
        Ok(range) => range,
        Err(why) => return out.damage.push(format!("{place}: unreadable: {why}")),
    };
    for item in range {
        let (key, block) = match item {
            Ok(item) => item,
            Err(e) => {
                return out
                    .damage
                    .push(format!("{place}: unreadable past a block: {e}"))
            }
        };
        let filed = key.value();
        let last = filed.get(..8).map_or(u64::MAX, |b| {
            u64::from_be_bytes(b.try_into().expect("8 bytes"))
        });
        let mut postings = Vec::new();
        let decoded = named_postings::decode(block.value(), |p| {
            postings.push(p);
            true
        });
        match decoded {
            Err(e) => out.damage.push(format!("{place}: block {last:016x}: {e}")),
            Ok(()) => {
                if postings.last().copied() != named_postings::split_block_key(filed) {
                    out.damage.push(format!(
                        "{place}: block {last:016x}: filed under a key that is not its last \
                         posting's"
                    ));
                }
                if keep {
                    out.named_postings.extend(postings);
                }
            }
        }
    }
}

/// Reads the intact blocks of key table `name` (a permuted table of a shard file, or a docs
/// file's id filter), handing each key to `push`; what is damaged goes to `out.damage`, and
/// so does a missing table that is `required`.
fn keys_of(
    db: &ReadOnlyDatabase,
    (name, required): (&str, bool),
    path: &Path,
    out: &mut Salvaged,
    mut push: impl FnMut(&mut Salvaged, u64),
) {
    let place = format!("{} table {name}", path.display());
    let txn = match db.begin_read() {
        Ok(txn) => txn,
        Err(e) => {
            out.damage.push(format!("{place}: unreadable: {e}"));
            return;
        }
    };
    let table = match txn.open_table(TableDefinition::<u64, &[u8]>::new(name)) {
        Ok(table) => table,
        Err(redb::TableError::TableDoesNotExist(_)) => {
            if required {
                out.damage.push(format!("{place}: missing"));
            }
            return;
        }
        Err(e) => {
            out.damage.push(format!("{place}: unreadable: {e}"));
            return;
        }
    };
    let range = match table.range::<u64>(..) {
        Ok(range) => range,
        Err(e) => {
            out.damage.push(format!("{place}: unreadable: {e}"));
            return;
        }
    };
    let mut keys = Vec::new();
    for item in range {
        let (last, block) = match item {
            Ok(item) => item,
            Err(e) => {
                out.damage
                    .push(format!("{place}: unreadable past a block: {e}"));
                return;
            }
        };
        let last = last.value();
        keys.clear();
        let parsed = KeyBlock::parse(block.value()).and_then(|b| b.for_each(|k| keys.push(k)));
        match parsed {
            Ok(block_last) if block_last == last => {
                for &k in &keys {
                    push(out, k);
                }
            }
            Ok(block_last) => {
                out.damage.push(format!(
                    "{place}: block {last:016x}: its last key is {block_last:016x}"
                ));
            }
            Err(e) => {
                out.damage.push(format!("{place}: block {last:016x}: {e}"));
            }
        }
    }
}
