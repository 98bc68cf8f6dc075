"""Input columns as the jobs expect them: named, typed, and fingerprints as int64."""

from __future__ import annotations

from decimal import Decimal
from typing import Optional, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

# 2^63 and 2^64 as Spark decimals (a Python int past int64 cannot be a literal).
TWO_63, TWO_64 = Decimal(2**63), Decimal(2**64)

# Id columns the jobs take: strings, or integers (compared and written as their decimal
# form, as the CLI reads an integer id).
ID_TYPES = (T.StringType, T.LongType, T.IntegerType, T.ShortType, T.ByteType)


def require(columns: Sequence[str], name: str, role: str, what: str) -> None:
    """Fails with the columns the input has unless ``columns`` has ``name``."""
    if name not in columns:
        raise ValueError(
            f"no column {name!r} ({role}) in {what}; it has: {', '.join(columns)} "
            f"(name another with --{role}-column)"
        )


def not_text(name: str, kind: str, what: str) -> ValueError:
    """The error for a text column of type ``kind``, which holds no strings."""
    return ValueError(f"column {name!r} in {what} has type {kind}; text needs strings")


def id_string(df: DataFrame, name: str, what: str) -> Column:
    """The id column as strings (integers as their decimal form)."""
    kind = df.schema[name].dataType
    if not isinstance(kind, ID_TYPES):
        raise ValueError(
            f"column {name!r} in {what} has type {kind.simpleString()}, but an id needs "
            "strings or integers"
        )
    return F.col(name).cast("string")


def fingerprint_long(df: DataFrame, name: str, what: str) -> Column:
    """The fingerprint column as the int64 that holds its 64 bits. Accepted: int64 (the bits),
    decimal(20, 0) (how Spark reads Parquet uint64), and strings of 16 hex digits or 0x hex."""
    kind = df.schema[name].dataType
    column = F.col(name)
    if isinstance(kind, T.LongType):
        return column
    if isinstance(kind, T.DecimalType) and kind.scale == 0:
        wrapped = F.when(column >= F.lit(TWO_63), column - F.lit(TWO_64)).otherwise(column)
        return wrapped.cast("long")
    if isinstance(kind, T.StringType):
        digits = F.regexp_replace(F.lower(F.trim(column)), "^0x", "")
        valid = digits.rlike("^[0-9a-f]{1,16}$")
        unsigned = F.conv(digits, 16, 10).cast("decimal(20,0)")
        wrapped = F.when(unsigned >= F.lit(TWO_63), unsigned - F.lit(TWO_64)).otherwise(unsigned)
        return F.when(valid, wrapped.cast("long"))
    raise ValueError(
        f"column {name!r} in {what} has type {kind.simpleString()}, but a fingerprint needs "
        "int64 (the 64 bits), uint64 or hex strings"
    )


def documents(df: DataFrame, id_column: str, fingerprint_column: str, what: str,
              order_by: Optional[str] = None, sketch: Optional[str] = None) -> DataFrame:
    """(id string, fp long, missing boolean[, order][, sketch]): the documents as the engine's
    tasks take them. Nothing is checked here but the columns' names and types: a null id, a null or bad
    fingerprint fail the task that meets them, naming the document (the input is read once)."""
    require(df.columns, id_column, "id", what)
    require(df.columns, fingerprint_column, "fingerprint", what)
    columns = [
        id_string(df, id_column, what).alias("id"),
        fingerprint_long(df, fingerprint_column, what).alias("fp"),
        F.col(fingerprint_column).isNull().alias("missing"),
    ]
    if order_by is not None:
        if order_by not in df.columns:
            raise ValueError(
                f"no column {order_by!r} (--order-by) in {what}; it has: {', '.join(df.columns)}"
            )
        columns.append(F.col(order_by).alias("order"))
    if sketch is not None:
        columns.append(F.col(sketch).alias("sketch"))
    return df.select(*columns)
