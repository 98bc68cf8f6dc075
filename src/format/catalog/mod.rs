//! The catalog: the store's one mutable record and its commit point.
//!
//! It names the settings and every live run; a run that the catalog does not name is garbage,
//! whatever its files hold. A write replaces the whole file atomically (write `CATALOG.tmp`,
//! fsync it, rename it over `CATALOG`, fsync the directory), so a reader or a restart sees the
//! catalog before a commit or after it, never a mix.
//!
//! ```text
//! offset  size  field
//! 0       8     magic: the ASCII bytes "SIMHASHD"
//! 8       4     format version (u32 LE)
//! 12      4     payload length n (u32 LE)
//! 16      n     payload: `Catalog` in bincode 2, standard config (varint integers)
//! 16+n    4     crc32 (IEEE) of bytes 0..16+n (u32 LE)
//! ```

use std::fs::File;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};
use crate::format::block::entries::Keys;
use crate::format::block::entry_writer::EntryWriter;
use crate::format::block::keys::KeyCodec;
use crate::format::block::sketches::{
    MAX_BYTES as MAX_SKETCH_BYTES, MIN_BYTES as MIN_SKETCH_BYTES,
};
use crate::format::layout::{self, sync_dir};
use crate::format::settings::CompactionPolicy;
use crate::format::settings::Settings;
use crate::sys::file_backend::{injected, Op};

mod v3;
mod v4;

/// The format version this build writes: new stores are created in it, and `migrate`
/// upgrades older ones to it. See migrations/ for the history.
pub(crate) const FORMAT_VERSION: u32 = 10;

/// The versions this build opens as they are, and keeps writing in their own format so that
/// the builds that wrote them keep opening them.
const OPENABLE_VERSIONS: &[u32] = &[3, 4, 5, 6, 7, 8, 9, FORMAT_VERSION];

/// Older versions this build can upgrade from, with `simhashdb migrate` (see [`crate::migrate`]):
/// 1 and 2 must be upgraded before they open; 3 to 9 open as they are.
pub const UPGRADABLE_VERSIONS: &[u32] = &[1, 2, 3, 4, 5, 6, 7, 8, 9];

const MAGIC: &[u8; 8] = b"SIMHASHD";
const HEADER_BYTES: usize = 16;
/// Decoding refuses a payload larger than this: a corrupted length must not allocate at will.
const MAX_PAYLOAD_BYTES: usize = 1 << 30;

/// Everything a reader needs to see one consistent state of the store.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct Catalog {
    /// The format version the store is written in (the catalog file's header; not in the
    /// payload): 3 to 8. Runs written into the store take its format's layout.
    pub format: u32,
    /// The settings the store was created with.
    pub settings: Settings,
    /// When `insert` merges runs by itself.
    pub compaction: CompactionPolicy,
    /// The fingerprint scheme the store's fingerprints were made with, when known (e.g.
    /// "words-2-minhash"); text given to `insert` or `query` is fingerprinted with it.
    pub scheme: Option<String>,
    /// The id the next run will get; every run directory with a smaller id that is not listed
    /// in `runs` was abandoned by a writer that did not commit.
    pub next_run: u64,
    /// The number the next batch will get.
    pub next_batch: u64,
    /// Documents (ids) with a live fingerprint.
    pub documents: u64,
    /// Live runs, oldest first: a newer run's word on an id overrides an older one's.
    pub runs: Vec<RunMeta>,
    /// Every committed batch, oldest first.
    pub batches: Vec<BatchMeta>,
    /// Bytes of each document's verification sketch, or 0 when the store keeps none (format
    /// 4; fixed at creation).
    pub sketch_bytes: u16,
}

