#!/usr/bin/env bash
# Two builds of simhashdb side by side at 1e7: bulk insert, 10,000 queries (half within 3 bits
# of stored fingerprints) and the audit, A and B alternated, with the same answers checked.
# Usage: scripts/ab.sh OLD_BINARY NEW_BINARY [PAIRS]   (build OLD from an earlier commit with
#   git worktree add /tmp/old REV && cargo build --release --manifest-path /tmp/old/Cargo.toml)
set -euo pipefail
old="$1"; new="$2"; pairs="${3:-3}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import random, sys
work = sys.argv[1]
r = random.Random(42)
fps = []
with open(f"{work}/in.tsv", "w") as f:
    for i in range(10_000_000):
        fp = r.getrandbits(64)
        if i < 10_000:
            fps.append(fp)
        f.write(f"d{i}\t{fp:016x}\n")
q = random.Random(7)
with open(f"{work}/q.txt", "w") as f:
    for i in range(10_000):
        fp = fps[i] if i % 2 == 0 else q.getrandbits(64)
        if i % 2 == 0:
            for _ in range(q.randint(0, 3)):
                fp ^= 1 << q.randrange(64)
        f.write(f"{fp:016x}\n")
PY
# seconds BIN ARGS...: the wall time of one run, its output kept in $work/out.$(basename BIN)
seconds() {
    local bin="$1"; shift
    /usr/bin/time -f %e -o "$work/t" "$bin" "$@" > "$work/out" 2>/dev/null
    cat "$work/t"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for what in insert query audit; do
    : > "$work/a"; : > "$work/b"
    for _ in $(seq "$pairs"); do
        for side in a b; do
            bin=$old; [ "$side" = b ] && bin=$new
            case $what in
                insert) rm -rf "$work/s"; "$bin" init "$work/s" --expected-size 1e7 2>/dev/null
                        seconds "$bin" insert "$work/s" "$work/in.tsv" >> "$work/$side" ;;
                query)  seconds "$bin" query "$work/s" --input "$work/q.txt" >> "$work/$side" ;;
                audit)  seconds "$bin" audit "$work/s" --distance 3 >> "$work/$side" ;;
            esac
            [ $what = insert ] || md5sum < "$work/out" >> "$work/sums.$what"
        done
    done
    a=$(median < "$work/a"); b=$(median < "$work/b")
    printf "%-7s old %6.2f s  new %6.2f s  new/old %.3f  (medians of %s, alternated)\n" \
        "$what" "$a" "$b" "$(echo "$b / $a" | bc -l)" "$pairs"
done
for what in query audit; do
    [ "$(sort -u "$work/sums.$what" | wc -l)" = 1 ] || { echo "$what: the answers differ" >&2; exit 1; }
done
echo "same answers from both builds"
