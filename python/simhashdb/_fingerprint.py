"""Text to fingerprints, as ``simhashdb fingerprint`` computes them."""

from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

from . import _native
from ._arrays import from_bytes


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
    return _native.fingerprint(text, scheme, shingle, weight)


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
    if isinstance(texts, str):
        raise TypeError("texts: expected an iterable of str, got one str")
    texts = texts if isinstance(texts, list) else list(texts)
    return from_bytes(_native.fingerprint_many(texts, scheme, shingle, weight))


def scheme_name(
    scheme: Optional[str] = None,
    *,
    shingle: Optional[int] = None,
    weight: Optional[str] = None,
) -> str:
    """The full name of a scheme as stores record it, e.g. ``scheme_name("chars")`` is
    ``"chars-5-minhash"``; ValueError for a scheme this build does not know."""
    return _native.scheme_name(scheme, shingle, weight)
