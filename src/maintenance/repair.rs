//! Repair: rebuilding damaged runs from the copies every run keeps of its own data.
//!
//! A run holds each of its fingerprints once per permuted table (C(m, K) copies, in blocks
//! that differ from table to table), and each live document twice: as an entry of the docs
//! table (by id) and as a posting (by fingerprint). So a damaged block, table or file loses
//! nothing that another copy holds:
//! - the fingerprints are the union of every intact block of every table; a fingerprint of a
//!   live document that no table of any run holds any more is put back in the tables too;
//! - the postings are the live entries of the docs table, rebuilt;
//! - a docs entry lost from a damaged block comes back from its posting, which carries the
//!   document's batch (format 3 on), so nothing is guessed. A deletion entry has no second
//!   copy: the ids an older run holds in the lost range, which the deletion may have covered,
//!   are reported by id. Nor has a document of a format 8 store without sketches, whose
//!   postings name their documents by id-hash prefix instead of holding the ids: it is
//!   counted as lost, and its fingerprint listed.
//!
//! Each damaged run is rebuilt as a new run that takes its place in the run list, all in one
//! catalog commit, like a compaction; the damaged files are deleted only after the commit, so a
//! crash leaves the damaged or the repaired store. The catalog itself has no second copy:
//! a damaged catalog is refused, and restored from a backup.

use std::collections::HashSet;
use std::path::Path;

use rayon::prelude::*;

use crate::error::Result;
use crate::format::block::docs::{id_hash, DocState};
use crate::format::block::named_postings;
use crate::format::block::sketches::SketchEntry;
use crate::format::catalog::Catalog;
use crate::format::layout::{self, sync_dir};
use crate::maintenance::lost_ranges::LostRanges;
use crate::read::snapshot::{Snapshot, SCAN_CACHE_BYTES};
use crate::run::salvage::{salvage, Salvaged};
use crate::run::{write_run, RunContents};
use crate::sys::progress::{Phase, Progress};
use crate::tables::permutation::Permutations;
use crate::write::store::Store;

/// What [`Store::repair`] found and did. Its JSON form is the last line of `repair --json`
/// (each run's [`RunRepair`] is a line before it): `{"runs_checked", "runs_damaged",
/// "committed", "dry_run"}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairReport {
    /// Runs checked (every block of every file of every run is read).
    pub runs_checked: usize,
    /// One entry per damaged run, oldest first.
    pub runs: Vec<RunRepair>,
    /// Whether the repaired runs were committed (false for a dry run or when nothing was
    /// damaged).
    pub committed: bool,
    /// Whether this is [`Store::preview_repair`]'s: nothing was changed.
    pub dry_run: bool,
}

impl serde::Serialize for RepairReport {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("RepairReport", 4)?;
        out.serialize_field("runs_checked", &self.runs_checked)?;
        out.serialize_field("runs_damaged", &self.runs.len())?;
        out.serialize_field("committed", &self.committed)?;
        out.serialize_field("dry_run", &self.dry_run)?;
        out.end()
    }
}

