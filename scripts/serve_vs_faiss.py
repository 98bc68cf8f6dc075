#!/usr/bin/env python3
"""`simhashdb serve` against faiss IndexBinaryMultiHash in memory, side by side in one run.

The same fingerprints and queries as ../shared/bench/peers.py (its functions are imported):
n fingerprints (1% planted near-duplicates), queries half 1-3 bits from a stored one, half
random. Rounds alternate: faiss's batched range search (2x32 bits, nflip=1, 2 threads), then
one POST /v1/query with every query (JSON in and out, over loopback). Both answers must be the
same pairs. Also reports the server's resident memory beside the faiss index's size.

    VENV/bin/python scripts/serve_vs_faiss.py --n 10000000 --store /tmp/s1e7 [--repeats 9]

serve's time is the POST until its JSON answer is parsed by Python (json.loads); the
exchange alone (until the answer's last byte arrived) is reported beside it.

Run with the peers' venv (../shared/bench/setup.sh). Builds the store (init --expected-size
N, one insert) unless --store exists; the server is started and stopped by the script.
"""

import argparse
import http.client
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "peers", os.path.join(HERE, "..", "..", "shared", "bench", "peers.py"))
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)


def rss_mib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def build_store(binary, store, data):
    subprocess.run([binary, "init", store, "--expected-size", str(len(data))], check=True)
    proc = subprocess.Popen([binary, "insert", store, "--format", "tsv"], stdin=subprocess.PIPE)
    step = 1_000_000
    for start in range(0, len(data), step):
        chunk = data[start:start + step]
        lines = "".join(f"d{start + i}\t{int(fp):016x}\n" for i, fp in enumerate(chunk))
        proc.stdin.write(lines.encode())
    proc.stdin.close()
    if proc.wait() != 0:
        sys.exit("insert failed")


def start_server(binary, store, cache_mib):
    args = [binary, "serve", store, "--listen", "127.0.0.1:0"]
    if cache_mib:
        args += ["--cache-mib", str(cache_mib)]
    server = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    started = time.perf_counter()
    host = None
    for line in server.stderr:
        sys.stderr.write("[server] " + line)
        m = re.search(r"http://([0-9.]+:[0-9]+)", line)
        if m:
            host = m.group(1)
        if "ready:" in line:
            break
    return server, host, time.perf_counter() - started


def post(conn, path, body, exchanges=None):
    """POSTs `body` and parses the JSON answer; appends the seconds until the last byte of
    the answer arrived (before parsing) to `exchanges`."""
    t = time.perf_counter()
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    if exchanges is not None:
        exchanges.append(time.perf_counter() - t)
    if response.status != 200:
        sys.exit(f"{path}: {response.status} {data[:200]!r}")
    return json.loads(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--store", required=True)
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "target", "release", "simhashdb"))
    ap.add_argument("--cache-mib", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--singles", type=int, default=5000, help="GET requests for latency")
    args = ap.parse_args()

    import faiss
    data, _ = peers.make_data(args.n, args.n // 100, args.seed)
    queries = peers.make_queries(data, args.queries, args.seed)
    if not os.path.exists(args.store):
        t = time.perf_counter()
        build_store(args.bin, args.store, data)
        print(f"store built in {time.perf_counter() - t:.1f} s", flush=True)

    server, host, ready_s = start_server(args.bin, args.store, args.cache_mib)
    try:
        faiss.omp_set_num_threads(2)
        t = time.perf_counter()
        index, _ = peers.faiss_build(data, "mh2x32f1")
        faiss_build_s = time.perf_counter() - t
        with tempfile.NamedTemporaryFile() as f:
            faiss.write_index_binary(index, f.name)
            faiss_bytes = os.path.getsize(f.name)
        # A keep-alive connection idle past the server's --request-timeout is closed: connect
        # after the faiss build.
        conn = http.client.HTTPConnection(host)
        body = json.dumps({"fingerprints": [f"{int(q):016x}" for q in queries],
                           "distance": args.k})
        post(conn, "/v1/query", body)  # warm
        q8 = np.ascontiguousarray(queries, dtype="<u8").view(np.uint8).reshape(-1, 8)

        faiss_s, serve_s, exchange_s = [], [], []
        for _ in range(args.repeats):
            # A pause before each side: OpenMP's and rayon's threads spin for a while after
            # a parallel section, and would take the cores from the other side's start.
            time.sleep(0.3)
            t = time.perf_counter()
            lims, _, ids = index.range_search(q8, args.k + 1)
            faiss_s.append(time.perf_counter() - t)
            time.sleep(0.3)
            t = time.perf_counter()
            answer = post(conn, "/v1/query", body, exchange_s)
            serve_s.append(time.perf_counter() - t)

        # The same pairs (query index, stored fingerprint) from both.
        fq = np.repeat(np.arange(len(queries)), np.diff(lims).astype(np.int64)).astype(np.uint64)
        faiss_digest, _ = peers.pairs_digest(fq, data[ids])
        sq, sv = [], []
        for i, matches in enumerate(answer["results"]):
            for m in matches:
                sq.append(i)
                sv.append(int(m["fingerprint"], 16))
        serve_digest, _ = peers.pairs_digest(sq, sv)

        # Single-fingerprint GETs on one keep-alive connection (Python client included).
        lat = []
        for q in queries[: args.singles]:
            t = time.perf_counter()
            conn.request("GET", f"/v1/query?fingerprint={int(q):016x}")
            response = conn.getresponse()
            response.read()
            lat.append(time.perf_counter() - t)
        lat_us = np.array(lat) * 1e6

        med_f, med_s = statistics.median(faiss_s), statistics.median(serve_s)
        paired = sorted(s / f for s, f in zip(serve_s, faiss_s))
        result = {
            "n": len(data), "queries": len(queries), "k": args.k,
            "faiss_batch_s_median": med_f, "faiss_batch_s": faiss_s,
            "serve_post_s_median": med_s, "serve_post_s": serve_s,
            "ratio_of_medians": med_s / med_f,
            "serve_exchange_s_median": statistics.median(exchange_s),
            "exchange_ratio_of_medians": statistics.median(exchange_s) / med_f,
            "paired_ratio_median": statistics.median(paired),
            "same_results": faiss_digest == serve_digest,
            "matches": len(sv), "faiss_matches": int(lims[-1]),
            "single_get_p50_us": float(np.percentile(lat_us, 50)),
            "single_get_p99_us": float(np.percentile(lat_us, 99)),
            "server_ready_s": ready_s,
            "server_rss_mib": rss_mib(server.pid, "VmRSS"),
            "server_peak_rss_mib": rss_mib(server.pid, "VmHWM"),
            "faiss_index_mib": faiss_bytes / 2**20, "faiss_build_s": faiss_build_s,
            "loadavg": os.getloadavg(),
        }
        print(json.dumps(result, indent=1), flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
