"""Fingerprints as Spark keeps them, and the blocks an audit picks (the engine's plan)."""

from __future__ import annotations

from .. import _native

FULL = (1 << 64) - 1


def choose_blocks(documents: int, distance: int) -> int:
    """The blocks that move the fewest rows in an audit of ``documents`` distinct fingerprints:
    each table holds every fingerprint once, and compares the pairs that share its leading
    blocks (``simhashdb::partitioned::Plan::for_size``)."""
    blocks, _ = _native.plan(max(documents, 1), distance, 1)
    return blocks


def signed(value: int) -> int:
    """The int64 that holds the 64 bits of ``value`` (how Parquet and Spark keep fingerprints)."""
    value &= FULL
    return value - (1 << 64) if value >= 1 << 63 else value


def unsigned(value: int) -> int:
    """The fingerprint an int64 holds."""
    return value & FULL
