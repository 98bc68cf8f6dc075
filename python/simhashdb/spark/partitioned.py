"""The audit as a cluster runs it: the engine's partitioned find_all (``simhashdb.partitioned``,
docs/distributed.md) inside each task, Spark only moving bytes between them.

1. **Slices** (a map over the input): each task checks its documents (a null id, a null or bad
   fingerprint fail the job naming the document), collapses its copies of a fingerprint to one,
   and cuts its fingerprints into slices: per permuted table and key range, its sorted keys,
   delta-encoded (about 6 bytes each); table 0's with the number of documents of each
   fingerprint, and its id hashes in slices of their own.
2. **Found** (one shuffle of slices): the slices of one number from every task meet in one task,
   which merges them and compares the keys that share the table's leading blocks: the
   fingerprint pairs within the distance (each from exactly one table), the fingerprints held by
   two or more documents, and id hashes held by two or more (checked against the ids only when
   there are any, which is when an id repeats or two ids share a 64-bit hash).
3. **Documents** (two shuffles): the documents and the ends of the fingerprint pairs meet by
   fingerprint, where the documents of the fingerprints found (the others are dropped there)
   are cut into chunks of ``chunk_rows`` ids, and each fingerprint pair (or a fingerprint's
   copies) becomes blocks of two chunks, which meet in the second shuffle and which the engine
   expands into document pairs as it writes them; or, for clusters and dedup, the components
   of the fingerprint graph (on the driver when it fits) label the documents (a broadcast join
   when the fingerprints found are few).

No stage holds the pairs of a hot fingerprint: its copies are one key in every slice, and its
ids are cut into chunks whose pairs are expanded a million at a time.
"""

from __future__ import annotations

from typing import Iterator, Optional

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.storagelevel import StorageLevel

from .. import _native

# Ids per chunk of a fingerprint's documents (see the module docs).
CHUNK_ROWS = 2048
# Sets of fingerprints sent whole to every task (a broadcast join) up to this many rows.
BROADCAST_ROWS = 4_000_000
# Fingerprint graphs of up to this many edges get their components on the driver (16 bytes
# an edge); larger ones by label propagation in Spark.
DRIVER_EDGES = 50_000_000
# Document pairs of up to this many rows get their clusters on the driver.
DRIVER_PAIRS = 20_000_000
# Document pairs per Arrow batch the expansion yields, and halves per batch the routing does.
PAIRS_PER_BATCH = 1 << 20
HALVES_PER_BATCH = 1 << 16

PAIR, COPIES, REPEATED_ID = 0, 1, 2


