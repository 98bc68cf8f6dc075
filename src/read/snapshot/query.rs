//! A query: every stored document within k bits of a fingerprint, verified with sketches when
//! asked (many at once: operations/query.rs); the distance a client asks for, checked.

use super::*;

impl Snapshot {
    /// Every stored document whose fingerprint is within `distance` bits of `query`, ordered by
    /// (distance, fingerprint, id). `distance` may not exceed the store's K.
    pub fn query(&self, query: u64, distance: u32) -> Result<Vec<Match>> {
        guard_redb(&self.dir, || self.query_unguarded(query, distance))
    }

    pub(super) fn query_unguarded(&self, query: u64, distance: u32) -> Result<Vec<Match>> {
        let mut matches = Vec::new();
        for (fp, d) in self.close_fingerprints(query, distance)? {
            self.live_ids(fp, |id| matches.push(Match::new(d, fp, id.to_string())))?;
        }
        matches.sort_unstable();
        Ok(matches)
    }

    /// [`Snapshot::query`], verified with `sketch` (see [`Snapshot::query_many`]).
    pub(crate) fn query_verified(
        &self,
        query: u64,
        sketch: Option<&[u8]>,
        distance: u32,
        min_jaccard: f64,
    ) -> Result<Vec<Match>> {
        guard_redb(&self.dir, || {
            let mut found: Vec<(u64, String, u64, u32)> = Vec::new();
            for (fp, d) in self.close_fingerprints(query, distance)? {
                self.live_documents_of(fp, |id, batch| found.push((fp, id.to_string(), batch, d)))?;
            }
            found.sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            let sketches = match sketch {
                None => vec![None; found.len()],
                Some(_) => {
                    let keys: Vec<(u64, &str, u64)> = found
                        .iter()
                        .map(|(fp, id, batch, _)| (*fp, id.as_str(), *batch))
                        .collect();
                    self.sketches_of(&keys)?
                }
            };
            let mut matches: Vec<Match> = found
                .into_iter()
                .zip(sketches)
                .filter_map(|((fingerprint, id, _, distance), theirs)| {
                    let jaccard = match (sketch, theirs) {
                        (Some(ours), Some(theirs)) => {
                            let j = crate::similarity::sketch::estimate(ours, &theirs);
                            if j < min_jaccard {
                                return None;
                            }
                            Some(j)
                        }
                        _ => None,
                    };
                    Some(Match::new(distance, fingerprint, id).verified(jaccard))
                })
                .collect();
            matches.sort_unstable();
            Ok(matches)
        })
    }

    /// Every fingerprint in the tables within `distance` bits of `query`, with its distance,
    /// in no set order; fingerprints whose documents were all replaced are included.
    pub(crate) fn close_fingerprints(&self, query: u64, distance: u32) -> Result<Vec<(u64, u32)>> {
        self.check_distance(distance)?;
        let mut found: Vec<(u64, u32)> = Vec::new();
        let mut check = |t: usize, key: u64, candidate: u64| {
            // A permutation moves bits, so distances are the same between keys.
            let d = (candidate ^ key).count_ones();
            if d <= distance {
                let fp = self.perms.tables()[t].unpermute(candidate);
                if self.perms.reports(t, query, fp) {
                    found.push((fp, d));
                }
            }
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
