"""``tune``: the scheme and distance that find a corpus's near-duplicates best, measured."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Optional, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


def tune(
    corpus: Union[PathLike, Iterable[PathLike]],
    *,
    min_jaccard: float = 0.8,
    sample: Optional[int] = None,
    seed: int = 1,
    schemes: Optional[Iterable[str]] = None,
    max_distance: int = 12,
    expected_size: Optional[int] = None,
    gold: Optional[PathLike] = None,
    plot: Optional[PathLike] = None,
    format: Optional[str] = None,
    id_field: str = "id",
    text_field: str = "text",
    skip_invalid: bool = False,
    sketch_bytes: Optional[Iterable[int]] = None,
) -> Dict[str, Any]:
    """``simhashdb tune``: every scheme at every distance 0..``max_distance``, scored against
    the pairs of ``corpus`` whose word 3-shingle Jaccard is at least ``min_jaccard``, and the
    settings recommended for each use, with the GIL released.

    ``corpus`` is a path or a list of paths as the CLI reads them (JSON Lines with ``id`` and
    ``text``, Parquet, text files or directories). The options are the CLI's flags:
    ``sample`` documents drawn by ``seed``, ``schemes`` names (default: all candidates),
    ``gold`` pairs instead of the texts' exact Jaccard, ``expected_size`` to plan for,
    ``plot`` a .svg or .png to draw, and ``sketch_bytes`` the sketch sizes to score
    verification by sketches at (default 64, 128, 256, 512 and 1024; ``[]`` scores none).

    Returns ``tune --json`` as one dict: ``corpus`` (its first line), ``scores`` (one dict per
    scheme, ``mode`` and distance; ``mode`` ``"sketch"`` with ``sketch_bytes`` and the
    ``min_jaccard`` it scored best at) and ``recommend`` (``fingerprints_only``, ``verified``
    and ``sketched``, each with the ``init_args`` that create such a store; ``sketched`` is
    None when no sketch size was scored). Raises ValueError for bad options and OSError for
    files, naming what and where.
    """
    paths = [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)
    if not paths:
        raise ValueError("corpus: no path given")
    names = None if schemes is None else [schemes] if isinstance(schemes, str) else list(schemes)
    for name, value in (("sample", sample), ("expected_size", expected_size)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ValueError(f"{name}: expected a positive int, got {value!r}")
    if not isinstance(max_distance, int) or not 0 <= max_distance <= 255:
        raise ValueError(f"max_distance: expected an int in 0..=255, got {max_distance!r}")
    sizes = None if sketch_bytes is None else list(sketch_bytes)
    for size in sizes or []:
        if not isinstance(size, int) or isinstance(size, bool) or not 64 <= size <= 1024:
            raise ValueError(f"sketch_bytes: expected ints from 64 to 1024, got {size!r}")
    lines = _native.tune(
        [os.fspath(p) for p in paths],
        float(min_jaccard),
        sample,
        seed,
        names,
        max_distance,
        expected_size,
        None if gold is None else os.fspath(gold),
        None if plot is None else os.fspath(plot),
        format,
        id_field,
        text_field,
        skip_invalid,
        sizes,
    )
    parsed = [json.loads(line) for line in lines]
    return {
        "corpus": parsed[0]["corpus"],
        "scores": parsed[1:-1],
        "recommend": parsed[-1]["recommend"],
    }
