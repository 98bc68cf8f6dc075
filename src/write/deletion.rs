//! Deleting documents: by id ([`Store::delete`]) or by the insert batch that stored them
//! ([`Store::expire`]). A deletion is a run of deletion entries, committed like a batch; the
//! deleted documents' fingerprints stop matching at once and leave the tables at the next
//! compaction that includes their run.

use rayon::prelude::*;

use crate::error::{Error, Result, Setting};
use crate::format::block::docs::{id_hash, DocState};
use crate::format::catalog::{BatchKind, BatchMeta, Catalog};
use crate::read::snapshot::Snapshot;
use crate::run::RunContents;
use crate::sys::dates;
use crate::write::batch::check_id;
use crate::write::store::Store;

impl Store {
    /// Deletes documents by id, all or nothing. Their fingerprints stop matching at once and
    /// leave the tables at the next compaction. An id no batch could hold (see
    /// [`crate::Batch::check_id`]) is refused by its place, `ids[i]`, and nothing is deleted.
    pub fn delete<'a>(&mut self, ids: impl IntoIterator<Item = &'a str>) -> Result<DeleteSummary> {
        let (live, summary) = plan_delete(&self.snapshot()?, ids)?;
        self.delete_sorted(&live, BatchKind::Delete, None, summary, &[])
    }

    /// Deletes every document still in the insert batches `selector` picks, all or nothing.
    ///
    /// A date in the future is refused: it would expire every batch, the ones committed
    /// until then too ([`Snapshot::preview_expire`] shows what any date takes).
    pub fn expire(&mut self, selector: &ExpireSelector) -> Result<DeleteSummary> {
        if let ExpireSelector::Before(t) = selector {
            let now = dates::now_unix_s();
            if *t > now {
                return Err(Error::settings(
                    Setting::ExpireBefore,
                    format!(
                        "{} is in the future (now is {}): it would expire every batch; give a \
                         past date, or look first with a dry run",
                        dates::format_utc(*t),
                        dates::format_utc(now)
                    ),
                ));
            }
        }
        let ExpirePlan {
            doomed,
            batches,
            summary,
        } = plan_expire(&self.snapshot()?, selector)?;
        let keys: Vec<(u64, &str)> = doomed.iter().map(|(h, id)| (*h, id.as_str())).collect();
        let label = match selector {
            ExpireSelector::Before(t) => format!("before {}", dates::format_utc(*t)),
            ExpireSelector::Label(l) => format!("label {l}"),
        };
        self.delete_sorted(&keys, BatchKind::Expire, Some(&label), summary, &batches)
    }
}

/// Dry runs read a snapshot only: they take no lock and change no byte of the store.
impl Snapshot {
    /// What [`Store::delete`] would do to this state, without doing it: `batch` is None in
    /// the summary.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("store");
    /// use simhashdb::{Batch, Settings, Snapshot, Store};
    ///
    /// let mut store = Store::create(&path, Settings::default())?;
    /// let mut batch = Batch::new();
    /// batch.push("a", 0x0123_4567_89ab_cdef)?;
    /// store.insert(&batch, None)?;
    /// let plan = Snapshot::open(&path)?.preview_delete(["a", "gone", "a"])?;
    /// assert_eq!((plan.deleted, plan.not_found, plan.repeated), (1, 1, 1));
    /// assert_eq!(store.snapshot()?.documents(), 1); // a dry run changes nothing
    /// # Ok::<(), simhashdb::Error>(())
    /// ```
    pub fn preview_delete<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> Result<DeleteSummary> {
        Ok(DeleteSummary {
            dry_run: true,
            ..plan_delete(self, ids)?.1
        })
    }

    /// What [`Store::expire`] would do to this state, without doing it: `batch` is None in
    /// the summary, and `expired_batches` lists the batches it would expire.
    pub fn preview_expire(&self, selector: &ExpireSelector) -> Result<DeleteSummary> {
        let plan = plan_expire(self, selector)?;
        Ok(DeleteSummary {
            expired_batches: plan.batches,
            dry_run: true,
            ..plan.summary
        })
    }
}

