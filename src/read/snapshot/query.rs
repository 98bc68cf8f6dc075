//! A query: every stored document within k bits of a fingerprint, verified with sketches when
//! asked (many at once: operations/query.rs); the distance a client asks for, checked.

use super::*;
use rayon::prelude::*;

/// Queries from which [`Snapshot::close_fingerprints_many`] probes each table in key order:
/// fewer are as fast one by one, and sorting them costs more than it saves.
const SORTED_PROBES_FROM: usize = 256;
/// Probes per parallel task of [`Snapshot::close_fingerprints_many`]: each task descends to
/// its first block once, so tasks should be long; and there should be enough for every thread.
const PROBES_PER_TASK: usize = 1 << 12;

impl Snapshot {
    /// Every stored document whose fingerprint is within `distance` bits of `query`, ordered by
    /// (distance, fingerprint, id). `distance` may not exceed the store's K.
    pub fn query(&self, query: u64, distance: u32) -> Result<Vec<Match>> {
        guard_redb(&self.dir, || self.query_unguarded(query, distance))
    }

    pub(super) fn query_unguarded(&self, query: u64, distance: u32) -> Result<Vec<Match>> {
        self.matches_of(self.close_fingerprints(query, distance)?)
    }

    /// The matches of a query whose close fingerprints are `close`, ordered as
    /// [`Snapshot::query`] orders them.
    pub(crate) fn matches_of(&self, close: Vec<(u64, u32)>) -> Result<Vec<Match>> {
        let mut matches = Vec::new();
        for (fp, d) in close {
            self.live_ids(fp, |id| matches.push(Match::new(d, fp, id.to_string())))?;
        }
        matches.sort_unstable();
        Ok(matches)
    }

    /// [`Snapshot::matches_of`] of many queries' close fingerprints: the documents of every
    /// fingerprint close to some query read once, together (see
    /// [`Snapshot::live_documents_of_all`]). Memory: those documents, as the answers hold them.
    pub(crate) fn matches_of_many(&self, close: Vec<Vec<(u64, u32)>>) -> Result<Vec<Vec<Match>>> {
        let mut wanted: Vec<u64> = close.iter().flatten().map(|&(fp, _)| fp).collect();
        wanted.par_sort_unstable();
        wanted.dedup();
        let mut documents = self.live_documents_of_all(&wanted, &())?;
        documents.par_sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        Ok(close
            .into_par_iter()
            .with_min_len(64)
            .map(|close| {
                let mut matches = Vec::new();
                for (fp, d) in close {
                    for (_, id, _) in with_fingerprint(&documents, fp) {
                        matches.push(Match::new(d, fp, id.to_string()));
                    }
                }
                matches.sort_unstable();
                matches
            })
            .collect())
    }

    /// [`Snapshot::matches_of`], verified with `sketch` (see [`Snapshot::query_many`]).
    pub(crate) fn verified_matches_of(
        &self,
        close: Vec<(u64, u32)>,
        sketch: Option<&[u8]>,
        min_jaccard: f64,
    ) -> Result<Vec<Match>> {
        let Some(ours) = sketch else {
            return Ok(self
                .matches_of(close)?
                .into_iter()
                .map(|m| m.verified(None))
                .collect());
        };
        let mut matches = Vec::new();
        let distances: std::collections::HashMap<u64, u32> = close.iter().copied().collect();
        let fingerprints: Vec<u64> = close.iter().map(|&(fp, _)| fp).collect();
        self.live_sketched_documents_of(&fingerprints, |fp, id, _, theirs| {
            let d = distances[&fp];
            matches.extend(verified_match(d, fp, id, Some(ours), theirs, min_jaccard));
        })?;
        matches.sort_unstable();
        Ok(matches)
    }

    /// [`Snapshot::verified_matches_of`] of many queries (`close[i]` is `queries[i]`'s close
    /// fingerprints; `sketches[i]` its sketch), where every stored document has a sketch
    /// ([`Snapshot::sketches_complete`]): the documents of every fingerprint close to some
    /// query are read once, together with their sketches (see
    /// [`Snapshot::live_documents_with_sketches`]), instead of a lookup per query and
    /// fingerprint. Memory: those documents with their sketches.
    pub(crate) fn verified_matches_of_many(
        &self,
        close: Vec<Vec<(u64, u32)>>,
        sketches: &[Option<&[u8]>],
        min_jaccard: f64,
    ) -> Result<Vec<Vec<Match>>> {
        debug_assert!(self.sketches_complete());
        let mut wanted: Vec<u64> = close.iter().flatten().map(|&(fp, _)| fp).collect();
        wanted.par_sort_unstable();
        wanted.dedup();
        type Part = Vec<(u64, Box<str>, Box<[u8]>)>;
        let parts = self.live_documents_with_sketches(
            &wanted,
            Part::new,
            |part: &mut Part, fp, id, _, sketch| part.push((fp, id.into(), sketch.into())),
            &(),
        )?;
        let mut documents: Part = parts.into_iter().flatten().collect();
        documents.par_sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        Ok(close
            .into_par_iter()
            .zip(sketches)
            .with_min_len(64)
            .map(|(close, ours)| {
                let mut matches = Vec::new();
                for (fp, d) in close {
                    for (_, id, theirs) in with_fingerprint(&documents, fp) {
                        let theirs = Some(&theirs[..]);
                        matches.extend(verified_match(d, fp, id, *ours, theirs, min_jaccard));
                    }
                }
                matches.sort_unstable();
                matches
            })
            .collect())
    }

