"""Every pair within D bits, by the permuted tables as Spark SQL joins (see :mod:`.tables`).

The work, in three shuffles:

1. Distinct fingerprints. Copies of one fingerprint (a boilerplate page) collapse to one row, so
   they cost the table join nothing; their pairs come from step 3.
2. Fingerprint pairs. Each distinct fingerprint goes into every table under its key; rows that
   share (table, key) form a bucket and are joined, filtered by popcount, and kept by the one
   table whose pair it is.
3. Document pairs. Each fingerprint pair becomes the pairs of the documents that hold them, and
   the documents that share a fingerprint pair at distance 0.

Buckets and documents per fingerprint are cut into chunks of at most ``chunk_rows`` rows, and a
join key is (bucket, chunk i, chunk j) for i <= j: a hot bucket becomes many tasks of at most
``chunk_rows**2`` comparisons each instead of one quadratic task, and no task holds more than a
chunk of one side in memory.
"""

from __future__ import annotations

from typing import Optional

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .tables import check, choose_blocks, key_mask, signed, skipped_masks, tables

# Rows per chunk of a bucket (see the module docs).
CHUNK_ROWS = 2048


def chunked(df: DataFrame, group: list, order: str, chunk_rows: int) -> DataFrame:
    """Adds ``chunk`` (0-based, ``chunk_rows`` rows each, in ``order``) and ``chunks`` (how
    many the group has) to each row of ``df`` grouped by ``group``."""
    window = Window.partitionBy(*group)
    rank = F.row_number().over(window.orderBy(order)) - 1
    size = F.count(F.lit(1)).over(window)
    return df.withColumn("chunk", F.floor(rank / chunk_rows).cast("int")).withColumn(
        "chunks", F.floor((size - 1) / chunk_rows).cast("int") + 1
    )


def self_join_chunked(df: DataFrame, group: list, order: str) -> DataFrame:
    """Every unordered pair of rows within each group of a :func:`chunked` frame, once: rows
    ``a`` and ``b`` with ``a`` in chunk i and ``b`` in chunk j >= i, and ``a.order < b.order``
    inside one chunk. Columns: the group's, then ``a_<col>`` and ``b_<col>`` for the others."""
    others = [c for c in df.columns if c not in group + ["chunk", "chunks"]]
    left = df.select(
        *group,
        F.col("chunk").alias("ci"),
        F.explode(F.sequence(F.col("chunk"), F.col("chunks") - 1)).alias("cj"),
        *[F.col(c).alias(f"a_{c}") for c in others],
    )
    right = df.select(
        *group,
        F.explode(F.sequence(F.lit(0), F.col("chunk"))).alias("ci"),
        F.col("chunk").alias("cj"),
        *[F.col(c).alias(f"b_{c}") for c in others],
    )
    joined = left.join(right, on=group + ["ci", "cj"])
    return joined.where((F.col("ci") < F.col("cj")) | (F.col(f"a_{order}") < F.col(f"b_{order}")))


def fingerprint_pairs(
    fps: DataFrame, distance: int, blocks: int, chunk_rows: int = CHUNK_ROWS
) -> DataFrame:
    """(fp_a, fp_b, distance), fp_a < fp_b, every pair of the distinct fingerprints ``fps``
    (column ``fp``, int64) within ``distance`` bits, each once."""
    combos = tables(blocks, distance)
    entries = F.array(
        *[
            F.struct(
                F.lit(t).alias("t"),
                F.col("fp").bitwiseAND(F.lit(signed(key_mask(blocks, combo)))).alias("key"),
            )
            for t, combo in enumerate(combos)
        ]
    )
    keyed = fps.select("fp", F.explode(entries).alias("e")).select(
        F.col("e.t").alias("t"), F.col("e.key").alias("key"), "fp"
    )
    pairs = self_join_chunked(chunked(keyed, ["t", "key"], "fp", chunk_rows), ["t", "key"], "fp")
    x = F.col("a_fp").bitwiseXOR(F.col("b_fp"))
    owner = _first_table(combos, blocks, x)
    return pairs.where((F.bit_count(x) <= distance) & owner).select(
        F.least("a_fp", "b_fp").alias("fp_a"),
        F.greatest("a_fp", "b_fp").alias("fp_b"),
        F.bit_count(x).cast("int").alias("distance"),
    )


