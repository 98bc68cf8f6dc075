#!/usr/bin/env bash
# `audit --duplicates` of two builds side by side, alternating, on the same stores:
# 1e7 fingerprints as scripts/spark_vs_local.py makes them (a tenth with a near duplicate 1-3
# bits away, one in a hundred copied, 2,000 copies of one page), and 1e6 random fingerprints
# with 1e5 copies of one page. Prints wall seconds and peak RSS of each run.
#
#   scripts/keep_rule_bench.sh OLD_BIN NEW_BIN [RUNS] [WORK_DIR]
#
# Needs python3 with numpy (python/test.sh's venv: target/python-venv/bin/python, or set
# PYTHON). The stores are written by NEW_BIN; both builds must read its format.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1") new=$(realpath "$2") runs=${3:-3}
work=$(realpath -m "${4:-target/keep-rule-bench}")
python=${PYTHON:-target/python-venv/bin/python}
mkdir -p "$work"
if [ ! -s "$work/fp1e7.tsv" ]; then
    "$python" - "$work/fp1e7.tsv" "$work/copies.tsv" <<'EOF'
import sys
import numpy as np
rng = np.random.default_rng(11)
n = 10_000_000
base = rng.integers(0, 2**64, size=n, dtype=np.uint64)
near = rng.choice(n, n // 10, replace=False)
for k in (1, 2, 3):
    part = near[k - 1 :: 3]
    flips = np.zeros(len(part), dtype=np.uint64)
    for _ in range(k):
        flips ^= np.left_shift(np.uint64(1), rng.integers(0, 64, len(part)).astype(np.uint64))
    base[part] = base[part - 1] ^ flips
copies = rng.choice(n, n // 100, replace=False)
base[copies] = base[copies - 1]
base[:2000] = base[0]
with open(sys.argv[1], "w") as out:
    out.writelines(f"d{i:09d}\t{int(fp):016x}\n" for i, fp in enumerate(base))
random = rng.integers(0, 2**64, size=1_000_000, dtype=np.uint64)
with open(sys.argv[2], "w") as out:
    out.writelines(f"r{i:07d}\t{int(fp):016x}\n" for i, fp in enumerate(random))
    out.writelines(f"copy-{i:06d}\t0123456789abcdef\n" for i in range(100_000))
EOF
fi
for name in fp1e7 copies; do
    store=$work/$name.store
    if [ ! -d "$store" ]; then
        "$new" init "$store" --expected-size "$([ $name = fp1e7 ] && echo 10000000 || echo 1100000)"
        "$new" insert "$store" "$work/$name.tsv" >/dev/null
        "$new" compact "$store" >/dev/null
    fi
done
for run in $(seq "$runs"); do
    for name in fp1e7 copies; do
        for side in old new; do
            bin=$old; [ $side = new ] && bin=$new
            /usr/bin/time -f "$name $side run $run: %e s, %M KB" "$bin" audit "$work/$name.store" \
                --duplicates "$work/$name.$side.tsv" 2>&1 >/dev/null | grep " run "
        done
    done
done
for name in fp1e7 copies; do
    printf '%s: old %s lines, new %s lines\n' "$name" "$(wc -l <"$work/$name.old.tsv")" \
        "$(wc -l <"$work/$name.new.tsv")"
done
