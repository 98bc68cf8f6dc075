"""Type stubs of simhashdb._native, the compiled engine (see simhashdb's Python modules for the
public API). Fingerprint arrays cross as little-endian uint64 bytes."""

from os import PathLike
from typing import Any, Iterable, List, Optional, Set, Tuple, Union

FORMAT_VERSION: int
DEFAULT_EXPECTED_SIZE: int

class CorruptionError(OSError):
    """Stored bytes fail their checksum or structure checks."""

class StoreLockedError(OSError):
    """Another process holds the store's writer lock."""

    pid: Union[int, str]
    """The holder's pid (the lock file's text when that is not a number)."""

def parse_fingerprints(texts: List[str], format: str = "auto") -> Tuple[List[int], Optional[str]]:
    """Fingerprints written as text, read as one input in ``format`` (``auto``: hex or decimal
    decided from all of them; ``hex``; ``decimal``), and a warning when either notation could
    have written them."""

def unsigned_hash(data: bytes) -> int:
    """The first 8 bytes of MD5(data), big-endian."""

def compute(hashes: Union[Iterable[int], bytes], packed: bool = False) -> int:
    """The bit vote over hashes (packed: little-endian u64 bytes)."""

def num_differing_bits(a: int, b: int) -> int:
    """The Hamming distance of two u64."""

def find_all(
    hashes: Union[Iterable[int], bytes],
    number_of_blocks: int,
    different_bits: int,
    packed: bool = False,
) -> List[Tuple[int, int]]:
    """simhash-cpp's find_all: sorted (smaller, larger) pairs."""

def find_clusters(
    hashes: Union[Iterable[int], bytes],
    number_of_blocks: int,
    different_bits: int,
    packed: bool = False,
) -> List[Set[int]]:
    """simhash-cpp's find_clusters, ordered by smallest value."""

def fingerprint(
    text: str,
    scheme: Optional[str] = None,
    shingle: Optional[int] = None,
    weight: Optional[str] = None,
) -> int:
    """The fingerprint of text under a scheme."""

def fingerprint_many(
    texts: List[str],
    scheme: Optional[str] = None,
    shingle: Optional[int] = None,
    weight: Optional[str] = None,
) -> bytes:
    """Fingerprints of texts, in parallel, as little-endian u64 bytes."""

def scheme_name(
    scheme: Optional[str] = None, shingle: Optional[int] = None, weight: Optional[str] = None
) -> str:
    """The scheme's full name as stores record it."""

def tune(
    corpus: List[str],
    min_jaccard: float,
    sample: Optional[int],
    seed: int,
    schemes: Optional[List[str]],
    max_distance: int,
    expected_size: Optional[int],
    gold: Optional[str],
    plot: Optional[str],
    format: Optional[str],
    id_field: str,
    text_field: str,
    skip_invalid: bool,
    sketch_bytes: Optional[List[int]],
) -> List[str]:
    """`tune --json`'s lines for a corpus; draws the plot when given."""


class NativeStore:
    """A store held open: a reader for queries, the writer lock per write call."""

    @staticmethod
    def create(
        path: Union[str, PathLike[str]],
        distance: int,
        blocks: Optional[int],
        expected_size: Optional[int],
        shards: Optional[int],
        scheme: Optional[str],
        shingle: Optional[int],
        weight: Optional[str],
        max_runs: Optional[int],
        merge_factor: Optional[int],
        sketch_bytes: Optional[int],
    ) -> Tuple["NativeStore", List[str]]:
        """Creates a store as `simhashdb init` does; returns it and init's warnings."""
    @staticmethod
    def open(
        path: Union[str, PathLike[str]], pin_bytes: Optional[int], cache_bytes: Optional[int]
    ) -> "NativeStore": ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> PathLike[str]: ...
    def settings(self) -> Tuple[int, int, int, int, str]: ...
    def refresh(self) -> bool: ...
    def insert(
        self, ids: List[str], fingerprints: bytes, label: Optional[str], compact: bool
    ) -> str: ...
    def insert_documents(
        self, documents: Iterable[Any], label: Optional[str], compact: bool
    ) -> str: ...
    def dedup(
        self,
        ids: List[str],
        fingerprints: Optional[bytes],
        texts: Optional[List[str]],
        distance: Optional[int],
        insert: bool,
        label: Optional[str],
        min_jaccard: Optional[float],
    ) -> str: ...
    def dedup_file(
        self,
        paths: List[str],
        output: Optional[str],
        duplicates: Optional[str],
        insert: bool,
        label: Optional[str],
        distance: Optional[int],
        format: Optional[str],
        skip_invalid: bool,
        id_field: str,
        fingerprint_field: str,
        text_field: str,
        fingerprint_format: str,
        min_jaccard: Optional[float],
        max_skipped: Optional[str],
        rejects: Optional[str],
        allow_empty: bool,
    ) -> str: ...
    def insert_file(
        self,
        paths: List[str],
        format: Optional[str],
        skip_invalid: bool,
        label: Optional[str],
        id_field: str,
        fingerprint_field: str,
        text_field: str,
        fingerprint_format: str,
        compact: bool,
        max_skipped: Optional[str],
        rejects: Optional[str],
        allow_empty: bool,
    ) -> str: ...
    def query(
        self, fingerprint: int, distance: Optional[int]
    ) -> List[Tuple[str, int, int]]: ...
    def query_many(
        self, queries: bytes, distance: Optional[int]
    ) -> Tuple[bytes, List[str], bytes, bytes]: ...
    def fingerprint_texts(self, texts: List[str]) -> bytes: ...
    def query_texts_verified(
        self, texts: List[str], distance: Optional[int], min_jaccard: float
    ) -> List[List[Tuple[str, int, int, Optional[float]]]]: ...
    def get(self, id: str) -> Optional[Tuple[int, int]]: ...
    def delete(self, ids: List[str], dry_run: bool) -> str: ...
    def expire(self, before: Optional[str], label: Optional[str], dry_run: bool) -> str: ...
    def batches(self) -> str: ...
    def compact(self) -> str: ...
    def verify(self, deep: bool) -> str: ...
    def stats(self) -> str: ...
    def audit_pairs(
        self,
        distance: Optional[int],
        verify_text: Optional[str],
        min_jaccard: Optional[float],
        id_field: str,
        text_field: str,
    ) -> NativePairs: ...
    def audit_clusters(
        self,
        distance: Optional[int],
        singletons: bool,
        verify_text: Optional[str],
        min_jaccard: Optional[float],
        id_field: str,
        text_field: str,
    ) -> List[List[str]]: ...
    def audit_duplicates(
        self,
        distance: Optional[int],
        verify_text: Optional[str],
        min_jaccard: Optional[float],
        id_field: str,
        text_field: str,
    ) -> Tuple[List[str], List[str], str]: ...
    def audit_report(
        self,
        path: str,
        distance: Optional[int],
        verify_text: Optional[str],
        min_jaccard: Optional[float],
        id_field: str,
        text_field: str,
    ) -> str: ...


