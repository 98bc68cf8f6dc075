#!/usr/bin/env python3
"""Builds real corpora nobody here wrote, for checking `tune` on documents it was not tuned
on: the documentation and sources of several versions of Python packages, from PyPI.

    scripts/real_corpora.py OUT_DIR        # downloads the sdists with pip, writes OUT_DIR/*.jsonl

Corpora (one JSON object {"id", "text"} per line; a document is one file):
- django-docs.jsonl: docs/**/*.txt of Django 3.2, 4.0, 4.1, 4.2, 5.0, 5.1 (reStructuredText prose;
  a page and its edited versions are near-duplicates).
- sqlalchemy-docs.jsonl: doc/build/**/*.rst of SQLAlchemy 1.3, 1.4, 2.0.
- python-src.jsonl: *.py of flask, click, jinja2, werkzeug, requests, three versions each.
Files with fewer than 20 tokens are left out (as in ../shared/eval).
"""
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path

CORPORA = {
    "django-docs": (["django==3.2.25", "django==4.0.10", "django==4.1.13", "django==4.2.16",
                     "django==5.0.9", "django==5.1.3"], r"/docs/.*\.txt$"),
    "sqlalchemy-docs": (["sqlalchemy==1.3.24", "sqlalchemy==1.4.54", "sqlalchemy==2.0.36"],
                        r"/doc/build/.*\.rst$"),
    "python-src": ([f"{p}=={v}" for p, vs in [
        ("flask", ["2.0.3", "2.3.3", "3.0.3"]), ("click", ["7.1.2", "8.0.4", "8.1.7"]),
        ("jinja2", ["2.11.3", "3.0.3", "3.1.4"]), ("werkzeug", ["2.0.3", "2.3.8", "3.0.4"]),
        ("requests", ["2.25.1", "2.28.2", "2.32.3"])] for v in vs], r"\.py$"),
}


def tokens(text):
    return re.findall(r"[^\W_]+", text.lower())


def main():
    out = Path(sys.argv[1])
    downloads = out / "sdists"
    downloads.mkdir(parents=True, exist_ok=True)
    for name, (specs, pattern) in CORPORA.items():
        with open(out / f"{name}.jsonl", "w") as corpus:
            count = 0
            for spec in specs:
                subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                                "--no-binary", ":all:", "-q", "-d", str(downloads), spec],
                               check=True)
                package, version = spec.split("==")
                sdist = next(p for p in downloads.iterdir()
                             if p.name.lower().replace("_", "-").startswith(f"{package}-{version}")
                             and p.name.endswith(".tar.gz"))
                with tarfile.open(sdist) as tar:
                    for member in sorted(tar.getmembers(), key=lambda m: m.name):
                        if not member.isfile() or not re.search(pattern, member.name):
                            continue
                        text = tar.extractfile(member).read().decode("utf-8", "replace")
                        if len(tokens(text)) < 20:
                            continue
                        corpus.write(json.dumps({"id": member.name, "text": text}) + "\n")
                        count += 1
            print(f"{name}: {count} documents")


if __name__ == "__main__":
    main()
