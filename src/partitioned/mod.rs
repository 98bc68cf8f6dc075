//! find_all cut into pieces that run apart: the audit of a list too large for one machine,
//! as a cluster runs it (the Spark jobs of the Python package, docs/distributed.md).
//!
//! A [`Plan`] cuts each permuted table into 2^`range_bits` ranges of its keys. Each part of
//! the input (a Spark partition) turns its fingerprints into **slices**
//! ([`PartSlices`]): for every table and range, the part's distinct keys in it, sorted and
//! delta-encoded; table 0's also carry how many documents hold each fingerprint, and the
//! part's id hashes go into slices of their own. A cluster moves slices, not rows: one
//! shuffle of about 6 bytes per distinct fingerprint per table. All the slices of one number
//! from every part meet in one task ([`Plan::find`]), which merges them and compares the
//! keys that share the table's leading blocks, as the local audit does: every pair within the
//! distance is found by exactly one table ([`crate::find_all`]'s rule). Copies of a page
//! collapse twice before they cost anything: to one key per part, then to one key per slice.
//! Fingerprint pairs become document pairs in two rounds ([`Router`], then [`Blocks`]), and
//! [`components`] are those of any graph, by the crate's one union-find.
//!
//! A dedup decides whole components in one task ([`keep_rule`]), optionally against a
//! reference corpus whose documents are never dropped; the reference is matched where it is
//! read, against the new side's tables ([`Against`]), so it is never shuffled.
//!
//! Slice bytes are versioned; docs/format.md ("Spark slices") draws them byte by byte.
//!
//! - plan.rs: [`Plan`], how the work is cut, and the number of every slice;
//! - slices.rs: [`PartSlices`], a part's slices and their bytes;
//! - found.rs: [`Found`], what the merged slices of one number hold;
//! - routing.rs: [`Router`] and [`Half`], the first round of document pairs;
//! - pairs.rs: [`Blocks`], the second round;
//! - keep.rs: [`keep_rule`], a task's decisions, against references or not;
//! - against.rs: [`Against`], the pairs between new data and a reference part.
//!
//! Depends on `dedup` (the keep rule's graph), `similarity` (find_all's comparisons, the
//! union-find), `tables` and `format`; no wing below it uses it.

mod against;
mod found;
mod keep;
mod pairs;
mod plan;
mod routing;
mod slices;

pub use crate::similarity::clusters::components;
pub use against::Against;
pub use found::Found;
pub use keep::{keep_rule, Row};
pub use pairs::Blocks;
pub use plan::Plan;
pub use routing::{Half, Router};
pub use slices::PartSlices;

#[cfg(test)]
mod tests {
    use super::pairs::document_pairs;
    use super::*;
    use crate::similarity::find_all::find_all;
    use proptest::prelude::*;

    /// Runs a whole partitioned audit in memory: the parts' slices grouped by number, each
    /// group found; returns everything found, merged and sorted.
    fn run(plan: &Plan, parts: &[Vec<(u64, String)>]) -> Found {
        let slices = std::sync::Mutex::new(std::collections::BTreeMap::<u32, Vec<Vec<u8>>>::new());
        for part in parts {
            let mut p = PartSlices::new(plan);
            for (fp, id) in part {
                p.push(*fp, id.as_bytes());
            }
            p.finish(|s, bytes| {
                assert!(s < plan.slices());
                slices
                    .lock()
                    .unwrap()
                    .entry(s)
                    .or_default()
                    .push(bytes.to_vec());
                Ok(())
            })
            .unwrap();
        }
        let mut all = Found::default();
        for (s, blobs) in slices.into_inner().unwrap() {
            let found = plan.find(s, blobs.iter().map(|b| &b[..])).unwrap();
            all.pairs.extend(found.pairs);
            all.copies.extend(found.copies);
            all.repeated_ids.extend(found.repeated_ids);
        }
        all.pairs.sort_unstable();
        all.copies.sort_unstable();
        all.repeated_ids.sort_unstable();
        all
    }

