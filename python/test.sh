#!/usr/bin/env bash
# Builds the Python package from this checkout into a fresh venv (as a user's
# `pip install ./python` would) and runs its tests against the CLI's release build.
# The venv also gets the peers the tests compare with: seomoz's simhash (simhash-pybind) and pandas,
# and pyspark and pyarrow for the Spark jobs, which run on a real standalone cluster (Java 17+).
set -euo pipefail
cd "$(dirname "$0")"
venv=$(realpath -m "${SIMHASHDB_VENV:-../target/python-venv}")
command -v python3 >/dev/null || { echo "python3 (>= 3.9, with venv) is required" >&2; exit 1; }
java -version 2>&1 | grep -qE 'version "(1[7-9]|[2-9][0-9])' ||
    { echo "Java 17 or later is required for the Spark tests (java on PATH)" >&2; exit 1; }
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q pytest "pandas<3" simhash-pybind "pyspark>=4.0" "pyarrow>=14" datatrove orjson "datasets>=3"
"$venv/bin/python" -m pip install -q .
(cd .. && cargo build --release --bin simhashdb)
# Run from tests/ so `import simhashdb` is the installed package, not this source tree.
cd tests
SIMHASHDB_REQUIRE_PEER=1 SIMHASHDB_REQUIRE_SPARK=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider .
