#!/usr/bin/env python3
"""The Python package against the tools Python users reach for, side by side in one run.

    python scripts/python_vs_peers.py find-all --n 1000000 --repeats 5
    python scripts/python_vs_peers.py fingerprint --copies 4 --repeats 5
    python scripts/python_vs_peers.py query --n 10000000 --store /tmp/py1e7 --repeats 5
    python scripts/python_vs_peers.py memory --n 1000000

Run with a venv holding simhashdb (pip install ./python), numpy, simhash-pybind (seomoz's
simhash-cpp with simhash-py's API, imported as `simhash`) and, for `memory`, datasketch;
python/test.sh's venv (target/python-venv) plus `pip install datasketch` will do.

- find-all: simhashdb.compat.find_all against simhash.find_all on the same Python list of n
  fingerprints (1% planted near-duplicates, ../shared/bench/peers.py's data), same blocks and
  k; the pair lists must be equal. Runs alternate; medians of wall time.
- fingerprint: simhashdb.fingerprint_many over the eval corpus's texts (copied --copies times)
  against `simhashdb fingerprint` on the same documents as JSON Lines; documents per second.
- query: 10k queries (peers.py's: half near stored values, half random) against a store of n
  made by `init --expected-size N`: `simhashdb query --input` (a process, as users run it)
  against Store.open + query_many in a fresh Python process, and query_many on an open store.
- memory: a store of n short documents (40-word windows of the eval corpus, mutated) against
  datasketch MinHashLSH(num_perm=128) holding the same documents: resident memory added by
  each, each in its own process.
"""

import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CLI = Path(os.environ.get("SIMHASHDB_CLI", ROOT / "target" / "release" / "simhashdb"))