/// The live documents among `ids` in `snapshot`, ordered by `(id_hash, id)`, and what
/// deleting them does.
fn plan_delete<'a>(
    snapshot: &Snapshot,
    ids: impl IntoIterator<Item = &'a str>,
) -> Result<(Vec<(u64, &'a str)>, DeleteSummary)> {
    // An id no batch can hold is a caller's mistake, not an id "not found".
    let mut keys: Vec<(u64, &str)> = ids
        .into_iter()
        .enumerate()
        .map(|(i, id)| match check_id(id) {
            Ok(()) => Ok((id_hash(id.as_bytes()), id)),
            Err(e) => Err(Error::input(format!("ids[{i}]: {e}"))),
        })
        .collect::<Result<_>>()?;
    let asked = keys.len() as u64;
    keys.par_sort_unstable();
    keys.dedup();
    let live = live_among(snapshot, &keys)?;
    let summary = DeleteSummary {
        batch: None,
        deleted: live.len() as u64,
        not_found: keys.len() as u64 - live.len() as u64,
        repeated: asked - keys.len() as u64,
        expired_batches: Vec::new(),
        expire: false,
        dry_run: false,
    };
    Ok((live, summary))
}

/// What an expiry of `snapshot` deletes and expires.
fn plan_expire(snapshot: &Snapshot, selector: &ExpireSelector) -> Result<ExpirePlan> {
    let batches = selector.batches(snapshot.catalog());
    if let ExpireSelector::Label(label) = selector {
        let labelled =
            |b: &&BatchMeta| b.kind == BatchKind::Insert && b.label == Some(label.clone());
        if !snapshot.catalog().batches.iter().any(|b| labelled(&b)) {
            return Err(Error::NoSuchLabel {
                label: label.clone(),
            });
        }
    }
    let mut doomed: Vec<(u64, String)> = Vec::new();
    if !batches.is_empty() {
        snapshot.for_each_live_document(|id, _, batch| {
            if batches.binary_search(&batch).is_ok() {
                doomed.push((id_hash(id.as_bytes()), id.to_string()));
            }
        })?;
    }
    doomed.par_sort_unstable();
    let summary = DeleteSummary {
        batch: None,
        deleted: doomed.len() as u64,
        not_found: 0,
        repeated: 0,
        expired_batches: Vec::new(),
        expire: true,
        dry_run: false,
    };
    Ok(ExpirePlan {
        doomed,
        batches,
        summary,
    })
}

impl Store {
    /// Commits deletions of the live documents `keys` (ordered by `(id_hash, id)`), marking
    /// the insert batches `expired` as expired by it.
    fn delete_sorted(
        &mut self,
        keys: &[(u64, &str)],
        kind: BatchKind,
        label: Option<&str>,
        mut summary: DeleteSummary,
        expired: &[u64],
    ) -> Result<DeleteSummary> {
        if keys.is_empty() && expired.is_empty() {
            return Ok(summary);
        }
        let mut pending = self.begin_commit();
        let batch = pending.add_batch(kind, label);
        batch.deleted = keys.len() as u64;
        let batch = batch.id;
        let documents: Vec<(u64, &str, DocState)> = keys
            .iter()
            .map(|&(hash, id)| (hash, id, DocState::Deleted { batch }))
            .collect();
        let next = pending.catalog_mut();
        next.documents -= keys.len() as u64;
        for b in next.batches.iter_mut() {
            if expired.contains(&b.id) && b.expired_by.is_none() {
                b.expired_by = Some(batch);
            }
        }
        let contents = RunContents {
            documents: &documents,
            postings: &[],
            sketches: &[],
            fingerprints: &[],
        };
        pending.add_run(&contents, self.progress())?;
        self.commit(pending)?;
        summary.batch = Some(batch);
        summary.expired_batches = expired.to_vec();
        Ok(summary)
    }
}

/// What an expiry would do.
struct ExpirePlan {
    /// The live documents it deletes, ordered by `(id_hash, id)`.
    doomed: Vec<(u64, String)>,
    /// The insert batches it expires, ascending.
    batches: Vec<u64>,
    summary: DeleteSummary,
}

/// The ids among `keys` (ordered by `(id_hash, id)`) that are live now.
fn live_among<'a>(snapshot: &Snapshot, keys: &[(u64, &'a str)]) -> Result<Vec<(u64, &'a str)>> {
    let mut states: Vec<Option<DocState>> = vec![None; keys.len()];
    for run in snapshot.runs().iter().rev() {
        run.docs()?.states_sorted(keys, &mut states)?;
    }
    Ok(keys
        .iter()
        .zip(states)
        .filter(|(_, s)| matches!(s, Some(DocState::Live { .. })))
        .map(|(&k, _)| k)
        .collect())
}

