//! The documents `tune` measures on: the whole corpus, or a uniform random sample of it.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::PathBuf;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::{Error, Result};
use crate::io::input::{read_corpus_texts, ReadOptions};
use crate::similarity::fingerprint::tokens;

/// Where an id is.
pub enum Found {
    /// In the sample, at this index.
    Sampled(u32),
    /// In the corpus, but not in the sample.
    LeftOut,
    /// Not in the corpus.
    NotInCorpus,
}

/// The documents read, sorted by id.
pub struct Sample {
    /// Their ids, ascending.
    pub ids: Vec<String>,
    /// Their texts, `texts[i]` for `ids[i]`.
    pub texts: Vec<String>,
    /// Distinct ids in the whole corpus.
    pub corpus_documents: u64,
    /// Documents left out because they hold no letter or digit (with `skip_invalid`).
    pub skipped: u64,
    /// Every id of the corpus, kept when the sample is not all of it (to tell an id missing
    /// from the corpus from one left out of the sample).
    corpus_ids: Option<HashSet<String>>,
}

impl Sample {
    /// Reads every document of `inputs` ([`read_corpus_texts`]) and keeps all of them, or
    /// `sample` of them: the ids with the smallest hashes under `seed`, a uniform random
    /// sample that does not depend on the order of the input. A later document with the same
    /// id replaces an earlier one, as in a batch. A text without a letter or digit fails the
    /// read, as `insert` fails it, unless `options.skip_invalid`.
    pub fn read(
        inputs: &[PathBuf],
        options: &ReadOptions,
        sample: Option<usize>,
        seed: u64,
        mut read_one: impl FnMut(),
    ) -> Result<Sample> {
        let mut texts: HashMap<String, String> = HashMap::new();
        let mut kept = BinaryHeap::new(); // (hash, id): the largest hash kept on top
        let mut corpus_ids = HashSet::new();
        let mut skipped = 0;
        let limit = sample.unwrap_or(usize::MAX);
        read_corpus_texts(inputs, options, &mut |id, text| {
            read_one();
            if tokens(&text).next().is_none() {
                if options.skip_invalid {
                    skipped += 1;
                    return Ok(());
                }
                return Err(Error::input(format!(
                    "document {id:?} has no token (no letter or digit): insert refuses it \
                     too; remove it, or pass --skip-invalid"
                )));
            }
            if sample.is_some() {
                corpus_ids.insert(id.clone());
            }
            if let Some(old) = texts.get_mut(&id) {
                *old = text;
                return Ok(());
            }
            let hash = xxh3_64_with_seed(id.as_bytes(), seed);
            if kept.len() < limit {
                kept.push((hash, id.clone()));
                texts.insert(id, text);
            } else if kept.peek().is_some_and(|(top, _)| hash < *top) {
                let (_, evicted) = kept.pop().expect("peeked");
                texts.remove(&evicted);
                kept.push((hash, id.clone()));
                texts.insert(id, text);
            }
            Ok(())
        })?;
        let mut documents: Vec<(String, String)> = texts.into_iter().collect();
        documents.sort_unstable();
        let corpus_documents = match sample {
            Some(_) => corpus_ids.len(),
            None => documents.len(),
        } as u64;
        let corpus_ids = (corpus_documents > documents.len() as u64).then_some(corpus_ids);
        let (ids, texts) = documents.into_iter().unzip();
        Ok(Sample {
            ids,
            texts,
            corpus_documents,
            skipped,
            corpus_ids,
        })
    }

    /// Where `id` is.
    pub fn find(&self, id: &str) -> Found {
        match self.ids.binary_search_by(|probe| probe.as_str().cmp(id)) {
            Ok(i) => Found::Sampled(i as u32),
            Err(_) => match &self.corpus_ids {
                Some(all) if all.contains(id) => Found::LeftOut,
                _ => Found::NotInCorpus,
            },
        }
    }

    /// Whether the sample is a part of the corpus rather than all of it.
    pub fn is_partial(&self) -> bool {
        self.corpus_ids.is_some()
    }
}
