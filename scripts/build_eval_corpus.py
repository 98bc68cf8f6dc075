#!/usr/bin/env python3
"""Builds a near-duplicate evaluation corpus with exact ground truth from files any Debian or
Ubuntu machine has, so the quality figures of docs/quality.md can be reproduced from a clone
(the private ../shared/eval is not in the repository).

    scripts/build_eval_corpus.py OUT_DIR [--seed 1] [--max-docs man=4000,copyright=1000,...]

Sources (a document is one file):
  man        man pages under /usr/share/man/man*/ (any section), rendered to text with
             `man -l` (MANWIDTH=80, LC_ALL=C.UTF-8, no pager), or mandoc / groff when man-db is
             absent; .gz/.bz2/.xz are handled by the renderer.
  man-l10n   their translations, /usr/share/man/<lang>/man*/.
  copyright  /usr/share/doc/*/copyright (many licence texts are identical or nearly so).
  python-lib Python's standard library: *.py under /usr/lib/python3.N/ (every N installed;
             site-packages and dist-packages left out).

Deterministic: paths are listed sorted, symlinks and man-page aliases (a lone `.so`) are left
out, each source's files are taken in the order of blake2b(seed, path) -- a uniform draw that
does not depend on which other files exist -- until --max-docs documents of that source are
kept; documents with fewer than --min-tokens (20) or more than --max-tokens (50,000) tokens
are left out, as in ../shared/eval. Ids p00001... are assigned after shuffling all kept
documents with --seed, so the keep rule's order (smallest id first) is not path order.

Writes to OUT_DIR:
  docs.jsonl     {"id", "text"} per line
  gt_pairs.tsv   every pair with word 3-shingle Jaccard >= 0.5: id_a id_b jaccard inter union,
                 computed exactly by scripts/exact_truth.py (called, not copied)
  exact_dups.tsv one group of documents with identical shingle sets (J = 1) per line
  meta.tsv       id source path tokens shingles
  summary.json   documents per source, pairs at J >= 0.5/0.8/0.9 and J = 1 (in total and per
                 pair of sources), the parameters, the machine (date, kernel, Debian
                 version, man-db/groff versions) and the sha256 of docs.jsonl

The corpus depends on the packages installed: quote the summary with any figure measured on
it. Definitions (tokens, shingles, Jaccard) are ../shared/eval/README.md's; score predicted
pairs with scripts/score_pairs.py and keep lists with scripts/score_keep.py.

Python 3 standard library only.
"""
import argparse
import datetime
import glob
import hashlib
import importlib.util
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
SOURCES = ("man", "man-l10n", "copyright", "python-lib")
DEFAULT_MAX = {"man": 4000, "man-l10n": 1500, "copyright": 1000, "python-lib": 1500}
WIDTH = 80


def log(message):
    print(message, file=sys.stderr, flush=True)


def tokens(text):
    return re.findall(r"[^\W_]+", text.lower())


def exact_truth():
    """scripts/exact_truth.py as a module (its shingles(), so meta.tsv counts what the truth
    compares)."""
    spec = importlib.util.spec_from_file_location("exact_truth",
                                                  os.path.join(SCRIPTS, "exact_truth.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- listing the files of each source ---------------------------------------------------

def man_files(man_root, translations):
    """(relative path, path) of the man pages: the English ones (man*/ directly under the
    root) or the translations (<lang>/man*/)."""
    out = []
    for lang in sorted(os.listdir(man_root)) if os.path.isdir(man_root) else []:
        top = os.path.join(man_root, lang)
        if not os.path.isdir(top) or os.path.islink(top):
            continue
        is_section = re.fullmatch(r"man[0-9a-z]+", lang) is not None
        if is_section == translations:
            continue
        sections = [top] if is_section else [
            os.path.join(top, s) for s in sorted(os.listdir(top))
            if re.fullmatch(r"man[0-9a-z]+", s)]
        for section in sections:
            if not os.path.isdir(section) or os.path.islink(section):
                continue
            for name in sorted(os.listdir(section)):
                path = os.path.join(section, name)
                if os.path.isfile(path):
                    out.append((os.path.relpath(path, man_root), path))
    return out


def copyright_files(doc_root):
    out = []
    for path in sorted(glob.glob(os.path.join(glob.escape(doc_root), "*", "copyright"))):
        if os.path.isfile(path):
            out.append((os.path.relpath(path, doc_root), path))
    return out


def python_files(lib_dirs):
    out = []
    for lib in lib_dirs:
        base = os.path.basename(lib.rstrip("/"))
        for root, dirs, files in os.walk(lib):
            dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "dist-packages",
                                                           "__pycache__"))
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    out.append((os.path.join(base, os.path.relpath(path, lib)), path))
    return sorted(out)


