"""Input columns as the jobs expect them: checked, and fingerprints as int64."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T


def require(df: DataFrame, name: str, role: str, what: str) -> None:
    """Fails with the columns the input has unless it has ``name``."""
    if name not in df.columns:
        raise ValueError(
            f"no column {name!r} ({role}) in {what}; it has: {', '.join(df.columns)} "
            f"(name another with --{role}-column)"
        )


def fingerprint_long(df: DataFrame, name: str, what: str) -> Column:
    """The fingerprint column as the int64 that holds its 64 bits. Accepted: int64 (the bits),
    decimal(20, 0) (how Spark reads Parquet uint64), and strings of 16 hex digits or 0x hex."""
    kind = df.schema[name].dataType
    column = F.col(name)
    if isinstance(kind, T.LongType):
        return column
    if isinstance(kind, T.DecimalType) and kind.scale == 0:
        wrapped = F.when(column >= F.lit(2**63), column - F.lit(2**64)).otherwise(column)
        return wrapped.cast("long")
    if isinstance(kind, T.StringType):
        digits = F.regexp_replace(F.lower(F.trim(column)), "^0x", "")
        unsigned = F.conv(digits, 16, 10).cast("decimal(20,0)")
        wrapped = F.when(unsigned >= F.lit(2**63), unsigned - F.lit(2**64)).otherwise(unsigned)
        return wrapped.cast("long")
    raise ValueError(
        f"column {name!r} in {what} has type {kind.simpleString()}, but a fingerprint needs "
        "int64 (the 64 bits), uint64 or hex strings"
    )


def documents(df: DataFrame, id_column: str, fingerprint_column: str, what: str) -> DataFrame:
    """(id, fp): the documents, checked for nulls, bad fingerprints and repeated ids."""
    require(df, id_column, "id", what)
    require(df, fingerprint_column, "fingerprint", what)
    docs = df.select(
        F.col(id_column).alias("id"),
        fingerprint_long(df, fingerprint_column, what).alias("fp"),
        F.col(fingerprint_column).isNull().alias("missing"),
    )
    # One pass finds the first problem of each kind: a null id, a null or bad fingerprint,
    # a repeated id.
    problems = (
        docs.groupBy("id")
        .agg(
            F.count(F.lit(1)).alias("count"),
            F.max(F.col("fp").isNull()).alias("bad"),
            F.max(F.col("missing")).alias("missing"),
        )
        .where(F.col("id").isNull() | F.col("bad") | (F.col("count") > 1))
        .limit(1)
        .collect()
    )
    if problems:
        row = problems[0]
        if row["id"] is None:
            raise ValueError(f"{what}: a null {id_column!r}")
        if row["bad"]:
            kind = f"null {fingerprint_column!r}" if row["missing"] else "not a fingerprint"
            raise ValueError(f"{what}: document {row['id']!r}: {kind}")
        raise ValueError(
            f"{what}: id {row['id']!r} appears {row['count']} times; "
            "ids must be unique (a store keeps one fingerprint per id)"
        )
    return docs.select("id", "fp")
