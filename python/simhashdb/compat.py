"""seomoz simhash-py 0.4's API, bit for bit: ``import simhashdb.compat as simhash``.

Same names, arguments and results as simhash-py (and its pybind twin), so code written for it
runs unchanged:

- ``unsigned_hash(bytes)``: the first 8 bytes of MD5, big-endian (a ``str`` raises TypeError:
  encode it first, as simhash-py asks);
- ``compute(hashes)``: the simhash of an iterable of 64-bit hashes (the bit vote);
- ``num_differing_bits(a, b)``: the Hamming distance;
- ``shingle(tokens, window=4)``: a generator of lists of ``window`` consecutive tokens
  (``window <= 0`` raises ValueError);
- ``find_all(hashes, number_of_blocks, different_bits)``: every pair of distinct values within
  ``different_bits`` bits, as ``(smaller, larger)`` tuples, in a list sorted ascending
  (simhash-py's order is its hash set's; compare as sets or sorted);
- ``find_clusters(hashes, number_of_blocks, different_bits)``: simhash-cpp's clusters, the
  groups of values those pairs connect, as a list of sets.

Differences, all in simhashdb's favour: ``find_all`` runs on every core with the GIL released,
and the number of blocks only checks the arguments as simhash-cpp does (any valid number gives
the same pairs; the cheapest tables are used, so e.g. ``find_all(h, 64, 40)`` returns instead
of enumerating C(64, 40) permutations). A numpy integer array is accepted wherever a list of
hashes is.
"""

from __future__ import annotations

from typing import Any, Generator, Iterable, List, Set, Tuple, TypeVar

import numpy as np

from . import _native

__all__ = [
    "compute",
    "find_all",
    "find_clusters",
    "num_differing_bits",
    "shingle",
    "unsigned_hash",
]

T = TypeVar("T")


def unsigned_hash(obj: bytes) -> int:
    """A 64-bit hash of ``obj`` (bytes-like): the first 8 bytes of its MD5 digest, big-endian."""
    if isinstance(obj, str):
        raise TypeError("Strings must be encoded before hashing")
    return _native.unsigned_hash(memoryview(obj).tobytes())


def compute(hashes: Iterable[int]) -> int:
    """The simhash of ``hashes``: bit i is set when more hashes have it set than clear."""
    return _native.compute(*_hashes(hashes))


def num_differing_bits(a: int, b: int) -> int:
    """The number of bits in which the 64-bit values ``a`` and ``b`` differ."""
    return _native.num_differing_bits(a, b)


def shingle(tokens: Iterable[T], window: int = 4) -> Generator[List[T], None, None]:
    """Yields each run of ``window`` consecutive tokens as a list."""
    if window <= 0:
        raise ValueError("Window size must be positive")
    current: List[T] = []
    for token in tokens:
        current.append(token)
        if len(current) > window:
            del current[0]
        if len(current) == window:
            yield list(current)


def find_all(
    hashes: Iterable[int], number_of_blocks: int, different_bits: int
) -> List[Tuple[int, int]]:
    """Every pair of distinct values of ``hashes`` within ``different_bits`` bits, as
    ``(smaller, larger)`` tuples, sorted. ValueError when ``number_of_blocks`` is above 64 or
    not above ``different_bits``."""
    hashes, packed = _hashes(hashes)
    return _native.find_all(hashes, number_of_blocks, different_bits, packed)


def find_clusters(
    hashes: Iterable[int], number_of_blocks: int, different_bits: int
) -> List[Set[int]]:
    """The clusters of :func:`find_all`'s pairs: each a set of values connected by pairs within
    ``different_bits`` bits (values in no pair are in no cluster), ordered by smallest value."""
    hashes, packed = _hashes(hashes)
    return _native.find_clusters(hashes, number_of_blocks, different_bits, packed)


def _hashes(hashes: Any) -> Tuple[Any, bool]:
    """(values, packed): a numpy integer array as little-endian uint64 bytes (the fast path);
    anything else as given, converted value by value as simhash-py does (OverflowError outside
    0..2**64, TypeError for a non-integer)."""
    if isinstance(hashes, np.ndarray) and hashes.dtype.kind in "ui" and hashes.ndim == 1:
        if hashes.dtype.kind == "i" and hashes.size and hashes.min() < 0:
            raise OverflowError("can't convert negative value to unsigned int")
        return hashes.astype("<u8").tobytes(), True
    return hashes, False