/// Which insert batches `expire` removes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpireSelector {
    /// Batches committed before this time (seconds since the Unix epoch).
    Before(u64),
    /// Batches with this label.
    Label(String),
}

impl ExpireSelector {
    /// Batches committed before `text`: `YYYY-MM-DD` (midnight UTC), `YYYY-MM-DDTHH:MM:SSZ`,
    /// or `Nd` for N days before now.
    pub fn before_date(text: &str) -> Result<Self> {
        dates::parse_time(text, dates::now_unix_s())
            .map(ExpireSelector::Before)
            .ok_or_else(|| {
                Error::input(format!(
                    "{text:?} is not a date: use YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ (UTC) or Nd \
                     (N days ago)"
                ))
            })
    }

    /// The insert batches of `catalog` this selector expires now, ascending: those it picks
    /// that no earlier expire took (so expiring again changes nothing).
    pub(crate) fn batches(&self, catalog: &Catalog) -> Vec<u64> {
        catalog
            .batches
            .iter()
            .filter(|b| b.kind == BatchKind::Insert && b.expired_by.is_none() && self.picks(b))
            .map(|b| b.id)
            .collect()
    }

    fn picks(&self, batch: &BatchMeta) -> bool {
        match self {
            ExpireSelector::Before(t) => batch.committed_unix_s < *t,
            ExpireSelector::Label(l) => batch.label.as_deref() == Some(l.as_str()),
        }
    }
}

/// What a delete or expire did, or would do (a dry run: [`Snapshot::preview_delete`],
/// [`Snapshot::preview_expire`]). Its JSON form, what every client answers with, is
/// `{"batch", "deleted", "not_found", "repeated", "dry_run"}` for a delete and
/// `{"batch", "expired_batches", "deleted", "dry_run"}` for an expire.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteSummary {
    /// The batch number, or None when nothing changed.
    pub batch: Option<u64>,
    /// Live documents deleted.
    pub deleted: u64,
    /// Ids asked for that were not stored (or already deleted).
    pub not_found: u64,
    /// Ids asked for more than once (counted once).
    pub repeated: u64,
    /// The insert batches an expire marked as expired by this batch, ascending.
    pub expired_batches: Vec<u64>,
    /// Whether this is a preview: nothing was changed.
    pub dry_run: bool,
    /// Whether this is an expire's summary (its JSON form differs).
    expire: bool,
}

impl serde::Serialize for DeleteSummary {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("DeleteSummary", 5)?;
        out.serialize_field("batch", &self.batch)?;
        if self.expire {
            out.serialize_field("expired_batches", &self.expired_batches)?;
        }
        out.serialize_field("deleted", &self.deleted)?;
        if !self.expire {
            out.serialize_field("not_found", &self.not_found)?;
            out.serialize_field("repeated", &self.repeated)?;
        }
        out.serialize_field("dry_run", &self.dry_run)?;
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use crate::format::settings::Settings;
    use crate::write::batch::Batch;
    use crate::write::store::Store;

    #[test]
    fn an_id_no_batch_could_hold_is_refused_by_its_place_and_nothing_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create(&dir.path().join("s"), Settings::default()).unwrap();
        let mut batch = Batch::new();
        batch.push("a", 1).unwrap();
        store.insert(&batch, None).unwrap();
        for bad in ["", "tab\there"] {
            let e = store.delete(["a", bad]).unwrap_err();
            assert!(e.to_string().starts_with("ids[1]: "), "{e}");
            let e = store
                .snapshot()
                .unwrap()
                .preview_delete(["a", bad])
                .unwrap_err();
            assert!(e.to_string().starts_with("ids[1]: "), "{e}");
        }
        assert_eq!(store.snapshot().unwrap().get("a").unwrap(), Some(1));
        assert_eq!(store.delete(["a"]).unwrap().deleted, 1);
    }
}
