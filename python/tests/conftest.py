"""Shared fixtures: the CLI binary the Python results are compared with, and brute force."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Dict, Iterator, List, Sequence, Tuple

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli() -> Path:
    """The `simhashdb` binary: $SIMHASHDB_CLI, or the workspace's release build."""
    path = Path(os.environ.get("SIMHASHDB_CLI", ROOT / "target" / "release" / "simhashdb"))
    if not path.exists():
        pytest.fail(f"{path}: no simhashdb binary; run `cargo build --release` first")
    return path


def run_cli(cli: Path, *args: str, input: str | None = None, check: bool = True) -> str:
    """Runs the CLI; returns its stdout (failing the test with its stderr if it fails)."""
    done = subprocess.run(
        [str(cli), *args], input=input, capture_output=True, text=True, timeout=300
    )
    if check and done.returncode != 0:
        pytest.fail(f"simhashdb {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


@contextlib.contextmanager
def serving(cli: Path, store: Path) -> Iterator[str]:
    """`simhashdb serve STORE` on a free loopback port, ready: yields its base URL, and stops
    it on leaving, also on failure."""
    server = subprocess.Popen(
        [str(cli), "serve", str(store), "--listen", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = None
        for line in server.stderr:
            found = re.search(r"http://(\S+)", line)
            if found:
                base = f"http://{found.group(1)}"
            if ": ready:" in line:
                break
        assert base is not None, "the server printed its address"
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def json_lines(text: str) -> List[Dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def brute_matches(
    documents: Dict[str, int], query: int, distance: int
) -> List[Tuple[str, int, int]]:
    """Every document within `distance` of `query`, ordered as the store orders matches."""
    out = []
    for id, fp in documents.items():
        d = bin(fp ^ query).count("1")
        if d <= distance:
            out.append((d, fp, id))
    return [(id, fp, d) for d, fp, id in sorted(out)]


def brute_pairs(documents: Dict[str, int], distance: int) -> List[Tuple[str, str, int]]:
    """Every pair of documents within `distance`, (a < b), sorted."""
    ids = sorted(documents)
    fps = np.array([documents[i] for i in ids], dtype=np.uint64)
    pairs = []
    for i, a in enumerate(ids):
        x = fps[i] ^ fps[i + 1 :]
        bits = np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
        for j in np.nonzero(bits <= distance)[0]:
            pairs.append((a, ids[i + 1 + j], int(bits[j])))
    return sorted(pairs)


def random_documents(
    rng: np.random.Generator, n: int, prefix: str = "d"
) -> Tuple[List[str], np.ndarray]:
    """n ids and fingerprints: random ones, near copies (1-4 bits flipped) and exact repeats."""
    base = rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False)
    src = rng.integers(0, n, size=n)
    flips = rng.integers(0, 64, size=(n, 4)).astype(np.uint64)
    count = rng.integers(0, 5, size=n)
    masks = np.zeros(n, dtype=np.uint64)
    for k in range(4):
        masks |= np.where(count > k, np.uint64(1) << flips[:, k], np.uint64(0))
    kind = rng.integers(0, 3, size=n)
    fps = np.where(kind == 0, base, base[src] ^ masks)
    fps = np.where(kind == 2, base[src], fps).astype(np.uint64)
    ids = [f"{prefix}{i}" for i in range(n)]
    return ids, fps


def tsv(ids: Sequence[str], fps: Sequence[int]) -> str:
    return "".join(f"{i}\t{int(f):016x}\n" for i, f in zip(ids, fps))


def components(pairs) -> List[List]:
    """The connected components (two or more members) of the graph of `pairs`' first two
    items: members sorted, components sorted by first member (union-find)."""
    parent: Dict = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        a, b = find(p[0]), find(p[1])
        if a != b:
            parent[a] = b
    groups: Dict = {}
    for x in list(parent):
        groups.setdefault(find(x), []).append(x)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)
