"""simhashdb inside datatrove pipelines: near-duplicate removal against a persistent store.

Three steps, in three stages of any datatrove executor (local or Slurm; tasks are separate
processes, and no store handle crosses between them):

1. :class:`SimhashSignature`, in every task after the reader: each document's fingerprint (and
   sketch, in a store made with ``init --sketch``) computed natively with the store's scheme, a
   batch at a time, and written to ``FOLDER/RANK.parquet`` with its id and its position in the
   task's stream. Documents pass on unchanged.
2. :class:`SimhashDedup`, in a stage of one task: ``simhashdb dedup`` of every signature file
   in (task, position) order against the store (``insert=True`` remembers the kept ones as one
   batch), then each task's drop list written to ``FOLDER/RANK.drops.parquet``.
3. :class:`SimhashFilter`, in every task after the same reader with the same task count:
   drops the listed documents, sending them to the exclusion writer with metadata
   ``duplicate_of``, ``distance``, ``duplicate_batch`` (the batch that stored the match, None
   for a match of this input) and, in a verified dedup, ``jaccard``.

The documents kept are exactly those ``simhashdb dedup`` keeps of the documents in (task,
position) order, into the same store: the same input and task count keep the same documents.
Folders and the store are local paths (a shared file system for tasks on several machines).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from typing import Any, Dict, List, Optional

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from . import _native
from ._store import Store

# How a signature file records the task count and the scheme it was written under.
_WORLD_SIZE = b"simhashdb.world_size"
_SCHEME = b"simhashdb.scheme"
# The longest id a store takes (bytes of UTF-8).
_MAX_ID_BYTES = 1024
_SIGNATURE = re.compile(r"^(\d{5})\.parquet$")


def _signature_path(folder: str, rank: int) -> str:
    return os.path.join(folder, f"{rank:05d}.parquet")


def _drops_path(folder: str, rank: int) -> str:
    return os.path.join(folder, f"{rank:05d}.drops.parquet")


def _scheme_of(store_path: str) -> tuple[str, int]:
    """The scheme the store fingerprints text with, and its sketch bytes (0: none)."""
    with Store.open(store_path) as store:
        return store.scheme, store.stats().get("sketch_bytes") or 0


def _read(path: str, columns: Optional[List[str]] = None) -> pa.Table:
    """A Parquet file's table (through ParquetFile: pq.read_table imports pyarrow.dataset,
    which costs a task more than its documents take)."""
    return pq.ParquetFile(path).read(columns=columns)


def _identity(files: List[str]) -> List[List[Any]]:
    """The signature files as a dedup's record names them: name, size, modification time."""
    return [[os.path.basename(f), os.stat(f).st_size, os.stat(f).st_mtime_ns] for f in files]