/// How the runs written into a store are laid out: what its format version decides for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunFormat {
    /// The layout of key blocks (format 5 on: Elias-Fano).
    pub codec: KeyCodec,
    /// Whether each run has an id filter (format 6 on).
    pub id_filter: bool,
    /// Where the keys of docs blocks come from (format 6 on: the ids' hashes, not stored).
    pub doc_keys: Keys,
    /// Whether sketches are kept in the postings (formats 7 and 8, in a store with
    /// sketches), rather than in a sketches table of their own.
    pub sketches_in_postings: bool,
    /// Whether sketches are kept in the docs entries (format 9 on, in a store with sketches;
    /// see [`crate::format::block::docs::SketchedDoc`]), or from format 10 on reached through
    /// them: then they are read with the docs entries.
    pub sketches_in_docs: bool,
    /// Whether the docs entries keep their sketches in the run's sketch area (format 10 on,
    /// in a store with sketches; see [`crate::format::block::sketch_area`]) rather than in
    /// themselves.
    pub sketch_area: bool,
    /// The bytes of each sketch, in a store with sketches; else 0.
    pub sketch_bytes: u16,
    /// Whether postings name their documents by id-hash prefix instead of holding their ids
    /// (format 8 in a store without sketches, format 9 on in every store; see
    /// [`crate::format::block::named_postings`]).
    pub named_postings: bool,
    /// Whether docs blocks are written compressed where that pays (format 8 on; see
    /// [`crate::format::block::entry_writer::EntryWriter::compressed`]).
    pub compressed_docs: bool,
}

impl RunFormat {
    /// The writer of this format's docs blocks.
    pub(crate) fn docs_writer(&self) -> EntryWriter {
        let mut writer = EntryWriter::new(self.doc_keys);
        if self.sketch_area {
            writer = writer.with_sketch_area(usize::from(self.sketch_bytes));
        } else if self.sketches_in_docs {
            writer = writer.with_sketch_flags();
        }
        if self.compressed_docs {
            writer.compressed()
        } else {
            writer
        }
    }
}

impl RunFormat {
    /// The layout of the format this build writes, in a store without sketches.
    #[cfg(test)]
    pub(crate) const CURRENT: RunFormat = RunFormat {
        codec: KeyCodec::EliasFano,
        id_filter: true,
        doc_keys: Keys::IdHashes,
        sketches_in_postings: false,
        sketches_in_docs: false,
        sketch_area: false,
        sketch_bytes: 0,
        named_postings: true,
        compressed_docs: true,
    };
}

/// One immutable run: the documents, postings and new fingerprints of one batch.
#[derive(Clone, Debug, PartialEq, Eq, bincode::Encode, bincode::Decode)]
#[non_exhaustive]
pub(crate) struct RunMeta {
    /// The run's number, which names its directory.
    pub id: u64,
    /// How many shard files the run's S shards are grouped into (a power of two <= S): file
    /// f holds shards f*S/F .. (f+1)*S/F. Small runs use one file, since every redb file
    /// has a fixed cost however little it holds.
    pub shard_files: u16,
    /// The shard files that exist (got at least one key), ascending.
    pub present_files: Vec<u16>,
    /// Fingerprints this run adds to every permuted table.
    pub fingerprints: u64,
    /// Document entries (ids) in the run's docs table.
    pub documents: u64,
    /// Block bytes written per permuted table.
    pub table_bytes: Vec<u64>,
    /// Block bytes of the docs table (format 9, in a store with sketches: the sketches
    /// included, compressed with the entries; format 10 keeps them apart).
    pub docs_bytes: u64,
    /// Block bytes of the postings table (formats 7 and 8, in a store with sketches: less the
    /// sketches' bytes in it, which `sketches_bytes` counts).
    pub postings_bytes: u64,
    /// Sketches the run keeps (format 4 on): entries of its sketches table, postings with a
    /// sketch (formats 7 and 8), or docs entries with one (format 9 on).
    pub sketches: u64,
    /// Bytes of the run's sketches: block bytes of its sketches table (formats 4 to 6), the
    /// bytes sketches add to its postings blocks (formats 7 and 8), 0 (format 9, where
    /// `docs_bytes` counts them), or block bytes of its sketch area (format 10).
    pub sketches_bytes: u64,
    /// Bits of each id-hash prefix in the run's id filter (format 6; see
    /// [`crate::format::block::id_filter`]), or 0 when the run has no filter.
    pub id_bits: u8,
    /// Block bytes of the id filter (format 6).
    pub ids_bytes: u64,
}

impl RunMeta {
    /// The block bytes of all the run's tables.
    pub fn bytes(&self) -> u64 {
        self.table_bytes.iter().sum::<u64>()
            + self.docs_bytes
            + self.postings_bytes
            + self.sketches_bytes
            + self.ids_bytes
    }
}