/// One damaged run and its repair; its JSON form (a line of `repair --json`) has these
/// fields.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct RunRepair {
    /// The damaged run.
    pub run: u64,
    /// The run that replaces it (None in a dry run).
    pub replaced_by: Option<u64>,
    /// What was damaged, one line per place.
    pub damage: Vec<String>,
    /// Document entries in the rebuilt run.
    pub documents: u64,
    /// Fingerprints in the rebuilt run's tables.
    pub fingerprints: u64,
    /// Document entries that came back from their postings.
    pub documents_from_postings: u64,
    /// Of those, the ones whose batch was guessed: always 0 since format 3, whose postings
    /// carry the batch (format 2 repairs guessed it). Kept for the scripts that read it.
    pub batches_guessed: u64,
    /// Fingerprints of live documents that no table held any more, put back.
    pub fingerprints_restored: u64,
    /// Document entries of the damaged run that no copy holds (deletions, or a live entry
    /// lost with its posting).
    pub documents_lost: u64,
    /// Ids an older run holds in the lost ranges: if the damaged run had deleted them, they
    /// are live again. At most 1,000 are listed.
    pub ids_maybe_undeleted: Vec<String>,
    /// Live documents of the rebuilt run without a sketch whose sketch may have been lost
    /// (their fingerprints fall in a damaged sketch block: a document inserted as a bare
    /// fingerprint there is counted too). Insert their text again to sketch them.
    pub sketches_lost: u64,
    /// Their ids; at most 1,000 are listed.
    pub ids_sketch_lost: Vec<String>,
    /// Ids of lost live documents that a surviving copy still names (a sketch entry): insert
    /// them again. The other lost entries are named by no copy left. At most 1,000 are
    /// listed.
    pub ids_lost: Vec<String>,
    /// Fingerprints (16 hex digits) the run's tables hold that no document of the rebuilt
    /// run has: the fingerprints of lost documents (those the run added to the tables), so
    /// the documents of the source with these fingerprints can be found and inserted again.
    /// At most 1,000 are listed.
    pub fingerprints_lost: Vec<String>,
}

/// How many ids a run repair lists.
const LISTED_IDS: usize = 1000;

/// What a repair finds: the damaged runs (indices into the catalog's runs) and the contents
/// each is rebuilt with. Made by reading only.
struct RepairPlan {
    catalog: Catalog,
    damaged: Vec<usize>,
    rebuilt: Vec<(usize, Rebuilt)>,
}

impl RepairPlan {
    /// Reads every block of every run of the store at `dir` in the state `catalog`.
    fn make(dir: &Path, catalog: Catalog, progress: &dyn Progress) -> Result<RepairPlan> {
        let perms = Permutations::new(&catalog.settings);
        let format = catalog.run_format();
        let run_dir = |id| layout::run_dir(dir, id);
        // Which runs are damaged, without holding their contents.
        let checking = Phase::start(progress, "checking runs", catalog.runs.len() as u64);
        let checked: Vec<bool> = catalog
            .runs
            .par_iter()
            .map(|meta| {
                let damaged =
                    salvage(&run_dir(meta.id), (meta, format), &perms, false)?.is_damaged();
                progress.advance(1);
                Ok(damaged)
            })
            .collect::<Result<_>>()?;
        drop(checking);
        let damaged: Vec<usize> = (0..checked.len()).filter(|&i| checked[i]).collect();
        if damaged.is_empty() {
            return Ok(RepairPlan {
                catalog,
                damaged,
                rebuilt: Vec::new(),
            });
        }
        let mut rebuilt: Vec<(usize, Rebuilt)> = Vec::new();
        for &i in &damaged {
            let meta = &catalog.runs[i];
            let salvaged = salvage(&run_dir(meta.id), (meta, format), &perms, true)?;
            rebuilt.push((i, Rebuilt::from(salvaged, meta.documents)));
        }
        // The runs that are intact, read as usual.
        let mut intact = catalog.clone();
        intact.runs = catalog
            .runs
            .iter()
            .enumerate()
            .filter(|(i, _)| !damaged.contains(i))
            .map(|(_, r)| r.clone())
            .collect();
        let intact = Snapshot::from_catalog(dir, intact, SCAN_CACHE_BYTES)?;
        restore_lost_fingerprints(&intact, &mut rebuilt)?;
        name_ids_maybe_undeleted(&catalog, &damaged, &intact, &mut rebuilt)?;
        Ok(RepairPlan {
            catalog,
            damaged,
            rebuilt,
        })
    }

    /// The report of what the plan rebuilds, before it is written (no run replaced yet).
    fn report(&self) -> RepairReport {
        RepairReport {
            runs_checked: self.catalog.runs.len(),
            runs: self
                .rebuilt
                .iter()
                .map(|(i, r)| r.report(self.catalog.runs[*i].id))
                .collect(),
            committed: false,
            dry_run: false,
        }
    }
}

