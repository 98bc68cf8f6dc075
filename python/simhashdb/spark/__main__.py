"""``python -m simhashdb.spark {fingerprint,audit,clusters,dedup}``: the jobs on Parquet in and
out.

Runs as a Spark driver itself (``--master URL``), or under ``spark-submit`` (which sets the
master). Exit status: 0 done, 1 bad input or a failed job (the error on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import List, Optional


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m simhashdb.spark",
        description="simhashdb's offline jobs on Spark, Parquet in and out.",
    )
    p.add_argument(
        "job",
        choices=["fingerprint", "audit", "clusters", "dedup"],
        help="fingerprint: (id, text) -> (id, fingerprint); audit: (id, fingerprint) -> "
        "(id_a, id_b, distance); clusters: (id, fingerprint) or (id_a, id_b) -> (cluster_id, id); "
        "dedup: documents -> the rows a dedup keeps, every column (and --duplicates: id, kept_id, "
        "distance, jaccard[, reference with --against])",
    )
    p.add_argument("--master", help="Spark master URL (spark://HOST:PORT, yarn, k8s://..., "
                   "local[N]); default: what spark-submit or the environment sets")
    p.add_argument("--input", required=True, help="a Parquet file or a directory of part files")
    p.add_argument("--output", required=True, help="the directory the Parquet parts go to")
    p.add_argument("--distance", type=int, default=3, metavar="D",
                   help="largest distance to report (default 3)")
    p.add_argument("--blocks", type=int, metavar="M",
                   help="blocks per fingerprint, more than D (default: the cheapest for the input)")
    p.add_argument("--id-column", default="id", metavar="NAME")
    p.add_argument("--fingerprint-column", default=None, metavar="NAME",
                   help="the fingerprints (default fingerprint)")
    p.add_argument("--text-column", default=None, metavar="NAME",
                   help="the texts (default text); dedup fingerprints them when given")
    p.add_argument("--scheme", metavar="NAME",
                   help="fingerprint scheme, as `simhashdb init --scheme` or a store records it "
                   "(default words-2-minhash); dedup fingerprints the texts when given")
    p.add_argument("--duplicates", metavar="DIR",
                   help="dedup: also write (id, kept_id, distance, jaccard) of every document "
                   "dropped to DIR")
    p.add_argument("--against", action="append", metavar="REF",
                   help="dedup: also drop a document near a row of REF, a corpus kept before "
                   "(Parquet of id, fingerprint and optionally batch and sketch, as `simhashdb "
                   "export --sketch` writes it, or an earlier job's kept rows); REF's rows are "
                   "never dropped, are read where they lie (never shuffled), and --duplicates "
                   "names the REF matched in a column reference; repeatable")
    p.add_argument("--order-by", metavar="COLUMN",
                   help="dedup: take documents by (COLUMN, id), smallest first (default: by "
                   "id); a document is dropped when one kept before it is near it")
    p.add_argument("--min-jaccard", type=float, metavar="J",
                   help="dedup: a match must also have sketches estimating at least this word "
                   "3-shingle Jaccard (needs --text-column: sketches are computed from texts)")
    p.add_argument("--sketch-bytes", type=int, metavar="N",
                   help="dedup --min-jaccard: bytes per sketch, 64 to 1024 (default 128, as "
                   "`init --sketch`)")
    p.add_argument("--chunk-rows", type=int, default=None, metavar="N",
                   help="rows per chunk of a hot bucket (default 2048)")
    p.add_argument("--no-arrow", action="store_true",
                   help="fingerprint: read the input through Spark and hand executors pickled "
                   "rows (for executors without pyarrow), instead of reading the Parquet in "
                   "the tasks")
    p.add_argument("--overwrite", action="store_true", help="replace --output if it exists")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting (repeatable)")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    args = parser().parse_args(argv)
    usage = parser().error
    if not 0 <= args.distance <= 63:
        usage(f"--distance {args.distance}: expected 0 to 63")
    if args.blocks is not None and not args.distance < args.blocks <= 64:
        usage(f"--blocks {args.blocks}: must be more than --distance ({args.distance}) and at most 64")
    if args.chunk_rows is not None and args.chunk_rows < 1:
        usage(f"--chunk-rows {args.chunk_rows}: expected at least 1")
    settings = []
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            usage(f"--conf {item!r}: expected KEY=VALUE")
        settings.append((key, value))
    if args.job == "fingerprint" or args.scheme is not None:
        from .. import scheme_name

        try:
            scheme_name(args.scheme)
        except ValueError as e:
            usage(f"--scheme: {e}")
    if args.job != "dedup":
        for flag, value in (("--duplicates", args.duplicates), ("--order-by", args.order_by),
                            ("--against", args.against),
                            ("--min-jaccard", args.min_jaccard),
                            ("--sketch-bytes", args.sketch_bytes)):
            if value is not None:
                usage(f"{flag} is for dedup")
    if args.sketch_bytes is not None and args.min_jaccard is None:
        usage("--sketch-bytes sizes the sketches --min-jaccard verifies with: give --min-jaccard")
    if args.sketch_bytes is not None and not 64 <= args.sketch_bytes <= 1024:
        usage(f"--sketch-bytes {args.sketch_bytes}: expected 64 to 1024")
    if args.min_jaccard is not None:
        if not 0.0 <= args.min_jaccard <= 1.0:
            usage(f"--min-jaccard {args.min_jaccard}: expected a number from 0 to 1")
        if args.text_column is None and args.scheme is None:
            usage("--min-jaccard verifies matches with sketches of the texts, which "
                  "fingerprints alone do not have: give --text-column (and --scheme)")
    text = args.text_column is not None or args.scheme is not None
    if args.job == "dedup" and text and args.fingerprint_column is not None:
        usage("--fingerprint-column and --text-column/--scheme: give one way to the fingerprints")
    if args.job in ("audit", "clusters") and (args.text_column or args.scheme):
        usage(f"{args.job} reads fingerprints (--fingerprint-column); fingerprint the texts "
              "first, or use dedup")
    for flag, value in (("--output", args.output), ("--duplicates", args.duplicates)):
        if value is not None and os.path.abspath(value) == os.path.abspath(args.input):
            usage(f"{flag} {value} is the input")
    if args.duplicates is not None and os.path.abspath(args.duplicates) == os.path.abspath(args.output):
        usage("--duplicates and --output name the same directory")
    for ref in args.against or []:
        for flag, value in (("--input", args.input), ("--output", args.output),
                            ("--duplicates", args.duplicates)):
            if value is not None and os.path.abspath(value) == os.path.abspath(ref):
                usage(f"--against {ref} is {flag}")
        if not os.path.exists(ref):
            usage(f"--against {ref}: no such file or directory")
    if args.against and len(set(map(os.path.abspath, args.against))) < len(args.against):
        usage("--against names one reference twice")

    from pyspark.sql import SparkSession
    from pyspark.errors import PySparkException

    builder = SparkSession.builder.appName(f"simhashdb {args.job}")
    if args.master:
        builder = builder.master(args.master)
    if "PYSPARK_PYTHON" not in os.environ:
        # Executors run this interpreter unless told otherwise (it has simhashdb installed).
        # The setting reaches executors a cluster starts; a local master's workers are started
        # by this driver, which reads the environment.
        builder = builder.config("spark.pyspark.python", sys.executable)
        os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    # Arrow batches of 50,000 rows: the engine's calls cost per batch, not per row.
    builder = builder.config("spark.sql.execution.arrow.maxRecordsPerBatch", "50000")
    # A task's native code uses the cores Spark gave the task, not every core of the machine
    # (which other tasks are using).
    builder = builder.config("spark.executorEnv.RAYON_NUM_THREADS",
                             dict(settings).get("spark.task.cpus", "1"))
    for key, value in settings:
        builder = builder.config(key, value)
    started = time.monotonic()
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        rows = run(spark, args)
    except (ValueError, PySparkException) as e:
        print(f"simhashdb.spark {args.job}: {_first_line(e)}", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    print(
        f"simhashdb.spark {args.job}: {rows} rows to {args.output} in "
        f"{time.monotonic() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


def run(spark, args) -> int:
    from . import CHUNK_ROWS, audit, clusters, dedup, fingerprint

    what = args.input
    if args.job == "fingerprint" and not args.no_arrow:
        from .. import scheme_name
        from .direct import fingerprint_files

        rows = fingerprint_files(spark, args.input, args.output, scheme_name(args.scheme),
                                 args.id_column, args.text_column or "text", args.overwrite,
                                 what)
        if rows is not None:
            return rows
    df = spark.read.parquet(args.input)
    chunk_rows = args.chunk_rows or CHUNK_ROWS
    mode = "overwrite" if args.overwrite else "errorifexists"
    fingerprint_column = args.fingerprint_column or "fingerprint"
    if args.job == "fingerprint":
        out = fingerprint(df, args.scheme, id_column=args.id_column,
                          text_column=args.text_column or "text",
                          arrow=False if args.no_arrow else None, what=what)
    elif args.job == "audit":
        out = audit(df, args.distance, args.blocks, id_column=args.id_column,
                    fingerprint_column=fingerprint_column, chunk_rows=chunk_rows, what=what)
    elif args.job == "clusters":
        out = clusters(df, args.distance, args.blocks, id_column=args.id_column,
                       fingerprint_column=fingerprint_column, chunk_rows=chunk_rows,
                       what=what)
    else:
        out, dropped = dedup(df, args.distance, args.blocks, id_column=args.id_column,
                             fingerprint_column=fingerprint_column,
                             text_column=args.text_column, scheme=args.scheme,
                             order_by=args.order_by, min_jaccard=args.min_jaccard,
                             sketch_bytes=args.sketch_bytes or 128, chunk_rows=chunk_rows,
                             what=what,
                             against={ref: spark.read.parquet(ref) for ref in args.against}
                             if args.against else None)
        if args.duplicates is not None:
            dropped.write.mode(mode).parquet(args.duplicates)
    out.write.mode(mode).parquet(args.output)
    return spark.read.parquet(args.output).count()


def _first_line(error: Exception) -> str:
    """The message of a Spark error without its JVM stack (which follows on later lines), and
    of a failed Python task, the exception the task raised."""
    text = str(error)
    for line in text.splitlines():
        if line.startswith("ValueError: "):
            return line[len("ValueError: "):]
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


if __name__ == "__main__":
    sys.exit(main())