    pub(super) fn documents() -> impl Strategy<Value = Vec<(u64, String)>> {
        // Few base fingerprints with near copies and exact copies, and random ones.
        (
            proptest::collection::vec(any::<u64>(), 1..40),
            proptest::collection::vec((0usize..40, 0u32..64, 0u32..64, 0u8..4), 0..200),
        )
            .prop_map(|(bases, variants)| {
                let mut docs: Vec<u64> = bases.clone();
                for (b, x, y, kind) in variants {
                    let base = bases[b % bases.len()];
                    docs.push(match kind {
                        0 => base,
                        1 => base ^ (1 << x),
                        2 => base ^ (1 << x) ^ (1 << y),
                        _ => base ^ (1 << x) ^ (1 << y) ^ (1 << ((x + y + 1) % 64)),
                    });
                }
                docs.into_iter()
                    .enumerate()
                    .map(|(i, fp)| (fp, format!("doc-{i}")))
                    .collect()
            })
    }

    proptest! {
        /// The pairs, copies and repeated ids of any cut of any list equal brute force.
        #[test]
        fn a_partitioned_audit_equals_brute_force(
            docs in documents(),
            distance in 0u8..5,
            parts in 1usize..5,
            range_bits in 0u8..4,
            extra_blocks in 1u8..4,
            repeat in proptest::option::of(0usize..200),
        ) {
            let blocks = distance + extra_blocks + if distance == 0 { 1 } else { 0 };
            let Ok(plan) = Plan::new(blocks.max(2), distance, range_bits) else {
                return Ok(());
            };
            let mut docs = docs;
            if let Some(r) = repeat {
                let (fp, id) = docs[r % docs.len()].clone();
                docs.push((fp ^ 1, id));
            }
            let cut: Vec<Vec<(u64, String)>> = (0..parts)
                .map(|p| docs.iter().skip(p).step_by(parts).cloned().collect())
                .collect();
            let found = run(&plan, &cut);
            let fps: Vec<u64> = docs.iter().map(|d| d.0).collect();
            let want = if distance == 0 { Vec::new() } else {
                find_all(&fps, distance, Some(plan.blocks()), &()).unwrap()
            };
            prop_assert_eq!(&found.pairs, &want);
            let mut copies: Vec<(u64, u64)> = Vec::new();
            let mut sorted = fps.clone();
            sorted.sort_unstable();
            for run in sorted.chunk_by(|a, b| a == b) {
                if run.len() > 1 {
                    copies.push((run[0], run.len() as u64));
                }
            }
            prop_assert_eq!(&found.copies, &copies);
            let want_ids: Vec<u64> = match repeat {
                Some(r) => vec![PartSlices::id_hash(docs[r % (docs.len() - 1)].1.as_bytes())],
                None => Vec::new(),
            };
            prop_assert_eq!(&found.repeated_ids, &want_ids);
        }
    }

