"""The Hugging Face datasets recipe (examples/hf_datasets.py, docs/python.md), run as a user
runs it, with num_proc=2: the rows it keeps equal `simhashdb dedup`'s of the same documents
into the same store, on skewed data (2,000 copies of one page, in the store too)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

datasets = pytest.importorskip("datasets")

from conftest import run_cli  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hf_datasets.py"


def test_the_recipe_keeps_what_the_cli_keeps(tmp_path, cli):
    rng = random.Random(5)
    words = [f"w{i}" for i in range(2000)]
    text = lambda n: " ".join(rng.choice(words) for _ in range(n))
    page = text(120)
    docs = []
    for i in range(3000):
        if i % 3 == 0:
            body = page if i % 2 else page.replace(page.split()[5], "changed", 1)
        else:
            body = text(rng.randrange(10, 300))
        docs.append({"id": f"d{i:05}", "text": body})
    for i in range(0, 3000, 3):
        docs.insert(i, {"id": f"page{i:05}", "text": page})
    lines = "".join(json.dumps(d) + "\n" for d in docs)
    (tmp_path / "in.jsonl").write_text(lines)
    store, replay = tmp_path / "store", tmp_path / "replay"
    for s in (store, replay):
        run_cli(cli, "init", str(s))
        run_cli(cli, "insert", str(s), "--format", "jsonl",
                input=json.dumps({"id": "stored-page", "text": page}) + "\n")

    out = tmp_path / "out"
    # datasets' caches in the test's own folder, and no network.
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(store), str(tmp_path / "in.jsonl"), str(out), "2"],
        capture_output=True, text=True, env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]

    run_cli(cli, "dedup", str(replay), "--format", "jsonl", "--insert",
            "--output", str(tmp_path / "cli.jsonl"), input=lines)
    cli_kept = [json.loads(l)["id"] for l in (tmp_path / "cli.jsonl").read_text().splitlines()]
    kept = datasets.load_from_disk(str(out))
    assert kept["id"] == cli_kept
    dropped = datasets.load_from_disk(str(out) + "-dropped")
    assert len(kept) + len(dropped) == len(docs) and len(dropped) >= 2000
    of_store = [b for of, b in zip(dropped["duplicate_of"], dropped["duplicate_batch"]) if of == "stored-page"]
    assert len(of_store) > 1000 and set(of_store) == {1}
    export = lambda s: sorted(run_cli(cli, "export", str(s)).splitlines())
    assert export(store) == export(replay)
