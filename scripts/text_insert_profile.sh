#!/usr/bin/env bash
# Where a text insert's time goes, phase by phase (docs/benchmarks.md, "The text path"): the
# insert of CORPUS (JSON Lines of {"id", "text"}) into a fresh store without and with 128-byte
# sketches, sampled by perf at 999 Hz on every thread, each symbol counted in one phase, in CPU
# seconds.
#
#   scripts/text_insert_profile.sh CORPUS.jsonl [SIMHASHDB]
#
# Needs perf (Debian: linux-perf) and a release build; the store is made in a temporary
# directory and removed.
set -euo pipefail
corpus=${1:?usage: $0 CORPUS.jsonl [SIMHASHDB]}
bin=${2:-target/release/simhashdb}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for kind in plain sketch; do
  if [ $kind = sketch ]; then "$bin" init "$work/$kind" --sketch 2>/dev/null
  else "$bin" init "$work/$kind" 2>/dev/null; fi
  perf record -q -F 999 -o "$work/$kind.data" "$bin" insert "$work/$kind" "$corpus" \
    >/dev/null 2>"$work/$kind.err" || { cat "$work/$kind.err"; exit 1; }
  perf report -i "$work/$kind.data" --no-children --sort sym -n --stdio -q 2>/dev/null \
    >"$work/$kind.txt"
done

python3 - "$work/plain.txt" "$work/sketch.txt" <<'PY'
import re, sys

# A symbol's phase: the first pattern it contains (lower-cased) decides.
PHASES = [
    ("sketch (token hashes, rounds, densification)", ["sketch::"]),
    ("tokenizing", ["tokens::", "unicode_data::alphabetic", "unicode_data::n::", "is_alphanumeric"]),
    ("lower-casing", ["to_lowercase", "conversions::to_lower"]),
    ("fingerprint (shingle hashes, minhash)", ["fingerprint_tokens", "token_shingle_hashes",
                                               "minhash", "xxh3"]),
    ("reading and parsing input", ["serde_json", "io::input", "chunkreader", "memchr",
                                   "read::", "::document", "jsonl", "utf8"]),
    ("writing the store (sort, blocks, redb, checksums)", ["redb", "run::", "format::", "tables::",
                                                           "crc32", "sort", "radix", "write::"]),
    ("memory (copies, allocation, page faults)", ["memmove", "memcpy", "memset", "malloc", "free",
                                                  "realloc", "clear_page", "page_fault",
                                                  "alloc::", "_int_", "do_anonymous_page"]),
]


def phases(path):
    totals = {}
    for line in open(path):
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+\[[.k]\]\s+(.*)", line)
        if not m:
            continue
        # Samples at 999 Hz: CPU seconds.
        share, sym = int(m.group(1)) / 999, m.group(2).lower()
        name = next((n for n, pats in PHASES if any(p in sym for p in pats)), "other (kernel, threads, rest)")
        totals[name] = totals.get(name, 0.0) + share
    return totals


plain, sketch = phases(sys.argv[1]), phases(sys.argv[2])
names = [n for n, _ in PHASES] + ["other (kernel, threads, rest)"]
print(f"CPU seconds by phase{'':<32} {'without':>8} {'with 128-byte sketches':>23}")
for n in names:
    print(f"{n:<52} {plain.get(n, 0):>8.2f} {sketch.get(n, 0):>23.2f}")
print(f"{'total':<52} {sum(plain.values()):>8.2f} {sum(sketch.values()):>23.2f}")
PY