# ---- reading and rendering ----------------------------------------------------------------

def open_compressed(path):
    if path.endswith(".gz"):
        import gzip
        return gzip.open(path, "rb")
    if path.endswith(".bz2"):
        import bz2
        return bz2.open(path, "rb")
    if path.endswith((".xz", ".lzma")):
        import lzma
        return lzma.open(path, "rb")
    return open(path, "rb")


def man_source(path):
    try:
        with open_compressed(path) as f:
            return f.read()
    except (OSError, EOFError, ValueError):
        return None


def is_alias(source):
    """A page that only includes another (`.so man1/other.1`): the other page's text."""
    lines = [l.strip() for l in source.splitlines()
             if l.strip() and not l.startswith((b'.\\"', b"'\\\""))]
    return len(lines) <= 2 and any(l.startswith(b".so ") for l in lines)


SGR = re.compile(r"\x1b\[[0-9;]*m")
OVERSTRIKE = re.compile(r".\x08")


def clean(text):
    """Plain text: no overstrike bold/underline, no SGR escapes, no trailing blanks."""
    text = OVERSTRIKE.sub("", SGR.sub("", text))
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n") + "\n"


class Renderer:
    """man pages to text with a fixed width and locale; `man -l` if man-db is installed,
    else mandoc, else groff -man."""

    def __init__(self, choice):
        found = {name: shutil.which(name) for name in ("man", "mandoc", "groff")}
        order = ["man", "mandoc", "groff"] if choice == "auto" else [choice]
        self.tool = next((t for t in order if found[t]), None)
        if self.tool is None:
            sys.exit(f"build_eval_corpus.py: no man page renderer ({', '.join(order)}) found; "
                     "install man-db (or mandoc, or groff), or leave out --sources man,man-l10n")
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8",
                    "LANG": "C.UTF-8", "MANWIDTH": str(WIDTH), "COLUMNS": str(WIDTH),
                    "MANPAGER": "cat", "PAGER": "cat", "MAN_KEEP_FORMATTING": "",
                    "MAN_DISABLE_SECCOMP": "1", "GROFF_NO_SGR": "1",
                    "HOME": os.environ.get("HOME", "/")}
        self.env = {k: v for k, v in self.env.items() if v != ""}
        self.version = self._version()

    def _version(self):
        argv = {"man": ["man", "--version"], "mandoc": None, "groff": ["groff", "--version"]}
        parts = []
        for cmd in (argv.get(self.tool), ["groff", "--version"] if self.tool == "man" else None):
            if cmd and shutil.which(cmd[0]):
                try:
                    out = subprocess.run(cmd, capture_output=True, text=True, env=self.env,
                                         timeout=30).stdout
                    parts.append(out.splitlines()[0] if out else cmd[0])
                except (OSError, subprocess.SubprocessError):
                    parts.append(cmd[0])
        return "; ".join(parts) or self.tool

    def render(self, path, source):
        if self.tool == "man":
            cmd, stdin = ["man", "-l", path], None
        elif self.tool == "mandoc":
            cmd, stdin = ["mandoc", "-T", "utf8", "-O", f"width={WIDTH}"], source
        else:
            cmd, stdin = ["groff", "-man", "-t", "-K", "utf-8", "-T", "utf8", "-P", "-c",
                          f"-rLL={WIDTH - 2}n", "-rLT={WIDTH - 2}n"], source
        try:
            done = subprocess.run(cmd, input=stdin, capture_output=True, env=self.env,
                                  timeout=120, cwd=os.path.dirname(path))
        except (OSError, subprocess.SubprocessError):
            return None
        if not done.stdout:
            return None
        return clean(done.stdout.decode("utf-8", "replace"))


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


# ---- building ------------------------------------------------------------------------------

def draw_order(files, seed):
    """The files in the order of a keyed hash of their relative path: a uniform draw that
    gives each file the same rank whatever else is installed."""
    def rank(item):
        return hashlib.blake2b(item[0].encode("utf-8", "surrogateescape"), digest_size=16,
                               key=str(seed).encode()).digest()
    return sorted(files, key=rank)


