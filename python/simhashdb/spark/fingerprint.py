"""Fingerprinting on the executors: the same scheme and bits as ``simhashdb fingerprint``.

With Arrow (the default when pyarrow is there), each batch's text column is handed to the
engine through the Arrow C Data Interface and fingerprinted in parallel with the GIL released:
no Python object per row. The pickled-rows path is for executors without pyarrow."""

from __future__ import annotations

from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from .. import _native
from .._fingerprint import fingerprint_many, scheme_name
from .columns import not_text, require

# Texts fingerprinted per call into the native code on the pickled-rows path (in parallel
# there, GIL released).
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
    words-2-minhash, the CLI's). A null text, one that is not UTF-8 (a binary column), one with
    no token, or one past 64 MiB fails the job naming the document's id. ``arrow`` hands the
    executors Arrow batches (``mapInArrow``: each batch's texts go to the engine as they are,
    no Python string per row; needs pyarrow >= 14 on the executors) instead of pickled rows;
    by default, when the driver has pyarrow."""
    return fingerprinted(df, scheme, id_column, text_column, arrow=arrow, what=what)


def fingerprinted(
    df: DataFrame,
    scheme: Optional[str],
    id_column: str,
    text_column: str,
    *,
    keep: Sequence[str] = (),
    arrow: Optional[bool] = None,
    sketch_bytes: Optional[int] = None,
    what: str = "the input",
) -> DataFrame:
    """:func:`fingerprint`, with the columns ``keep`` of each row passed through after the
    fingerprint; with ``sketch_bytes``, each text's verification sketch of that many bytes (as
    a store made with ``init --sketch --sketch-bytes N`` keeps it) in a binary column
    ``sketch`` after the fingerprint (Arrow only)."""
    require(df.columns, id_column, "id", what)
    require(df.columns, text_column, "text", what)
    if not isinstance(df.schema[text_column].dataType, (T.StringType, T.BinaryType)):
        raise not_text(text_column, df.schema[text_column].dataType.simpleString(), what)
    scheme = scheme_name(scheme)  # fails here, on the driver, for an unknown scheme
    id_field = df.schema[id_column]
    schema = T.StructType(
        [
            T.StructField("id", id_field.dataType, id_field.nullable),
            T.StructField("fingerprint", T.LongType(), False),
            *([T.StructField("sketch", T.BinaryType(), True)] if sketch_bytes else []),
            *[df.schema[name] for name in keep],
        ]
    )
    if arrow is None:
        arrow = _has_pyarrow()
    if sketch_bytes is not None and not arrow:
        raise ValueError("sketches are computed on Arrow batches: they need pyarrow")
    selected = df.select(id_column, text_column, *keep)
    if arrow:
        return selected.mapInArrow(
            lambda batches: _fingerprint_batches(batches, scheme, text_column, keep,
                                                 sketch_bytes),
            schema,
        )
    rows = selected.rdd.mapPartitions(lambda part: _fingerprint_partition(part, scheme, text_column))
    return df.sparkSession.createDataFrame(rows, schema)


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def _fingerprint_batches(
    batches: Iterator, scheme: str, text_column: str, keep: Sequence[str],
    sketch_bytes: Optional[int] = None,
) -> Iterator:
    """Each Arrow batch's text column goes to the engine as it is (no Python string per row);
    the fingerprints come back as an int64 column (and the sketches as a binary one)."""
    import pyarrow as pa  # only on this path, which is taken when pyarrow is there

    for batch in batches:
        ids, texts = batch.column(0), batch.column(1)
        kept = [batch.column(2 + i) for i in range(len(keep))]
        if sketch_bytes:
            fps, sketches = _native.fingerprint_sketch_arrow(ids, texts, scheme, sketch_bytes,
                                                             text_column)
            yield pa.RecordBatch.from_arrays(
                [ids, pa.array(fps), pa.array(sketches), *kept],
                names=["id", "fingerprint", "sketch", *keep])
            continue
        fps = pa.array(_native.fingerprint_arrow(ids, texts, scheme, text_column))
        yield pa.RecordBatch.from_arrays([ids, fps, *kept], names=["id", "fingerprint", *keep])


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
    return [(row[0], int(fp), *row[2:]) for row, fp in zip(chunk, fps.view(np.int64))]


def _fingerprint_texts(rows: List, scheme: str, text_column: str) -> np.ndarray:
    """The fingerprints (numpy uint64) of rows (id, text, ...); errors name the document's
    id."""
    texts = []
    for row in rows:
        id, text = row[0], row[1]
        if text is None:
            raise ValueError(f"document {id!r}: null {text_column!r}")
        if isinstance(text, (bytes, bytearray)):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"document {id!r}: {text_column!r} is not valid UTF-8 ({e})")
        texts.append(text)
    try:
        return fingerprint_many(texts, scheme)
    except ValueError as e:
        # The native error names texts[i]; name the document instead.
        message = str(e)
        if message.startswith("texts["):
            index = int(message[len("texts[") : message.index("]")])
            message = f"document {rows[index][0]!r}" + message[message.index("]") + 1 :]
        raise ValueError(message) from None
