"""Fingerprint arrays across the Rust boundary: little-endian uint64 bytes each way."""

from __future__ import annotations

import operator
from typing import Any, Iterable

import numpy as np

FINGERPRINT = np.dtype("<u8")


def fingerprint_bytes(values: Any, what: str = "fingerprints") -> bytes:
    """``values`` (a numpy integer array, or an iterable of ints in -2**63..2**64) as
    little-endian uint64 bytes; ValueError names the first value that is not a fingerprint.
    Negative values are int64 fingerprints (as Arrow, Spark and the CLI's Parquet export hand
    them over) and keep their 64 bits."""
    return fingerprint_array(values, what).tobytes()


def fingerprint_array(values: Any, what: str = "fingerprints") -> np.ndarray:
    """``values`` as a 1-D little-endian uint64 array (see :func:`fingerprint_bytes`)."""
    if isinstance(values, (str, bytes, bytearray, memoryview)):
        raise ValueError(f"{what}: expected integers, got {type(values).__name__}")
    if isinstance(values, np.ndarray):
        array = values
        if array.dtype.kind == "O":
            values = list(array)
    else:
        values = values if isinstance(values, (list, tuple)) else list(values)
        try:
            array = np.asarray(values)
        except (OverflowError, ValueError):
            array = np.asarray(values, dtype=object)
    if array.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D array, got shape {array.shape}")
    if array.size == 0:
        return np.zeros(0, dtype=FINGERPRINT)
    kind = array.dtype.kind
    if kind == "u":
        return array.astype(FINGERPRINT, copy=False)
    if kind == "i":
        # int64 is the same 64 bits (narrower ints widen first, keeping their sign).
        return array.astype(np.int64).astype(FINGERPRINT)
    if not isinstance(values, np.ndarray):
        # Python ints past 2**63 (numpy makes them float or object), or values that are not
        # ints at all: checked one by one, so a float is refused, never truncated.
        return np.fromiter(_checked(values, what), dtype=FINGERPRINT, count=len(values))
    raise ValueError(f"{what}: expected integers, got an array of {array.dtype}")


def _checked(values: Iterable[Any], what: str) -> Iterable[int]:
    for i, value in enumerate(values):
        try:
            if isinstance(value, (bool, np.bool_)):
                raise TypeError
            value = operator.index(value)
        except TypeError:
            raise ValueError(
                f"{what}[{i}]: {value!r} is not an integer fingerprint"
            ) from None
        if not -(1 << 63) <= value < 1 << 64:
            raise ValueError(
                f"{what}[{i}]: {value} is not a 64-bit fingerprint (a uint64, or an int64 "
                "taken as the same 64 bits)"
            )
        yield value & ((1 << 64) - 1)


def from_bytes(data: bytes, dtype: Any = np.uint64) -> np.ndarray:
    """Little-endian uint64 ``data`` as a writable array of ``dtype`` (native byte order)."""
    return np.frombuffer(data, dtype=FINGERPRINT).astype(dtype)


def checked_int(name: str, value: Any, low: int, high: int) -> int:
    """``value`` as an int in low..=high, else ValueError naming ``name`` (an out-of-range
    argument is bad input, not an arithmetic error)."""
    if isinstance(value, bool):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{name}: expected an integer, got {value!r}") from None
    if not low <= value <= high:
        raise ValueError(f"{name} {value}: must be between {low} and {high}")
    return value


def checked_texts(texts: Any, what: str = "texts") -> list:
    """``texts`` as a list of str; ValueError names the first item that is not one."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{what}: expected an iterable of str, got one {type(texts).__name__}")
    texts = texts if isinstance(texts, list) else list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"{what}[{i}]: expected str, got {type(text).__name__}")
    return texts