def collect(source, files, limit, args, renderer, skipped):
    """Up to `limit` documents of one source: (relative path, text, tokens)."""
    seen_real = set()
    unique = []
    for rel, path in files:  # sorted: the first path of a file reached twice wins
        if os.path.islink(path):
            skipped[source]["symlink"] += 1
            continue
        real = os.path.realpath(path)
        if real in seen_real:
            skipped[source]["same file"] += 1
            continue
        seen_real.add(real)
        unique.append((rel, path))
    docs = []
    started = time.time()
    for n, (rel, path) in enumerate(draw_order(unique, args.seed)):
        if len(docs) >= limit:
            break
        if source.startswith("man"):
            raw = man_source(path)
            if raw is None:
                skipped[source]["unreadable"] += 1
                continue
            if is_alias(raw):
                skipped[source]["alias (.so)"] += 1
                continue
            text = renderer.render(path, raw)
            if text is None:
                skipped[source]["not rendered"] += 1
                continue
        else:
            text = read_text(path)
            if text is None:
                skipped[source]["unreadable or binary"] += 1
                continue
        count = len(tokens(text))
        if count < args.min_tokens:
            skipped[source][f"< {args.min_tokens} tokens"] += 1
            continue
        if count > args.max_tokens:
            skipped[source][f"> {args.max_tokens} tokens"] += 1
            continue
        docs.append((rel, text, count))
        if source.startswith("man") and len(docs) % 500 == 0:
            log(f"  {source}: {len(docs)} rendered ({time.time() - started:.0f} s)")
    return docs, len(unique)


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0


