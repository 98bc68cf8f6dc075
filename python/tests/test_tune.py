"""simhashdb.tune is `simhashdb tune --json`: the same scores and recommendation as one dict,
on a skewed corpus (many copies of one page), and clear errors for bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

import simhashdb
from conftest import json_lines, run_cli

SCHEMES = ["words-2-minhash", "seomoz"]


def corpus(tmp_path):
    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(300)]
    pages = [" ".join(rng.choice(words, 120)) for _ in range(40)]
    docs = [(f"page-{i:02}", t) for i, t in enumerate(pages)]
    for i in range(20):
        tokens = pages[i].split()
        for k in range(i % 5 + 1):
            tokens[10 * k + 3] = f"edit{k}"
        docs.append((f"near-{i:02}", " ".join(tokens)))
    docs += [(f"copy-{i:03}", pages[0]) for i in range(200)]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs))
    return path


def test_tune_equals_the_cli(tmp_path, cli):
    path = corpus(tmp_path)
    plot = tmp_path / "tune.svg"
    got = simhashdb.tune(
        path, schemes=SCHEMES, max_distance=8, min_jaccard=0.7, plot=plot, sketch_bytes=[64, 256]
    )
    lines = json_lines(
        run_cli(
            cli, "tune", str(path), "--json", "--schemes", ",".join(SCHEMES),
            "--max-distance", "8", "--min-jaccard", "0.7", "--sketch-bytes", "64,256",
        )
    )
    assert got == {
        "corpus": lines[0]["corpus"],
        "scores": lines[1:-1],
        "recommend": lines[-1]["recommend"],
    }
    assert got["corpus"]["documents"] == 260
    # The 200 copies alone are C(200, 2) true pairs.
    assert got["corpus"]["true_pairs"] >= 200 * 199 // 2
    assert {s["scheme"] for s in got["scores"]} == set(SCHEMES)
    # Fingerprints, verified, and each sketch size, at k = 0..8.
    assert len(got["scores"]) == len(SCHEMES) * 4 * 9
    assert {s["sketch_bytes"] for s in got["scores"] if s["mode"] == "sketch"} == {64, 256}
    assert got["recommend"]["fingerprints_only"]["init_args"][:1] == ["--scheme"]
    assert "--sketch" in got["recommend"]["sketched"]["init_args"]
    assert plot.read_text().lstrip().startswith("<svg")
    # A list of paths and a sample work as the CLI's do.
    sampled = simhashdb.tune(
        [path], schemes=["seomoz"], sample=150, seed=3, max_distance=4, sketch_bytes=[]
    )
    assert sampled["corpus"]["sampled"] and sampled["corpus"]["measured"] == 150
    assert sampled["recommend"]["sketched"] is None


def test_tune_refuses_bad_input_naming_it(tmp_path):
    path = corpus(tmp_path)
    with pytest.raises(ValueError, match="1.5"):
        simhashdb.tune(path, min_jaccard=1.5)
    with pytest.raises(ValueError, match="nonsense"):
        simhashdb.tune(path, schemes=["nonsense"])
    with pytest.raises(ValueError, match="sample"):
        simhashdb.tune(path, sample=0)
    for size in (63, 2048, "128", True):
        with pytest.raises(ValueError, match="sketch_bytes"):
            simhashdb.tune(path, schemes=["seomoz"], sketch_bytes=[size])
    with pytest.raises(ValueError, match="corpus"):
        simhashdb.tune([])
    with pytest.raises(ValueError, match=r"\.gif"):
        simhashdb.tune(path, plot=tmp_path / "x.gif", schemes=["seomoz"])
    with pytest.raises(OSError, match="nowhere.jsonl"):
        simhashdb.tune(tmp_path / "nowhere.jsonl", schemes=["seomoz"])
    gold = tmp_path / "gold.tsv"
    gold.write_text("page-00\tunknown-id\n")
    with pytest.raises(Exception, match="unknown-id"):
        simhashdb.tune(path, schemes=["seomoz"], gold=gold)
