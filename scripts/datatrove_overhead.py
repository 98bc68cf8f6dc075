"""What simhashdb's datatrove steps cost, against the CLI's dedup of the same documents
(docs/benchmarks.md, "Pipelines").

    python scripts/datatrove_overhead.py CORPUS.jsonl SIMHASHDB [RUNS] [TASKS]

CORPUS is JSON Lines of {"id", "text"}; it is split into 2 x TASKS files. Each run, in turn:
- cli: `simhashdb dedup --insert` of the corpus (text, fingerprinted by the CLI) into a fresh
  store, kept records to a file;
- plain: datatrove reading the files and writing them back (JsonlReader -> JsonlWriter), the
  pipeline the steps are added to;
- steps: the three stages with simhashdb's steps (SimhashSignature; SimhashDedup with insert
  into a fresh store; SimhashFilter before the writer).
Prints each one's median seconds, the steps' overhead (steps - plain) as a ratio of the CLI's
time, and checks that the steps keep the documents the CLI keeps in (task, position) order.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter

from simhashdb.datatrove import SimhashDedup, SimhashFilter, SimhashSignature


def main(corpus: str, cli: str, runs: int = 3, tasks: int = 4) -> None:
    work = tempfile.mkdtemp(prefix="datatrove-overhead-")
    try:
        docs = [json.loads(line) for line in open(corpus)]
        files = 2 * tasks
        os.makedirs(f"{work}/in")
        parts = [docs[i::files] for i in range(files)]
        for i, part in enumerate(parts):
            with open(f"{work}/in/part{i:02}.jsonl", "w") as out:
                out.writelines(json.dumps({"id": d["id"], "text": d["text"]}) + "\n" for d in part)
        # (task, position) order: task r reads files r, r + tasks, ...
        ordered = [d for r in range(tasks) for part in parts[r::tasks] for d in part]
        with open(f"{work}/ordered.jsonl", "w") as out:
            out.writelines(json.dumps({"id": d["id"], "text": d["text"]}) + "\n" for d in ordered)

        def fresh(name: str) -> str:
            shutil.rmtree(f"{work}/{name}", ignore_errors=True)
            return f"{work}/{name}"

        def cli_run() -> list:
            store = fresh("cli-store")
            subprocess.run([cli, "init", store], check=True, capture_output=True)
            kept = f"{work}/cli-kept.jsonl"
            subprocess.run([cli, "dedup", store, f"{work}/ordered.jsonl", "--insert", "--output",
                            kept], check=True, capture_output=True)
            return sorted(json.loads(l)["id"] for l in open(kept))

        def plain_run() -> None:
            out = fresh("plain")
            LocalPipelineExecutor(
                pipeline=[JsonlReader(f"{work}/in"), JsonlWriter(f"{out}/kept")],
                tasks=tasks, workers=2, logging_dir=f"{out}/logs").run()

        def steps_run() -> list:
            out = fresh("steps")
            store = fresh("steps-store")
            subprocess.run([cli, "init", store], check=True, capture_output=True)
            s1 = LocalPipelineExecutor(
                pipeline=[JsonlReader(f"{work}/in"), SimhashSignature(f"{out}/sigs", store=store)],
                tasks=tasks, workers=2, logging_dir=f"{out}/logs1")
            s2 = LocalPipelineExecutor(
                pipeline=[SimhashDedup(f"{out}/sigs", store=store, insert=True)],
                tasks=1, logging_dir=f"{out}/logs2", depends=s1)
            s3 = LocalPipelineExecutor(
                pipeline=[JsonlReader(f"{work}/in"), SimhashFilter(f"{out}/sigs"),
                          JsonlWriter(f"{out}/kept")],
                tasks=tasks, workers=2, logging_dir=f"{out}/logs3", depends=s2)
            s3.run()
            import gzip
            kept = []
            for name in sorted(os.listdir(f"{out}/kept")):
                with gzip.open(f"{out}/kept/{name}", "rt") as f:
                    kept.extend(json.loads(l)["id"] for l in f)
            return sorted(kept)

        times = {"cli": [], "plain": [], "steps": []}
        for _ in range(runs):
            for name, run in (("cli", cli_run), ("plain", plain_run), ("steps", steps_run)):
                start = time.perf_counter()
                answer = run()
                times[name].append(time.perf_counter() - start)
                if name == "cli":
                    cli_kept = answer
                if name == "steps":
                    assert answer == cli_kept, "the steps keep other documents than the CLI"
        median = {k: statistics.median(v) for k, v in times.items()}
        for k, v in times.items():
            print(f"{k}: median {median[k]:.2f} s of {['%.2f' % t for t in v]}")
        overhead = median["steps"] - median["plain"]
        print(f"documents {len(docs)}, kept {len(cli_kept)} (equal); steps' overhead "
              f"{overhead:.2f} s = {overhead / median['cli']:.2f}x the CLI's dedup")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *(int(a) for a in sys.argv[3:5]))