class NativePairs:
    """An audit's pairs, pulled in batches."""

    def summary(self) -> str: ...
    def verified(self) -> bool: ...
    def again(self) -> NativePairs: ...
    def next_batch(self, max: int) -> Tuple[List[str], List[str], bytes, Optional[bytes]]: ...


# The Spark jobs' natives (simhashdb.spark; the engine's simhashdb::partitioned). Arrays cross
# through the Arrow C Data Interface: arguments are anything with __arrow_c_array__ (pyarrow
# arrays), results are Exported, which pyarrow.array() takes without a copy.

class Exported:
    """An Arrow array on its way to Python (its capsules can be taken once)."""

    def __arrow_c_array__(self, requested_schema: Optional[Any] = None) -> Tuple[Any, Any]: ...

def fingerprint_arrow(ids: Any, texts: Any, scheme: str, text_column: str) -> Exported: ...
def fingerprint_sketch_arrow(
    ids: Any, texts: Any, scheme: str, sketch_bytes: int, text_column: str
) -> Tuple[Exported, Exported]: ...
def keep_rule(
    ids: Any,
    fps: Any,
    distance: int,
    sketches: Any = None,
    min_jaccard: Optional[float] = None,
    references: Any = None,
    batches: Any = None,
) -> Tuple[Exported, Exported, Exported, Exported]: ...

class NativeAgainst:
    """The new side's distinct fingerprints as permuted tables, matched against reference parts."""

    def __init__(self, fps: Any, distance: int, blocks: Optional[int] = None) -> None: ...
    def pairs(self, fps: Any) -> Tuple[Exported, Exported, Exported]: ...
    def __len__(self) -> int: ...
def plan(
    fingerprints: int, distance: int, tasks: int, blocks: Optional[int] = None
) -> Tuple[int, int]: ...
def find_slices(
    blocks: int, distance: int, range_bits: int, numbers: Any, blobs: Any
) -> Tuple[Exported, Exported, Exported, Exported]: ...
def id_hashes(ids: Any) -> Exported: ...
def components(a: Any, b: Any) -> Tuple[Exported, Exported]: ...
def id_components(a: Any, b: Any) -> Tuple[Exported, Exported]: ...

class PartSlicer:
    """One Spark partition's documents cut into slices."""

    def __init__(self, blocks: int, distance: int, range_bits: int) -> None: ...
    def add(
        self, ids: Any, fingerprints: Any, missing: Any, id_column: str, fingerprint_column: str
    ) -> None: ...
    def finish(self) -> Tuple[Exported, Exported]: ...

class NativeRouter:
    """Documents and fingerprint pairs' ends meeting by fingerprint, cut into halves of blocks."""

    def __init__(self, chunk_rows: int, fingerprints: Any, documents: Any) -> None: ...
    def add(self, kind: Any, key: Any, other: Any, distance: Any, id: Any) -> None: ...
    def finish(
        self,
    ) -> Tuple[Exported, Exported, Exported, Exported, Exported, Exported, Exported]: ...

class NativeBlocks:
    """One partition's halves, expanded into document pairs a batch at a time."""

    def __init__(self) -> None: ...
    def add(
        self, a: Any, b: Any, i: Any, j: Any, of_b: Any, ids: Any, distance: Any
    ) -> None: ...
    def next(self, most: int) -> Optional[Tuple[Exported, Exported, Exported]]: ...