def _write_json_whole(value: Any, path: str) -> None:
    """Writes ``value`` as JSON to ``path`` whole or not at all."""
    tmp = path + ".tmp"
    with open(tmp, "w") as out:
        json.dump(value, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def _write_whole(table: pa.Table, path: str) -> None:
    """Writes ``table`` to ``path`` whole or not at all (a temporary file renamed onto it)."""
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".parquet", dir=folder)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.chmod(tmp, 0o644)  # as a file made with open() would be, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class SimhashSignature(PipelineStep):
    """Step 1: each document's fingerprint (and sketch, when ``store`` keeps them) with the
    store's scheme, written to ``folder/RANK.parquet`` (columns ``id``, ``fingerprint``,
    ``sketch`` in a store with sketches, ``rank``, ``position``) in the task's order. The text
    is fingerprinted natively, ``batch_size`` documents a call, with the GIL released. A
    document's store id is its ``id``, which should be unique in the store (with ``insert``,
    a later document under a stored id replaces it); a document without an id, with an id the
    store cannot take, or with no letter or digit fails the task, naming it."""

    name = "🔏 simhashdb signature"
    type = "🫂 - DEDUP"

    def __init__(self, folder: str, store: str, batch_size: int = 8192) -> None:
        super().__init__()
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size: expected a positive int, got {batch_size!r}")
        self.folder = os.fspath(folder)
        self.store = os.fspath(store)
        self.batch_size = batch_size

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        scheme, sketch_bytes = _scheme_of(self.store)
        os.makedirs(self.folder, exist_ok=True)
        schema = pa.schema(
            [
                ("id", pa.string()),
                ("fingerprint", pa.int64()),
                *([("sketch", pa.binary())] if sketch_bytes else []),
                ("rank", pa.int32()),
                ("position", pa.int64()),
            ],
            metadata={
                _WORLD_SIZE: str(world_size).encode(),
                _SCHEME: f"{scheme} {sketch_bytes}".encode(),
            },
        )
        parts: List[pa.RecordBatch] = []
        ids: List[str] = []
        texts: List[str] = []
        position = 0

        def flush() -> None:
            nonlocal position
            if not ids:
                return
            id_array, text_array = pa.array(ids, pa.string()), pa.array(texts, pa.string())
            with self.track_time("batch"):
                if sketch_bytes:
                    fps, sketches = _native.fingerprint_sketch_arrow(
                        id_array, text_array, scheme, sketch_bytes, "text"
                    )
                    sketched = [pa.array(sketches)]
                else:
                    fps = _native.fingerprint_arrow(id_array, text_array, scheme, "text")
                    sketched = []
            n = len(ids)
            columns = [
                id_array,
                pa.array(fps),
                *sketched,
                pa.array(np.full(n, rank, dtype=np.int32)),
                pa.array(np.arange(position, position + n, dtype=np.int64)),
            ]
            parts.append(pa.RecordBatch.from_arrays(columns, schema=schema))
            position += n
            ids.clear()
            texts.clear()

        for doc in data:
            self.stat_update("documents")
            ids.append(_checked_id(doc.id, rank, position + len(ids)))
            texts.append(doc.text)
            if len(ids) == self.batch_size:
                flush()
            yield doc
        flush()
        _write_whole(pa.Table.from_batches(parts, schema), _signature_path(self.folder, rank))


def _checked_id(id: Any, rank: int, position: int) -> str:
    """A document's id as the store takes it, else ValueError naming the document."""
    problem = None
    if not isinstance(id, str) or not id:
        problem = "has no id (the store names documents by id: give them unique ids)"
    elif any(c in id for c in "\t\r\n"):
        problem = f"has the id {id!r}, with a tab or a line end, which ids may not hold"
    elif len(id.encode()) > _MAX_ID_BYTES:
        problem = f"has an id of {len(id.encode())} bytes; at most {_MAX_ID_BYTES} are allowed"
    if problem:
        raise ValueError(f"task {rank}, document {position}: the document {problem}")
    return id


