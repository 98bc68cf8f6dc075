"""simhashdb's datatrove steps on the real datatrove package, with LocalPipelineExecutor and
several tasks: the documents kept equal `simhashdb dedup` of the documents in (task, position)
order into the same store, on skewed data (2,000 copies of one page across the tasks and in
the store), and the dropped ones reach the exclusion writer with their match named."""

from __future__ import annotations

import gzip
import json
import random
import shutil
from pathlib import Path
from typing import Dict, List, Tuple

import pyarrow.parquet as pq
import pytest

datatrove = pytest.importorskip("datatrove")

from datatrove.executor import LocalPipelineExecutor  # noqa: E402
from datatrove.pipeline.readers import JsonlReader  # noqa: E402
from datatrove.pipeline.writers import JsonlWriter  # noqa: E402

from simhashdb.datatrove import SimhashDedup, SimhashFilter, SimhashSignature  # noqa: E402

from conftest import run_cli  # noqa: E402

TASKS = 4
FILES = 6


def text_of(rng: random.Random, words: int, vocabulary: List[str]) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def near(rng: random.Random, text: str) -> str:
    """The text with one word changed: a near copy."""
    words = text.split()
    words[rng.randrange(len(words))] = "changed"
    return " ".join(words)


def corpus(tmp_path: Path) -> Tuple[Path, List[List[Dict[str, str]]], List[Dict[str, str]]]:
    """FILES JSON Lines files: unique documents, near copies of each other, and 2,000 copies
    (some near) of one page spread over every file; and the reference documents the store
    holds first (the page among them)."""
    rng = random.Random(11)
    vocabulary = [f"w{i}" for i in range(3000)]
    page = text_of(rng, 200, vocabulary)
    reference = [{"id": f"ref{i:03}", "text": text_of(rng, 150, vocabulary)} for i in range(50)]
    reference.append({"id": "ref-page", "text": page})
    docs = []
    for i in range(4000):
        kind = i % 4
        if kind in (0, 1):
            text = page if rng.random() < 0.7 else near(rng, page)
        elif kind == 2:
            text = text_of(rng, rng.randrange(20, 400), vocabulary)
        else:
            # A near copy of an earlier unique document, or of a reference one.
            earlier = docs[-1]["text"] if docs and rng.random() < 0.5 else rng.choice(reference)["text"]
            text = near(rng, earlier)
        docs.append({"id": f"doc{i:05}", "text": text})
    folder = tmp_path / "input"
    folder.mkdir()
    files = [docs[i::FILES] for i in range(FILES)]
    for i, part in enumerate(files):
        with open(folder / f"part{i}.jsonl", "w") as out:
            out.writelines(json.dumps(d) + "\n" for d in part)
    return folder, files, reference


def read_written(folder: Path) -> List[Dict]:
    docs = []
    for path in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(path, "rt") as f:
            docs.extend(json.loads(line) for line in f)
    return docs


def make_store(cli: Path, path: Path, reference: List[Dict[str, str]], *sketch: str) -> None:
    run_cli(cli, "init", str(path), *sketch)
    lines = "".join(json.dumps(d) + "\n" for d in reference)
    run_cli(cli, "insert", str(path), "--format", "jsonl", "--label", "reference", input=lines)


def pipeline(tmp_path: Path, input: Path, store: Path, name: str, **dedup) -> Path:
    """The three stages over `input` with TASKS tasks; returns the work folder."""
    work = tmp_path / name
    sigs = str(work / "signatures")
    signature = LocalPipelineExecutor(
        pipeline=[JsonlReader(str(input)), SimhashSignature(sigs, store=str(store), batch_size=500)],
        tasks=TASKS, workers=2, logging_dir=str(work / "logs-1"),
    )
    deduplicate = LocalPipelineExecutor(
        pipeline=[SimhashDedup(sigs, store=str(store), **dedup)],
        tasks=1, logging_dir=str(work / "logs-2"), depends=signature,
    )
    keep = LocalPipelineExecutor(
        pipeline=[
            JsonlReader(str(input)),
            SimhashFilter(sigs, exclusion_writer=JsonlWriter(str(work / "removed"))),
            JsonlWriter(str(work / "kept")),
        ],
        tasks=TASKS, workers=2, logging_dir=str(work / "logs-3"), depends=deduplicate,
    )
    keep.run()
    return work


def task_order(files: List[List[Dict[str, str]]]) -> List[Dict[str, str]]:
    """The documents in (task, position) order: JsonlReader gives task r the files r, r +
    TASKS, ... in name order, each read from its start."""
    order = []
    for rank in range(TASKS):
        for part in files[rank::TASKS]:
            order.extend(part)
    return order


@pytest.mark.parametrize("verified", [False, True])
def test_kept_documents_equal_the_clis_dedup(tmp_path, cli, verified):
    input, files, reference = corpus(tmp_path)
    sketch = ("--sketch",) if verified else ()
    store, replay = tmp_path / "store", tmp_path / "replay"
    make_store(cli, store, reference, *sketch)
    make_store(cli, replay, reference, *sketch)
    extra = {"min_jaccard": 0.8} if verified else {}
    work = pipeline(tmp_path, input, store, "run", insert=True, label="day 1", **extra)

    # The CLI's dedup of the documents in (task, position) order, into the same store.
    ordered = task_order(files)
    lines = "".join(json.dumps(d) + "\n" for d in ordered)
    args = ["--min-jaccard", "0.8"] if verified else []
    dropped_lines = run_cli(
        cli, "dedup", str(replay), "--format", "jsonl", "--insert", "--label", "day 1",
        "--output", str(tmp_path / "cli-kept.jsonl"), "--duplicates", "-", *args, input=lines,
    )
    cli_kept = [json.loads(l)["id"] for l in (tmp_path / "cli-kept.jsonl").read_text().splitlines()]
    kept = read_written(work / "kept")
    assert sorted(d["id"] for d in kept) == sorted(cli_kept)
    assert 500 < len(cli_kept) < 3000, len(cli_kept)

    # The dropped ones name their match as the CLI does; the page's copies name the store's.
    removed = {d["id"]: d["metadata"] for d in read_written(work / "removed")}
    assert len(removed) + len(kept) == len(ordered)
    for line in dropped_lines.splitlines():
        fields = line.split("\t")
        meta = removed[fields[0]]
        assert meta["duplicate_of"] == fields[1] and meta["distance"] == int(fields[2])
        batch = fields[4] if verified else fields[3]
        assert meta["duplicate_batch"] == (int(batch) if batch else None)
        if verified:
            assert (meta["jaccard"] is None) == (fields[3] == "unverified")
    of_page = [m for m in removed.values() if m["duplicate_of"] == "ref-page"]
    assert len(of_page) > 1000 and all(m["duplicate_batch"] == 1 for m in of_page)
    assert sum(1 for m in removed.values() if m["duplicate_batch"] is None) > 0

    # The store holds what the CLI's replay holds; duplicates.parquet lists every drop.
    export = lambda s: sorted(run_cli(cli, "export", str(s)).splitlines())
    assert export(store) == export(replay)
    listed = pq.read_table(work / "signatures" / "duplicates.parquet")
    assert sorted(listed["id"].to_pylist()) == sorted(removed)


