"""simhashdb's offline jobs on Spark: fingerprinting, the audit, its clusters and dedup, with
the answers of ``simhashdb fingerprint``, ``simhashdb audit`` and its keep/drop rule on data
past one machine. The engine does the work inside each task (on Arrow batches); Spark moves
bytes between tasks.

As functions on DataFrames (needs only pyspark, pyarrow and this package on the driver and
executors)::

    from simhashdb import spark as sdb
    docs = session.read.parquet("docs/")                      # id, text, ...
    fps = sdb.fingerprint(docs)                               # id, fingerprint (int64 bits)
    pairs = sdb.audit(fps, distance=3)                        # id_a, id_b, distance
    clusters = sdb.clusters(fps, distance=3)                  # cluster_id, id
    kept, dropped = sdb.dedup(docs, text_column="text")       # docs' rows; id, kept_id, ...
    kept, dropped = sdb.dedup(docs, 8, text_column="text", min_jaccard=0.8)  # verified

or as a job: ``python -m simhashdb.spark {fingerprint,audit,clusters,dedup} --master URL --input
PATH --output PATH`` (or the same module through ``spark-submit``). docs/distributed.md says how
the work splits and what it costs.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Optional, Tuple

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.storagelevel import StorageLevel

from . import partitioned as _partitioned
from .columns import documents
from .fingerprint import fingerprint, fingerprinted
from .references import Matched, References, reference_rows
from .tables import choose_blocks

DEFAULT_DISTANCE = 3
# The sketch size of a store made with `init --sketch` (bytes).
DEFAULT_SKETCH_BYTES = 128
CHUNK_ROWS = _partitioned.CHUNK_ROWS

__all__ = ["audit", "choose_blocks", "clusters", "dedup", "fingerprint", "DEFAULT_DISTANCE"]


def audit(
    df: DataFrame,
    distance: int = DEFAULT_DISTANCE,
    blocks: Optional[int] = None,
    *,
    id_column: str = "id",
    fingerprint_column: str = "fingerprint",
    chunk_rows: int = CHUNK_ROWS,
    what: str = "the input",
) -> DataFrame:
    """(id_a, id_b, distance): every pair of documents within ``distance`` bits, each once with
    id_a < id_b (ids as strings, compared by their bytes), documents sharing a fingerprint
    included at distance 0, as ``simhashdb audit --distance D`` lists them. ``df`` holds an
    id column (strings or integers) and a fingerprint column (int64 holding the 64 bits, uint64
    read as decimal(20,0), or hex strings); ids must be unique. ``blocks`` (more than
    ``distance``) defaults to the cheapest for the input's size. The fingerprint pairs are
    found here (Spark jobs run, and bad input raises ValueError naming the document); the
    document pairs are the returned DataFrame's to compute."""
    _check(distance, chunk_rows)
    docs = documents(df, id_column, fingerprint_column, what)
    with task_errors():
        found = _partitioned.Found(docs, distance, blocks, what, id_column, fingerprint_column)
    return _partitioned.document_pairs(docs, found, chunk_rows)


def clusters(
    df: DataFrame,
    distance: int = DEFAULT_DISTANCE,
    blocks: Optional[int] = None,
    *,
    id_column: str = "id",
    fingerprint_column: str = "fingerprint",
    chunk_rows: int = CHUNK_ROWS,
    what: str = "the input",
) -> DataFrame:
    """(cluster_id, id): the connected components of the audit's pairs, each named by its
    smallest id; documents with no near duplicate are in none. ``df`` is documents (as for
    :func:`audit`), or pairs with columns id_a and id_b (such as :func:`audit` writes)."""
    if "id_a" in df.columns and "id_b" in df.columns:
        with task_errors():
            return _partitioned.pair_clusters(df)
    _check(distance, chunk_rows)
    docs = documents(df, id_column, fingerprint_column, what)
    with task_errors():
        found = _partitioned.Found(docs, distance, blocks, what, id_column, fingerprint_column)
    return _partitioned.clusters(docs, found)