class SimhashDedup(PipelineStep):
    """Step 2, in a stage of one task: ``simhashdb dedup`` of the signature files of every task
    of step 1 (in task order, each in its order) against ``store``, greedy as the CLI's: a
    document is dropped when a stored document or an earlier kept one is within ``distance``
    bits (default the store's K) and, with ``min_jaccard`` (a store with sketches), their
    sketches estimate at least that Jaccard. ``insert`` stores the kept documents as one batch
    labelled ``label``, atomically with the check. Writes each task's drop list to
    ``folder/RANK.drops.parquet``, every dropped document to ``folder/duplicates.parquet``
    (``dedup --duplicates X.parquet``: its ``id`` column is the ids-to-remove list of NeMo
    Curator's removal workflow) and its record, ``folder/dedup.json`` (``{"summary"}`` as
    ``dedup --json`` prints it, and the signature files it decided): a rerun of a finished
    dedup does nothing (delete the record to redo it)."""

    name = "🔍 simhashdb dedup"
    type = "🫂 - DEDUP"

    def __init__(
        self,
        folder: str,
        store: str,
        *,
        insert: bool = False,
        label: Optional[str] = None,
        distance: Optional[int] = None,
        min_jaccard: Optional[float] = None,
    ) -> None:
        super().__init__()
        if label is not None and not insert:
            raise ValueError("label: a label names the batch a dedup inserts: add insert=True")
        self.folder = os.fspath(folder)
        self.store = os.fspath(store)
        self.insert = insert
        self.label = label
        self.distance = distance
        self.min_jaccard = min_jaccard

    def signature_files(self) -> List[str]:
        """The signature files of step 1, in task order; ValueError unless every task of one
        run wrote one."""
        if not os.path.isdir(self.folder):
            raise FileNotFoundError(f"{self.folder}: no signatures (run SimhashSignature first)")
        ranks = sorted(int(m.group(1)) for m in map(_SIGNATURE.match, os.listdir(self.folder)) if m)
        if not ranks:
            raise ValueError(f"{self.folder}: no signature file (run SimhashSignature first)")
        metadata = [pq.read_schema(_signature_path(self.folder, r)).metadata for r in ranks]
        world_sizes = {int(m[_WORLD_SIZE]) for m in metadata}
        schemes = {m[_SCHEME].decode() for m in metadata}
        if len(world_sizes) != 1 or ranks != list(range(next(iter(world_sizes)))):
            raise ValueError(
                f"{self.folder}: signature files of tasks {ranks}, written under task counts "
                f"{sorted(world_sizes)}: every task of one SimhashSignature stage must have run "
                "(and no other stage's files be there)"
            )
        ours = "{} {}".format(*_scheme_of(self.store))
        if schemes != {ours}:
            raise ValueError(
                f"{self.folder}: the signatures were made with scheme and sketch bytes "
                f"{sorted(schemes)}, and {self.store} fingerprints with {ours!r}: give "
                "SimhashSignature and SimhashDedup the same store"
            )
        return [_signature_path(self.folder, r) for r in ranks]

    def run(self, data: DocumentsPipeline = None, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        if world_size != 1:
            raise ValueError(f"SimhashDedup runs in a stage of one task, not {world_size}")
        files = self.signature_files()
        # A dedup is done once per set of signatures: a rerun after it finished (its record
        # names these signature files) does nothing, for a second dedup would find every
        # document in the batch the first inserted. The dedup's outputs are in place before
        # its commit; a run killed after the commit, short of its record, is found on the
        # rerun (the pending note, the batch it committed) and finishes from them.
        kept = os.path.join(self.folder, "dedup.kept.parquet")
        dropped = os.path.join(self.folder, "duplicates.parquet")
        pending = os.path.join(self.folder, "dedup.pending.json")
        record = os.path.join(self.folder, "dedup.json")
        signatures = _identity(files)
        summary = self._finished(record, signatures, len(files))
        if summary is None:
            with Store.open(self.store) as store:
                summary = self._committed_before(store, pending, kept, dropped, files)
                if summary is None:
                    last = max((b["batch"] for b in store.batches()), default=0)
                    with open(pending, "w") as out:
                        json.dump({"last_batch": last, "label": self.label}, out)
                    with self.track_time("dedup"):
                        summary = store.dedup_file(
                            files,
                            kept,
                            dropped,
                            insert=self.insert,
                            label=self.label,
                            distance=self.distance,
                            min_jaccard=self.min_jaccard,
                            format="parquet",
                            allow_empty=True,
                        )
            self._write_drop_lists(files, kept, dropped)
            _write_json_whole({"summary": summary, "signatures": signatures}, record)
            for done in (kept, pending):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(done)
        self.stat_update("documents", value=summary["read"])
        self.stat_update("kept", value=summary["kept"])
        self.stat_update("dropped", value=summary["read"] - summary["kept"])
        if data:
            yield from data

    def _finished(self, record: str, signatures: List, tasks: int) -> Optional[Dict[str, Any]]:
        """The summary of a finished dedup of these signature files, if one is recorded."""
        if not os.path.exists(record):
            return None
        with open(record) as f:
            done = json.load(f)
        drop_lists = all(os.path.exists(_drops_path(self.folder, r)) for r in range(tasks))
        if done.get("signatures") != signatures or not drop_lists:
            return None
        return done["summary"]

    def _committed_before(
        self, store: Store, pending: str, kept: str, dropped: str, files: List[str]
    ) -> Optional[Dict[str, Any]]:
        """What an earlier run of this step did if it inserted its kept documents and was
        killed before its record: its pending note and outputs are there, and the store holds
        an insert batch after the last one it saw, with its label and its kept ids. None
        otherwise."""
        if not (self.insert and all(map(os.path.exists, [pending, kept, dropped]))):
            return None
        with open(pending) as note:
            seen = json.load(note)
        kept_ids = len(set(_read(kept, ["id"])["id"].to_pylist()))
        batch = next(
            (
                b["batch"]
                for b in store.batches()
                if b["batch"] > seen["last_batch"]
                and b["kind"] == "insert"
                and b["label"] == seen["label"]
                and b["inserted"] + b["replaced"] == kept_ids
            ),
            None,
        )
        if batch is None:
            return None
        # The killed run's summary, as far as its outputs tell.
        read = sum(pq.read_metadata(f).num_rows for f in files)
        kept_rows = pq.read_metadata(kept).num_rows
        return {"read": read, "kept": kept_rows, "batch": batch, "recovered": True}

    def _write_drop_lists(self, files: List[str], kept: str, dropped: str) -> None:
        """Splits the dedup's outputs into each task's drop list. Both outputs are in input
        order, so a task's documents not kept are, in order, its rows of the duplicates."""
        table = _read(kept, columns=["rank", "position"])
        kept_ranks, kept_positions = table["rank"].to_numpy(), table["position"].to_numpy()
        duplicates = _read(dropped)
        start = 0
        for rank, file in enumerate(files):
            ids = _read(file, columns=["id"])["id"]
            is_kept = np.zeros(len(ids), dtype=bool)
            # The kept rows are in input order: this task's are one run of them.
            start_at, end_at = np.searchsorted(kept_ranks, [rank, rank + 1])
            is_kept[kept_positions[start_at:end_at]] = True
            positions = np.flatnonzero(~is_kept)
            listed = duplicates.slice(start, len(positions))
            start += len(positions)
            # (Lists, not Arrow's take: pyarrow.compute imports pandas, a second per task.)
            all_ids = ids.to_pylist()
            if listed["id"].to_pylist() != [all_ids[p] for p in positions]:
                raise RuntimeError(f"{file}: the dedup's outputs do not match its documents")
            table = listed.drop_columns(["id"]).add_column(0, "position", pa.array(positions))
            rows = {b"simhashdb.rows": str(len(ids)).encode()}
            _write_whole(table.replace_schema_metadata(rows), _drops_path(self.folder, rank))


class SimhashFilter(PipelineStep):
    """Step 3, after the reader of step 1 with the same task count: drops the documents step 2
    listed for this task, each with metadata ``duplicate_of``, ``distance``,
    ``duplicate_batch`` (None for a match of this input) and, in a verified dedup,
    ``jaccard``; ``exclusion_writer`` (a datatrove writer) gets them. The task must read as
    many documents as step 1's did, else it fails (the input or the task count changed)."""

    name = "🔻 simhashdb filter"
    type = "🔻 - FILTER"

    def __init__(self, folder: str, exclusion_writer: Any = None) -> None:
        super().__init__()
        self.folder = os.fspath(folder)
        self.exclusion_writer = exclusion_writer

    def _drops(self, rank: int) -> tuple[Dict[int, Dict[str, Any]], int]:
        path = _drops_path(self.folder, rank)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no drop list for task {rank} (run SimhashDedup first)")
        table = _read(path)
        rows = int(table.schema.metadata[b"simhashdb.rows"])
        fields = ["duplicate_of", "distance", "duplicate_batch"]
        if "jaccard" in table.column_names:
            fields.append("jaccard")
        columns = {f: table[f].to_pylist() for f in fields}
        positions = table["position"].to_pylist()
        drops = {p: {f: columns[f][i] for f in fields} for i, p in enumerate(positions)}
        return drops, rows

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        drops, rows = self._drops(rank)
        seen = 0
        writer = self.exclusion_writer if self.exclusion_writer else contextlib.nullcontext()
        with writer as excluded:
            for position, doc in enumerate(data):
                seen += 1
                if seen > rows:
                    raise ValueError(self._mismatch(rank, f"more than {rows}", rows))
                self.stat_update("total")
                metadata = drops.get(position)
                if metadata is None:
                    self.stat_update("forwarded")
                    yield doc
                    continue
                self.stat_update("dropped")
                doc.metadata.update(metadata)
                if self.exclusion_writer:
                    excluded.write(doc, rank)
        if seen != rows:
            raise ValueError(self._mismatch(rank, seen, rows))

    @staticmethod
    def _mismatch(rank: int, seen: Any, rows: int) -> str:
        return (
            f"task {rank} read {seen} documents where SimhashSignature's read {rows}: the "
            "filter must follow the same reader, over the same input, with the same task count"
        )


__all__ = ["SimhashDedup", "SimhashFilter", "SimhashSignature"]