impl Store {
    /// Reads every block of every run and rebuilds the damaged runs from their intact copies
    /// (see the module docs), in one commit ([`Store::preview_repair`] says what it would
    /// rebuild, without a lock and without writing). Memory: the contents of every damaged
    /// run, plus 8 bytes per posting of the store. A run file that cannot be read
    /// (permissions, an I/O error) fails the repair, which then changes nothing; one that is
    /// missing, or that redb cannot open even after its own recovery on a copy, is taken as
    /// lost.
    pub fn repair(&mut self) -> Result<RepairReport> {
        let plan = RepairPlan::make(self.dir(), self.catalog().clone(), self.progress())?;
        let mut report = plan.report();
        if plan.damaged.is_empty() {
            return Ok(report);
        }
        let RepairPlan {
            catalog,
            damaged,
            rebuilt,
        } = plan;
        let perms = Permutations::new(&catalog.settings);
        let progress = self.progress();
        let mut pending = self.begin_commit();
        for ((i, r), entry) in rebuilt.iter().zip(&mut report.runs) {
            let documents: Vec<(u64, &str, DocState)> = r
                .documents
                .iter()
                .map(|(h, id, s)| (*h, id.as_str(), *s))
                .collect();
            let postings: Vec<(u64, &str, u64)> = r
                .postings
                .iter()
                .map(|(fp, id, batch)| (*fp, id.as_str(), *batch))
                .collect();
            let sketches: Vec<Option<&[u8]>> = r.sketches.iter().map(|s| s.as_deref()).collect();
            let contents = RunContents {
                documents: &documents,
                postings: &postings,
                sketches: &sketches,
                fingerprints: &r.fingerprints,
            };
            let tables = (
                &perms,
                usize::from(catalog.settings.shards),
                catalog.run_format(),
            );
            let new =
                pending.write_run(|dir, id| write_run(dir, id, tables, &contents, progress))?;
            entry.replaced_by = Some(new.id);
            pending.catalog_mut().runs[*i] = new;
        }
        // Lost deletions change which documents are live: count them again.
        let next = pending.catalog().clone();
        let mut live = 0u64;
        Snapshot::from_catalog(self.dir(), next, SCAN_CACHE_BYTES)?
            .for_each_live_document(|_, _, _| live += 1)?;
        pending.catalog_mut().documents = live;
        self.commit(pending)?;
        report.committed = true;
        // The damaged runs are garbage now; what cannot be removed, the next writer removes.
        let store = self.dir().to_path_buf();
        for &i in &damaged {
            let _ = std::fs::remove_dir_all(layout::run_dir(&store, catalog.runs[i].id));
        }
        let _ = sync_dir(&layout::runs_dir(&store));
        Ok(report)
    }

    /// What [`Store::repair`] would rebuild in the store at `dir`, without doing it: it takes
    /// no lock and changes no byte (a dry run reads the catalog and every run; a damaged
    /// store is what it is for, so it does not open the runs as a [`Snapshot`] would).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{Batch, Settings, Store};
    ///
    /// let mut store = Store::create(&path, Settings::default())?;
    /// let mut batch = Batch::new();
    /// batch.push("a", 0x0123_4567_89ab_cdef)?;
    /// store.insert(&batch, None)?;
    /// let plan = Store::preview_repair(&path, &())?;
    /// assert_eq!((plan.runs_checked, plan.runs.len()), (1, 0)); // nothing damaged
    /// assert!(!store.repair()?.committed); // so nothing to commit
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn preview_repair(dir: &Path, progress: &dyn Progress) -> Result<RepairReport> {
        let catalog = Catalog::read(dir)?;
        Ok(RepairReport {
            dry_run: true,
            ..RepairPlan::make(dir, catalog, progress)?.report()
        })
    }
}

