"""The fingerprint job reading and writing Parquet in the tasks themselves.

Spark's own Parquet reader decodes a string column more slowly than the engine fingerprints
the texts (docs/benchmarks.md, "Spark"). So when pyarrow can open the input
and the output (local paths, ``file://``, ``hdfs://``, ``s3://``, ``gs://``...), the job cuts
the input's row groups into tasks of about ``TASK_BYTES``, and each task reads its row groups
with pyarrow, hands the columns to the engine through the Arrow C Data Interface, and writes
its part of the output: Spark only schedules the tasks. Parts are written under
``OUTPUT/_temporary/`` and moved into place when every task has succeeded, as Spark's own
committer does; a failed job leaves no output. Other inputs (``s3a://``, tables) take the
DataFrame path (``mapInArrow``), with the same answers.
"""

from __future__ import annotations

import os
import uuid
from typing import List, Optional, Tuple

from .. import _native
from .columns import not_text, require

# Uncompressed bytes of row groups per task.
TASK_BYTES = 128 << 20

# Rows a task reads and fingerprints at a time.
BATCH_ROWS = 8192


def filesystem(path: str):
    """(pyarrow filesystem, path within it) for ``path``, or None when pyarrow cannot open it."""
    import pyarrow as pa
    import pyarrow.fs as pafs

    if "://" not in path:
        return pafs.LocalFileSystem(), os.path.abspath(path)
    try:
        return pafs.FileSystem.from_uri(path)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, ValueError):
        return None


def fingerprint_files(spark, input: str, output: str, scheme: str, id_column: str,
                      text_column: str, overwrite: bool, what: str) -> Optional[int]:
    """Fingerprints the Parquet at ``input`` into ``output`` (a directory of parts: id,
    fingerprint), reading and writing in the tasks; returns the rows written, or None when
    pyarrow cannot open the input or the output (the caller takes the DataFrame path)."""
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs

    source, target = filesystem(input), filesystem(output)
    if source is None or target is None:
        return None
    fs, root = source
    out_fs, out_root = target
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.NotFound:
        raise ValueError(f"{input}: no such file or directory")
    dataset = ds.dataset(root, filesystem=fs, format="parquet")
    schema = dataset.schema
    require(schema.names, id_column, "id", what)
    require(schema.names, text_column, "text", what)
    kind = schema.field(text_column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)
            or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
        raise not_text(text_column, str(kind), what)
    tasks = _tasks(dataset)
    if out_fs.get_file_info(out_root).type != pafs.FileType.NotFound:
        if not overwrite:
            raise ValueError(f"{output} already exists (--overwrite replaces it)")
        _delete(out_fs, out_root)
    temporary = f"{out_root}/_temporary/{uuid.uuid4().hex}"
    out_fs.create_dir(temporary, recursive=True)
    def run(task: Tuple[int, str, List[int]]) -> int:
        return _fingerprint_task(task, input, output, temporary, scheme, id_column, text_column)

    try:
        rows = spark.sparkContext.parallelize(tasks, max(len(tasks), 1)).map(run).collect()
        for index, _, _ in tasks:
            out_fs.move(f"{temporary}/part-{index:05d}.parquet",
                        f"{out_root}/part-{index:05d}.parquet")
        _delete(out_fs, f"{out_root}/_temporary")
        with out_fs.open_output_stream(f"{out_root}/_SUCCESS"):
            pass
    except BaseException:
        _delete(out_fs, out_root)
        raise
    return sum(rows)


def _tasks(dataset) -> List[Tuple[int, str, List[int]]]:
    """(index, file, row groups) per task: consecutive row groups of one file, about
    ``TASK_BYTES`` of them."""
    tasks: List[Tuple[int, str, List[int]]] = []
    for fragment in dataset.get_fragments():
        group: List[int] = []
        size = 0
        for rg in fragment.row_groups:
            group.append(rg.id)
            size += rg.total_byte_size
            if size >= TASK_BYTES:
                tasks.append((len(tasks), fragment.path, group))
                group, size = [], 0
        if group or not fragment.row_groups:
            tasks.append((len(tasks), fragment.path, group))
    return tasks


def _fingerprint_task(task, input_uri: str, output_uri: str, temporary: str, scheme: str,
                      id_column: str, text_column: str) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    index, path, row_groups = task
    fs, _ = filesystem(input_uri)
    out_fs, _ = filesystem(output_uri)
    source = pq.ParquetFile(path, filesystem=fs)
    id_type = source.schema_arrow.field(id_column).type
    schema = pa.schema([("id", id_type), ("fingerprint", pa.int64(), False)])
    rows = 0
    with pq.ParquetWriter(f"{temporary}/part-{index:05d}.parquet", schema, filesystem=out_fs,
                          compression="snappy") as writer:
        if not row_groups:
            return 0
        # A batch at a time, decoded on this task's thread: each batch is fingerprinted while
        # its texts are still in the cache, and an executor's one core is not shared with
        # pyarrow's decoding threads (a whole row group decoded at once took twice as long).
        batches = source.iter_batches(batch_size=BATCH_ROWS, row_groups=row_groups,
                                      columns=[id_column, text_column], use_threads=False)
        for batch in batches:
            ids, texts = batch.column(0), batch.column(1)
            fps = pa.array(_native.fingerprint_arrow(ids, texts, scheme, text_column))
            writer.write_batch(pa.RecordBatch.from_arrays([ids, fps], schema=schema))
            rows += batch.num_rows
    return rows


def _delete(fs, path: str) -> None:
    import pyarrow.fs as pafs

    info = fs.get_file_info(path)
    if info.type == pafs.FileType.Directory:
        fs.delete_dir(path)
    elif info.type == pafs.FileType.File:
        fs.delete_file(path)
