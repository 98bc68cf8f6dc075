#!/usr/bin/env bash
# The long crash run: SIGKILL `insert`, `delete`, `compact` (KILLS times, default 300) and
# `migrate` at random moments; after each kill the store must open, verify clean, and hold
# exactly the operations that reported success (plus possibly the one in flight, whole).
# CI runs the same tests with 20 kills. Usage: scripts/crash.sh [KILLS]
set -euo pipefail
cd "$(dirname "$0")/.."
CRASH_KILLS="${1:-300}" cargo test --release -- crash:: --nocapture