/// The contents a damaged run is rebuilt with, and what the rebuilding found.
struct Rebuilt {
    /// Ordered by `(id_hash, id)`.
    documents: Vec<(u64, String, DocState)>,
    /// Ordered by `(fingerprint, id)`.
    postings: Vec<(u64, String, u64)>,
    /// Each posting's sketch, when one survived (empty for a run without sketches).
    sketches: Vec<Option<Vec<u8>>>,
    /// Ascending.
    fingerprints: Vec<u64>,
    lost_documents: Vec<(u64, u64)>,
    damage: Vec<String>,
    from_postings: u64,
    fingerprints_restored: u64,
    documents_lost: u64,
    ids_maybe_undeleted: Vec<String>,
    sketches_lost: u64,
    ids_sketch_lost: Vec<String>,
    ids_lost: Vec<String>,
    fingerprints_lost: Vec<String>,
}

impl Rebuilt {
    /// Rebuilds a run from what was salvaged of it; `listed` is the catalog's entry count.
    fn from(s: Salvaged, listed: u64) -> Self {
        let mut documents = s.documents;
        let known: HashSet<&str> = documents.iter().map(|(_, id, _)| id.as_str()).collect();
        // A live document whose docs entry was lost comes back from its posting, exactly.
        let recovered: Vec<(u64, String, DocState)> = s
            .postings
            .iter()
            .filter(|(_, id, _)| !known.contains(id.as_str()))
            .map(|&(fingerprint, ref id, batch)| {
                let state = DocState::Live { fingerprint, batch };
                (id_hash(id.as_bytes()), id.clone(), state)
            })
            .collect();
        drop(known);
        let from_postings = recovered.len() as u64;
        documents.extend(recovered);
        documents.par_sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        // Misfiled blocks may repeat an entry: keep one.
        documents.dedup_by(|a, b| (a.0, &a.1) == (b.0, &b.1));
        let mut postings: Vec<(u64, String, u64)> = documents
            .iter()
            .filter_map(|(_, id, state)| match state {
                DocState::Live { fingerprint, batch } => Some((*fingerprint, id.clone(), *batch)),
                DocState::Deleted { .. } => None,
            })
            .collect();
        postings.par_sort_unstable();
        // A sketch that survived its document names it: the operator can insert it again.
        let rebuilt: HashSet<&str> = documents.iter().map(|(_, id, _)| id.as_str()).collect();
        let mut ids_lost: Vec<String> = s
            .sketches
            .iter()
            .filter(|(_, id, _)| !rebuilt.contains(id.as_str()))
            .map(|(_, id, _)| id.clone())
            .collect();
        drop(rebuilt);
        ids_lost.sort_unstable();
        ids_lost.dedup();
        ids_lost.truncate(LISTED_IDS);
        // A table fingerprint no rebuilt document has: its documents were lost.
        let held: HashSet<u64> = postings
            .iter()
            .map(|(fingerprint, _, _)| *fingerprint)
            .collect();
        let mut lost: Vec<u64> = s
            .fingerprints
            .iter()
            .copied()
            .filter(|fingerprint| !held.contains(fingerprint))
            .take(LISTED_IDS)
            .collect();
        drop(held);
        // Named postings (format 8) whose prefix lies in a lost docs range and that no
        // rebuilt document makes: their documents were lost, whether or not another run's
        // tables hold the fingerprint or another document still has it.
        let made: HashSet<(u64, u32)> = postings
            .iter()
            .map(|(fp, id, _)| (*fp, named_postings::prefix_of(id_hash(id.as_bytes()))))
            .collect();
        let in_lost_range = |prefix: u32| {
            let (lo, hi) = named_postings::hash_range(prefix);
            s.lost_documents.iter().any(|&(a, b)| lo <= b && a <= hi)
        };
        lost.extend(
            s.named_postings
                .iter()
                .filter(|p| !made.contains(&(p.fingerprint, p.prefix)) && in_lost_range(p.prefix))
                .map(|p| p.fingerprint),
        );
        drop(made);
        lost.sort_unstable();
        lost.dedup();
        let fingerprints_lost: Vec<String> = lost
            .iter()
            .take(LISTED_IDS)
            .map(|fingerprint| format!("{fingerprint:016x}"))
            .collect();
        let (sketches, sketches_lost, ids_sketch_lost) =
            sketches_of_postings(&postings, s.sketches, &s.lost_sketches);
        Rebuilt {
            documents_lost: listed.saturating_sub(documents.len() as u64),
            documents,
            postings,
            sketches,
            sketches_lost,
            ids_sketch_lost,
            ids_lost,
            fingerprints_lost,
            fingerprints: s.fingerprints,
            lost_documents: s.lost_documents,
            damage: s.damage,
            from_postings,
            fingerprints_restored: 0,
            ids_maybe_undeleted: Vec::new(),
        }
    }

