"""Text to fingerprints, as ``simhashdb fingerprint`` computes them."""

from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

from . import _native
from ._arrays import checked_int, checked_texts, from_bytes


def fingerprint(
    text: str,
    scheme: Optional[str] = None,
    *,
    shingle: Optional[int] = None,
    weight: Optional[str] = None,
) -> int:
    """The 64-bit fingerprint of ``text``.

    ``scheme`` is ``"words"`` (word shingles, the default), ``"chars"`` (character n-grams),
    ``"seomoz"`` (simhash-py 0.4's pipeline, bit for bit), or a name as stores record it, such
    as ``"words-2-minhash"``; ``shingle`` and ``weight`` (``"minhash"``, ``"set"`` or
    ``"count"``) refine words and chars as ``--shingle`` and ``--weight`` do. A text with no
    token raises ValueError (except under seomoz, which gives it 0 as simhash-py does).
    """
    if not isinstance(text, str):
        raise ValueError(f"text: expected str, got {type(text).__name__}")
    return _native.fingerprint(text, scheme, _shingle(shingle), weight)


def fingerprint_many(
    texts: Iterable[str],
    scheme: Optional[str] = None,
    *,
    shingle: Optional[int] = None,
    weight: Optional[str] = None,
) -> np.ndarray:
    """The fingerprints of ``texts`` as a numpy uint64 array, computed in parallel on every core
    with the GIL released. Same schemes and errors as :func:`fingerprint`; an error names the
    first text at fault as ``texts[i]``."""
    texts = checked_texts(texts)
    return from_bytes(_native.fingerprint_many(texts, scheme, _shingle(shingle), weight))


def scheme_name(
    scheme: Optional[str] = None,
    *,
    shingle: Optional[int] = None,
    weight: Optional[str] = None,
) -> str:
    """The full name of a scheme as stores record it, e.g. ``scheme_name("chars")`` is
    ``"chars-5-minhash"``; ValueError for a scheme this build does not know."""
    return _native.scheme_name(scheme, _shingle(shingle), weight)


def _shingle(shingle: Optional[int]) -> Optional[int]:
    return None if shingle is None else checked_int("shingle", shingle, 1, 255)
