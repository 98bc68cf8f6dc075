"""The permuted-table scheme of Manku, Jain and Das Sarma as join keys: pure arithmetic, no Spark.

The 64 bits are cut into ``blocks`` blocks (the first ``64 % blocks`` one bit wider). Two
fingerprints within ``distance`` bits differ in at most ``distance`` blocks, so they agree
exactly on at least ``blocks - distance``: every choice of ``blocks - distance`` blocks is a
table, its key the fingerprint's bits in those blocks, and a pair within ``distance`` shares the
key of at least one table. Tables are numbered in ``itertools.combinations`` order, which is
lexicographic; a pair is emitted by the first table whose key it shares only, which is the table
made of the ``blocks - distance`` lowest-numbered blocks the pair agrees on. So table ``t``
emits a pair when the pair agrees on ``t``'s blocks (the join) and differs in every lower block
``t`` skips (:func:`skipped_masks`): no pair is emitted twice and none is lost.
"""

from __future__ import annotations

import itertools
import math
from typing import List, Tuple

FULL = (1 << 64) - 1


def block_masks(blocks: int) -> List[int]:
    """The bit masks of the blocks, most significant block first."""
    if not 1 <= blocks <= 64:
        raise ValueError(f"blocks: {blocks} is not in 1..=64")
    masks, top = [], 64
    for b in range(blocks):
        width = 64 // blocks + (1 if b < 64 % blocks else 0)
        masks.append(((1 << width) - 1) << (top - width))
        top -= width
    return masks


def tables(blocks: int, distance: int) -> List[Tuple[int, ...]]:
    """The blocks of each table's key, in table order."""
    check(blocks, distance)
    return list(itertools.combinations(range(blocks), blocks - distance))


def key_mask(blocks: int, table: Tuple[int, ...]) -> int:
    """The bits of a table's key."""
    masks = block_masks(blocks)
    return sum(masks[b] for b in table)


def skipped_masks(blocks: int, table: Tuple[int, ...]) -> List[int]:
    """The masks of the blocks below the table's last block that the table skips: a pair is
    the table's to emit only if it differs in each of them."""
    masks = block_masks(blocks)
    return [masks[b] for b in range(table[-1]) if b not in table] if table else []


def key_bits(blocks: int, distance: int) -> int:
    """The fewest key bits of any table."""
    widths = sorted(bin(m).count("1") for m in block_masks(blocks))
    return sum(widths[: blocks - distance])


def check(blocks: int, distance: int) -> None:
    if not 0 <= distance <= 64:
        raise ValueError(f"distance: {distance} is not in 0..=64")
    if not distance < blocks <= 64:
        raise ValueError(
            f"blocks: {blocks} must be more than the distance ({distance}) and at most 64"
        )


def choose_blocks(documents: int, distance: int) -> int:
    """The blocks that minimise the rows an audit of ``documents`` distinct fingerprints moves:
    each table copies every fingerprint once, and compares the pairs that share its key, about
    ``documents**2 / 2**(key_bits + 1)`` for random fingerprints."""
    best, best_cost = distance + 1, math.inf
    for blocks in range(distance + 1, min(64, distance + 24) + 1):
        count = math.comb(blocks, distance)
        candidates = documents * documents / 2.0 ** (key_bits(blocks, distance) + 1)
        cost = count * (documents + candidates)
        if cost < best_cost:
            best, best_cost = blocks, cost
    return best


def signed(value: int) -> int:
    """The int64 that holds the 64 bits of ``value`` (how Parquet and Spark keep fingerprints)."""
    value &= FULL
    return value - (1 << 64) if value >= 1 << 63 else value


def unsigned(value: int) -> int:
    """The fingerprint an int64 holds."""
    return value & FULL