    fn report(&self, run: u64) -> RunRepair {
        RunRepair {
            run,
            replaced_by: None,
            damage: self.damage.clone(),
            documents: self.documents.len() as u64,
            fingerprints: self.fingerprints.len() as u64,
            documents_from_postings: self.from_postings,
            batches_guessed: 0,
            fingerprints_restored: self.fingerprints_restored,
            documents_lost: self.documents_lost,
            ids_maybe_undeleted: self.ids_maybe_undeleted.clone(),
            sketches_lost: self.sketches_lost,
            ids_sketch_lost: self.ids_sketch_lost.clone(),
            ids_lost: self.ids_lost.clone(),
            fingerprints_lost: self.fingerprints_lost.clone(),
        }
    }
}

/// Each rebuilt posting's surviving sketch (the salvaged entry of its fingerprint, id and
/// batch; `salvaged` in key order), and the postings left without one whose fingerprint lies
/// in a `lost` range: their count and the first [`LISTED_IDS`] ids.
fn sketches_of_postings(
    postings: &[(u64, String, u64)],
    salvaged: Vec<(u64, String, SketchEntry)>,
    lost: &[(u64, u64)],
) -> (Vec<Option<Vec<u8>>>, u64, Vec<String>) {
    if salvaged.is_empty() && lost.is_empty() {
        return (Vec::new(), 0, Vec::new());
    }
    let lost = LostRanges::new(lost);
    let mut salvaged = salvaged.into_iter().peekable();
    let (mut count, mut ids) = (0u64, Vec::new());
    let sketches = postings
        .iter()
        .map(|(fp, id, batch)| {
            while salvaged
                .peek()
                .is_some_and(|(k, i, _)| (*k, i.as_str()) < (*fp, id.as_str()))
            {
                salvaged.next();
            }
            let found = salvaged
                .next_if(|(k, i, e)| (*k, i.as_str(), e.batch) == (*fp, id.as_str(), *batch))
                .map(|(_, _, e)| e.sketch);
            if found.is_none() && lost.contains(*fp) {
                count += 1;
                if ids.len() < LISTED_IDS {
                    ids.push(id.clone());
                }
            }
            found
        })
        .collect();
    (sketches, count, ids)
}

