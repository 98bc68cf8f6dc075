"""Fingerprinting on the executors: the same scheme and bits as ``simhashdb fingerprint``."""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

import numpy as np
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from .._fingerprint import fingerprint_many, scheme_name
from .columns import require

# Texts fingerprinted per call into the native code (in parallel there, GIL released).
ROWS_PER_CALL = 4096


def fingerprint(
    df: DataFrame,
    scheme: Optional[str] = None,
    *,
    id_column: str = "id",
    text_column: str = "text",
    arrow: Optional[bool] = None,
    what: str = "the input",
) -> DataFrame:
    """(id, fingerprint): each document's fingerprint as an int64 holding its 64 bits, computed
    on the executors with ``scheme`` (as :func:`simhashdb.fingerprint` takes it; default
    words-2-minhash, the CLI's). A null text, or one with no token, fails the job naming the
    document's id. ``arrow`` hands the executors Arrow batches (``mapInArrow``: faster, needs
    pyarrow on the executors) instead of pickled rows; by default, when the driver has pyarrow."""
    require(df, id_column, "id", what)
    require(df, text_column, "text", what)
    if not isinstance(df.schema[text_column].dataType, T.StringType):
        kind = df.schema[text_column].dataType.simpleString()
        raise ValueError(f"column {text_column!r} in {what} has type {kind}; text needs strings")
    scheme = scheme_name(scheme)  # fails here, on the driver, for an unknown scheme
    id_field = df.schema[id_column]
    schema = T.StructType(
        [
            T.StructField("id", id_field.dataType, id_field.nullable),
            T.StructField("fingerprint", T.LongType(), False),
        ]
    )
    if arrow is None:
        arrow = _has_pyarrow()
    selected = df.select(id_column, text_column)
    if arrow:
        return selected.mapInArrow(
            lambda batches: _fingerprint_batches(batches, scheme, text_column), schema
        )
    rows = selected.rdd.mapPartitions(lambda part: _fingerprint_partition(part, scheme, text_column))
    return df.sparkSession.createDataFrame(rows, schema)


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _fingerprint_batches(batches: Iterator, scheme: str, text_column: str) -> Iterator:
    import pyarrow as pa  # only on this path, which is taken when pyarrow is there

    for batch in batches:
        ids, texts = batch.column(0), batch.column(1)
        for start in range(0, batch.num_rows, ROWS_PER_CALL):
            chunk_ids = ids.slice(start, ROWS_PER_CALL)
            chunk = texts.slice(start, ROWS_PER_CALL).to_pylist()
            rows = list(zip(chunk_ids.to_pylist(), chunk))
            fps = _fingerprint_texts(rows, scheme, text_column)
            yield pa.RecordBatch.from_arrays(
                [chunk_ids, pa.array(fps.view(np.int64))], names=["id", "fingerprint"]
            )


def _fingerprint_partition(rows: Iterator, scheme: str, text_column: str) -> Iterator:
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == ROWS_PER_CALL:
            yield from _fingerprint_chunk(chunk, scheme, text_column)
            chunk = []
    if chunk:
        yield from _fingerprint_chunk(chunk, scheme, text_column)


def _fingerprint_chunk(chunk: List, scheme: str, text_column: str) -> List[Tuple]:
    fps = _fingerprint_texts(chunk, scheme, text_column)
    return [(row[0], int(fp)) for row, fp in zip(chunk, fps.view(np.int64))]


def _fingerprint_texts(rows: List, scheme: str, text_column: str) -> np.ndarray:
    """The fingerprints (numpy uint64) of rows (id, text); errors name the document's id."""
    texts = [row[1] for row in rows]
    for id, text in rows:
        if text is None:
            raise ValueError(f"document {id!r}: null {text_column!r}")
    try:
        return fingerprint_many(texts, scheme)
    except ValueError as e:
        # The native error names texts[i]; name the document instead.
        message = str(e)
        if message.startswith("texts["):
            index = int(message[len("texts[") : message.index("]")])
            message = f"document {rows[index][0]!r}" + message[message.index("]") + 1 :]
        raise ValueError(message) from None
