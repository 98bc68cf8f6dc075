"""simhashdb's offline jobs on Spark: fingerprinting, the audit and its clusters, with the
answers of ``simhashdb fingerprint`` and ``simhashdb audit`` on data past one machine.

As functions on DataFrames (needs only pyspark and this package on the driver and executors)::

    from simhashdb import spark as sdb
    docs = session.read.parquet("docs/")                      # id, text
    fps = sdb.fingerprint(docs)                               # id, fingerprint (int64 bits)
    pairs = sdb.audit(fps, distance=3)                        # id_a, id_b, distance
    clusters = sdb.clusters(fps, distance=3)                  # cluster_id, id

or as a job: ``python -m simhashdb.spark {fingerprint,audit,clusters} --master URL --input PATH
--output PATH`` (or the same module through ``spark-submit``). docs/distributed.md says how the
work splits and what it costs.
"""

from __future__ import annotations

from typing import Optional

from pyspark.sql import DataFrame

from . import audit as _audit
from . import components as _components
from .columns import documents
from .fingerprint import fingerprint
from .tables import choose_blocks

DEFAULT_DISTANCE = 3

__all__ = ["audit", "choose_blocks", "clusters", "fingerprint", "DEFAULT_DISTANCE"]


def audit(
    df: DataFrame,
    distance: int = DEFAULT_DISTANCE,
    blocks: Optional[int] = None,
    *,
    id_column: str = "id",
    fingerprint_column: str = "fingerprint",
    chunk_rows: int = _audit.CHUNK_ROWS,
    what: str = "the input",
) -> DataFrame:
    """(id_a, id_b, distance): every pair of documents within ``distance`` bits, each once with
    id_a < id_b, documents sharing a fingerprint included at distance 0, as ``simhashdb audit
    --distance D`` lists them. ``df`` holds an id column and a fingerprint column (int64 holding
    the 64 bits, uint64 read as decimal(20,0), or hex strings); ids must be unique. ``blocks``
    (more than ``distance``) defaults to the cheapest for the number of distinct fingerprints."""
    docs = documents(df, id_column, fingerprint_column, what)
    return _audit.audit(docs, distance, blocks, chunk_rows)


def clusters(
    df: DataFrame,
    distance: int = DEFAULT_DISTANCE,
    blocks: Optional[int] = None,
    *,
    id_column: str = "id",
    fingerprint_column: str = "fingerprint",
    chunk_rows: int = _audit.CHUNK_ROWS,
    what: str = "the input",
) -> DataFrame:
    """(cluster_id, id): the connected components of the audit's pairs, each named by its
    smallest id; documents with no near duplicate are in none. ``df`` is documents (as for
    :func:`audit`), or pairs with columns id_a and id_b (such as :func:`audit` writes)."""
    if "id_a" in df.columns and "id_b" in df.columns:
        return _components.id_clusters(df)
    docs = documents(df, id_column, fingerprint_column, what).cache()
    pairs = _audit.fingerprint_graph(docs, distance, blocks, chunk_rows)
    return _components.fingerprint_clusters(docs, pairs)
