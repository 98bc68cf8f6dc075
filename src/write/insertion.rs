//! An insert in progress: documents arrive in any number, are written a run at a time, and
//! commit together as one batch.
//!
//! Memory is bounded by the documents of one run (docs/benchmarks.md, "Memory"), not by the
//! batch: an [`Insertion`] collects documents until it holds
//! `run_documents` of them, writes them as a run that the catalog does not name yet, and goes
//! on. [`Insertion::commit`] names every run it wrote in one catalog commit, so the batch is
//! still all or nothing; dropping an insertion (or a crash) leaves the store as it was, and
//! the unnamed runs are deleted.
//!
//! Each run's documents are checked against the committed runs and the runs written before it,
//! so an id repeated in a later run of the same batch supersedes its earlier document, as a
//! repeated id does within one run. The counts of the summary are those of one run, with one
//! exception: nothing is written for an unchanged id, so if it comes again in a later run it
//! counts as unchanged (or replaced) again instead of superseded.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::format::block::docs::DocState;
use crate::format::catalog::BatchKind;
use crate::read::snapshot::{batch_cache_bytes, Snapshot};
use crate::run::{RunContents, RunReader};
use crate::sys::prefetch;
use crate::sys::progress::Phase;
use crate::tables::radix;
use crate::write::batch::{check_label, Batch, DocumentSink, ReadSummary};
use crate::write::commit::PendingCommit;
use crate::write::compaction::CompactSummary;
use crate::write::store::Store;
use crate::write::tally;

/// What an insert did. Its JSON form is what every client answers an insert with (`insert
/// --json`, `POST /v1/documents`, Python's `insert*`): these fields, the read's `lines` and
/// `skipped`, and the merge that followed.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct InsertSummary {
    /// The batch number, or None when nothing changed and no batch was recorded.
    pub batch: Option<u64>,
    /// Ids that were not stored before.
    pub inserted: u64,
    /// Ids stored before with another fingerprint.
    pub replaced: u64,
    /// Ids stored before with the same fingerprint (nothing written for them).
    pub unchanged: u64,
    /// Documents in the input that a later document with the same id overrode.
    pub superseded: u64,
    /// Fingerprints added to the permuted tables (the others were already there).
    pub new_fingerprints: u64,
    /// Runs the batch was written as (see [`Insertion`]); 0 when nothing changed.
    pub runs: u64,
    /// What reading the input did, as [`Insertion::record_read`] was told; else every
    /// document given counts as a line read.
    #[serde(flatten)]
    pub read: ReadSummary,
    /// The merge the store's compaction policy asked for after the commit, if one ran.
    pub compaction: Option<CompactSummary>,
    /// Why that merge failed, if it did. The batch is committed all the same and the store is
    /// intact; [`Store::compact_if_due`] tries again.
    pub compaction_failure: Option<String>,
}

impl Store {
    /// Inserts a batch as one run, all or nothing: each id gets its fingerprint, replacing
    /// the one it had. For batches too large to hold in memory, see [`Store::begin_insert`].
    pub fn insert(&mut self, batch: &Batch, label: Option<&str>) -> Result<InsertSummary> {
        let mut insertion = self.begin_insert(label);
        insertion.write(batch)?;
        insertion.commit()
    }

    /// Starts inserting a batch of any size, written a run at a time and committed as one
    /// (see [`Insertion`]).
    pub fn begin_insert(&mut self, label: Option<&str>) -> Insertion<'_> {
        Insertion::new(self, label)
    }

    /// An insertion as `options` say (checked by the caller).
    pub(crate) fn begin_insert_as(&mut self, options: &InsertOptions) -> Insertion<'_> {
        // A store whose merges a Database runs in the background leaves them to it.
        let compact = options.compact && self.compact_inserts;
        self.begin_insert(options.label.as_deref())
            .run_documents(options.run_documents)
            .compact_after(compact)
    }
}

