"""The store: a persistent database of 64-bit simhash fingerprints."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from typing import (
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import numpy as np

from . import _native
from ._notation import parse_fingerprint
from ._arrays import checked_int, checked_texts, fingerprint_array, fingerprint_bytes, from_bytes

PathLike = Union[str, "os.PathLike[str]"]
Match = Tuple[str, int, int]


class QueryResults(NamedTuple):
    """The matches of :meth:`Store.query_many`, one row per match, as parallel numpy arrays:
    rows are grouped by query, in query order, and within a query ordered as ``query`` orders
    them (by distance, then fingerprint, then id)."""

    query: np.ndarray
    """int64: the index of the query (in the array given) this row matches."""
    id: np.ndarray
    """object (str): the matching document's id."""
    fingerprint: np.ndarray
    """uint64: its stored fingerprint."""
    distance: np.ndarray
    """int32: the Hamming distance between the query and that fingerprint."""


class Audit:
    """What :meth:`Store.audit` found: iterate it for ``(a, b, distance)`` pairs (``a < b``;
    ``(a, b, distance, jaccard)`` when verified against the texts), in ``simhashdb audit``'s
    order, or for clusters (sorted lists of ids) when asked for clusters; or take it whole as
    numpy arrays or a pandas DataFrame.

    Pairs are lazy: the audit holds the fingerprint pairs and the documents that have a near
    duplicate, and expands document pairs a batch at a time as they are iterated, so a page
    stored 1e5 times costs its ids, not its 5e9 pairs. ``len()`` counts them without
    expanding; :meth:`to_numpy` and :meth:`to_pandas` hold them all. :meth:`batches` yields
    them as numpy arrays of at most ``size`` rows."""

    BATCH = 65536

    def __init__(self, pairs: Any, clusters: Optional[List[List[str]]]) -> None:
        """Internal: :meth:`Store.audit` makes it."""
        self._pairs = pairs
        self._clusters = clusters

    @property
    def clusters(self) -> bool:
        """Whether this audit lists clusters rather than pairs."""
        return self._clusters is not None

    def summary(self) -> Dict[str, Any]:
        """The counts of ``audit --json``'s summary line: documents, distinct_fingerprints,
        pairs, clusters, largest_cluster, duplicates, kept (pairs only); docs/cli.md, "audit",
        says what each counts (``kept`` and ``duplicates`` among the documents of clusters;
        ``distinct_fingerprints`` those the postings list, replaced and deleted documents'
        until a compaction)."""
        if self._pairs is None:
            raise ValueError("summary() is of a pairs audit: call Store.audit() without clusters")
        return json.loads(self._pairs.summary())

    def __len__(self) -> int:
        """The number of pairs (counted, not expanded) or clusters."""
        if self._clusters is not None:
            return len(self._clusters)
        return int(self.summary()["pairs"])

    def batches(self, size: int = BATCH) -> Iterator[Dict[str, np.ndarray]]:
        """The pairs as :meth:`to_numpy` gives them, at most ``size`` rows at a time, each
        walk from the start (pairs only)."""
        if self._pairs is None:
            raise ValueError("batches() is of a pairs audit: call Store.audit() without clusters")
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"size: expected a positive int, got {size!r}")
        walk = self._pairs.again()
        while True:
            a, b, distance, jaccard = walk.next_batch(size)
            if not a:
                return
            arrays = {
                "a": np.array(a, dtype=object),
                "b": np.array(b, dtype=object),
                "distance": from_bytes(distance, np.int32),
            }
            if jaccard is not None:
                arrays["jaccard"] = np.frombuffer(jaccard, dtype="<f8").astype(float)
            yield arrays

    def __iter__(self) -> Iterator[Any]:
        """Each pair as ``(a, b, distance)`` (and ``jaccard`` when verified), or each cluster
        as a sorted list of ids."""
        if self._clusters is not None:
            yield from self._clusters
            return
        for batch in self.batches():
            a, b, distance = batch["a"], batch["b"], batch["distance"]
            if "jaccard" in batch:
                jaccard = batch["jaccard"]
                for i in range(len(a)):
                    j = float(jaccard[i])
                    # NaN: kept unverified (a document without a sketch).
                    yield a[i], b[i], int(distance[i]), (None if j != j else j)
            else:
                for i in range(len(a)):
                    yield a[i], b[i], int(distance[i])

    def __repr__(self) -> str:
        """How many pairs or clusters."""
        kind = "clusters" if self.clusters else "pairs"
        return f"<simhashdb.Audit: {len(self)} {kind}>"

    def to_numpy(self) -> Dict[str, np.ndarray]:
        """Pairs as ``{"a", "b", "distance"}`` (ids as object arrays, distance int32; and
        ``"jaccard"``, float64, when verified), every pair at once; clusters as ``{"cluster",
        "id"}``, one row per member, clusters numbered from 1 in order (as the CLI's ``audit
        --clusters`` and its Parquet ``cluster_id`` number them)."""
        if self._clusters is not None:
            sizes = [len(c) for c in self._clusters]
            cluster = np.repeat(np.arange(1, len(sizes) + 1, dtype=np.int64), sizes)
            ids = np.array([m for c in self._clusters for m in c] or [], dtype=object)
            return {"cluster": cluster, "id": ids}
        parts = list(self.batches())
        keys = ["a", "b", "distance"] + (["jaccard"] if self._pairs.verified() else [])
        empty = {
            "a": np.array([], dtype=object),
            "b": np.array([], dtype=object),
            "distance": np.array([], dtype=np.int32),
            "jaccard": np.array([], dtype=float),
        }
        return {k: np.concatenate([p[k] for p in parts]) if parts else empty[k] for k in keys}

    def to_pandas(self) -> Any:
        """The arrays of :meth:`to_numpy` as a pandas DataFrame (needs pandas installed)."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError(
                "Audit.to_pandas needs pandas: pip install pandas (or use to_numpy)"
            ) from e
        return pandas.DataFrame(self.to_numpy())


class Store:
    """A simhashdb store on disk: every stored fingerprint within k bits of a query.

    Make one with :meth:`create` or open one with :meth:`open` (never the constructor). One
    ``Store`` can be shared by threads: queries run in parallel, writes take turns. Queries see
    what any process committed within 0.1 s (or at once after :meth:`refresh`); each write
    opens the store for writing (its lock) for that call only, so holding a ``Store`` open
    never blocks another process's insert. Use it as a context manager, or call
    :meth:`close`.
    """

    __slots__ = ("_native", "_temporary")

    def __init__(self, native: Any) -> None:
        """Internal: use :meth:`create` or :meth:`open`."""
        if not isinstance(native, _native.NativeStore):
            raise TypeError("use Store.create(path, ...) or Store.open(path)")
        self._native = native
        # A temporary() store's directory, deleted on close.
        self._temporary: Optional[str] = None

    # -- making and opening ------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: PathLike,
        distance: int = 3,
        blocks: Optional[int] = None,
        expected_size: Optional[int] = None,
        scheme: Optional[str] = None,
        *,
        shards: Optional[int] = None,
        shingle: Optional[int] = None,
        weight: Optional[str] = None,
        max_runs: Optional[int] = None,
        merge_factor: Optional[int] = None,
        sketch: bool = False,
        sketch_bytes: Optional[int] = None,
    ) -> "Store":
        """Creates a store at ``path`` (which must not exist, or be an empty directory), as
        ``simhashdb init`` does, and opens it.

        ``distance`` is K, the largest distance queries may ask for. ``blocks`` (m) is chosen
        for ``expected_size`` fingerprints when not given (default: planned for 1e9).
        ``scheme`` (with ``shingle`` and ``weight``) is how the store fingerprints text, see
        :func:`simhashdb.fingerprint`. ``max_runs`` and ``merge_factor`` set the compaction
        policy. With ``sketch`` every document inserted as text keeps a verification sketch of
        ``sketch_bytes`` bytes (64 to 1024, default 128), so that ``min_jaccard`` works without
        the text (``init --sketch``). FileExistsError if ``path`` is taken; ValueError for
        settings that cannot make a working store.
        """
        def optional(name: str, value: Any, low: int, high: int) -> Optional[int]:
            return None if value is None else checked_int(name, value, low, high)

        if isinstance(expected_size, float) and expected_size.is_integer():
            expected_size = int(expected_size)  # 1e9 is how people write sizes
        if sketch_bytes is not None and not sketch:
            raise ValueError("sketch_bytes needs sketch=True")
        sketch_size = None
        if sketch:
            sketch_size = 128 if sketch_bytes is None else checked_int(
                "sketch_bytes", sketch_bytes, 64, 1024
            )
        native, notes = _native.NativeStore.create(
            os.fspath(path),
            checked_int("distance", distance, 1, 255),
            optional("blocks", blocks, 0, 255),
            optional("expected_size", expected_size, 1, 10**15),
            optional("shards", shards, 0, 65535),
            scheme,
            optional("shingle", shingle, 1, 255),
            weight,
            optional("max_runs", max_runs, 0, 65535),
            optional("merge_factor", merge_factor, 2, 65535),
            sketch_size,
        )
        for note in notes:
            warnings.warn(f"simhashdb: {note}", stacklevel=2)
        return cls(native)

    @classmethod
    def temporary(cls, distance: int = 3, **create: Any) -> "Store":
        """Creates a store in a new temporary directory (under ``TMPDIR``), as :meth:`create`
        with the same arguments, and deletes the directory when the store is closed (or its
        ``with`` block ends, also on an error): for examples, tests and notebooks that should
        run twice without cleanup. ::

            with simhashdb.Store.temporary(expected_size=1000) as store:
                store.insert(["a"], [0x0123456789ABCDEF])
        """
        directory = tempfile.mkdtemp(prefix="simhashdb-")
        try:
            store = cls.create(os.path.join(directory, "store"), distance, **create)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        store._temporary = directory
        return store

    @classmethod
    def open(
        cls,
        path: PathLike,
        *,
        pin: Union[bool, int] = False,
        cache_mib: Optional[int] = None,
    ) -> "Store":
        """Opens the store at ``path``.

        ``pin`` keeps the permuted tables in memory for the fastest queries, as ``simhashdb
        serve`` does: ``True`` pins as many as fit in half the machine's memory, an int pins
        up to that many MiB (loading them takes a while: about 1 s per 1e7 fingerprints).
        Without it queries read checksummed blocks from disk through a cache of ``cache_mib``
        MiB. FileNotFoundError if there is no store at ``path``.
        """
        if isinstance(pin, bool):
            pin_bytes = None if pin else 0
        else:
            pin_bytes = checked_int("pin (MiB)", pin, 0, 1 << 40) << 20
        cache_bytes = None if cache_mib is None else checked_int("cache_mib", cache_mib, 0, 1 << 30) << 20
        return cls(_native.NativeStore.open(os.fspath(path), pin_bytes, cache_bytes))

    def close(self) -> None:
        """Releases the store's files; later calls raise ValueError. Closing twice is fine.
        A :meth:`temporary` store's directory is deleted."""
        self._native.close()
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None

    def __enter__(self) -> "Store":
        """The store itself; leaving the block closes it."""
        return self

    def __exit__(self, *exc: Any) -> None:
        """Closes the store."""
        self.close()

    def __bool__(self) -> bool:
        """True: a store is a store, even an empty or closed one (``len`` counts documents)."""
        return True

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._native.closed

    @property
    def path(self) -> str:
        """The store's directory."""
        return str(self._native.path)

    @property
    def distance(self) -> int:
        """K: the largest distance a query may ask for (the default distance)."""
        return self._native.settings()[1]

    @property
    def blocks(self) -> int:
        """m: the blocks each fingerprint is split into."""
        return self._native.settings()[0]

    @property
    def tables(self) -> int:
        """The number of permuted tables, C(m, K)."""
        return self._native.settings()[3]

    @property
    def scheme(self) -> str:
        """How the store fingerprints text (e.g. ``"words-2-minhash"``)."""
        return self._native.settings()[4]

    def __repr__(self) -> str:
        """The path and settings."""
        if self.closed:
            return f"<simhashdb.Store {self.path!r} (closed)>"
        return (
            f"<simhashdb.Store {self.path!r}: m={self.blocks}, K={self.distance}, "
            f"scheme {self.scheme}>"
        )

    def refresh(self) -> bool:
        """Makes the latest committed state current now; returns whether it changed."""
        return self._native.refresh()

    # -- writing -----------------------------------------------------------------------

    def insert(
        self,
        ids: Sequence[str],
        fingerprints: Any,
        *,
        label: Optional[str] = None,
        compact: bool = True,
    ) -> Dict[str, Any]:
        """Inserts one batch, all or nothing: ``ids[i]`` with ``fingerprints[i]`` (a list of
        ints or a numpy integer array). An id stored before gets its new fingerprint; a later
        repeat of an id in the batch overrides an earlier one. ``label`` is recorded with the
        batch (for :meth:`expire`). Afterwards runs are merged if the compaction policy asks
        (unless ``compact=False``). Returns ``insert --json``'s summary."""
        if isinstance(ids, str):
            raise TypeError("ids: expected a sequence of str, got one str")
        data = fingerprint_bytes(fingerprints)
        return json.loads(self._native.insert(_ids(ids), data, label, compact))

    def insert_documents(
        self,
        documents: Iterable[Tuple[str, str]],
        *,
        label: Optional[str] = None,
        compact: bool = True,
    ) -> Dict[str, Any]:
        """Inserts one batch of ``(id, text)`` pairs from any iterable (a generator is read
        once, in chunks), fingerprinted in parallel with the store's scheme. All or nothing;
        the ids and fingerprints are held in memory until the commit (about 60 bytes each:
        for inputs of hundreds of millions, write them to a file for :meth:`insert_file`,
        which streams). A text with no token raises ValueError naming ``documents[i]``."""
        return json.loads(self._native.insert_documents(iter(documents), label, compact))

    def insert_file(
        self,
        path: Union[PathLike, Sequence[PathLike]],
        *,
        format: Optional[str] = None,
        skip_invalid: bool = False,
        label: Optional[str] = None,
        id_field: str = "id",
        fingerprint_field: str = "fingerprint",
        text_field: str = "text",
        fingerprint_format: str = "auto",
        compact: bool = True,
        max_skipped: Union[None, int, str] = None,
        rejects: Optional[PathLike] = None,
        allow_empty: bool = False,
    ) -> Dict[str, Any]:
        """Inserts one batch from files or directories, as ``simhashdb insert`` reads them:
        ``tsv`` (ID<TAB>FINGERPRINT), ``jsonl`` ({"id", "fingerprint"} or {"id", "text"}),
        ``parquet`` (an id column and a fingerprint or text column; int64 fingerprints keep
        their 64 bits), or ``text`` (a file per document, its path the id); detected when
        ``format`` is None; gzip and zstd files are decompressed. JSON fields and Parquet
        columns are named by ``id_field``, ``fingerprint_field`` and ``text_field``;
        fingerprints written as text are read in ``fingerprint_format`` (``auto``: 16
        hex or decimal decided per file from all its values, see docs/reliability.md; ``hex``;
        ``decimal``). A malformed line raises ValueError naming the
        file and line, and nothing is stored, unless ``skip_invalid`` (then counted in the
        summary's ``skipped``, and written to the file ``rejects`` as
        SOURCE<TAB>LINE<TAB>REASON<TAB>RECORD); more skipped than ``max_skipped`` (a count, or
        ``"P%"`` of the records read; default ``"1%"``) raises ValueError and stores nothing.
        An input with no documents raises ValueError naming it unless ``allow_empty`` (then a
        warning). Either of ``max_skipped`` and ``rejects`` implies ``skip_invalid``. Streams:
        memory stays bounded for any input size."""
        paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
        return _warned(
            self._native.insert_file(
                [os.fspath(p) for p in paths],
                format,
                skip_invalid,
                label,
                id_field,
                fingerprint_field,
                text_field,
                fingerprint_format,
                compact,
                None if max_skipped is None else str(max_skipped),
                None if rejects is None else os.fspath(rejects),
                allow_empty,
            )
        )

    def dedup(
        self,
        ids: Sequence[str],
        fingerprints: Any = None,
        texts: Optional[Iterable[str]] = None,
        distance: Optional[int] = None,
        insert: bool = False,
        *,
        label: Optional[str] = None,
        min_jaccard: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Keeps what is new: greedy in input order, ``ids[i]`` is a duplicate when a stored
        document, or an earlier kept one of these, is within ``distance`` bits (default: the
        store's K); otherwise it is kept. Give ``fingerprints`` (ints or a numpy integer
        array) or ``texts`` (fingerprinted with the store's scheme). With ``insert`` the kept
        documents become one batch (labelled ``label``) in the same write, so no other writer
        slips in between. Returns ``{"id", "kept", "duplicate_of", "distance", "stored",
        "inserted", "batch", "summary"}``: per document ``kept`` (bool array), ``duplicate_of``
        (its nearest match's id, None when kept; ties go to a stored document, then the
        earliest batch, then the smallest id), ``distance`` (int array, -1 when kept) and
        ``stored`` (bool array: the match is stored, not from these ids); the batch that
        stored the match: ``duplicate_batch`` (int64 array, -1 where the match is not stored),
        ``duplicate_label`` and ``duplicate_committed_utc`` (lists, None where there is none);
        ``summary`` as ``simhashdb dedup --json``.

        With ``min_jaccard`` (a store made with ``init --sketch``) a match makes a duplicate
        only when the sketches of the two texts estimate at least that word 3-shingle Jaccard
        similarity; ``jaccard`` (float array, NaN where there is none) holds the estimate and
        ``unverified`` (bool array) marks duplicates taken without one (a side has no sketch,
        e.g. given as a fingerprint)."""
        if isinstance(ids, str):
            raise TypeError("ids: expected a sequence of str, got one str")
        ids = _ids(ids)
        if (fingerprints is None) == (texts is None):
            raise ValueError("give exactly one of fingerprints and texts")
        data = None if fingerprints is None else fingerprint_bytes(fingerprints)
        text_list = None if texts is None else checked_texts(texts)
        answer = json.loads(
            self._native.dedup(
                ids, data, text_list, _distance(distance), insert, label, min_jaccard
            )
        )
        results = answer.pop("results")
        summary = answer
        return {
            "id": [r["id"] for r in results],
            "kept": np.array([r["kept"] for r in results], dtype=bool),
            "duplicate_of": [r["duplicate_of"] for r in results],
            "distance": np.array(
                [-1 if r["distance"] is None else r["distance"] for r in results], dtype=np.int32
            ),
            "stored": np.array([bool(r["stored"]) for r in results], dtype=bool),
            "jaccard": np.array(
                [r.get("jaccard", float("nan")) for r in results], dtype=np.float64
            ),
            "unverified": np.array([r.get("unverified", False) for r in results], dtype=bool),
            "duplicate_batch": np.array(
                [-1 if r["duplicate_batch"] is None else r["duplicate_batch"] for r in results],
                dtype=np.int64,
            ),
            "duplicate_label": [r["duplicate_label"] for r in results],
            "duplicate_committed_utc": [r["duplicate_committed_utc"] for r in results],
            "inserted": summary["inserted"],
            "batch": summary["batch"],
            "summary": summary,
        }

    def dedup_file(
        self,
        input: Union[PathLike, Sequence[PathLike]],
        output: Optional[PathLike],
        duplicates: Optional[PathLike] = None,
        insert: bool = False,
        *,
        label: Optional[str] = None,
        distance: Optional[int] = None,
        format: Optional[str] = None,
        skip_invalid: bool = False,
        id_field: str = "id",
        fingerprint_field: str = "fingerprint",
        text_field: str = "text",
        fingerprint_format: str = "auto",
        min_jaccard: Optional[float] = None,
        max_skipped: Union[None, int, str] = None,
        rejects: Optional[PathLike] = None,
        allow_empty: bool = False,
    ) -> Dict[str, Any]:
        """``simhashdb dedup`` of files or directories read as :meth:`insert_file` reads them:
        the kept records go to ``output`` unchanged and in input order (JSON Lines and TSV
        lines byte for byte, Parquet rows with every column, the ids of text files; None or
        ``"-"`` is stdout, for line formats), and ``duplicates`` lists every dropped document
        as ``ID<TAB>DUPLICATE_OF<TAB>DISTANCE`` then the match's ``BATCH<TAB>LABEL<TAB>COMMITTED``
        (empty for a match of the input). Output files appear whole or not at all. With
        ``insert`` the kept documents become one batch atomically with the check; on any
        error (ValueError naming file and line for a malformed record, unless
        ``skip_invalid``) nothing is inserted and no output file is left. Streams the records:
        memory holds the kept ids and fingerprints only. ``min_jaccard`` verifies matches with
        sketches as :meth:`dedup` does (``duplicates`` then has a fourth column, the estimate
        or ``unverified``). ``max_skipped``, ``rejects`` and ``allow_empty`` (with ``insert``)
        as :meth:`insert_file` takes them. Returns ``dedup --json``'s summary."""
        paths = [input] if isinstance(input, (str, os.PathLike)) else list(input)
        return _warned(
            self._native.dedup_file(
                [os.fspath(p) for p in paths],
                None if output is None else os.fspath(output),
                None if duplicates is None else os.fspath(duplicates),
                insert,
                label,
                _distance(distance),
                format,
                skip_invalid,
                id_field,
                fingerprint_field,
                text_field,
                fingerprint_format,
                min_jaccard,
                None if max_skipped is None else str(max_skipped),
                None if rejects is None else os.fspath(rejects),
                allow_empty,
            )
        )

    def delete(self, ids: Union[str, Iterable[str]], *, dry_run: bool = False) -> Dict[str, Any]:
        """Deletes documents by id in one batch (a single id may be given as a str). With
        ``dry_run`` nothing changes and the summary says what would. Returns
        ``{"batch", "deleted", "not_found", "repeated", "dry_run"}`` as ``delete --json``."""
        ids = [ids] if isinstance(ids, str) else _ids(ids)
        return json.loads(self._native.delete(ids, dry_run))

    def expire(
        self,
        before: Optional[str] = None,
        batch: Optional[str] = None,
        *,
        dry_run: bool = False,
    ) -> Dict[str, Any]:
        """Deletes the documents of whole insert batches still live: those committed
        ``before`` a date (``YYYY-MM-DD``, ``YYYY-MM-DDTHH:MM:SSZ`` or ``Nd`` for N days ago),
        or the batches labelled ``batch``. Give exactly one. Returns the summary with
        ``expired_batches`` as ``expire --json``."""
        return json.loads(self._native.expire(before, batch, dry_run))

    def compact(self) -> Dict[str, Any]:
        """Merges every run into one (dropping deleted and replaced entries); returns
        ``compact --json``'s summary."""
        return json.loads(self._native.compact())

    # -- reading -----------------------------------------------------------------------

    def query(
        self,
        fingerprint: Union[int, str],
        distance: Optional[int] = None,
        *,
        fingerprint_format: str = "auto",
    ) -> List[Match]:
        """Every live document within ``distance`` bits (default: the store's K) of
        ``fingerprint`` (an int, an int64 taken as the same 64 bits, or text read in
        ``fingerprint_format`` as the CLI and the server read it: see
        :func:`parse_fingerprint`), as ``(id, fingerprint, distance)`` tuples ordered by
        distance, then fingerprint, then id. ValueError if ``distance`` exceeds K."""
        if isinstance(fingerprint, str):
            fingerprint = parse_fingerprint(fingerprint, fingerprint_format)
        fingerprint = int(fingerprint_array([fingerprint], "fingerprint")[0])
        return self._native.query(fingerprint, _distance(distance))

    def query_many(self, fingerprints: Any, distance: Optional[int] = None) -> QueryResults:
        """The matches of many fingerprints (a numpy integer array or a list; int64 values are
        taken as the same 64 bits, as Arrow and Spark hand them over), answered in
        parallel with the GIL released, as :class:`QueryResults` numpy arrays ``(query, id,
        fingerprint, distance)``."""
        data = fingerprint_bytes(fingerprints)
        index, ids, found, dist = self._native.query_many(data, _distance(distance))
        return QueryResults(
            from_bytes(index, np.int64),
            np.array(ids, dtype=object),
            from_bytes(found),
            from_bytes(dist, np.int32),
        )

    def query_texts(
        self,
        texts: Iterable[str],
        distance: Optional[int] = None,
        *,
        min_jaccard: Optional[float] = None,
    ) -> List[List[Any]]:
        """For each text, fingerprinted with the store's scheme, its matches as :meth:`query`
        gives them. With ``min_jaccard`` (a store made with ``init --sketch``) only the
        matches whose sketch and the text's estimate at least that word 3-shingle Jaccard
        similarity, as ``(id, fingerprint, distance, jaccard)``; ``jaccard`` is None for a
        match kept unverified (a document inserted as a bare fingerprint)."""
        texts = checked_texts(texts)
        if min_jaccard is not None:
            return [
                list(matches)
                for matches in self._native.query_texts_verified(
                    texts, _distance(distance), min_jaccard
                )
            ]
        data = self._native.fingerprint_texts(texts)
        results = self.query_many(from_bytes(data), distance)
        out: List[List[Match]] = [[] for _ in texts]
        for q, i, f, d in zip(
            results.query.tolist(),
            results.id.tolist(),
            results.fingerprint.tolist(),
            results.distance.tolist(),
        ):
            out[q].append((i, f, d))
        return out

    def get(self, id: str) -> Optional[int]:
        """The fingerprint of the live document ``id``, or None."""
        found = self._native.get(id)
        return None if found is None else found[0]

    def document(self, id: str) -> Optional[Dict[str, Any]]:
        """The live document ``id`` as ``{"id", "fingerprint", "batch"}`` (the insert batch
        that gave it this fingerprint), or None."""
        found = self._native.get(id)
        if found is None:
            return None
        return {"id": id, "fingerprint": found[0], "batch": found[1]}

    def __contains__(self, id: object) -> bool:
        """Whether ``id`` is a live document."""
        return isinstance(id, str) and self._native.get(id) is not None

    def batches(self) -> List[Dict[str, Any]]:
        """Every batch, oldest first, as ``batches --json`` lists them."""
        return json.loads(self._native.batches())

    def stats(self) -> Dict[str, Any]:
        """Documents, fingerprints, runs, tables and bytes on disk, as ``stats --json``."""
        return json.loads(self._native.stats())

    def __len__(self) -> int:
        """The number of live documents."""
        return int(self.stats()["documents"])

    def verify(self, deep: bool = False) -> Dict[str, Any]:
        """Checks every block's checksum and structure (with ``deep``, also redb's own
        checks); returns ``verify --json``'s report: ``clean`` and the ``findings``."""
        return json.loads(self._native.verify(deep))

    def audit(
        self,
        distance: Optional[int] = None,
        clusters: bool = False,
        *,
        singletons: bool = False,
        verify_text: Optional[PathLike] = None,
        min_jaccard: Optional[float] = None,
        id_field: str = "id",
        text_field: str = "text",
    ) -> Audit:
        """Every pair of live documents within ``distance`` bits (default K), computed in
        parallel with the GIL released, in ``simhashdb audit``'s order (by fingerprint: see
        its --help): iterate the :class:`Audit` for ``(a, b, distance)`` tuples, or take
        ``.to_numpy()`` / ``.to_pandas()``. With ``clusters``, the groups the
        pairs connect instead (with ``singletons``, every other document as a group of
        one).

        With ``verify_text`` (a corpus as ``audit --verify-text`` reads it: JSON Lines, Parquet
        or text files and directories, ids and texts in ``id_field`` and ``text_field``), only
        the pairs whose word 3-shingle Jaccard similarity is at least ``min_jaccard`` (default
        0.8) are kept, each with it: ``(a, b, distance, jaccard)``. With ``min_jaccard`` alone
        the store's sketches estimate it (a store made with ``init --sketch``); a pair where a
        document has no sketch is kept with ``jaccard`` None (unverified)."""
        if singletons and not clusters:
            raise ValueError("singletons=True needs clusters=True")
        verify = None if verify_text is None else os.fspath(verify_text)
        args = (verify, min_jaccard, id_field, text_field)
        if clusters:
            return Audit(
                None, self._native.audit_clusters(_distance(distance), singletons, *args)
            )
        return Audit(self._native.audit_pairs(_distance(distance), *args), None)


    def clusters(
        self,
        distance: Optional[int] = None,
        *,
        singletons: bool = False,
        verify_text: Optional[PathLike] = None,
        min_jaccard: Optional[float] = None,
        id_field: str = "id",
        text_field: str = "text",
    ) -> Audit:
        """``simhashdb audit --clusters``: :meth:`audit` with ``clusters=True`` (each cluster a
        sorted list of ids, in the order of their smallest ids). Memory: the documents that
        have a near duplicate, never their pairs."""
        return self.audit(
            distance,
            True,
            singletons=singletons,
            verify_text=verify_text,
            min_jaccard=min_jaccard,
            id_field=id_field,
            text_field=text_field,
        )

    def duplicates(
        self,
        distance: Optional[int] = None,
        *,
        verify_text: Optional[PathLike] = None,
        min_jaccard: Optional[float] = None,
        id_field: str = "id",
        text_field: str = "text",
    ) -> List[Tuple[str, str]]:
        """The keep/drop list of ``simhashdb audit --duplicates``: ``(id, kept_id)`` for every
        document the keep rule drops, in its order. The rule is ``dedup``'s: documents are
        taken earliest batch first, then smallest id; a document is dropped when a document
        kept before it is within the distance (and verified, with ``min_jaccard``), and
        ``kept_id`` is the nearest such (then the smallest id). A cluster may keep several
        documents; no document is dropped unless a kept one is near it. ``verify_text`` and
        ``min_jaccard`` as in :meth:`audit`."""
        verify = None if verify_text is None else os.fspath(verify_text)
        dropped, kept, _ = self._native.audit_duplicates(
            _distance(distance), verify, min_jaccard, id_field, text_field
        )
        return list(zip(dropped, kept))

    def audit_report(
        self,
        path: PathLike,
        distance: Optional[int] = None,
        *,
        verify_text: Optional[PathLike] = None,
        min_jaccard: Optional[float] = None,
        id_field: str = "id",
        text_field: str = "text",
    ) -> Dict[str, Any]:
        """Draws ``simhashdb audit --report``'s picture to ``path`` (.svg or .png): clusters by
        size (log-log), pairs by distance, and the headline counts. Returns the audit's
        summary: documents, distinct_fingerprints, pairs, clusters, largest_cluster,
        duplicates, kept."""
        verify = None if verify_text is None else os.fspath(verify_text)
        summary = self._native.audit_report(
            os.fspath(path), _distance(distance), verify, min_jaccard, id_field, text_field
        )
        return json.loads(summary)


def _ids(ids: Iterable[str]) -> List[str]:
    out = ids if isinstance(ids, list) else list(ids)
    for i, id in enumerate(out):
        if not isinstance(id, str):
            raise ValueError(f"ids[{i}]: {id!r} is not a str")
    return out


def _distance(distance: Optional[int]) -> Optional[int]:
    # The range is the library's to check (0 to the store's K), as for the CLI and the server.
    return None if distance is None else checked_int("distance", distance, -(2**63), 2**63 - 1)


def _warned(summary_json: str) -> Dict[str, Any]:
    """A read's summary, its warnings (an input that either notation could have written)
    raised as Python warnings."""
    summary = json.loads(summary_json)
    for warning in summary.get("warnings", []):
        warnings.warn(f"simhashdb: {warning}", stacklevel=3)
    return summary