def peers():
    spec = importlib.util.spec_from_file_location("peers", SHARED / "bench" / "peers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def data(n, seed=1):
    values, _ = peers().make_data(n, n // 100, seed)
    return values


def median_report(name, times):
    print(f"  {name}: median {statistics.median(times):.3f} s  runs {', '.join(f'{t:.3f}' for t in times)}")
    return statistics.median(times)


def find_all(args):
    import simhash
    import simhashdb.compat as compat

    values = data(args.n)
    hashes = values.tolist()
    print(f"find_all: n={len(hashes)}, blocks={args.blocks}, k={args.k}, {args.repeats} runs each, alternating")
    times = {"simhash-py (seomoz simhash-cpp)": [], "simhashdb.compat (list)": [], "simhashdb.compat (numpy)": []}
    reference = None
    for _ in range(args.repeats):
        t = time.perf_counter()
        theirs = simhash.find_all(hashes, args.blocks, args.k)
        times["simhash-py (seomoz simhash-cpp)"].append(time.perf_counter() - t)
        t = time.perf_counter()
        ours = compat.find_all(hashes, args.blocks, args.k)
        times["simhashdb.compat (list)"].append(time.perf_counter() - t)
        t = time.perf_counter()
        ours_np = compat.find_all(values, args.blocks, args.k)
        times["simhashdb.compat (numpy)"].append(time.perf_counter() - t)
        if reference is None:
            reference = sorted(theirs)
            assert ours == reference == ours_np, "the pairs differ"
            print(f"  same {len(ours)} pairs from all three")
        del theirs, ours, ours_np
    medians = {name: median_report(name, ts) for name, ts in times.items()}
    base = medians["simhash-py (seomoz simhash-cpp)"]
    for name, m in medians.items():
        print(f"  ratio {name} / simhash-py: {m / base:.3f}")


def eval_texts(copies):
    texts = []
    with open(SHARED / "eval" / "docs.jsonl") as f:
        for line in f:
            texts.append(json.loads(line)["text"])
    return texts * copies


def fingerprint(args):
    import simhashdb

    texts = eval_texts(args.copies)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "docs.jsonl"
        with open(path, "w") as f:
            for i, text in enumerate(texts):
                f.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
        mb = path.stat().st_size / 1e6
        print(f"fingerprint: {len(texts)} documents ({mb:.0f} MB of JSON Lines), default scheme, {args.repeats} runs each, alternating")
        cli, py = [], []
        for _ in range(args.repeats):
            t = time.perf_counter()
            out = subprocess.run([str(CLI), "fingerprint", str(path)], capture_output=True, check=True).stdout
            cli.append(time.perf_counter() - t)
            t = time.perf_counter()
            fps = simhashdb.fingerprint_many(texts)
            py.append(time.perf_counter() - t)
        want = [int(line.split(b"\t")[1], 16) for line in out.splitlines()]
        assert fps.tolist() == want, "fingerprints differ"
        print("  same fingerprints")
        c, p = median_report("simhashdb fingerprint (CLI, file in, stdout out)", cli), median_report("fingerprint_many (texts in memory)", py)
        print(f"  documents/s: CLI {len(texts) / c:,.0f}, fingerprint_many {len(texts) / p:,.0f}; ratio (Python/CLI throughput) {c / p:.3f}")


def query(args):
    store = Path(args.store)
    values = data(args.n)
    if not store.exists():
        print(f"building {store}: init --expected-size {args.n}, insert {len(values)} fingerprints")
        subprocess.run([str(CLI), "init", str(store), "--expected-size", str(args.n)], check=True)
        tsv = Path(str(store) + ".tsv")
        with open(tsv, "w") as f:
            for i, v in enumerate(values.tolist()):
                f.write(f"{i}\t{v:016x}\n")
        subprocess.run([str(CLI), "insert", str(store), str(tsv)], check=True, stdout=subprocess.DEVNULL)
        tsv.unlink()
    queries = peers().make_queries(values, args.queries, 1)
    with tempfile.TemporaryDirectory() as tmp:
        qfile = Path(tmp) / "q.txt"
        qfile.write_text("".join(f"{q:016x}\n" for q in queries.tolist()))
        qbin = Path(tmp) / "q.u64"
        queries.astype("<u8").tofile(qbin)
        child = (
            "import sys, time, numpy as np, simhashdb\n"
            "q = np.fromfile(sys.argv[2], dtype='<u8')\n"
            "t = time.perf_counter()\n"
            "with simhashdb.Store.open(sys.argv[1]) as s:\n"
            "    r = s.query_many(q)\n"
            "print(time.perf_counter() - t, len(r.id))\n"
        )
        import simhashdb

        opened = simhashdb.Store.open(store)
        opened.query_many(queries)  # warm
        print(f"query: {len(queries)} queries against {args.n} stored, {args.repeats} runs each, alternating")
        cli, py_process, py_call, warm = [], [], [], []
        for _ in range(args.repeats):
            t = time.perf_counter()
            out = subprocess.run([str(CLI), "query", str(store), "--input", str(qfile)], capture_output=True, check=True).stdout
            cli.append(time.perf_counter() - t)
            t = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", child, str(store), str(qbin)], capture_output=True, text=True, check=True)
            py_process.append(time.perf_counter() - t)
            seconds, matches = done.stdout.split()
            py_call.append(float(seconds))
            t = time.perf_counter()
            r = opened.query_many(queries)
            warm.append(time.perf_counter() - t)
        assert int(matches) == len(out.splitlines()) == len(r.id), "match counts differ"
        print(f"  same {len(r.id)} matches")
        c = median_report("simhashdb query (CLI process)", cli)
        p = median_report("python process: start, import, Store.open + query_many", py_process)
        pc = median_report("  of which Store.open + query_many", py_call)
        w = median_report("query_many on an open Store (warm)", warm)
        print(f"  ratios to the CLI: python process {p / c:.3f}, open + query_many {pc / c:.3f}, warm {w / c:.3f}")
        opened.close()


def short_documents(n, seed=7):
    """n texts of 40 words: windows of the eval corpus, some words replaced (near-duplicates
    and distinct texts both)."""
    rng = random.Random(seed)
    words = []
    with open(SHARED / "eval" / "docs.jsonl") as f:
        for line in f:
            words.append(json.loads(line)["text"].split())
            if len(words) >= 2000:
                break
    words = [w for w in words if len(w) > 60]
    for i in range(n):
        doc = words[rng.randrange(len(words))]
        at = rng.randrange(len(doc) - 40)
        window = doc[at : at + 40]
        for _ in range(rng.randrange(6)):
            window[rng.randrange(40)] = f"w{rng.randrange(10**6)}"
        yield f"d{i}", " ".join(window)


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024


def memory_child(args):
    if args.which == "datasketch":
        from datasketch import MinHash, MinHashLSH

        before = rss_mib()
        lsh = MinHashLSH(threshold=0.8, num_perm=128)
        t = time.perf_counter()
        for id, text in short_documents(args.n):
            m = MinHash(num_perm=128)
            tokens = text.split()
            m.update_batch([" ".join(tokens[i : i + 2]).encode() for i in range(len(tokens) - 1)])
            lsh.insert(id, m)
        seconds = time.perf_counter() - t
        added = rss_mib() - before
        print(json.dumps({"which": "datasketch MinHashLSH(num_perm=128)", "rss_added_mib": added, "seconds": seconds}))
    elif args.which == "simhashdb-build":
        import simhashdb

        t = time.perf_counter()
        with simhashdb.Store.create(args.store, expected_size=args.n) as store:
            store.insert_documents(short_documents(args.n))
        print(json.dumps({"which": "simhashdb insert_documents", "seconds": time.perf_counter() - t}))
    else:
        import simhashdb

        pin = args.which == "simhashdb-pinned"
        queries = np.arange(10000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        before = rss_mib()
        with simhashdb.Store.open(args.store, pin=pin) as store:
            store.query_many(queries)
            added = rss_mib() - before
            stats = store.stats()
        print(json.dumps({"which": f"simhashdb Store.open(pin={pin}) + 10k queries", "rss_added_mib": added,
                          "disk_mib": stats["total_bytes"] / 2**20}))


def memory(args):
    print(f"memory: {args.n} documents of 40 words, each tool in its own process")
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "s")
        for which in ("simhashdb-build", "simhashdb-unpinned", "simhashdb-pinned", "datasketch"):
            done = subprocess.run([sys.executable, __file__, "memory-child", "--n", str(args.n),
                                   "--which", which, "--store", store], capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(done.stderr)
            print("  " + done.stdout.strip())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["find-all", "fingerprint", "query", "memory", "memory-child"])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--store", default="/tmp/py1e7")
    parser.add_argument("--which", choices=["simhashdb-build", "simhashdb-unpinned", "simhashdb-pinned", "datasketch"])
    args = parser.parse_args()
    {"find-all": find_all, "fingerprint": fingerprint, "query": query, "memory": memory,
     "memory-child": memory_child}[args.what](args)


if __name__ == "__main__":
    main()
