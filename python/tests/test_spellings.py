"""One table of spellings through every client: the CLI, the HTTP server (started here on a
loopback port) and Python accept exactly the same fingerprints, schemes, input formats and
distances, and refuse the same ones with the library's same message."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

import simhashdb
from simhashdb import Store

from conftest import run_cli, serving

# (spelling, the fingerprint it means, or None when every client must refuse it)
FINGERPRINTS = [
    ("0123456789abcdef", 0x0123456789ABCDEF),
    ("0123456789ABCDEF", 0x0123456789ABCDEF),
    ("0x1f", 0x1F),
    ("0X1F", 0x1F),
    ("0xffffffffffffffff", 2**64 - 1),
    ("12345", 12345),
    ("1234567890123456", 0x1234567890123456),  # 16 digits read as hex
    ("18446744073709551615", 2**64 - 1),
    ("18446744073709551616", None),  # 2^64
    ("0x", None),
    ("0x10000000000000000", None),
    ("xyz", None),
    ("", None),
    (" 12", None),
    ("-1", None),
    ("0x1_0", None),
    ("+5", None),
]

# (spelling, --fingerprint-format, the fingerprint it means, or None when all must refuse it)
FORMATTED = [
    ("1234567890123456", "auto", 0x1234567890123456),
    ("1234567890123456", "decimal", 1234567890123456),
    ("1234567890123456", "hex", 0x1234567890123456),
    ("abcdef0123", "hex", 0xABCDEF0123),
    ("0xABCDEF0123", "hex", 0xABCDEF0123),
    ("ff", "decimal", None),
    ("0x1f", "decimal", None),
    ("18446744073709551615", "decimal", 2**64 - 1),
    ("18446744073709551615", "hex", None),
    ("12345", "octal", None),
    ("12345", "HEX", None),
]

SCHEMES = [
    ("words-2-minhash", "words-2-minhash"),
    ("seomoz", "seomoz"),
    ("chars-5-count", "chars-5-count"),
    ("words", "words-2-minhash"),
    ("chars", "chars-5-minhash"),
    ("minhash-3-set", None),
    ("words-0-set", None),
    ("Words-2-minhash", None),
    ("words-2-idf", None),
]

FORMATS = ["tsv", "jsonl", "text", "parquet", "fingerprints", "JSONL", "csv", "json", ""]
KNOWN_FORMATS = {"tsv", "jsonl", "text", "parquet", "fingerprints"}


@pytest.fixture(scope="module")
def served(cli, tmp_path_factory):
    """A store holding one document per valid fingerprint spelling, and a server on it."""
    path = tmp_path_factory.mktemp("spellings") / "store"
    run_cli(cli, "init", str(path), "--expected-size", "1000")
    values = sorted(
        {v for _, v in FINGERPRINTS if v is not None} | {v for _, _, v in FORMATTED if v is not None}
    )
    run_cli(cli, "insert", str(path), input="".join(f"fp-{v:016x}\t{v:016x}\n" for v in values))
    with serving(cli, path) as base:
        yield path, base


def http(base: str, method: str, path: str, body: str = "") -> tuple:
    request = urllib.request.Request(
        base + path, data=body.encode() if method == "POST" else None, method=method
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def cli_run(cli: Path, *args: str, input: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(cli), *args], input=input, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("spelling,value", FINGERPRINTS)
def test_fingerprints_are_read_alike(cli, served, spelling, value):
    path, base = served
    done = cli_run(cli, "query", str(path), "--distance", "0", "--json", "--", spelling)
    status, answer = http(
        base, "GET", "/v1/query?distance=0&fingerprint=" + urllib.parse.quote(spelling)
    )
    with Store.open(path) as store:
        if value is None:
            with pytest.raises(ValueError) as refused:
                store.query(spelling, 0)
            message = str(refused.value)
            assert "is not a fingerprint" in message
            with pytest.raises(ValueError, match=re.escape(message)):
                simhashdb.parse_fingerprint(spelling)
            assert done.returncode != 0 and message in done.stderr, done.stderr
            assert status == 400 and message in answer["error"], answer
            return
        assert simhashdb.parse_fingerprint(spelling) == value
        assert store.query(spelling, 0) == [(f"fp-{value:016x}", value, 0)]
    assert done.returncode == 0, done.stderr
    assert [json.loads(l)["id"] for l in done.stdout.splitlines()] == [f"fp-{value:016x}"]
    assert status == 200 and [m["id"] for m in answer["matches"]] == [f"fp-{value:016x}"]


@pytest.mark.parametrize("spelling,format,value", FORMATTED)
def test_fingerprint_formats_are_read_alike(cli, served, spelling, format, value):
    path, base = served
    done = cli_run(
        cli, "query", str(path), "--distance", "0", "--json", "--fingerprint-format", format,
        "--", spelling,
    )
    query = urllib.parse.urlencode(
        {"distance": 0, "fingerprint": spelling, "fingerprint_format": format}
    )
    status, answer = http(base, "GET", "/v1/query?" + query)
    body = json.dumps({"fingerprints": [spelling], "distance": 0, "fingerprint_format": format})
    post_status, post_answer = http(base, "POST", "/v1/query", body)
    with Store.open(path) as store:
        if value is None:
            with pytest.raises(ValueError) as refused:
                store.query(spelling, 0, fingerprint_format=format)
            message = str(refused.value)
            with pytest.raises(ValueError, match=re.escape(message)):
                simhashdb.parse_fingerprint(spelling, format)
            assert done.returncode == 2 and message in done.stderr, done.stderr
            assert status == 400 and message in answer["error"], answer
            assert post_status == 400 and message in post_answer["error"], post_answer
            return
        assert simhashdb.parse_fingerprint(spelling, format) == value
        assert store.query(spelling, 0, fingerprint_format=format) == [(f"fp-{value:016x}", value, 0)]
    assert done.returncode == 0, done.stderr
    assert [json.loads(l)["id"] for l in done.stdout.splitlines()] == [f"fp-{value:016x}"]
    assert status == 200 and [m["id"] for m in answer["matches"]] == [f"fp-{value:016x}"]
    assert post_status == 200 and [m["id"] for m in post_answer["results"][0]] == [f"fp-{value:016x}"]


def test_inserts_read_fingerprint_formats_and_int64_alike(cli, tmp_path):
    """The same lines inserted by the CLI, the server and Python give the same documents:
    decimal strings with `decimal`, JSON numbers (int64 negative ones too) whatever the
    format."""
    lines = (
        '{"id": "dec", "fingerprint": "1234567890123456"}\n'
        '{"id": "neg", "fingerprint": -1}\n'
        '{"id": "num", "fingerprint": 1234567890123456}\n'
    )
    expected = {"dec": 1234567890123456, "neg": 2**64 - 1, "num": 1234567890123456}
    data = tmp_path / "in.jsonl"
    data.write_text(lines)
    stores = {name: tmp_path / name for name in ("cli", "http", "python")}
    for store in stores.values():
        run_cli(cli, "init", str(store), "--expected-size", "1000")
    run_cli(cli, "insert", str(stores["cli"]), str(data), "--fingerprint-format", "decimal")
    with Store.open(stores["python"]) as store:
        store.insert_file(data, fingerprint_format="decimal")
    server = subprocess.Popen(
        [str(cli), "serve", str(stores["http"]), "--listen", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        base = None
        for line in server.stderr:
            found = re.search(r"http://(\S+)", line)
            base = f"http://{found.group(1)}" if found else base
            if ": ready:" in line:
                break
        status, answer = http(base, "POST", "/v1/insert?fingerprint_format=decimal&format=jsonl", lines)
        assert status == 200 and answer["inserted"] == 3, answer
        status, answer = http(base, "POST", "/v1/insert?fingerprint_format=octal", lines)
        assert status == 400 and "unknown fingerprint format" in answer["error"], answer
    finally:
        server.terminate()
        server.wait(timeout=30)
    for name, path in stores.items():
        with Store.open(path) as store:
            assert {i: store.get(i) for i in expected} == expected, name


@pytest.mark.parametrize("spelling,name", SCHEMES)
def test_schemes_are_read_alike(cli, tmp_path, spelling, name):
    """The server takes no scheme (a store's is fixed when it is made): CLI and Python."""
    done = cli_run(cli, "init", str(tmp_path / "cli"), "--scheme", spelling)
    if name is None:
        with pytest.raises(ValueError) as refused:
            Store.create(tmp_path / "py", scheme=spelling)
        message = str(refused.value)
        assert done.returncode != 0 and message in done.stderr, (message, done.stderr)
        assert not (tmp_path / "py").exists() and not (tmp_path / "cli").exists()
        return
    assert done.returncode == 0, done.stderr
    stats = json.loads(run_cli(cli, "stats", str(tmp_path / "cli"), "--json"))
    assert stats["scheme"] == name
    with Store.create(tmp_path / "py", scheme=spelling) as store:
        assert store.stats()["scheme"] == name


@pytest.mark.parametrize("spelling", FORMATS)
def test_formats_are_read_alike(cli, served, tmp_path, spelling):
    """An unknown format is refused by all three with the library's message; a known one is
    never called unknown (a client may still refuse it for its medium: a request body is not
    one text document)."""
    path, base = served
    data = tmp_path / "in.tsv"
    data.write_text("z\tffffffff00000000\n")  # far from every query of this file
    done = cli_run(cli, "insert", str(path), "--format", spelling, str(data), "--no-compact")
    status, answer = http(
        base, "POST", "/v1/insert?format=" + urllib.parse.quote(spelling), "z\tffffffff00000000\n"
    )
    with Store.open(path) as store:
        try:
            store.insert_file(data, format=spelling, compact=False)
            python_error = ""
        except (ValueError, OSError) as e:
            python_error = str(e)
    unknown = f'unknown format "{spelling}": use tsv, jsonl, text, parquet or fingerprints'
    if spelling in KNOWN_FORMATS:
        for error in (done.stderr, answer.get("error", ""), python_error):
            assert "unknown format" not in error
        if spelling == "tsv":
            assert done.returncode == 0 and status == 200 and python_error == ""
        return
    assert unknown in python_error
    assert done.returncode != 0 and unknown in done.stderr, done.stderr
    assert status == 400 and unknown in answer["error"], answer


# (spelling, the distance it means, or None when every client must refuse it); the store's
# K is 3. Python's spelling of a number is an int: the table's numbers, as ints.
DISTANCES = [("0", 0), ("3", 3), ("+2", 2), ("4", None), ("-1", None), ("99", None)]


@pytest.mark.parametrize("spelling,value", DISTANCES)
def test_distances_are_read_alike(cli, served, spelling, value):
    path, base = served
    done = cli_run(cli, "query", str(path), "--distance", spelling, "--json", "--", "0x1f")
    status, answer = http(
        base, "GET", f"/v1/query?distance={urllib.parse.quote(spelling)}&fingerprint=0x1f"
    )
    with Store.open(path) as store:
        if value is None:
            with pytest.raises(ValueError) as refused:
                store.query("0x1f", int(spelling))
            # The CLI names its flag for the setting ("invalid --distance: ..."); what
            # follows the setting's name is the library's, the same everywhere.
            message = str(refused.value)
            problem = message.split(": ", 1)[1] if message.startswith("invalid ") else message
            assert done.returncode == 2 and problem in done.stderr, (problem, done.stderr)
            assert status == 400 and message in answer["error"], (message, answer)
            return
        assert store.query("0x1f", int(spelling)) == [("fp-000000000000001f", 0x1F, 0)]
    assert done.returncode == 0, done.stderr
    assert [json.loads(l)["id"] for l in done.stdout.splitlines()] == ["fp-000000000000001f"]
    assert status == 200 and answer["distance"] == value, answer