/// One committed change of documents: an `insert`, `delete` or `expire`.
#[derive(Clone, Debug, PartialEq, Eq, bincode::Encode, bincode::Decode)]
#[non_exhaustive]
pub(crate) struct BatchMeta {
    /// The batch's number, counting from 1.
    pub id: u64,
    /// What the batch did.
    pub kind: BatchKind,
    /// Seconds since the Unix epoch when the batch was committed.
    pub committed_unix_s: u64,
    /// The label the batch was given, if any (an expire records what it expired by).
    pub label: Option<String>,
    /// Ids that were not stored before.
    pub inserted: u64,
    /// Ids stored before with another fingerprint.
    pub replaced: u64,
    /// Ids stored before with the same fingerprint (nothing written for them).
    pub unchanged: u64,
    /// Live ids this batch deleted.
    pub deleted: u64,
    /// The `expire` batch that deleted this batch's remaining documents, if one did.
    pub expired_by: Option<u64>,
}

/// One committed batch as users see it (`batches`; its JSON form is a line of
/// `batches --json`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct BatchInfo {
    /// The batch's number, counting from 1.
    pub batch: u64,
    /// What the batch did: `insert`, `delete` or `expire`.
    pub kind: &'static str,
    /// When the batch was committed, as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
    pub committed_utc: String,
    /// Seconds since the Unix epoch when the batch was committed.
    pub committed_unix_s: u64,
    /// The label the batch was given, if any (an expire records what it expired by).
    pub label: Option<String>,
    /// Ids that were not stored before.
    pub inserted: u64,
    /// Ids stored before with another fingerprint.
    pub replaced: u64,
    /// Ids stored before with the same fingerprint (nothing written for them).
    pub unchanged: u64,
    /// Live ids this batch deleted.
    pub deleted: u64,
    /// The `expire` batch that deleted this batch's remaining documents, if one did.
    pub expired_by: Option<u64>,
}

impl From<&BatchMeta> for BatchInfo {
    fn from(b: &BatchMeta) -> Self {
        BatchInfo {
            batch: b.id,
            kind: b.kind.name(),
            committed_utc: crate::sys::dates::format_utc(b.committed_unix_s),
            committed_unix_s: b.committed_unix_s,
            label: b.label.clone(),
            inserted: b.inserted,
            replaced: b.replaced,
            unchanged: b.unchanged,
            deleted: b.deleted,
            expired_by: b.expired_by,
        }
    }
}

/// What a batch did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub(crate) enum BatchKind {
    /// Documents inserted (or replaced).
    Insert,
    /// Documents deleted by id.
    Delete,
    /// Documents deleted because the insert batches that stored them expired.
    Expire,
}

impl BatchKind {
    /// The kind's name, as `batches` prints it.
    pub fn name(self) -> &'static str {
        match self {
            BatchKind::Insert => "insert",
            BatchKind::Delete => "delete",
            BatchKind::Expire => "expire",
        }
    }
}

impl Catalog {
    /// A new, empty catalog.
    pub(crate) fn new(settings: Settings) -> Self {
        Catalog {
            format: FORMAT_VERSION,
            settings,
            compaction: CompactionPolicy::default(),
            scheme: None,
            next_run: 1,
            next_batch: 1,
            documents: 0,
            runs: Vec::new(),
            batches: Vec::new(),
            sketch_bytes: 0,
        }
    }

    /// Reads and checks the catalog of the store at `dir`.
    pub fn read(dir: &Path) -> Result<Self> {
        Self::decode(&read_file(dir)?, dir)
    }

    fn decode(bytes: &[u8], dir: &Path) -> Result<Self> {
        let (version, payload) = unseal(bytes, dir)?;
        check_version(version, dir)?;
        let catalog = Catalog::decode_version(version, payload)
            .map_err(|e| e.in_file(&layout::catalog_file(dir)))?;
        check_settings(&catalog.settings, dir)?;
        Ok(catalog)
    }

    /// The catalog of a payload of `version` 2 to 10 (versions 2 and 3 share their structs,
    /// which are version 4's without sketches; version 5's are version 4's; version 6's add
    /// each run's id filter; versions 7 to 10 have version 6's).
    pub(crate) fn decode_version(version: u32, payload: &[u8]) -> Result<Catalog> {
        if version < 4 {
            return decode_payload::<v3::Catalog>(payload).map(|c| c.with_format(version));
        }
        let catalog = if version < 6 {
            decode_payload::<v4::Catalog<v4::RunMeta>>(payload)?.with_format(version)
        } else {
            decode_payload::<v4::Catalog<RunMeta>>(payload)?.with_format(version)
        };
        let sizes = MIN_SKETCH_BYTES..=MAX_SKETCH_BYTES;
        // Format 5 on keeps sketches or not; format 4 is the format of stores that keep them.
        let none_allowed = version >= 5 && catalog.sketch_bytes == 0;
        if !none_allowed && !sizes.contains(&catalog.sketch_bytes) {
            return Err(Error::corrupt(format!(
                "a format {version} catalog gives sketches of {} bytes (64 to 1024)",
                catalog.sketch_bytes
            )));
        }
        // Format 6 runs have a filter, whose prefixes have 1 to 64 bits.
        if let Some(run) = catalog
            .runs
            .iter()
            .find(|r| (version >= 6) != (1..=64).contains(&r.id_bits))
        {
            return Err(Error::corrupt(format!(
                "a format {version} catalog gives run {} an id filter of {} bits",
                run.id, run.id_bits
            )));
        }
        Ok(catalog)
    }