def _first_table(combos, blocks: int, x: Column) -> Column:
    """True where the row's table (column ``t``) is the first table the pair shares."""
    expr = None
    for t, combo in enumerate(combos):
        mine = F.lit(True)
        for m in skipped_masks(blocks, combo):
            mine = mine & (x.bitwiseAND(F.lit(signed(m))) != 0)
        expr = F.when(F.col("t") == t, mine) if expr is None else expr.when(F.col("t") == t, mine)
    return expr.otherwise(F.lit(False))


def document_pairs(
    docs: DataFrame, fp_pairs: DataFrame, chunk_rows: int = CHUNK_ROWS
) -> DataFrame:
    """(id_a, id_b, distance), id_a < id_b: the pairs of documents ``docs`` (id, fp) whose
    fingerprints are a pair of ``fp_pairs``, and those that share a fingerprint (distance 0)."""
    ids = chunked(docs, ["fp"], "id", chunk_rows).cache()
    same = self_join_chunked(ids, ["fp"], "id").select(
        F.col("a_id").alias("x"), F.col("b_id").alias("y"), F.lit(0).alias("distance")
    )
    counts = ids.select("fp", "chunks").distinct()
    spread = (
        fp_pairs.join(counts.withColumnRenamed("fp", "fp_a").withColumnRenamed("chunks", "na"), "fp_a")
        .join(counts.withColumnRenamed("fp", "fp_b").withColumnRenamed("chunks", "nb"), "fp_b")
        .select(
            "fp_a",
            "fp_b",
            "distance",
            F.explode(F.sequence(F.lit(0), F.col("na") - 1)).alias("ca"),
            "nb",
        )
        .select("fp_a", "fp_b", "distance", "ca", F.explode(F.sequence(F.lit(0), F.col("nb") - 1)).alias("cb"))
    )
    side = lambda name, chunk: ids.select(  # noqa: E731
        F.col("fp").alias(f"fp_{name}"), F.col("chunk").alias(chunk), F.col("id").alias(name)
    )
    cross = (
        spread.join(side("a", "ca"), ["fp_a", "ca"])
        .join(side("b", "cb"), ["fp_b", "cb"])
        .select(F.col("a").alias("x"), F.col("b").alias("y"), "distance")
    )
    return same.unionByName(cross).select(
        F.least("x", "y").alias("id_a"), F.greatest("x", "y").alias("id_b"), "distance"
    )


def audit(
    docs: DataFrame,
    distance: int = 3,
    blocks: Optional[int] = None,
    chunk_rows: int = CHUNK_ROWS,
) -> DataFrame:
    """(id_a, id_b, distance): every pair of documents ``docs`` (columns id, fp: the int64 bits)
    within ``distance`` bits, each once with id_a < id_b, documents that share a fingerprint
    included (distance 0). ``blocks`` defaults to :func:`.tables.choose_blocks` for the
    number of distinct fingerprints."""
    return document_pairs(docs, fingerprint_graph(docs, distance, blocks, chunk_rows), chunk_rows)


def fingerprint_graph(
    docs: DataFrame,
    distance: int,
    blocks: Optional[int] = None,
    chunk_rows: int = CHUNK_ROWS,
) -> DataFrame:
    """:func:`fingerprint_pairs` of the distinct fingerprints of ``docs``, with ``blocks``
    defaulting to :func:`.tables.choose_blocks` for how many there are."""
    fps = docs.select("fp").distinct().cache()
    if blocks is None:
        blocks = choose_blocks(max(fps.count(), 1), distance)
    check(blocks, distance)
    return fingerprint_pairs(fps, distance, blocks, chunk_rows)
