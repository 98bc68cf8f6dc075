"""Fingerprints written in decimal and hex, with and without leading zeros, one writer per
input or mixed: the CLI, the HTTP server and Python read each input in one notation decided
from all its values, store the same fingerprints or refuse it with the same message, and
never store a value of a one-writer input wrong without an error or a warning."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

import simhashdb
from simhashdb import Store

from conftest import run_cli, serving
from test_spellings import cli_run, http

WRITERS = {
    "decimal": lambda fp: str(fp),
    "hex": lambda fp: f"{fp:016x}",
    "bare-hex": lambda fp: f"{fp:x}",
}


def value(rng: random.Random) -> int:
    """A value whose written forms are often ambiguous."""
    kind = rng.randrange(4)
    if kind == 0:
        return rng.getrandbits(64)
    if kind == 1:
        return rng.randrange(10**15, 10**16)  # 16 decimal digits
    if kind == 2:
        return int(str(rng.randrange(1, 10**rng.randrange(1, 17))), 16)  # hex of digits only
    return rng.randrange(1000)


def inputs(seed: int) -> List[Tuple[List[int], List[str]]]:
    """Random inputs: values and their written forms, one writer or mixed."""
    rng = random.Random(seed)
    out = []
    for _ in range(40):
        n = rng.randrange(1, 30)
        values = [value(rng) for _ in range(n)]
        if rng.random() < 0.5:
            writer = rng.choice(list(WRITERS))
            texts = [WRITERS[writer](v) for v in values]
        else:
            texts = [WRITERS[rng.choice(list(WRITERS))](v) for v in values]
        out.append((values, texts))
    return out


def is_evidence(text: str) -> bool:
    return len(text) > 16 or any(c.isalpha() for c in text) or (len(text) == 16 and text[0] == "0")


def exported(cli: Path, path: Path) -> Dict[str, int]:
    lines = run_cli(cli, "export", str(path)).splitlines()
    return {line.split("\t")[0]: int(line.split("\t")[1], 16) for line in lines}


@pytest.fixture()
def server(cli, tmp_path):
    path = tmp_path / "served"
    run_cli(cli, "init", str(path), "--expected-size", "10000")
    with serving(cli, path) as base:
        yield path, base


def test_every_client_reads_an_input_in_one_notation(cli, tmp_path, server):
    served, base = server
    by_cli, by_python = tmp_path / "cli", tmp_path / "python"
    for path in (by_cli, by_python):
        run_cli(cli, "init", str(path), "--expected-size", "10000")
    python_store = Store.open(by_python)
    try:
        for trial, (values, texts) in enumerate(inputs(seed=52)):
            tsv = "".join(f"t{trial}-{i}\t{t}\n" for i, t in enumerate(texts))
            file = tmp_path / f"trial-{trial}.tsv"
            file.write_text(tsv)
            done = cli_run(cli, "insert", str(by_cli), str(file))
            status, answer = http(base, "POST", "/v1/insert?format=tsv", tsv)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    python_store.insert_file(file)
                    refused: Optional[str] = None
                except ValueError as e:
                    refused = str(e)
            warned = [str(w.message) for w in caught if "simhashdb" in str(w.message)]
            if refused is not None:
                # Refused by all three with the library's message, naming the line.
                message = refused.split(": ", 1)[1]  # without the file's name
                assert "--fingerprint-format" in message, refused
                assert done.returncode == 1 and message in done.stderr, done.stderr
                assert status == 400 and message in answer["error"], answer
                assert not (one_writer(values, texts) and any(map(is_evidence, texts))), texts
                continue
            assert done.returncode == 0, done.stderr
            assert status == 200, answer
            assert bool(warned) == ("warning:" in done.stderr) == bool(answer.get("warnings"))
            # One notation: every value read as hex, or every value as decimal.
            got = [python_store.get(f"t{trial}-{i}") for i in range(len(values))]
            as_hex = [int(t, 16) if len(t) <= 16 else None for t in texts]
            as_decimal = [int(t) if t.isdigit() else None for t in texts]
            assert got in (as_hex, as_decimal), (texts, got)
            evidence = any(is_evidence(t) for t in texts)
            if evidence and one_writer(values, texts):
                assert got == values and not warned, texts
            if warned:
                assert not evidence, texts
    finally:
        python_store.close()
    # The three stores hold the same fingerprints.
    assert exported(cli, by_cli) == exported(cli, served) == exported(cli, by_python)


def one_writer(values: List[int], texts: List[str]) -> bool:
    """Whether one writer could have written every text."""
    return any(all(w(v) == t for v, t in zip(values, texts)) for w in WRITERS.values())


def test_lists_are_one_input_everywhere(cli, server):
    served, base = server
    cases = [
        (["12345678901234567890", "1234567890123456"], [12345678901234567890, 1234567890123456], False),
        (["ffffffffffffffff", "234567890123456"], [2**64 - 1, 0x234567890123456], False),
        (["1234567890123456"], [0x1234567890123456], True),
        (["ff", "12345678901234567890"], None, False),
        (["255", "1234567890123456"], None, False),
    ]
    for texts, values, warns in cases:
        body = json.dumps({"fingerprints": texts, "distance": 0})
        status, answer = http(base, "POST", "/v1/query", body)
        done = cli_run(cli, "query", str(served), "--distance", "0", "--json", "--", *texts)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if values is None:
                with pytest.raises(ValueError, match="--fingerprint-format") as refused:
                    simhashdb.parse_fingerprints(texts)
                message = str(refused.value)
                assert status == 400 and message in answer["error"], answer
                assert done.returncode == 2 and message in done.stderr, done.stderr
                continue
            assert simhashdb.parse_fingerprints(texts) == values
        assert bool(caught) == warns
        assert status == 200 and answer["fingerprints"] == [f"{v:016x}" for v in values]
        assert bool(answer.get("warnings")) == warns
        assert done.returncode == 0 and ("warning:" in done.stderr) == warns, done.stderr