    /// Every fingerprint in the tables within `distance` bits of `query`, with its distance,
    /// in no set order; fingerprints whose documents were all replaced are included.
    pub(crate) fn close_fingerprints(&self, query: u64, distance: u32) -> Result<Vec<(u64, u32)>> {
        self.check_distance(distance)?;
        let mut found: Vec<(u64, u32)> = Vec::new();
        let mut check = |t: usize, key: u64, candidate: u64| {
            found.extend(self.reported(t, query, key, candidate, distance));
        };
        // Pinned probes go in three passes over all tables and runs: locate each probe's keys
        // (a directory read), touch them, then scan them. Each pass's memory reads are
        // independent of one another, so the CPU overlaps their cache misses instead of
        // waiting for each in turn (docs/benchmarks.md: 5 runs x 10 tables at 1e8).
        struct PinnedProbe<'k> {
            table: usize,
            key: u64,
            lo: u64,
            hi: u64,
            candidates: &'k [u64],
        }
        let mut pinned: Vec<PinnedProbe> =
            Vec::with_capacity(self.perms.tables().len() * self.runs.len());
        let mut disk = 0;
        for (t, table) in self.perms.tables().iter().enumerate() {
            if !self.perms.is_needed(t, distance) {
                continue;
            }
            let key = table.permute(query);
            let (lo, hi) = table.prefix_range(key);
            for run in &self.runs {
                match run.pinned_table(t) {
                    Some(keys) => pinned.push(PinnedProbe {
                        table: t,
                        key,
                        lo,
                        hi,
                        candidates: keys.candidates(lo, hi),
                    }),
                    None => {
                        disk += 1;
                        run.probe_file(self.perms.shard_of(key), t, lo, hi, |c| check(t, key, c))?;
                    }
                }
            }
        }
        let touched = pinned
            .iter()
            .fold(0, |acc, p| acc ^ crate::run::pinned::touch(p.candidates));
        std::hint::black_box(touched);
        for p in &pinned {
            crate::run::pinned::for_each_in(p.candidates, p.lo, p.hi, |c| check(p.table, p.key, c));
        }
        let memory = pinned.len() as u64;
        self.probes.add(memory, disk);
        Ok(found)
    }

    /// [`Snapshot::close_fingerprints`] of each of `queries`. Through redb, each run's table
    /// is probed in its own key order, shard by shard in parallel: a block is read and
    /// checked once for all the queries whose keys start in it, and the reads go forward
    /// through each file instead of jumping about it. Pinned tables are probed query by
    /// query, as their probes cost no reads.
    pub(crate) fn close_fingerprints_many(
        &self,
        queries: &[u64],
        distance: u32,
    ) -> Result<Vec<Vec<(u64, u32)>>> {
        self.check_distance(distance)?;
        let tables = self.perms.tables().len();
        let pinned = self
            .runs
            .iter()
            .any(|run| (0..tables).any(|t| run.pinned_table(t).is_some()));
        // Query indices are u32s: more queries than that go one by one.
        if pinned || queries.len() < SORTED_PROBES_FROM || u32::try_from(queries.len()).is_err() {
            return queries
                .par_iter()
                .with_min_len(64)
                .map(|&q| self.close_fingerprints(q, distance))
                .collect();
        }
        // (query, fingerprint, distance) of every fingerprint found.
        let mut found: Vec<(u32, u64, u32)> = Vec::new();
        let mut probes = 0;
        for (t, table) in self.perms.tables().iter().enumerate() {
            if !self.perms.is_needed(t, distance) {
                continue;
            }
            let mut keyed: Vec<(u64, u32)> = queries
                .par_iter()
                .enumerate()
                .map(|(i, &q)| (table.permute(q), i as u32))
                .collect();
            keyed.par_sort_unstable();
            // A shard is its keys' leading bits: the sorted keys fall into shard groups, each
            // cut into tasks of at most PROBES_PER_TASK (a store of few shards still uses
            // every thread).
            let mut groups: Vec<&[(u64, u32)]> = Vec::new();
            let mut rest = &keyed[..];
            while let Some(&(first, _)) = rest.first() {
                let shard = self.perms.shard_of(first);
                let len = rest.partition_point(|&(key, _)| self.perms.shard_of(key) == shard);
                let (group, tail) = rest.split_at(len);
                groups.extend(group.chunks(PROBES_PER_TASK));
                rest = tail;
            }
            let parts: Vec<Vec<(u32, u64, u32)>> = groups
                .into_par_iter()
                .map(|group| {
                    let shard = self.perms.shard_of(group[0].0);
                    let ranges: Vec<(u64, u64)> = group
                        .iter()
                        .map(|&(key, _)| table.prefix_range(key))
                        .collect();
                    let mut out = Vec::new();
                    for run in &self.runs {
                        let Some(file) = run.shard(shard)? else {
                            continue;
                        };
                        file.probe_sorted(t, &ranges, |j, candidate| {
                            let (key, i) = group[j];
                            let query = queries[i as usize];
                            if let Some((fp, d)) = self.reported(t, query, key, candidate, distance)
                            {
                                out.push((i, fp, d));
                            }
                        })?;
                    }
                    Ok(out)
                })
                .collect::<Result<_>>()?;
            found.extend(parts.into_iter().flatten());
            probes += (queries.len() * self.runs.len()) as u64;
        }
        self.probes.add(0, probes);
        let mut out = vec![Vec::new(); queries.len()];
        for (i, fp, d) in found {
            out[i as usize].push((fp, d));
        }
        Ok(out)
    }

    /// The fingerprint and distance that a probe of table `t` for `query` (its key there:
    /// `key`) reports for the table's key `candidate`; None when it is farther than
    /// `distance`, or when another table reports it.
    fn reported(
        &self,
        t: usize,
        query: u64,
        key: u64,
        candidate: u64,
        distance: u32,
    ) -> Option<(u64, u32)> {
        // A permutation moves bits, so distances are the same between keys.
        let d = (candidate ^ key).count_ones();
        if d > distance {
            return None;
        }
        let fp = self.perms.tables()[t].unpermute(candidate);
        self.perms.reports(t, query, fp).then_some((fp, d))
    }

    /// The distance a query or an audit runs at: `asked`, from 0 to the store's K, or K when
    /// None. Every client reads the distance its users give through this (the CLI's
    /// `--distance`, the server's `distance`, Python's `distance=`), so all take the same
    /// numbers and refuse the others with the same message.
    pub fn distance(&self, asked: Option<i64>) -> Result<u32> {
        let max = u32::from(self.catalog.settings.distance);
        match asked {
            None => Ok(max),
            Some(d) if d < 0 => Err(Error::settings(
                Setting::Distance,
                format!("{d} is negative: a distance is 0 to the store's maximum distance {max}"),
            )),
            Some(d) => {
                let d = u32::try_from(d).unwrap_or(u32::MAX);
                self.check_distance(d)?;
                Ok(d)
            }
        }
    }

    pub(crate) fn check_distance(&self, distance: u32) -> Result<()> {
        let max = u32::from(self.catalog.settings.distance);
        if distance > max {
            return Err(Error::DistanceTooLarge {
                asked: distance,
                max,
            });
        }
        Ok(())
    }
}

/// The documents of `documents` (sorted by fingerprint) with fingerprint `fp`.
fn with_fingerprint<T>(documents: &[(u64, Box<str>, T)], fp: u64) -> &[(u64, Box<str>, T)] {
    let from = documents.partition_point(|doc| doc.0 < fp);
    let len = documents[from..].partition_point(|doc| doc.0 == fp);
    &documents[from..from + len]
}

/// The match of document `id` at distance `d`, verified: with the estimate where the query
/// (`ours`) and the document (`theirs`) both have a sketch, None if it is below
/// `min_jaccard`; unverified where either has none.
fn verified_match(
    d: u32,
    fp: u64,
    id: &str,
    ours: Option<&[u8]>,
    theirs: Option<&[u8]>,
    min_jaccard: f64,
) -> Option<Match> {
    let jaccard = ours
        .zip(theirs)
        .map(|(ours, theirs)| crate::similarity::sketch::estimate(ours, theirs));
    jaccard
        .is_none_or(|j| j >= min_jaccard)
        .then(|| Match::new(d, fp, id.to_string()).verified(jaccard))
}