class Found:
    """What the slices of ``docs`` (id string, fp long, missing boolean, ...) hold, computed once:
    ``rows`` (kind, a, b, c) persisted, and how many of each kind."""

    def __init__(self, docs: DataFrame, distance: int, blocks: Optional[int], what: str,
                 id_column: str, fingerprint_column: str):
        spark = docs.sparkSession
        tasks = int(spark.conf.get("spark.sql.shuffle.partitions"))
        # The input's rows bound its distinct fingerprints; the blocks' cost changes slowly.
        documents = docs.count()
        self.blocks, self.range_bits = _native.plan(documents, distance, tasks, blocks)
        self.distance = distance
        self.what = what
        plan = (self.blocks, distance, self.range_bits)

        def cut(batches: Iterator) -> Iterator:
            import pyarrow as pa
            import pyarrow.compute as pc

            slicer = _native.PartSlicer(*plan)
            for batch in batches:
                try:
                    slicer.add(batch.column("id"), batch.column("fp"), batch.column("missing"),
                               id_column, fingerprint_column)
                except ValueError as e:
                    raise ValueError(f"{what}: {e}") from None
            numbers, blobs = slicer.finish()
            numbers, blobs = pa.array(numbers), pa.array(blobs)
            # Batches of about 64 MiB of slices at most (a slice is far smaller).
            sizes = pc.binary_length(blobs).to_pylist()
            start, size = 0, 0
            for end, length in enumerate(sizes):
                size += length
                if size > 64 << 20 or end == len(sizes) - 1:
                    yield pa.RecordBatch.from_arrays(
                        [numbers[start:end + 1], blobs[start:end + 1]], names=["slice", "blob"])
                    start, size = end + 1, 0

        def find(batches: Iterator) -> Iterator:
            import pyarrow as pa

            batches = list(batches)
            if not batches:
                return
            table = pa.Table.from_batches(batches).combine_chunks()
            kind, a, b, c = _native.find_slices(*plan, table.column("slice").chunk(0),
                                                table.column("blob").chunk(0))
            yield pa.RecordBatch.from_arrays([pa.array(kind), pa.array(a), pa.array(b),
                                              pa.array(c)], names=["kind", "a", "b", "c"])

        slices = docs.select("id", "fp", "missing").mapInArrow(cut, "slice int, blob binary")
        self.rows = (
            slices.repartition(tasks, "slice")
            .mapInArrow(find, "kind byte, a long, b long, c long")
            .persist(StorageLevel.MEMORY_AND_DISK)
        )
        counts = {
            r["kind"]: (r["rows"], r["documents"])
            for r in self.rows.groupBy("kind")
            .agg(F.count(F.lit(1)).alias("rows"), F.sum("c").alias("documents")).collect()
        }
        self.pairs = counts.get(PAIR, (0, 0))[0]
        self.copies = counts.get(COPIES, (0, 0))[0]
        if REPEATED_ID in counts:
            hashes = [r["a"] for r in self.rows.where(F.col("kind") == REPEATED_ID).collect()]
            check_repeated_ids(docs, hashes, what)

    def fingerprint_pairs(self) -> DataFrame:
        """(fp_a, fp_b, distance): the fingerprint pairs, fp_a < fp_b (unsigned)."""
        return self.rows.where(F.col("kind") == PAIR).select(
            F.col("a").alias("fp_a"), F.col("b").alias("fp_b"), F.col("c").cast("int").alias("distance"))

    def copied(self) -> DataFrame:
        """(fp, documents): the fingerprints of two or more documents."""
        return self.rows.where(F.col("kind") == COPIES).select(
            F.col("a").alias("fp"), F.col("c").alias("documents"))


def check_repeated_ids(docs: DataFrame, hashes, what: str) -> None:
    """Fails naming an id that two documents hold, among the documents whose id hash is one of
    ``hashes``; passes when they only share a hash."""
    import pyarrow as pa

    wanted = pa.array(hashes, pa.int64())

    def suspects(batches: Iterator) -> Iterator:
        import pyarrow.compute as pc

        for batch in batches:
            hashed = pa.array(_native.id_hashes(batch.column("id")))
            yield batch.filter(pc.is_in(hashed, value_set=wanted))

    repeated = (
        docs.select("id").mapInArrow(suspects, "id string")
        .groupBy("id").count().where(F.col("count") > 1).orderBy("id").limit(1).collect()
    )
    if repeated:
        row = repeated[0]
        raise ValueError(
            f"{what}: id {row['id']!r} appears {row['count']} times; "
            "ids must be unique (a store keeps one fingerprint per id)"
        )


