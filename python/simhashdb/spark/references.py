"""The reference side of ``dedup --against``: a corpus kept before, matched where it is read.

The reference is the large side (1e9 rows against 1e7 new ones), so it is never shuffled: the
new documents' distinct fingerprints (8 bytes each) are broadcast, every task builds their
permuted tables once (``simhashdb.partitioned.Against``, 8 bytes a fingerprint a table) and
matches each Arrow batch of its part of the reference against them. What leaves a task is only
what matched: the fingerprint pairs (reference, new, distance), and per matched reference
fingerprint of the batch its representative (the earliest batch's smallest id, with its
sketch), which the keep rule decides against, as ``simhashdb dedup`` into a store of the
reference would.
"""

from __future__ import annotations

import uuid
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.storagelevel import StorageLevel

from .. import _native
from .columns import fingerprint_long, id_string, require

DOCUMENT, PAIR = 0, 1
# Reference rows matched at a time in a task (their columns are held meanwhile).
CHUNK_ROWS = 1 << 18
SCHEMA = ("kind byte, id string, fp long, other long, distance int, batch long, "
          "sketch binary, source string")

# The new side's tables, built once per Python worker for the broadcast that holds them.
_tables: Dict[str, object] = {}

References = Union[DataFrame, Sequence[DataFrame], Dict[str, DataFrame]]


def named(against: References) -> List[Tuple[str, DataFrame]]:
    """The references as (name, DataFrame): a dict's keys, else their places ("0", "1", ...)."""
    if isinstance(against, DataFrame):
        return [("0", against)]
    if isinstance(against, dict):
        items = list(against.items())
    elif isinstance(against, (list, tuple)):
        items = [(str(i), df) for i, df in enumerate(against)]
    else:
        raise ValueError(
            f"against: {type(against).__name__} is not a DataFrame, a list of them or a dict "
            "of name to DataFrame"
        )
    if not items:
        raise ValueError("against: no reference given")
    for name, df in items:
        if not isinstance(df, DataFrame):
            raise ValueError(f"against {name!r}: {type(df).__name__} is not a DataFrame")
    return [(str(name), df) for name, df in items]


def reference_rows(against: References, id_column: str, fingerprint_column: str,
                   sketches: bool) -> DataFrame:
    """(id, fp, missing, batch, sketch, source) of every reference row: a reference holds an
    id and a fingerprint column (as ``simhashdb export`` writes them), optionally ``batch``
    (integers: the batch that stored it, which orders matches as the store would; else 0) and
    ``sketch`` (binary, read when ``sketches``; else null)."""
    parts = []
    for name, df in named(against):
        what = f"reference {name}"
        require(df.columns, id_column, "id", what)
        require(df.columns, fingerprint_column, "fingerprint", what)
        batch = F.lit(0).cast("long")
        if "batch" in df.columns:
            if not isinstance(df.schema["batch"].dataType, (T.LongType, T.IntegerType)):
                raise ValueError(f"column 'batch' in {what} has type "
                                 f"{df.schema['batch'].dataType.simpleString()}; expected integers")
            batch = F.coalesce(F.col("batch").cast("long"), F.lit(0).cast("long"))
        sketch = F.lit(None).cast("binary")
        if sketches and "sketch" in df.columns:
            if not isinstance(df.schema["sketch"].dataType, T.BinaryType):
                raise ValueError(f"column 'sketch' in {what} has type "
                                 f"{df.schema['sketch'].dataType.simpleString()}; expected binary "
                                 "(as `simhashdb export --sketch` writes it)")
            sketch = F.col("sketch")
        parts.append(df.select(
            id_string(df, id_column, what).alias("id"),
            fingerprint_long(df, fingerprint_column, what).alias("fp"),
            F.col(fingerprint_column).isNull().alias("missing"),
            batch.alias("batch"), sketch.alias("sketch"), F.lit(name).alias("source")))
    rows = parts[0]
    for part in parts[1:]:
        rows = rows.unionByName(part)
    return rows


