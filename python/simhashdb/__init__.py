"""simhashdb: a persistent, on-disk database of 64-bit simhash fingerprints.

It finds every stored fingerprint within k bits of a query, with the permuted tables of Manku,
Jain and Das Sarma (WWW 2007) kept as immutable, checksummed runs on disk.

- :class:`Store`: create or open a store; insert batches (ids and fingerprints, (id, text)
  pairs, or files in any format the CLI reads); query one fingerprint or many (numpy in and
  out); delete, expire, compact, verify; audit every near-duplicate pair or cluster.
- :func:`fingerprint` and :func:`fingerprint_many`: text to fingerprints, in parallel with the
  GIL released, the same as ``simhashdb fingerprint`` gives for every scheme.
- :func:`tune`: the scheme and distance that find a corpus's near-duplicates best, measured
  (``simhashdb tune``).
- :func:`parse_fingerprint` and :func:`parse_fingerprints`: fingerprints written as text, read
  as the CLI and the server read them (hex or decimal, decided from all the values at once).
- :mod:`simhashdb.compat`: seomoz simhash-py 0.4's API, bit for bit
  (``import simhashdb.compat as simhash``).

Errors: ``ValueError`` for bad input, ``OSError`` (or a subclass such as
``FileNotFoundError``) for files, :class:`CorruptionError` for damaged bytes and
:class:`StoreLockedError` when another process is writing.
"""

from ._fingerprint import fingerprint, fingerprint_many, scheme_name
from ._native import FORMAT_VERSION, CorruptionError, StoreLockedError
from ._notation import parse_fingerprint, parse_fingerprints
from ._store import Audit, QueryResults, Store
from ._tune import tune

__version__ = "0.2.0"

__all__ = [
    "Audit",
    "CorruptionError",
    "FORMAT_VERSION",
    "QueryResults",
    "Store",
    "StoreLockedError",
    "fingerprint",
    "fingerprint_many",
    "parse_fingerprint",
    "parse_fingerprints",
    "scheme_name",
    "tune",
]