def document_pairs(docs: DataFrame, found: Found, chunk_rows: int = CHUNK_ROWS) -> DataFrame:
    """(id_a, id_b, distance), id_a < id_b: every pair of documents within the distance, each
    once, copies of a fingerprint at distance 0. Two rounds, each one shuffle
    (simhashdb::partitioned::Router and Blocks): the documents and the pairs' ends meet by
    fingerprint, where each fingerprint's ids are cut into chunks of ``chunk_rows`` and sent,
    a chunk per block of pairs, to where the block's two halves meet and are expanded."""
    spark = docs.sparkSession
    tasks = int(spark.conf.get("spark.sql.shuffle.partitions"))
    hot = found.copied().where(F.col("documents") > chunk_rows).toArrow()
    hot_fps, hot_docs = hot.column("fp").combine_chunks(), hot.column("documents").combine_chunks()
    pairs = found.fingerprint_pairs()
    rows = (
        docs.select(F.lit(0).cast("byte").alias("kind"), F.col("fp").alias("key"),
                    F.lit(None).cast("long").alias("other"),
                    F.lit(None).cast("int").alias("distance"), "id")
        .unionByName(pairs.select(F.lit(1).cast("byte").alias("kind"), F.col("fp_a").alias("key"),
                                  F.col("fp_b").alias("other"), "distance",
                                  F.lit(None).cast("string").alias("id")))
        .unionByName(pairs.select(F.lit(1).cast("byte").alias("kind"), F.col("fp_b").alias("key"),
                                  F.col("fp_a").alias("other"), "distance",
                                  F.lit(None).cast("string").alias("id")))
        .unionByName(found.copied().select(F.lit(2).cast("byte").alias("kind"),
                                           F.col("fp").alias("key"),
                                           F.lit(None).cast("long").alias("other"),
                                           F.lit(None).cast("int").alias("distance"),
                                           F.lit(None).cast("string").alias("id")))
    )

    def route(batches: Iterator) -> Iterator:
        import pyarrow as pa

        router = _native.NativeRouter(chunk_rows, hot_fps, hot_docs)
        for batch in batches:
            router.add(*(batch.column(c) for c in ("kind", "key", "other", "distance", "id")))
        halves = pa.RecordBatch.from_arrays(
            [pa.array(a) for a in router.finish()],
            names=["a", "b", "i", "j", "of_b", "ids", "distance"])
        for start in range(0, halves.num_rows, HALVES_PER_BATCH):
            yield halves.slice(start, HALVES_PER_BATCH)

    def expand(batches: Iterator) -> Iterator:
        import pyarrow as pa

        blocks = _native.NativeBlocks()
        for batch in batches:
            blocks.add(*(batch.column(c) for c in ("a", "b", "i", "j", "of_b", "ids", "distance")))
        while True:
            out = blocks.next(PAIRS_PER_BATCH)
            if out is None:
                break
            yield pa.RecordBatch.from_arrays([pa.array(o) for o in out],
                                             names=["id_a", "id_b", "distance"])

    halves = rows.repartition(tasks, "key").mapInArrow(
        route, "a long, b long, i int, j int, of_b boolean, ids array<string>, distance int")
    return halves.repartition(tasks, "a", "b", "i", "j").mapInArrow(
        expand, "id_a string, id_b string, distance int")


def components(found: Found, matched=None) -> DataFrame:
    """(fp, component): each fingerprint with a near duplicate or a copy, and the least
    fingerprint (unsigned, as int64 bits) of its component in the fingerprint graph (a
    fingerprint with copies only is its own); with ``matched`` (a dedup's reference side,
    references.Matched) its pairs are edges too. Small graphs (most) are solved on the driver
    by the engine and sent to every task; larger ones by label propagation in Spark."""
    spark = found.rows.sparkSession
    # Every fingerprint is a node: a fingerprint with copies only is an edge to itself.
    edges = found.rows.where(F.col("kind").isin(PAIR, COPIES)).select(
        "a", F.when(F.col("kind") == PAIR, F.col("b")).otherwise(F.col("a")).alias("b"))
    count = found.pairs + found.copies
    if matched is not None:
        edges = edges.unionByName(matched.edges())
        count += matched.pairs
    if count > DRIVER_EDGES:
        from .components import components as propagate

        # Label propagation orders labels as signed int64; the label only names a component.
        labels = propagate(edges.select(F.col("a").alias("src"), F.col("b").alias("dst")))
        labels = labels.select(F.col("node").alias("fp"), "label")
        nodes = edges.select(F.col("a").alias("fp")).union(edges.select(F.col("b").alias("fp")))
        return nodes.distinct().join(labels, "fp", "left").select(
            "fp", F.coalesce("label", "fp").alias("component"))
    import pyarrow as pa

    graph = edges.toArrow()
    nodes, least = (pa.array(a) for a in _native.components(
        graph.column("a").combine_chunks(), graph.column("b").combine_chunks()))
    labels = spark.createDataFrame(pa.table({"fp": nodes, "component": least}),
                                   "fp long, component long")
    return F.broadcast(labels) if len(nodes) <= BROADCAST_ROWS else labels


def labelled(docs: DataFrame, labels: DataFrame, *columns: str) -> DataFrame:
    """(component, id, *columns) of every document of a fingerprint ``labels`` (fp,
    component) holds."""
    return docs.join(labels, "fp").select("component", "id", *columns)


def clusters(docs: DataFrame, found: Found) -> DataFrame:
    """(cluster_id, id): the documents with a near duplicate or a copy, each cluster named by
    its smallest id."""
    component = Window.partitionBy("component")
    return labelled(docs, components(found)).select(
        F.min("id").over(component).alias("cluster_id"), "id")