class Matched:
    """The reference rows near the new documents ``docs`` (id, fp, ...), computed once:
    ``rows`` (kind, id, fp, other, distance, batch, sketch, source) persisted, PAIR rows the
    fingerprint pairs (fp the reference's, other the new one's), DOCUMENT rows the matched
    fingerprints' representatives (per task and reference; the keep rule takes the least)."""

    def __init__(self, docs: DataFrame, references: DataFrame, distance: int, blocks, what: str):
        import numpy as np

        spark = docs.sparkSession
        new = docs.where(~F.col("missing") & F.col("fp").isNotNull()).select("fp").distinct()
        fps = new.toArrow().column("fp").to_numpy()
        shared = spark.sparkContext.broadcast(np.ascontiguousarray(fps, dtype=np.int64))
        # Names this job's tables in the workers (a broadcast has no id there).
        token = uuid.uuid4().hex
        plan = (distance, blocks)

        def match(batches: Iterator) -> Iterator:
            import pyarrow as pa
            import pyarrow.compute as pc

            against = _tables.get(token)
            if against is None:
                _tables.clear()
                against = _native.NativeAgainst(pa.array(shared.value), *plan)
                _tables[token] = against
            for batch in chunks(batches):
                check(batch, what)
                ref, fp, at = (pa.array(a) for a in against.pairs(batch.column("fp")))
                if len(ref) == 0:
                    continue
                yield pa.RecordBatch.from_arrays(
                    [pa.nulls(len(ref), pa.int8()).fill_null(PAIR), pa.nulls(len(ref), pa.string()),
                     ref, fp, at, pa.nulls(len(ref), pa.int64()), pa.nulls(len(ref), pa.binary()),
                     pa.nulls(len(ref), pa.string())],
                    names=["kind", "id", "fp", "other", "distance", "batch", "sketch", "source"])
                yield representatives(batch.filter(pc.is_in(batch.column("fp"), value_set=ref)))

        self.rows = (references.mapInArrow(match, SCHEMA)
                     .persist(StorageLevel.MEMORY_AND_DISK))
        counts = {r["kind"]: r["rows"] for r in
                  self.rows.groupBy("kind").agg(F.count(F.lit(1)).alias("rows")).collect()}
        self.pairs = counts.get(PAIR, 0)
        shared.unpersist()

    def edges(self) -> DataFrame:
        """(a, b): the reference fingerprint and the new one of every pair, once."""
        return self.rows.where(F.col("kind") == PAIR).select(
            F.col("fp").alias("a"), F.col("other").alias("b")).distinct()

    def representatives(self) -> DataFrame:
        """(id, fp, batch, sketch, source): the matched reference documents."""
        return self.rows.where(F.col("kind") == DOCUMENT).select(
            "id", "fp", "batch", "sketch", "source")


def chunks(batches: Iterator) -> Iterator:
    """``batches`` regrouped into batches of about ``CHUNK_ROWS`` rows: matching a batch sorts
    its fingerprints in every table's order, which costs less per row in larger batches."""
    import pyarrow as pa

    held, rows = [], 0
    for batch in batches:
        held.append(batch)
        rows += batch.num_rows
        if rows >= CHUNK_ROWS:
            yield pa.Table.from_batches(held).combine_chunks().to_batches()[0]
            held, rows = [], 0
    if rows:
        yield pa.Table.from_batches(held).combine_chunks().to_batches()[0]


def check(batch, what: str) -> None:
    """Fails naming the first reference row of ``batch`` with no id or no valid fingerprint."""
    import pyarrow.compute as pc

    ids, fps, missing = batch.column("id"), batch.column("fp"), batch.column("missing")
    bad = pc.or_(pc.is_null(ids), pc.is_null(fps))
    if pc.any(bad).as_py():
        at = pc.index(bad, True).as_py()
        source = batch.column("source")[at].as_py()
        if ids[at].as_py() is None:
            raise ValueError(f"reference {source}: a row with no id")
        reason = "no fingerprint" if missing[at].as_py() else "a fingerprint that is not one"
        raise ValueError(f"reference {source}: document {ids[at].as_py()!r} has {reason}")


def representatives(batch):
    """Of each fingerprint's rows of ``batch``, the one a store would name: the earliest
    batch, then the smallest id; as DOCUMENT rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.Table.from_batches([batch]).select(["id", "fp", "batch", "sketch", "source"])
    table = table.take(pc.sort_indices(table, [("fp", "ascending"), ("batch", "ascending"),
                                               ("id", "ascending")]))
    fp = table.column("fp").combine_chunks()
    first = [pa.array([True])] + ([pc.not_equal(fp[1:], fp[:-1])] if len(fp) > 1 else [])
    table = table.filter(pa.concat_arrays(first))
    n = table.num_rows
    column = lambda name: table.column(name).combine_chunks()  # noqa: E731
    return pa.RecordBatch.from_arrays(
        [pa.nulls(n, pa.int8()).fill_null(DOCUMENT), column("id"), column("fp"),
         pa.nulls(n, pa.int64()), pa.nulls(n, pa.int32()), column("batch"), column("sketch"),
         column("source")],
        names=["kind", "id", "fp", "other", "distance", "batch", "sketch", "source"])
