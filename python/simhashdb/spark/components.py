"""Connected components in Spark: min-label propagation with pointer jumping.

Every node starts labelled with the smallest node of its closed neighbourhood. Each round, a
node takes the smallest label among itself and its neighbours, then the label of its label
(pointer jumping, which halves chains). Labels only fall and are always nodes of the
component, so at the fixed point (a round that changes no label) every node carries the
smallest node of its component. Rounds grow with the log of a component's diameter, near
duplicates' components are shallow; each round's labels are checkpointed so plans stay short.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

# Past this many rounds something is wrong (the bound is about 2 log2 of the diameter).
MAX_ROUNDS = 200


def components(edges: DataFrame) -> DataFrame:
    """(node, label): for each node of ``edges`` (columns src, dst), the smallest node of its
    connected component."""
    both = (
        edges.select("src", "dst")
        .unionByName(edges.select(F.col("dst").alias("src"), F.col("src").alias("dst")))
        .where(F.col("src") != F.col("dst"))
        .distinct()
        .cache()
    )
    labels = (
        both.groupBy(F.col("src").alias("node"))
        .agg(F.min("dst").alias("label"))
        .select("node", F.least("node", "label").alias("label"))
        .localCheckpoint()
    )
    for _ in range(MAX_ROUNDS):
        neighbour = (
            both.join(labels.withColumnRenamed("node", "dst"), "dst")
            .groupBy(F.col("src").alias("node"))
            .agg(F.min("label").alias("near"))
        )
        lowered = labels.join(neighbour, "node").select(
            "node", F.least("label", "near").alias("label")
        )
        jumped = lowered.alias("n").join(
            lowered.alias("p"), F.col("n.label") == F.col("p.node"), "left"
        ).select(
            F.col("n.node").alias("node"),
            F.coalesce(F.least("n.label", "p.label"), F.col("n.label")).alias("label"),
        )
        new = jumped.localCheckpoint()
        changed = (
            new.alias("new")
            .join(labels.alias("old"), "node")
            .where(F.col("new.label") != F.col("old.label"))
            .limit(1)
            .count()
        )
        labels = new
        if changed == 0:
            both.unpersist()
            return labels
    raise RuntimeError(f"connected components did not settle in {MAX_ROUNDS} rounds")


def id_clusters(pairs: DataFrame) -> DataFrame:
    """(cluster_id, id): the clusters of document pairs (id_a, id_b), each named by its
    smallest id; documents in no pair are in none."""
    labels = components(pairs.select(F.col("id_a").alias("src"), F.col("id_b").alias("dst")))
    return labels.select(F.col("label").alias("cluster_id"), F.col("node").alias("id"))
