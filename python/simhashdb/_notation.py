"""Fingerprints written as text, read as the CLI and the server read them."""

import warnings
from typing import Iterable, List

from . import _native


def parse_fingerprints(texts: Iterable[str], format: str = "auto") -> List[int]:
    """Reads fingerprints written as text as one input: ``format`` ``"auto"`` decides hex or
    decimal from all of them (a value with a letter is hex, one of 17 to 20 digits decimal,
    and the rest follow; see docs/reliability.md), ``"hex"`` or ``"decimal"`` says it.
    ValueError names the value (counted from 1) when they mix notations or cannot be read; a
    warning is raised when either notation could have written them."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts: expected an iterable of str, got one str; use parse_fingerprint")
    values, warning = _native.parse_fingerprints(list(texts), format)
    if warning is not None:
        warnings.warn(f"simhashdb: {warning}", stacklevel=2)
    return values


def parse_fingerprint(text: str, format: str = "auto") -> int:
    """One fingerprint written as text (16 hex digits, ``0x`` hex, or decimal), read as
    :func:`parse_fingerprints` reads a list of one."""
    values, warning = _native.parse_fingerprints([text], format)
    if warning is not None:
        warnings.warn(f"simhashdb: {warning}", stacklevel=2)
    return values[0]