/// How an insert writes its batch.
#[derive(Clone, Debug)]
pub struct InsertOptions {
    /// A label recorded with the batch (at most [`crate::Batch::MAX_LABEL_BYTES`] bytes, no
    /// control characters), for `batches` and `expire --batch`.
    pub label: Option<String>,
    /// Documents per run (see [`crate::Insertion::run_documents`]).
    pub run_documents: usize,
    /// Whether runs are merged after the commit when the store's compaction policy asks
    /// (see [`Insertion::compact_after`]); a [`crate::Database`] merges as its own options say.
    pub compact: bool,
}

impl Default for InsertOptions {
    /// No label, [`crate::Insertion::DEFAULT_RUN_DOCUMENTS`] per run, merging as the policy
    /// asks.
    fn default() -> Self {
        InsertOptions {
            label: None,
            run_documents: DEFAULT_RUN_DOCUMENTS,
            compact: true,
        }
    }
}

impl InsertOptions {
    /// Checks what can be checked before any input is read: the label.
    pub fn check(&self) -> Result<()> {
        match &self.label {
            Some(label) => check_label(label),
            None => Ok(()),
        }
    }
}

/// Documents per run unless [`Insertion::run_documents`] says otherwise: what a run's write
/// holds in memory is in docs/benchmarks.md, "Memory".
pub(crate) const DEFAULT_RUN_DOCUMENTS: usize = 10_000_000;

/// One batch being inserted. Made by [`Store::begin_insert`]; fed with [`Insertion::push`],
/// [`Insertion::append`] or [`Insertion::write`]; ended by [`Insertion::commit`].
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("store");
/// use simhashdb::{Settings, Snapshot, Store};
///
/// let mut store = Store::create(&path, Settings::default())?;
/// let mut insertion = store.begin_insert(Some("crawl-1")).run_documents(2);
/// for (i, fp) in [0x10u64, 0x11, 0xff00, 0x10].into_iter().enumerate() {
///     insertion.push(&format!("doc-{i}"), fp)?; // a run is written every 2 documents
/// }
/// let summary = insertion.commit()?; // both runs become visible together
/// assert_eq!(summary.inserted, 4);
/// assert_eq!(store.run_count(), 2);
/// assert_eq!(Snapshot::open(&path)?.query(0x10, 1)?.len(), 3);
/// # Ok::<(), simhashdb::Error>(())
/// ```
pub struct Insertion<'s> {
    store: &'s mut Store,
    /// The store's catalog plus the runs written so far, and those runs' directories.
    commit: PendingCommit,
    label: Option<String>,
    summary: InsertSummary,
    /// Documents not yet written.
    pending: Batch,
    run_documents: usize,
    compact_after: bool,
    /// A write failed part-way: the counts may hold documents no run holds, so the insertion
    /// refuses to go on (its runs are removed when it is dropped).
    failed: bool,
    /// What reading the input did, when the caller read it.
    read: Option<ReadSummary>,
}

impl<'s> Insertion<'s> {
    /// Documents per run unless [`Insertion::run_documents`] says otherwise (docs/benchmarks.md,
    /// "Memory", says what a run's write holds).
    pub const DEFAULT_RUN_DOCUMENTS: usize = DEFAULT_RUN_DOCUMENTS;

    pub(crate) fn new(store: &'s mut Store, label: Option<&str>) -> Self {
        let compact_after = store.compact_inserts;
        Insertion {
            commit: store.begin_commit(),
            store,
            label: label.map(str::to_string),
            summary: InsertSummary::default(),
            pending: Batch::new(),
            run_documents: DEFAULT_RUN_DOCUMENTS,
            compact_after,
            failed: false,
            read: None,
        }
    }

    /// Writes a run whenever `n` (at least 1) documents are waiting. Fewer, larger runs make
    /// queries probe fewer places; more, smaller ones use less memory.
    pub fn run_documents(mut self, n: usize) -> Self {
        self.run_documents = n.max(1);
        self
    }