def test_the_same_input_keeps_the_same_documents_and_mistakes_are_named(tmp_path, cli):
    input, files, reference = corpus(tmp_path)
    store = tmp_path / "store"
    make_store(cli, store, reference)
    # Without insert the store is only read: two runs keep the same documents.
    first = pipeline(tmp_path, input, store, "first")
    second = pipeline(tmp_path, input, store, "second")
    kept = lambda work: sorted(d["id"] for d in read_written(work / "kept"))
    assert kept(first) == kept(second)
    assert json.loads(run_cli(cli, "stats", str(store), "--json"))["documents"] == len(reference)

    # A filter over other input than its signatures' fails, naming the task: a seventh file
    # goes to task 2.
    shutil.copy(input / "part0.jsonl", input / "part9.jsonl")
    docs = JsonlReader(str(input)).run(rank=2, world_size=TASKS)
    with pytest.raises(ValueError, match="task 2 read .* SimhashSignature"):
        list(SimhashFilter(str(first / "signatures")).run(docs, 2, TASKS))
    # A dedup without signatures, or of an incomplete set, says so.
    with pytest.raises(FileNotFoundError, match="SimhashSignature"):
        list(SimhashDedup(str(tmp_path / "nothing"), store=str(store)).run())
    (first / "signatures" / "00001.parquet").unlink()
    with pytest.raises(ValueError, match="every task"):
        list(SimhashDedup(str(first / "signatures"), store=str(store)).run())
    with pytest.raises(ValueError, match="insert=True"):
        SimhashDedup(str(first / "signatures"), store=str(store), label="x")
    # Signatures of one store deduplicated against a store of another scheme.
    other = tmp_path / "other"
    run_cli(cli, "init", str(other), "--scheme", "chars")
    with pytest.raises(ValueError, match="same store"):
        SimhashDedup(str(second / "signatures"), store=str(other)).signature_files()
    # A document without an id, or with one the store cannot take, is named.
    from datatrove.data import Document

    for id, says in [("", "has no id"), ("a\tb", "tab"), ("x" * 1025, "1025 bytes")]:
        docs = [Document(text="some text here", id="fine"), Document(text="more text", id=id)]
        step = SimhashSignature(str(tmp_path / "bad"), store=str(store))
        with pytest.raises(ValueError, match=f"task 0, document 1: .*{says}"):
            list(step.run(iter(docs)))


def test_a_dedup_killed_after_its_commit_finishes_on_the_rerun(tmp_path, cli, monkeypatch):
    input, files, reference = corpus(tmp_path)
    store, replay = tmp_path / "store", tmp_path / "replay"
    make_store(cli, store, reference)
    make_store(cli, replay, reference)
    expected = pipeline(tmp_path, input, replay, "clean", insert=True, label="day 1")

    sigs = str(tmp_path / "killed" / "signatures")
    LocalPipelineExecutor(
        pipeline=[JsonlReader(str(input)), SimhashSignature(sigs, store=str(store))],
        tasks=TASKS, workers=2, logging_dir=str(tmp_path / "killed" / "logs-1"),
    ).run()
    step = SimhashDedup(sigs, store=str(store), insert=True, label="day 1")
    # Killed between the commit and the drop lists.
    finish = SimhashDedup._write_drop_lists

    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(SimhashDedup, "_write_drop_lists", killed)
    with pytest.raises(KeyboardInterrupt):
        list(step.run())
    monkeypatch.setattr(SimhashDedup, "_write_drop_lists", finish)
    list(step.run())
    # Run again once finished (datatrove reruns a task whose completion it did not record):
    # nothing is done again.
    list(SimhashDedup(sigs, store=str(store), insert=True, label="day 1").run())
    labels = [json.loads(line)["label"] for line in
              run_cli(cli, "batches", str(store), "--json").splitlines()]
    assert labels == ["reference", "day 1"], "inserted once"
    # The same drop lists as a run that was not killed (on a store of its own: commit times
    # aside).
    for rank in range(TASKS):
        name = f"{rank:05}.drops.parquet"
        read = lambda folder: pq.read_table(folder / name).drop_columns(["duplicate_committed_utc"])
        assert read(Path(sigs)).equals(read(expected / "signatures"))


def test_no_documents_at_all(tmp_path, cli):
    input = tmp_path / "input"
    input.mkdir()
    (input / "empty.jsonl").write_text("")
    store = tmp_path / "store"
    make_store(cli, store, [{"id": "ref", "text": "a stored page of text"}])
    work = pipeline(tmp_path, input, store, "empty", insert=True)
    assert read_written(work / "kept") == [] and read_written(work / "removed") == []
    summary = json.loads((work / "signatures" / "dedup.json").read_text())["summary"]
    assert summary["read"] == 0 and summary["batch"] is None
    assert json.loads(run_cli(cli, "stats", str(store), "--json"))["documents"] == 1