    /// How runs written into this store are laid out.
    pub(crate) fn run_format(&self) -> RunFormat {
        RunFormat {
            codec: if self.format >= 5 {
                KeyCodec::EliasFano
            } else {
                KeyCodec::Restarts
            },
            id_filter: self.format >= 6,
            doc_keys: if self.format >= 6 {
                Keys::IdHashes
            } else {
                Keys::Stored
            },
            sketches_in_postings: (7..=8).contains(&self.format) && self.sketch_bytes > 0,
            sketches_in_docs: self.format >= 9 && self.sketch_bytes > 0,
            sketch_area: self.format >= 10 && self.sketch_bytes > 0,
            sketch_bytes: self.sketch_bytes,
            named_postings: self.format >= 9 || (self.format == 8 && self.sketch_bytes == 0),
            compressed_docs: self.format >= 8,
        }
    }

    /// The catalog file's bytes, in the store's format.
    pub(crate) fn encode(&self) -> Vec<u8> {
        self.encode_as(self.format)
    }

    /// The catalog file's bytes marked as format `version`: version 6's structs, version 4's
    /// (also version 5's), or for versions 2 and 3 (a migration step, a store without
    /// sketches) theirs.
    pub(crate) fn encode_as(&self, version: u32) -> Vec<u8> {
        let config = bincode::config::standard();
        let payload = if version >= 6 {
            bincode::encode_to_vec(v4::Catalog::<RunMeta>::from(self.clone()), config)
        } else if version >= 4 {
            debug_assert!(
                self.runs.iter().all(|r| r.id_bits == 0),
                "only format 6 on has id filters"
            );
            bincode::encode_to_vec(v4::Catalog::<v4::RunMeta>::from(self.clone()), config)
        } else {
            debug_assert_eq!(self.sketch_bytes, 0, "only format 4 on keeps sketches");
            bincode::encode_to_vec(v3::Catalog::from(self.clone()), config)
        }
        .expect("encoding to a Vec cannot fail");
        seal(version, &payload)
    }

    /// Commits this catalog to the store at `dir`: after this returns, a crash or a reader sees
    /// it; if it fails, they see the previous one.
    pub(crate) fn commit(&self, dir: &Path) -> Result<()> {
        commit_bytes(dir, &self.encode())
    }
}

/// Stored settings that no store could have been made with are damage, not a caller's error.
pub(crate) fn check_settings(settings: &Settings, dir: &Path) -> Result<()> {
    settings.validate().map_err(|e| {
        Error::corrupt(format!("the catalog holds impossible settings: {e}"))
            .in_file(&layout::catalog_file(dir))
    })
}

/// The bytes of the catalog file of the store at `dir`.
pub(crate) fn read_file(dir: &Path) -> Result<Vec<u8>> {
    let path = layout::catalog_file(dir);
    std::fs::read(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NotAStore {
                path: dir.to_path_buf(),
                why: format!("{} is missing", path.display()),
            }
        } else {
            Error::io(&path, e)
        }
    })
}