    /// Document pairs through the two rounds: documents and pair ends cut into parts by
    /// fingerprint, halves into parts by block; every pair once, equal to brute force.
    fn document_pairs_in_rounds(
        docs: &[(u64, String)],
        found: &Found,
        chunk_rows: usize,
        parts: usize,
    ) -> Vec<(String, String, u32)> {
        let part_of = |fp: u64| (fp.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % parts;
        let mut routers: Vec<Router> = (0..parts)
            .map(|_| Router::new(chunk_rows, found.copies.iter().copied()))
            .collect();
        for (fp, id) in docs {
            routers[part_of(*fp)].add_document(*fp, id);
        }
        for p in &found.pairs {
            routers[part_of(p.a)].add_end(p.a, p.b, p.distance);
            routers[part_of(p.b)].add_end(p.b, p.a, p.distance);
        }
        for &(fp, _) in &found.copies {
            routers[part_of(fp)].add_copies(fp);
        }
        let mut blocks: Vec<Blocks> = (0..parts).map(|_| Blocks::new()).collect();
        for router in routers {
            router
                .finish(|h| {
                    let (a, b, i, j) = h.block();
                    let at = (a ^ b.rotate_left(17) ^ u64::from(i) << 40 ^ u64::from(j) << 20)
                        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        >> 61;
                    blocks[at as usize % parts].push(h.clone());
                    Ok(())
                })
                .unwrap();
        }
        let mut out = Vec::new();
        for mut part in blocks {
            while part
                .next_pairs(7, |a, b, d| out.push((a.to_string(), b.to_string(), d)))
                .unwrap()
                == 7
            {}
        }
        out.sort_unstable();
        out
    }

    proptest! {
        #[test]
        fn document_pairs_in_two_rounds_equal_brute_force(
            docs in documents(),
            hot in 0usize..60,
            chunk_rows in 1usize..9,
            parts in 1usize..4,
        ) {
            let mut docs = docs;
            let base = docs[0].0;
            for i in 0..hot {
                docs.push((base, format!("hot-{i}")));
                docs.push((base ^ 0b101, format!("near-hot-{i}")));
            }
            let plan = Plan::new(5, 3, 1).unwrap();
            let found = run(&plan, std::slice::from_ref(&docs));
            let got = document_pairs_in_rounds(&docs, &found, chunk_rows, parts);
            let mut want = Vec::new();
            for (x, (fx, ix)) in docs.iter().enumerate() {
                for (fy, iy) in &docs[x + 1..] {
                    let d = (fx ^ fy).count_ones();
                    if d <= 3 {
                        let (a, b) = if ix < iy { (ix, iy) } else { (iy, ix) };
                        want.push((a.clone(), b.clone(), d));
                    }
                }
            }
            want.sort_unstable();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn a_block_missing_a_half_is_an_error() {
        let mut blocks = Blocks::new();
        blocks.push(Half {
            a: 1,
            b: 2,
            i: 0,
            j: 0,
            of_b: false,
            ids: vec!["x".into()],
            distance: 1,
        });
        let e = blocks.next_pairs(10, |_, _, _| {}).unwrap_err();
        assert!(e.to_string().contains("misses a half"), "{e}");
        let router = {
            let mut r = Router::new(4, []);
            r.add_end(5, 6, 1);
            r
        };
        let e = router.finish(|_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("no document"), "{e}");
    }

    #[test]
    fn a_hot_fingerprint_is_one_key_per_part_and_per_slice() {
        let plan = Plan::new(5, 3, 2).unwrap();
        let hot = 0x0123_4567_89ab_cdef;
        let mut part = PartSlices::new(&plan);
        for i in 0..100_000 {
            part.push(hot, format!("copy-{i}").as_bytes());
        }
        let sizes = std::sync::Mutex::new(Vec::new());
        part.finish(|s, bytes| {
            if (s as usize) < plan.tables() * 4 {
                sizes.lock().unwrap().push(bytes.len());
            }
            Ok(())
        })
        .unwrap();
        // One key per table (at most 10 bytes of delta and 3 of count, and the version).
        let sizes = sizes.into_inner().unwrap();
        assert_eq!(sizes.len(), plan.tables());
        assert!(sizes.iter().all(|&n| n <= 14), "{sizes:?}");
    }

    #[test]
    fn plans_and_bad_slices_are_refused_clearly() {
        assert!(Plan::new(5, 3, 17).is_err());
        assert!(Plan::new(4, 4, 0).is_err());
        let plan = Plan::for_size(10_000_000, 3, 8).unwrap();
        assert_eq!((plan.blocks(), plan.distance()), (5, 3));
        assert!(plan.tables() * (1 << plan.range_bits()) >= 32);
        assert_eq!(Plan::for_size(1_000, 0, 8).unwrap().tables(), 1);
        let e = plan.find(0, [&[9u8, 1][..]]).unwrap_err();
        assert!(e.to_string().contains("version 9"), "{e}");
        let e = plan.find(0, [&[1u8, 0x80][..]]).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        assert!(plan.find(plan.slices(), [&[1u8][..]]).is_err());
    }

    #[test]
    fn document_pairs_and_components() {
        let mut out = Vec::new();
        document_pairs(&["b", "a", "c"], None, 0, |x, y, d| {
            out.push(format!("{x}{y}{d}"));
            Ok::<_, ()>(())
        })
        .unwrap();
        document_pairs(&["z"], Some(&["y", "zz"]), 2, |x, y, d| {
            out.push(format!("{x}{y}{d}"));
            Ok::<_, ()>(())
        })
        .unwrap();
        assert_eq!(out, ["ab0", "bc0", "ac0", "yz2", "zzz2"]);
        assert_eq!(
            components(&[(5u64, 9), (9, 2), (7, 8)]),
            [(2, 2), (5, 2), (7, 7), (8, 7), (9, 2)]
        );
        assert_eq!(
            components(&[("b", "c"), ("a", "c"), ("x", "x")]),
            [("a", "a"), ("b", "a"), ("c", "a"), ("x", "x")]
        );
    }
}
