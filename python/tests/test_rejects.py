"""Skipped records are never silently dropped, in every client: the CLI's --rejects file,
the server's "rejects" list and Python's ``rejects=`` file name the same records with the same
reasons; past ``max_skipped`` nothing is stored; an empty input is refused unless allowed."""

from __future__ import annotations

import warnings

import pytest

from simhashdb import Store

from conftest import run_cli
from test_notation import exported, server  # noqa: F401 (a fixture)
from test_spellings import cli_run, http

TSV = "".join(
    f"bad-{i}\tnot a fingerprint\n" if i % 50 == 49 else f"d{i}\t{i * 7919:016x}\n"
    for i in range(500)
)  # 10 invalid lines of 500


def test_rejects_are_the_same_everywhere(cli, tmp_path, server):  # noqa: F811
    served, base = server
    by_cli, by_python = tmp_path / "cli", tmp_path / "python"
    for path in (by_cli, by_python):
        run_cli(cli, "init", str(path))
    file = tmp_path / "in.tsv"
    file.write_text(TSV)
    cli_rejects, python_rejects = tmp_path / "cli-rejects.tsv", tmp_path / "py-rejects.tsv"
    done = cli_run(
        cli, "insert", str(by_cli), str(file), "--rejects", str(cli_rejects), "--max-skipped", "2%"
    )
    assert done.returncode == 0, done.stderr
    status, answer = http(base, "POST", "/v1/insert?format=tsv&max_skipped=10", TSV)
    assert status == 200, answer
    with Store.open(by_python) as store:
        summary = store.insert_file(file, rejects=python_rejects, max_skipped="2%")
    assert summary["skipped"] == answer["skipped"] == 10
    rows = [line.split("\t", 3) for line in cli_rejects.read_text().splitlines()]
    assert python_rejects.read_text() == cli_rejects.read_text()
    assert [(int(r[1]), r[2], r[3]) for r in rows] == [
        (a["line"], a["reason"], a["record"]) for a in answer["rejects"]
    ]
    assert [r[3] for r in rows] == [l for l in TSV.splitlines() if l.startswith("bad-")]
    assert exported(cli, by_cli) == exported(cli, served) == exported(cli, by_python)


def test_past_max_skipped_nothing_is_stored(cli, tmp_path, server):  # noqa: F811
    served, base = server
    path = tmp_path / "store"
    run_cli(cli, "init", str(path))
    file = tmp_path / "in.tsv"
    file.write_text(TSV)
    before = exported(cli, served)
    status, answer = http(base, "POST", "/v1/insert?format=tsv&max_skipped=9", TSV)
    assert status == 400 and "--max-skipped 9" in answer["error"], answer
    # The refusal lists every record it skipped, as its message says.
    assert [r["line"] for r in answer["rejects"]] == list(range(50, 501, 50)), answer
    status, answer = http(base, "POST", "/v1/insert?format=tsv&max_skipped=1.5", TSV)
    assert status == 400 and "max skipped" in answer["error"], answer
    assert exported(cli, served) == before
    with Store.open(path) as store:
        with pytest.raises(ValueError, match="10 of 500 records were invalid"):
            store.insert_file(file, max_skipped="1%", skip_invalid=True)
        with pytest.raises(ValueError, match="10 of 500 records were invalid"):
            store.dedup_file(file, tmp_path / "kept.tsv", insert=True, max_skipped=9)
        assert not (tmp_path / "kept.tsv").exists()
        assert store.insert_file(file, max_skipped=10)["skipped"] == 10
        empty = tmp_path / "empty.tsv"
        empty.write_text("")
        with pytest.raises(ValueError, match="holds no documents"):
            store.insert_file(empty)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            store.insert_file(empty, allow_empty=True)
        assert any("holds no documents" in str(w.message) for w in caught)
        bare = tmp_path / "bare"
        bare.mkdir()
        with pytest.raises(ValueError, match="holds no files to read"):
            store.insert_file(bare)
        with pytest.raises(ValueError, match="holds no files to read"):
            store.dedup_file(bare, tmp_path / "kept.tsv", insert=True)