    /// Whether [`Insertion::commit`] merges runs after the commit when the store's
    /// [`CompactionPolicy`](crate::CompactionPolicy) asks for it (the default). Without it the
    /// runs wait for [`Store::compact_if_due`], e.g. called in the background.
    pub fn compact_after(mut self, compact: bool) -> Self {
        self.compact_after = compact;
        self
    }

    /// Records what reading the input into this insertion did (lines read, invalid ones
    /// skipped), for the summary; reads of several inputs add up.
    pub fn record_read(&mut self, read: ReadSummary) {
        self.read.get_or_insert_with(ReadSummary::default).add(read);
    }

    /// Adds a document (see [`Batch::push`] for what an id may be).
    pub fn push(&mut self, id: &str, fingerprint: u64) -> Result<()> {
        self.pending.push(id, fingerprint)?;
        self.write_if_full()
    }

    /// Adds every document of `documents`, in order.
    pub fn append(&mut self, documents: Batch) -> Result<()> {
        if self.pending.len() + documents.len() < self.run_documents {
            self.pending.append(documents);
            return Ok(());
        }
        // Cut runs at exactly `run_documents`.
        for i in 0..documents.len() {
            let (id, fingerprint) = (documents.id(i), documents.fingerprint(i));
            match documents.sketch(i) {
                Some(sketch) => self.pending.push_sketched(id, fingerprint, sketch)?,
                None => self.pending.push(id, fingerprint)?,
            }
            self.write_if_full()?;
        }
        Ok(())
    }

    fn write_if_full(&mut self) -> Result<()> {
        if self.pending.len() >= self.run_documents {
            let pending = std::mem::take(&mut self.pending);
            self.write(&pending)?;
        }
        Ok(())
    }

    /// Writes `documents` as one run of this batch (whatever their number), after the
    /// documents added before them.
    /// After a failed write the insertion refuses every later call: start the batch again.
    pub fn write(&mut self, documents: &Batch) -> Result<()> {
        self.check_usable()?;
        let written = self.write_run(documents);
        self.failed = written.is_err();
        written
    }

    fn check_usable(&self) -> Result<()> {
        if self.failed {
            return Err(Error::AfterEarlierFailure {
                path: self.store.dir().to_path_buf(),
            });
        }
        Ok(())
    }

    /// [`Insertion::write`] without the check.
    fn write_run(&mut self, documents: &Batch) -> Result<()> {
        if !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            self.write_run(&pending)?;
        }
        if documents.is_empty() {
            return Ok(());
        }
        let batch_id = self.commit.catalog().next_batch;
        // The check is sorted passes over the docs and table 0: a cache that holds their
        // branch pages, as a batch of queries wants, not one that keeps every leaf read.
        let catalog = self.commit.catalog().clone();
        let cache = batch_cache_bytes(&catalog);
        let snapshot = Snapshot::from_catalog(self.store.dir(), catalog, cache)?;
        let checking = Phase::start(
            self.store.progress(),
            "checking the batch against the store",
            0,
        );
        let order = documents.sorted_unique();
        let summary = &mut self.summary;
        summary.superseded += (documents.len() - order.len()) as u64;

        // What the committed runs say of each id (`before`), and what the runs this batch
        // wrote so far say (`earlier`); newest run first in each. With no runs to ask (the
        // first run into an empty store), neither is needed.
        let (committed, ours) = snapshot.runs().split_at(self.store.catalog().runs.len());
        let keys: Vec<(u64, &str)> = if snapshot.runs().is_empty() {
            Vec::new()
        } else {
            order
                .par_iter()
                .map(|&(hash, i)| (hash, documents.id(i as usize)))
                .collect()
        };
        let states_in = |runs: &[RunReader]| -> Result<Vec<Option<DocState>>> {
            let mut states = vec![None; if runs.is_empty() { 0 } else { keys.len() }];
            for run in runs.iter().rev() {
                run.docs()?.states_sorted(&keys, &mut states)?;
            }
            Ok(states)
        };
        let before = states_in(committed)?;
        let earlier = states_in(ours)?;
        drop(keys);