/// Puts every posted fingerprint that no run's tables hold (its every copy was in damaged
/// blocks) into the tables of the oldest damaged run: the oldest run that may have held it, so
/// that every posting of it stays in that run or a newer one, as compaction requires.
fn restore_lost_fingerprints(intact: &Snapshot, rebuilt: &mut [(usize, Rebuilt)]) -> Result<()> {
    let mut posted: Vec<u64> = Vec::new();
    for run in intact.runs() {
        run.docs()?.for_each_posting(|fp| posted.push(fp))?;
    }
    for (_, r) in rebuilt.iter() {
        posted.extend(r.postings.iter().map(|(fp, _, _)| *fp));
    }
    posted.par_sort_unstable();
    posted.dedup();
    let mut found = vec![false; posted.len()];
    for (_, r) in rebuilt.iter() {
        for (fp, f) in posted.iter().zip(found.iter_mut()) {
            *f |= r.fingerprints.binary_search(fp).is_ok();
        }
    }
    let perms = intact.permutations();
    for run in intact.runs() {
        let mut start = 0;
        while start < posted.len() {
            let shard = perms.shard_of(posted[start]);
            let end = start + posted[start..].partition_point(|&fp| perms.shard_of(fp) == shard);
            if let Some(file) = run.shard(shard)? {
                file.contains_sorted(&posted[start..end], &mut found[start..end])?;
            }
            start = end;
        }
    }
    let missing: Vec<u64> = posted
        .into_iter()
        .zip(found)
        .filter_map(|(fp, found)| (!found).then_some(fp))
        .collect();
    if let Some((_, oldest)) = rebuilt.first_mut() {
        oldest.fingerprints_restored = missing.len() as u64;
        oldest.fingerprints.extend(missing);
        oldest.fingerprints.sort_unstable();
        oldest.fingerprints.dedup();
    }
    Ok(())
}

/// For each damaged run whose docs table lost entries, the ids an older run holds live in the
/// lost ranges that neither the rebuilt run nor a newer run mentions: if the lost entries
/// deleted them, they are live again.
fn name_ids_maybe_undeleted(
    catalog: &Catalog,
    damaged: &[usize],
    intact: &Snapshot,
    rebuilt: &mut [(usize, Rebuilt)],
) -> Result<()> {
    // Where each run of the catalog is: an intact snapshot run, or a rebuilt one.
    let intact_index = |i: usize| i - damaged.iter().filter(|&&d| d < i).count();
    let mentions = |rebuilt: &[(usize, Rebuilt)], i: usize, id: &str| -> Result<bool> {
        match rebuilt.iter().find(|(r, _)| *r == i) {
            Some((_, r)) => Ok(r
                .documents
                .binary_search_by(|(h, other, _)| {
                    (*h, other.as_str()).cmp(&(id_hash(id.as_bytes()), id))
                })
                .is_ok()),
            None => Ok(intact.runs()[intact_index(i)]
                .docs()?
                .state_of(id)?
                .is_some()),
        }
    };
    for k in 0..rebuilt.len() {
        let (r, ranges) = (rebuilt[k].0, rebuilt[k].1.lost_documents.clone());
        if ranges.is_empty() || rebuilt[k].1.documents_lost == 0 {
            continue;
        }
        let mut candidates: Vec<String> = Vec::new();
        for older in 0..r {
            for &(lo, hi) in &ranges {
                match rebuilt.iter().find(|(i, _)| *i == older) {
                    Some((_, o)) => candidates.extend(
                        o.documents
                            .iter()
                            .filter(|(h, _, s)| {
                                (lo..=hi).contains(h) && matches!(s, DocState::Live { .. })
                            })
                            .map(|(_, id, _)| id.clone()),
                    ),
                    None => {
                        let docs = intact.runs()[intact_index(older)].docs()?;
                        let mut scan = docs.scan_documents_in(lo, hi)?;
                        let mut block = Vec::new();
                        while scan.next_block(&mut block)? {
                            candidates.extend(
                                block
                                    .drain(..)
                                    .filter(|(_, _, s)| matches!(s, DocState::Live { .. }))
                                    .map(|(_, id, _)| id),
                            );
                        }
                    }
                }
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        let mut named = Vec::new();
        for id in candidates {
            let mut mentioned = false;
            for i in r..catalog.runs.len() {
                if mentions(rebuilt, i, &id)? {
                    mentioned = true;
                    break;
                }
            }
            if !mentioned && named.len() < LISTED_IDS {
                named.push(id);
            }
        }
        rebuilt[k].1.ids_maybe_undeleted = named;
    }
    Ok(())
}