/// Checks a catalog file's envelope (magic, a version this build knows, length, checksum) and
/// returns its version and payload. The envelope is the same in every version.
pub(crate) fn unseal<'b>(bytes: &'b [u8], dir: &Path) -> Result<(u32, &'b [u8])> {
    if bytes.len() < HEADER_BYTES + 4 || &bytes[..8] != MAGIC {
        return Err(Error::NotAStore {
            path: dir.to_path_buf(),
            why: "the catalog does not start with SIMHASHD".into(),
        });
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4"));
    if !is_current(version) && !UPGRADABLE_VERSIONS.contains(&version) {
        check_version(version, dir)?;
    }
    let len = u32::from_le_bytes(bytes[12..16].try_into().expect("4")) as usize;
    if len > MAX_PAYLOAD_BYTES || bytes.len() != HEADER_BYTES + len + 4 {
        return Err(Error::corrupt(format!(
            "catalog is {} bytes but its header says {}",
            bytes.len(),
            HEADER_BYTES + len + 4
        ))
        .in_file(&layout::catalog_file(dir)));
    }
    let stored = u32::from_le_bytes(bytes[HEADER_BYTES + len..].try_into().expect("4"));
    let actual = crc32fast::hash(&bytes[..HEADER_BYTES + len]);
    if stored != actual {
        return Err(Error::corrupt(format!(
            "catalog checksum mismatch: stored crc32 {stored:08x}, computed {actual:08x}"
        ))
        .in_file(&layout::catalog_file(dir)));
    }
    Ok((version, &bytes[HEADER_BYTES..HEADER_BYTES + len]))
}

/// Decodes a catalog payload of any version's struct `T`, refusing trailing bytes.
pub(crate) fn decode_payload<T: bincode::Decode<()>>(payload: &[u8]) -> Result<T> {
    let config = bincode::config::standard().with_limit::<MAX_PAYLOAD_BYTES>();
    let (value, used): (T, usize) = bincode::decode_from_slice(payload, config)
        .map_err(|e| Error::corrupt(format!("catalog payload does not decode: {e}")))?;
    if used != payload.len() {
        return Err(Error::corrupt("catalog payload has trailing bytes"));
    }
    Ok(value)
}

/// A catalog file: header, payload, checksum.
pub(crate) fn seal(version: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + payload.len() + 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Replaces the catalog file of the store at `dir` atomically (see the module docs).
pub(crate) fn commit_bytes(dir: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = layout::catalog_tmp_file(dir);
    let path = layout::catalog_file(dir);
    let mut file = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    injected(Op::Write)
        .and_then(|_| file.write_all(bytes))
        .and_then(|_| injected(Op::Sync))
        .and_then(|_| file.sync_all())
        .map_err(|e| Error::io(&tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    sync_dir(dir)
}

/// Whether this build opens stores of format `version` as they are (3 to 10).
pub(crate) fn is_current(version: u32) -> bool {
    OPENABLE_VERSIONS.contains(&version)
}

/// Decides what to do with a store of format `version`: open it, ask for `migrate`, or refuse.
pub(crate) fn check_version(version: u32, dir: &Path) -> Result<()> {
    if is_current(version) {
        Ok(())
    } else if UPGRADABLE_VERSIONS.contains(&version) {
        Err(Error::UpgradeRequired {
            path: dir.to_path_buf(),
            found: version,
            current: FORMAT_VERSION,
        })
    } else {
        Err(Error::UnknownVersion {
            path: dir.to_path_buf(),
            found: version,
            current: FORMAT_VERSION,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// A catalog whose checksum matches but whose payload is anything (arbitrary, or a
        /// valid one with bytes overwritten or cut) decodes to a catalog or an error, in every
        /// version this build reads: never a panic.
        #[test]
        fn catalog_payloads_never_panic(
            version in 2u32..=6,
            arbitrary in proptest::collection::vec(any::<u8>(), 0..400),
            edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
            keep: usize,
        ) {
            let dir = Path::new("/nonexistent/store");
            let _ = Catalog::decode(&seal(version, &arbitrary), dir);
            let valid = catalog_of_one_batch().encode();
            let mut payload = valid[HEADER_BYTES..valid.len() - 4].to_vec();
            for (at, byte) in &edits {
                let i = at % payload.len();
                payload[i] = *byte;
            }
            payload.truncate(keep.max(1));
            let _ = Catalog::decode(&seal(version, &payload), dir);
        }
    }

    /// A new catalog with one insert batch.
    fn catalog_of_one_batch() -> Catalog {
        let mut c = Catalog::new(Settings::default());
        c.batches.push(BatchMeta {
            id: 1,
            kind: BatchKind::Insert,
            committed_unix_s: 7,
            label: Some("x".into()),
            inserted: 3,
            replaced: 0,
            unchanged: 0,
            deleted: 0,
            expired_by: None,
        });
        c
    }

    #[test]
    fn encode_decode_round_trips_and_detects_flips() {
        let c = catalog_of_one_batch();
        let bytes = c.encode();
        assert_eq!(Catalog::decode(&bytes, Path::new("s")).unwrap(), c);
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(
                Catalog::decode(&bad, Path::new("s")).is_err(),
                "flip at {i}"
            );
        }
    }

    #[test]
    fn only_format_5_on_may_keep_no_sketches() {
        let catalog = catalog_of_one_batch();
        assert_eq!((catalog.format, catalog.sketch_bytes), (FORMAT_VERSION, 0));
        let dir = Path::new("s");
        assert_eq!(Catalog::decode(&catalog.encode(), dir).unwrap(), catalog);
        let v5 = Catalog::decode(&catalog.encode_as(5), dir).unwrap();
        assert_eq!((v5.format, v5.sketch_bytes), (5, 0));
        let err = Catalog::decode(&catalog.encode_as(4), dir).unwrap_err();
        assert!(err.to_string().contains("sketches of 0 bytes"), "{err}");
        // Format 3's structs have no sketches at all.
        let v3 = Catalog::decode(&catalog.encode_as(3), dir).unwrap();
        assert_eq!((v3.format, v3.run_format().codec), (3, KeyCodec::Restarts));
        assert_eq!(catalog.run_format(), RunFormat::CURRENT);
        let sketched = Catalog {
            sketch_bytes: 128,
            ..catalog.clone()
        };
        let (v10, v9, v8) = (
            sketched.run_format(),
            Catalog {
                format: 9,
                ..sketched.clone()
            }
            .run_format(),
            Catalog {
                format: 8,
                ..sketched.clone()
            },
        );
        assert!(v10.sketches_in_docs && v10.sketch_area && v10.named_postings);
        assert!(v9.sketches_in_docs && v9.named_postings && !v9.sketches_in_postings);
        assert!(!v9.sketch_area && !RunFormat::CURRENT.sketch_area);
        let v8 = v8.run_format();
        assert!(v8.sketches_in_postings && !v8.named_postings && !v8.sketches_in_docs);
        let v6 = Catalog::decode(&sketched.encode_as(6), dir).unwrap();
        assert_eq!(v6.format, 6);
        assert!(!v6.run_format().sketches_in_postings);
    }

    /// Format 6 runs name their filter's width; earlier formats' runs have none.
    #[test]
    fn every_format_6_run_has_an_id_filter() {
        let mut catalog = catalog_of_one_batch();
        catalog.runs.push(RunMeta {
            id: 1,
            shard_files: 1,
            present_files: vec![0],
            fingerprints: 3,
            documents: 3,
            table_bytes: vec![10; 10],
            docs_bytes: 20,
            postings_bytes: 20,
            sketches: 0,
            sketches_bytes: 0,
            id_bits: 10,
            ids_bytes: 14,
        });
        let dir = Path::new("s");
        assert_eq!(Catalog::decode(&catalog.encode(), dir).unwrap(), catalog);
        // Written as format 5, the run loses its filter, which format 5 does not know.
        let v5 = Catalog::decode(&catalog.encode_as(5), dir).unwrap();
        assert_eq!((v5.runs[0].id_bits, v5.runs[0].ids_bytes), (0, 0));
        for bits in [0, 65] {
            catalog.runs[0].id_bits = bits;
            let err = Catalog::decode(&catalog.encode(), dir).unwrap_err();
            assert!(err.to_string().contains("id filter of"), "{err}");
        }
    }

    /// The committed fixtures' catalogs of formats 3 to 5 decode and encode back to the same
    /// bytes: the frozen structs are those versions' exactly.
    #[test]
    fn earlier_catalogs_encode_back_byte_for_byte() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        for version in 3..=5u32 {
            let dir = fixtures.join(format!("format-v{version}/store"));
            let bytes = read_file(&dir).unwrap();
            let catalog = Catalog::decode(&bytes, &dir).unwrap();
            assert_eq!(catalog.format, version);
            assert!(catalog.runs.iter().all(|r| r.id_bits == 0));
            assert_eq!(catalog.encode(), bytes, "format {version}");
        }
    }

    #[test]
    fn newer_versions_are_refused_by_name() {
        let mut bytes = Catalog::new(Settings::default()).encode();
        bytes[8..12].copy_from_slice(&99u32.to_le_bytes());
        let err = Catalog::decode(&bytes, Path::new("s"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("99") && err.contains(&FORMAT_VERSION.to_string()),
            "{err}"
        );
    }
}