        let inserted_before = summary.inserted;
        let (counts, writes) = tally::tally_batch(&order, documents, (&before, &earlier));
        add_counts(summary, counts);
        // The documents to write, gathered in order. When all are written (a bulk load) the
        // gathering is indexed, so rayon writes them straight into place instead of joining
        // per-thread vectors.
        let change = |(j, &(hash, i)): (usize, &(u64, u32))| {
            if let Some(&(_, later)) = order.get(j + prefetch::AHEAD) {
                documents.prefetch(later as usize);
            }
            let state = DocState::Live {
                fingerprint: documents.fingerprint(i as usize),
                batch: batch_id,
            };
            (hash, documents.id(i as usize), state)
        };
        let changed: Vec<(u64, &str, DocState)> = if writes.iter().all(|&w| w) {
            order.par_iter().enumerate().map(change).collect()
        } else {
            order
                .par_iter()
                .enumerate()
                .zip(&writes)
                .filter_map(|(doc, &write)| write.then(|| change(doc)))
                .collect()
        };
        let inserted = summary.inserted - inserted_before;
        if changed.is_empty() {
            return Ok(());
        }
        let sketch_bytes = self.commit.catalog().sketch_bytes;
        let (postings, sketches) = if sketch_bytes == 0 {
            (postings_of(&changed), Vec::new())
        } else {
            let written = order
                .iter()
                .zip(&writes)
                .filter_map(|(&(_, i), &write)| write.then_some(i as usize));
            sketched_postings_of(&changed, written, documents, sketch_bytes)?
        };
        let fingerprints = new_fingerprints(&snapshot, &postings)?;
        summary.new_fingerprints += fingerprints.len() as u64;
        drop(snapshot);
        drop(checking);

        self.commit.catalog_mut().documents += inserted;
        let contents = RunContents {
            documents: &changed,
            postings: &postings,
            sketches: &sketches,
            fingerprints: &fingerprints,
        };
        self.commit.add_run(&contents, self.store.progress())
    }

    /// Writes what is pending and commits every run of the batch at once, after checking its
    /// label ([`Batch::check_label`]). When nothing
    /// changed, no batch is recorded (`batch` is None in the summary). Then, unless
    /// [`Insertion::compact_after`] said otherwise, merges runs as the store's compaction policy
    /// asks; the batch is committed whether or not that merge succeeds (see
    /// [`InsertSummary::compaction_failure`]).
    pub fn commit(mut self) -> Result<InsertSummary> {
        self.check_usable()?;
        if let Some(label) = &self.label {
            check_label(label)?;
        }
        let pending = std::mem::take(&mut self.pending);
        self.write(&pending)?;
        let mut summary = self.summary.clone();
        summary.runs = self.commit.written_runs() as u64;
        summary.read = self.read.take().unwrap_or_else(|| {
            let given =
                summary.inserted + summary.replaced + summary.unchanged + summary.superseded;
            ReadSummary {
                lines: given,
                documents: given,
                ..ReadSummary::default()
            }
        });
        let Insertion {
            store,
            mut commit,
            label,
            compact_after,
            ..
        } = self;
        if summary.runs > 0 {
            let batch = commit.add_batch(BatchKind::Insert, label.as_deref());
            batch.inserted = summary.inserted;
            batch.replaced = summary.replaced;
            batch.unchanged = summary.unchanged;
            summary.batch = Some(batch.id);
            store.commit(commit)?;
        }
        // Even when nothing changed: runs left by deletions may be due a merge.
        if compact_after {
            match store.compact_if_due() {
                Ok(compaction) => summary.compaction = compaction,
                Err(e) => summary.compaction_failure = Some(e.to_string()),
            }
        }
        Ok(summary)
    }
}

/// Adds a run's counts to the batch's.
fn add_counts(summary: &mut InsertSummary, counts: tally::Counts) {
    let add = |total: &mut u64, part: i64| {
        *total = total
            .checked_add_signed(part)
            .expect("a batch never takes back more than it counted");
    };
    add(&mut summary.inserted, counts.inserted);
    add(&mut summary.replaced, counts.replaced);
    add(&mut summary.unchanged, counts.unchanged);
    add(&mut summary.superseded, counts.superseded);
}

