#!/usr/bin/env bash
# The main job on the bundled example: create a store, insert a day's batch of 1,900 pages
# (400 of them near-duplicates of others), query it, and show its stats.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/simhashdb
store=$(mktemp -d)/store
trap 'rm -rf "$(dirname "$store")"' EXIT

$bin init "$store"
$bin insert "$store" examples/data/pages.tsv --label demo
echo "--- near-duplicates of the first 50 stored pages (QUERY ID FINGERPRINT DISTANCE), first 10 lines:"
$bin query "$store" --input examples/data/queries.txt | head -n 10
echo "--- matches within 3 bits: $($bin query "$store" --input examples/data/queries.txt | wc -l)"
echo "--- stats:"
$bin stats "$store" | head -n 16
echo "--- audit: every near-duplicate pair (ID_A ID_B DISTANCE), first 5, and the largest clusters:"
$bin audit "$store" --clusters "$(dirname "$store")/clusters.tsv" --pairs - | head -n 5
cut -f1 "$(dirname "$store")/clusters.tsv" | uniq -c | sort -rn | head -n 3
echo "--- fingerprints from text (ID FINGERPRINT):"
printf '%s\n' '{"id": "a", "text": "The quick brown fox jumps over the lazy dog"}' \
    '{"id": "b", "text": "the quick brown fox jumped over the lazy dog!"}' | $bin fingerprint --verbose