def dedup(
    df: DataFrame,
    distance: int = DEFAULT_DISTANCE,
    blocks: Optional[int] = None,
    *,
    id_column: str = "id",
    fingerprint_column: str = "fingerprint",
    text_column: Optional[str] = None,
    scheme: Optional[str] = None,
    order_by: Optional[str] = None,
    min_jaccard: Optional[float] = None,
    sketch_bytes: int = DEFAULT_SKETCH_BYTES,
    chunk_rows: int = CHUNK_ROWS,
    what: str = "the input",
    against: Optional[References] = None,
) -> Tuple[DataFrame, DataFrame]:
    """(kept, duplicates): dedup with the keep rule of ``simhashdb dedup`` and the local audit.
    Documents are taken in order, the smallest (``order_by`` value, id) first (without
    ``order_by``: the smallest id; a null ``order_by`` value sorts after every value); a
    document is dropped when a document kept before it is within ``distance`` bits, and names
    the nearest such (then the smallest id); otherwise it is kept. So no document is dropped
    unless a kept one is near it, and a cluster (a chain of near copies) may keep several.
    With ``min_jaccard`` a match must also pass verification: the two texts' sketches of
    ``sketch_bytes`` bytes, computed in the tasks as a store made with ``init --sketch`` keeps
    them, estimate at least that word 3-shingle Jaccard; it needs the texts
    (``text_column``). ``kept`` is ``df``'s rows that are not dropped, with every column;
    ``duplicates`` is (id, kept_id, distance, jaccard) of each dropped document (ids as
    strings, jaccard null unless verified), in no particular order. Documents are
    fingerprinted from ``text_column`` with ``scheme`` when either is given, else read from
    ``fingerprint_column``. Without ``order_by`` this is what ``simhashdb audit
    --duplicates`` drops of a store that holds the documents in one batch (with
    ``min_jaccard``: ``audit --min-jaccard`` of a store made with ``init --sketch``); with
    ``order_by`` a batch number, what it drops of a store holding them in those batches.

    ``against``: a reference corpus kept before (a DataFrame, a list of them, or a dict of
    name to DataFrame), each with the id and fingerprint columns (the same names as ``df``'s,
    as ``simhashdb export`` writes them: id, fingerprint), optionally ``batch`` and ``sketch``
    (``export --sketch``). A document is then also dropped when a reference is near it (with
    ``min_jaccard``, verified where the reference has a sketch, else taken unverified);
    references are never dropped, and at equal distance a reference is named before a kept
    document (the earliest batch, then the smallest id). ``duplicates`` gains a column
    ``reference``: the name (dict key, else place in the list) of the reference matched, null
    for a match of ``df``. This is ``simhashdb dedup`` of the documents in the same order into
    a store holding the references. The references are read once, where they lie, and never
    shuffled; the new documents' distinct fingerprints go to every task (8 bytes each, and
    8 bytes a fingerprint per permuted table in each worker)."""
    _check(distance, chunk_rows)
    if min_jaccard is not None:
        if not isinstance(min_jaccard, (int, float)) or not 0.0 <= min_jaccard <= 1.0:
            raise ValueError(f"min_jaccard: {min_jaccard!r} is not a number from 0 to 1")
        if text_column is None and scheme is None:
            raise ValueError(
                "min_jaccard verifies matches with sketches of the texts: give text_column "
                "(fingerprints alone cannot be verified)"
            )
        if not isinstance(sketch_bytes, int) or not 64 <= sketch_bytes <= 1024:
            raise ValueError(f"sketch_bytes: {sketch_bytes!r} is not an int from 64 to 1024")
    with task_errors():
        if text_column is not None or scheme is not None:
            text_column = text_column or "text"
            keep = [order_by] if order_by is not None and order_by != id_column else []
            fps = fingerprinted(df, scheme, id_column, text_column, keep=keep, what=what,
                                sketch_bytes=sketch_bytes if min_jaccard is not None else None)
            fps = fps.persist(StorageLevel.MEMORY_AND_DISK)
            docs = documents(fps, "id", "fingerprint", what,
                             "id" if order_by == id_column else order_by,
                             "sketch" if min_jaccard is not None else None)
        else:
            docs = documents(df, id_column, fingerprint_column, what, order_by)
        found = _partitioned.Found(docs, distance, blocks, what, id_column, fingerprint_column)
        matched = None
        if against is not None:
            references = reference_rows(against, id_column, fingerprint_column,
                                        min_jaccard is not None)
            matched = Matched(docs, references, distance, blocks, what)
        dropped = _partitioned.duplicates(
            docs, found, order_by is not None, min_jaccard, matched
        ).persist(StorageLevel.MEMORY_AND_DISK)
        count = dropped.count()
    ids = dropped.select(F.col("id").alias("__simhashdb_dropped"))
    if count <= _partitioned.BROADCAST_ROWS:
        ids = F.broadcast(ids)
    kept = df.join(ids, F.col(id_column).cast("string") == F.col("__simhashdb_dropped"),
                   "left_anti")
    return kept, dropped


def _check(distance: int, chunk_rows: int) -> None:
    if not isinstance(distance, int) or not 0 <= distance <= 63:
        raise ValueError(f"distance: {distance!r} is not an int from 0 to 63")
    if not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise ValueError(f"chunk_rows: {chunk_rows!r} is not a positive int")


@contextlib.contextmanager
def task_errors() -> Iterator[None]:
    """A task's ValueError (bad input, named by the engine) raised as a ValueError here, not as
    the Spark exception that carries it."""
    from pyspark.errors import PySparkException

    try:
        yield
    except PySparkException as e:
        message = task_error(e)
        if message is None:
            raise
        raise ValueError(message) from None


def task_error(error: Exception) -> Optional[str]:
    """The message of the ValueError a failed Python task raised, if that is what failed."""
    for line in str(error).splitlines():
        if line.startswith("ValueError: "):
            return line[len("ValueError: "):]
    return None