def duplicates(docs: DataFrame, found: Found, order: bool,
               min_jaccard: Optional[float] = None, matched=None) -> DataFrame:
    """(id, kept_id, distance, jaccard): every document the keep rule drops, the rule of
    ``simhashdb dedup`` and the local audit. Documents are taken in order, the smallest
    (``order``, id) first when ``order`` (a null ``order`` after every value), else the
    smallest id; a document is dropped when a document kept before it is within the distance
    (and, with ``min_jaccard``, their sketches estimate at least that Jaccard), and names the
    nearest such (then the smallest id). Decisions in one component of the fingerprint graph
    never depend on another's (no pair crosses two), so each component is decided whole in one
    task, in one pass: the documents with a near duplicate go, by component, to a task that
    sorts them in the rule's order and decides them all as the local audit does
    (``_native.keep_rule``: one graph of the task's components).

    With ``matched`` (references.Matched: the reference documents near these) the references
    join their components and are never dropped; a document near one is dropped naming the
    nearest reference or earlier kept document, at equal distance the reference (the earliest
    batch, then the smallest id), as ``dedup`` into a store of the references; a fifth column,
    ``reference``, names the reference the match came from (null for a match of the input)."""
    spark = docs.sparkSession
    tasks = int(spark.conf.get("spark.sql.shuffle.partitions"))
    verify = min_jaccard is not None
    columns = ["fp"] + (["order"] if order else []) + (["sketch"] if verify else [])
    distance = found.distance
    ranked = [F.col("order").asc_nulls_last()] if order else []
    labels = components(found, matched)
    rows = labelled(docs, labels, *columns)
    if matched is not None:
        rows = rows.select("*", F.lit(False).alias("reference"),
                           F.lit(None).cast("long").alias("batch"),
                           F.lit(None).cast("string").alias("source"))
        refs = matched.representatives().join(labels, "fp")
        rows = rows.unionByName(refs.select(
            "component", "id", "fp",
            *([F.lit(None).cast(docs.schema["order"].dataType).alias("order")] if order else []),
            *(["sketch"] if verify else []),
            F.lit(True).alias("reference"), "batch", "source"))
    rows = rows.repartition(tasks, "component").sortWithinPartitions(*ranked, "id")
    against = matched is not None
    names = ["id", "kept_id", "distance", "jaccard"] + (["reference"] if against else [])

    def decide(batches: Iterator) -> Iterator:
        import pyarrow as pa

        batches = list(batches)
        if not batches:
            return
        table = pa.Table.from_batches(batches).combine_chunks()
        if table.num_rows == 0:
            return
        column = lambda name: table.column(name).chunk(0)  # noqa: E731
        row, kept, at, jaccard = (pa.array(o) for o in _native.keep_rule(
            column("id"), column("fp"), distance, column("sketch") if verify else None,
            min_jaccard, column("reference") if against else None,
            column("batch") if against else None))
        out = [column("id").take(row), column("id").take(kept), at, jaccard]
        if against:
            out.append(column("source").take(kept))
        yield pa.RecordBatch.from_arrays(out, names=names)

    schema = "id string, kept_id string, distance int, jaccard double"
    return rows.mapInArrow(decide, schema + (", reference string" if against else ""))


def pair_clusters(pairs: DataFrame) -> DataFrame:
    """(cluster_id, id): the connected components of document pairs (id_a, id_b), each named by
    its smallest id; on the driver by the engine when there are at most ``DRIVER_PAIRS``
    pairs, else by label propagation in Spark."""
    edges = pairs.select(F.col("id_a").cast("string").alias("a"),
                         F.col("id_b").cast("string").alias("b"))
    if edges.count() > DRIVER_PAIRS:
        from .components import id_clusters

        return id_clusters(pairs)
    import pyarrow as pa

    table = edges.toArrow()
    ids, least = (pa.array(a) for a in _native.id_components(
        table.column("a").combine_chunks(), table.column("b").combine_chunks()))
    return pairs.sparkSession.createDataFrame(
        pa.table({"cluster_id": least, "id": ids}), "cluster_id string, id string")
