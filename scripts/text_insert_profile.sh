#!/usr/bin/env bash
# Where a text insert's time goes, phase by phase (docs/benchmarks.md, "The text path"): the
# insert of CORPUS (JSON Lines of {"id", "text"}), COPIES times under other ids (default 3),
# into a fresh store without and with 128-byte sketches, sampled by perf at 999 Hz on every
# thread, each symbol counted in one phase, in CPU seconds.
#
#   COPIES=3 scripts/text_insert_profile.sh CORPUS.jsonl [SIMHASHDB]
#
# Needs perf (Debian: linux-perf) and a release build. Kernel samples (page faults) are only
# counted where /proc/sys/kernel/perf_event_paranoid allows them (<= 1). A symbol the compiler
# inlined counts where it was inlined; the phases are by symbol name, not by caller.
set -euo pipefail
corpus=${1:?usage: $0 CORPUS.jsonl [SIMHASHDB]}
bin=${2:-target/release/simhashdb}
copies=${COPIES:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$(dirname "$0")/copies.py" "$corpus" "$work/texts.jsonl" "$copies"

for kind in plain sketch; do
  sketch=(); [ $kind = sketch ] && sketch=(--sketch)
  "$bin" init "$work/$kind" "${sketch[@]}" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  perf record -q -F 999 -o "$work/$kind.data" "$bin" insert "$work/$kind" "$work/texts.jsonl" \
    >/dev/null 2>"$work/$kind.err" || { cat "$work/$kind.err"; exit 1; }
  perf report -i "$work/$kind.data" --no-children --sort sym -n --stdio -q >"$work/$kind.txt"
done

python3 - "$work/plain.txt" "$work/sketch.txt" <<'PY'
import re, sys

# A symbol's phase: the first phase with a pattern the symbol (lower-cased) contains.
PHASES = [
    ("sketch (token hashes, 3-shingles, rounds, densification)", ["similarity::sketch::"]),
    ("tokenizing (and Scheme::document's token list)",
     ["fingerprint::tokens::", "unicode_data::alphabetic", "unicode_data::n::",
      "fingerprint::scheme::document"]),
    ("lower-casing", ["to_lowercase", "conversions::to_lower"]),
    ("fingerprint (2-shingle hashes, minhash; XXH3 out of line)",
     ["fingerprint_tokens", "token_shingle_hashes", "minhash", "xxh3"]),
    ("reading and parsing JSON Lines", ["serde_json", "simhashdb::io::", "chunkreader", "memchr",
                                        "from_utf8"]),
    ("writing the store (sort, blocks, redb, checksums)",
     ["redb", "simhashdb::run::", "simhashdb::format::", "simhashdb::tables::",
      "simhashdb::write::", "crc32", "slice::sort"]),
    ("memory (copies, allocation, page faults)", ["memmove", "memcpy", "memset", "malloc", "free",
                                                  "realloc", "clear_page", "page_fault",
                                                  "_int_", "do_anonymous_page"]),
]
OTHER = "other (kernel, threads, the rest)"


def phases(path):
    totals = {}
    for line in open(path):
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+\[[.k]\]\s+(.*)", line)
        if not m:
            continue
        # Samples at 999 Hz: CPU seconds.
        seconds, sym = int(m.group(1)) / 999, m.group(2).lower()
        name = next((n for n, pats in PHASES if any(p in sym for p in pats)), OTHER)
        totals[name] = totals.get(name, 0.0) + seconds
    return totals


plain, sketch = phases(sys.argv[1]), phases(sys.argv[2])
print(f"{'CPU seconds by phase':<60} {'without':>8} {'with 128-byte sketches':>23}")
for n in [n for n, _ in PHASES] + [OTHER]:
    print(f"{n:<60} {plain.get(n, 0):>8.2f} {sketch.get(n, 0):>23.2f}")
print(f"{'total':<60} {sum(plain.values()):>8.2f} {sum(sketch.values()):>23.2f}")
PY