def machine():
    info = {"date": datetime.date.today().isoformat(), "kernel": platform.release(),
            "python": platform.python_version()}
    for key, path in (("debian_version", "/etc/debian_version"),):
        try:
            info[key] = open(path).read().strip()
        except OSError:
            pass
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                info["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return info


def parse_max(spec):
    limits = dict(DEFAULT_MAX)
    for part in filter(None, (spec or "").split(",")):
        name, _, value = part.partition("=")
        if name not in SOURCES or not value.isdigit():
            sys.exit(f"build_eval_corpus.py: --max-docs expects SOURCE=N,... with SOURCE in "
                     f"{', '.join(SOURCES)}; got {part!r}")
        limits[name] = int(value)
    return limits


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=1,
                        help="draws each source's files and shuffles the ids (default 1)")
    parser.add_argument("--max-docs", metavar="SOURCE=N,...",
                        help="documents per source (default " +
                        ",".join(f"{k}={v}" for k, v in DEFAULT_MAX.items()) + ")")
    parser.add_argument("--sources", default=",".join(SOURCES),
                        help=f"comma-separated subset of {','.join(SOURCES)}")
    parser.add_argument("--min-tokens", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=50000)
    parser.add_argument("--renderer", choices=("auto", "man", "mandoc", "groff"),
                        default="auto", help="man page renderer (default: man, mandoc, groff)")
    parser.add_argument("--man-root", default="/usr/share/man")
    parser.add_argument("--doc-root", default="/usr/share/doc")
    parser.add_argument("--python-lib", action="append", metavar="DIR",
                        help="a standard library directory (repeatable; default every "
                        "/usr/lib/python3.N)")
    parser.add_argument("--check", type=int, default=0, metavar="N",
                        help="exact_truth.py --check N: compare N documents with all others by "
                        "brute force")
    args = parser.parse_args()
    sources = [s for s in args.sources.split(",") if s]
    for s in sources:
        if s not in SOURCES:
            sys.exit(f"build_eval_corpus.py: unknown source {s!r} (one of {', '.join(SOURCES)})")
    limits = parse_max(args.max_docs)
    lib_dirs = args.python_lib or sorted(
        (d for d in glob.glob("/usr/lib/python3.*") if re.fullmatch(r".*/python3\.\d+", d)),
        key=lambda d: int(d.rsplit(".", 1)[1]))
    out = args.out_dir
    os.makedirs(out, exist_ok=True)
    started = time.time()

    renderer = Renderer(args.renderer) if any(s.startswith("man") for s in sources) else None
    listings = {
        "man": lambda: man_files(args.man_root, translations=False),
        "man-l10n": lambda: man_files(args.man_root, translations=True),
        "copyright": lambda: copyright_files(args.doc_root),
        "python-lib": lambda: python_files(lib_dirs),
    }
    skipped = defaultdict(Counter)
    available = {}
    documents = []  # (source, relative path, text, tokens)
    for source in sources:
        files = listings[source]()
        log(f"{source}: {len(files)} files, taking up to {limits[source]}")
        docs, available[source] = collect(source, files, limits[source], args, renderer, skipped)
        log(f"{source}: {len(docs)} documents")
        documents.extend((source, rel, text, count) for rel, text, count in docs)
    if not documents:
        sys.exit("build_eval_corpus.py: no documents found")
    # Ids after a seeded shuffle of a canonical order (source, path).
    documents.sort(key=lambda d: (d[0], d[1]))
    random.Random(args.seed).shuffle(documents)
    width = max(5, len(str(len(documents))))
    ids = [f"p{i:0{width}d}" for i in range(1, len(documents) + 1)]

    et = exact_truth()
    docs_path = os.path.join(out, "docs.jsonl")
    digest = hashlib.sha256()
    with open(docs_path, "w", encoding="utf-8") as f:
        for id, (_, _, text, _) in zip(ids, documents):
            line = json.dumps({"id": id, "text": text}, ensure_ascii=False) + "\n"
            f.write(line)
            digest.update(line.encode("utf-8"))
    source_of = {}
    shingle_counts = {}
    text_groups = defaultdict(list)
    with open(os.path.join(out, "meta.tsv"), "w", encoding="utf-8") as f:
        f.write("id\tsource\tpath\ttokens\tshingles\n")
        for id, (source, rel, text, count) in zip(ids, documents):
            source_of[id] = source
            shingle_counts[id] = len(et.shingles(text))
            text_groups[hashlib.sha256(text.encode("utf-8")).digest()].append(id)
            clean_rel = rel.replace("\t", " ").replace("\n", " ")
            f.write(f"{id}\t{source}\t{clean_rel}\t{count}\t{shingle_counts[id]}\n")
    log(f"{len(documents)} documents written ({time.time() - started:.0f} s); exact truth...")

    gt_path = os.path.join(out, "gt_pairs.tsv")
    truth_started = time.time()
    cmd = [sys.executable, os.path.join(SCRIPTS, "exact_truth.py"), docs_path, gt_path]
    if args.check:
        cmd += ["--check", str(args.check)]
    truth = subprocess.run(cmd, capture_output=True, text=True)
    if truth.returncode != 0:
        sys.exit(f"build_eval_corpus.py: exact_truth.py failed:\n{truth.stdout}{truth.stderr}")
    log(truth.stdout.strip())
    truth_seconds = time.time() - truth_started

    # Pairs per threshold, in total and per pair of sources; J = 1 groups from the J = 1 pairs
    # (identical shingle sets: equality, so each group is a clique of such pairs).
    bands = (("0.5", 1, 2), ("0.8", 4, 5), ("0.9", 9, 10))
    totals = Counter()
    by_sources = defaultdict(Counter)
    histogram = Counter()
    parent = {}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    partners = Counter()
    with open(gt_path, encoding="utf-8") as f:
        for line in f:
            a, b, _, inter, union = line.rstrip("\n").split("\t")
            inter, union = int(inter), int(union)
            pair = " / ".join(sorted({source_of[a], source_of[b]}))
            for name, num, den in bands:
                if inter * den >= num * union:
                    totals[f"pairs_j_ge_{name}"] += 1
                    by_sources[pair][f"pairs_j_ge_{name}"] += 1
            if inter * 5 >= 4 * union:
                partners[a] += 1
                partners[b] += 1
            if inter == union:
                totals["pairs_j_eq_1"] += 1
                by_sources[pair]["pairs_j_eq_1"] += 1
                parent.setdefault(a, a)
                parent.setdefault(b, b)
                parent[find(a)] = find(b)
                histogram["1.0"] += 1
            else:
                histogram[f"[{min(9, inter * 10 // union) / 10:.1f},"
                          f"{min(9, inter * 10 // union) / 10 + 0.1:.1f})"] += 1
    groups = defaultdict(list)
    for x in list(parent):
        groups[find(x)].append(x)
    groups = sorted(sorted(g) for g in groups.values())
    with open(os.path.join(out, "exact_dups.tsv"), "w", encoding="utf-8") as f:
        for g in groups:
            f.write("\t".join(g) + "\n")
    identical = [g for g in text_groups.values() if len(g) > 1]

    per_source = {}
    for source in sources:
        counts = [d[3] for d in documents if d[0] == source]
        per_source[source] = {
            "files": available[source], "docs": len(counts),
            "max_docs": limits[source],
            "median_tokens": percentile(counts, 0.5), "p90_tokens": percentile(counts, 0.9),
            "skipped": dict(sorted(skipped[source].items())),
        }
    all_tokens = [d[3] for d in documents]
    summary = {
        "docs": len(documents),
        "docs_per_source": {s: per_source[s]["docs"] for s in sources},
        "pairs_j_ge_0.5": totals["pairs_j_ge_0.5"],
        "pairs_j_ge_0.8": totals["pairs_j_ge_0.8"],
        "pairs_j_ge_0.9": totals["pairs_j_ge_0.9"],
        "pairs_j_eq_1": totals["pairs_j_eq_1"],
        "j_histogram": {k: histogram[k] for k in sorted(histogram)},
        "pairs_by_sources": {k: dict(sorted(v.items())) for k, v in sorted(by_sources.items())},
        "docs_with_a_partner_at_j_ge_0.8": len(partners),
        "most_partners_at_j_ge_0.8": max(partners.values(), default=0),
        "exact_dup_groups": len(groups),
        "docs_in_exact_dup_groups": sum(len(g) for g in groups),
        "exact_dup_pairs": totals["pairs_j_eq_1"],
        "identical_text_groups": len(identical),
        "docs_in_identical_text_groups": sum(len(g) for g in identical),
        "tokens": {"min": min(all_tokens), "median": percentile(all_tokens, 0.5),
                   "mean": round(sum(all_tokens) / len(all_tokens)),
                   "p90": percentile(all_tokens, 0.9), "max": max(all_tokens)},
        "text_bytes": sum(len(d[2].encode("utf-8")) for d in documents),
        "per_source": per_source,
        "parameters": {"seed": args.seed, "max_docs": {s: limits[s] for s in sources},
                       "min_tokens": args.min_tokens, "max_tokens": args.max_tokens,
                       "renderer": renderer.tool if renderer else None,
                       "renderer_version": renderer.version if renderer else None,
                       "man_width": WIDTH, "man_root": args.man_root,
                       "doc_root": args.doc_root, "python_lib": lib_dirs},
        "machine": machine(),
        "docs_jsonl_sha256": digest.hexdigest(),
        "seconds": round(time.time() - started, 1),
        "truth_seconds": round(truth_seconds, 1),
    }
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, ensure_ascii=False)
        f.write("\n")

    m = summary["machine"]
    print(f"corpus {out}: {summary['docs']:,} documents, "
          f"{summary['text_bytes'] / 1e6:.1f} MB of text "
          f"({m.get('os', '?')}, Debian {m.get('debian_version', '?')}, kernel {m['kernel']}, "
          f"{m['date']}; seed {args.seed})")
    for s in sources:
        p = per_source[s]
        print(f"  {s:<11} {p['docs']:>6,} documents of {p['files']:,} files "
              f"(median {p['median_tokens']:,} tokens, p90 {p['p90_tokens']:,})")
    print(f"  pairs: J >= 0.5: {summary['pairs_j_ge_0.5']:,} · J >= 0.8: "
          f"{summary['pairs_j_ge_0.8']:,} · J >= 0.9: {summary['pairs_j_ge_0.9']:,} · "
          f"J = 1: {summary['pairs_j_eq_1']:,}")
    for pair, counts in summary["pairs_by_sources"].items():
        print(f"    {pair:<24} J >= 0.5: {counts.get('pairs_j_ge_0.5', 0):,} · 0.8: "
              f"{counts.get('pairs_j_ge_0.8', 0):,} · 0.9: {counts.get('pairs_j_ge_0.9', 0):,}"
              f" · 1: {counts.get('pairs_j_eq_1', 0):,}")
    print(f"  exact duplicates (identical shingle sets): {len(groups):,} groups, "
          f"{summary['docs_in_exact_dup_groups']:,} documents; identical texts: "
          f"{len(identical):,} groups")
    print(f"  docs.jsonl sha256 {summary['docs_jsonl_sha256'][:16]}…, {summary['seconds']} s")


if __name__ == "__main__":
    main()