impl DocumentSink for Insertion<'_> {
    fn append(&mut self, documents: Batch) -> Result<()> {
        Insertion::append(self, documents)
    }
}

/// `(fingerprint, id, batch)` of each document, ordered by fingerprint then id.
fn postings_of<'a>(documents: &[(u64, &'a str, DocState)]) -> Vec<(u64, &'a str, u64)> {
    radix::par_sorted_by_key_bits(
        documents,
        |&(_, id, state)| match state {
            DocState::Live { fingerprint, batch } => (fingerprint, id, batch),
            DocState::Deleted { .. } => unreachable!("a batch inserts only live documents"),
        },
        |p| p.0,
        |a, b| a.cmp(b),
    )
}

/// A posting to write: `(fingerprint, id, batch)`, and its document's sketch, if any.
type Posting<'a> = (u64, &'a str, u64);
type Sketch<'a> = Option<&'a [u8]>;

/// [`postings_of`] with each posting's sketch: `written` are the batch indices of `changed`'s
/// documents, in order. A sketch of another size than the store's is an error naming the
/// document.
fn sketched_postings_of<'a>(
    changed: &[(u64, &'a str, DocState)],
    written: impl Iterator<Item = usize>,
    documents: &'a Batch,
    sketch_bytes: u16,
) -> Result<(Vec<Posting<'a>>, Vec<Sketch<'a>>)> {
    let mut postings: Vec<(Posting<'a>, Sketch<'a>)> = Vec::with_capacity(changed.len());
    for (&(_, id, state), i) in changed.iter().zip(written) {
        let DocState::Live { fingerprint, batch } = state else {
            unreachable!("a batch inserts only live documents")
        };
        let sketch = documents.sketch(i);
        if let Some(sketch) = sketch.filter(|s| s.len() != usize::from(sketch_bytes)) {
            return Err(Error::input(format!(
                "document {id:?} has a sketch of {} bytes; the store keeps sketches of \
                 {sketch_bytes}",
                sketch.len()
            )));
        }
        postings.push(((fingerprint, id, batch), sketch));
    }
    radix::par_sort_by_key_bits(&mut postings, |p| p.0 .0, |a, b| a.0.cmp(&b.0));
    Ok(postings.into_iter().unzip())
}

/// The distinct fingerprints of `postings` that no live run's tables hold yet, ascending.
fn new_fingerprints(snapshot: &Snapshot, postings: &[(u64, &str, u64)]) -> Result<Vec<u64>> {
    let mut fingerprints: Vec<u64> = postings.iter().map(|&(fp, _, _)| fp).collect();
    fingerprints.dedup();
    let mut found = vec![false; fingerprints.len()];
    let perms = snapshot.permutations();
    for run in snapshot.runs() {
        // One task per shard: table 0 is the identity, so a fingerprint's shard is its own
        // leading bits, and the sorted fingerprints fall into consecutive shard groups.
        let mut groups = Vec::new();
        let (mut rest, mut rest_found) = (&fingerprints[..], &mut found[..]);
        while let Some(&first) = rest.first() {
            let shard = perms.shard_of(first);
            let len = rest.partition_point(|&fp| perms.shard_of(fp) == shard);
            let (group, tail) = rest.split_at(len);
            let (group_found, tail_found) = rest_found.split_at_mut(len);
            groups.push((shard, group, group_found));
            (rest, rest_found) = (tail, tail_found);
        }
        groups
            .into_par_iter()
            .try_for_each(|(shard, group, group_found)| match run.shard(shard)? {
                Some(file) => file.contains_sorted(group, group_found),
                None => Ok(()),
            })?;
    }
    Ok(fingerprints
        .into_iter()
        .zip(found)
        .filter_map(|(fp, found)| (!found).then_some(fp))
        .collect())
}
