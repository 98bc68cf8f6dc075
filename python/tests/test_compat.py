"""simhashdb.compat against simhash-py 0.4: its own test vectors, its documented behaviour, brute
force, and (when installed) seomoz's implementation itself on random inputs."""

from __future__ import annotations

import importlib
import os
import re
import types

import numpy as np
import pytest

import simhashdb
import simhashdb.compat as simhash

from conftest import brute_pairs, components

# -- simhash-py's test/test.py, verbatim in substance ---------------------------------------


def test_num_differing_bits():
    assert simhash.num_differing_bits(0xDEADBEEF, 0xDEADBEAD) == 2


def test_compute_vectors():
    assert simhash.compute([]) == 0
    assert simhash.compute([0xDEADBEEF] * 100) == 0xDEADBEEF
    hashes = [0xDEADBEEFDEADBEEF, 0x2152411021524110]
    assert simhash.num_differing_bits(*hashes) == 64
    assert simhash.compute(hashes) == 0
    assert simhash.compute([0xABCD, 0xBCDE, 0xCDEF]) == 0xADCF


BASIC = [
    0x000000FF, 0x000000EF, 0x000000EE, 0x000000CE, 0x00000033,
    0x0000FF00, 0x0000EF00, 0x0000EE00, 0x0000CE00, 0x00003300,
    0x00FF0000, 0x00EF0000, 0x00EE0000, 0x00CE0000, 0x00330000,
    0xFF000000, 0xEF000000, 0xEE000000, 0xCE000000, 0x33000000,
]  # fmt: skip
BASIC_PAIRS = [
    (a << s, b << s)
    for s in (0, 8, 16, 24)
    for a, b in [(0xEF, 0xFF), (0xEE, 0xEF), (0xEE, 0xFF), (0xCE, 0xEE), (0xCE, 0xEF), (0xCE, 0xFF)]
]
DIVERSE = [
    0x00000000, 0x10101000, 0x10100010, 0x10001010, 0x00101010,
    0x01010100, 0x01010001, 0x01000101, 0x00010101,
]  # fmt: skip
DIVERSE_PAIRS = [
    (0x00000000, 0x10101000), (0x00000000, 0x10100010), (0x00000000, 0x10001010),
    (0x00000000, 0x00101010), (0x00000000, 0x01010100), (0x00000000, 0x01010001),
    (0x00000000, 0x01000101), (0x00000000, 0x00010101), (0x00101010, 0x10001010),
    (0x00101010, 0x10100010), (0x00101010, 0x10101000), (0x10001010, 0x10100010),
    (0x10001010, 0x10101000), (0x10100010, 0x10101000), (0x00010101, 0x01000101),
    (0x00010101, 0x01010001), (0x00010101, 0x01010100), (0x01000101, 0x01010001),
    (0x01000101, 0x01010100), (0x01010001, 0x01010100),
]  # fmt: skip


@pytest.mark.parametrize("blocks", range(4, 10))
def test_find_all_vectors(blocks):
    assert simhash.find_all(BASIC, blocks, 3) == sorted(BASIC_PAIRS)
    assert simhash.find_all(DIVERSE, blocks, 3) == sorted(DIVERSE_PAIRS)


def test_shingle_vectors():
    assert list(simhash.shingle(list(range(3)), 4)) == []
    for window in (0, -1):
        with pytest.raises(ValueError, match="Window size must be positive"):
            list(simhash.shingle(list(range(10)), window))
    assert list(simhash.shingle(list(range(10)), 4)) == [list(range(i, i + 4)) for i in range(7)]
    assert list(simhash.shingle("abcdef", 2)) == [["a", "b"], ["b", "c"], ["c", "d"], ["d", "e"], ["e", "f"]]
    assert isinstance(simhash.shingle([1, 2], 1), types.GeneratorType)
    assert list(simhash.shingle([1, 2, 3])) == []  # window defaults to 4


JABBERWOCKY = """
    Twas brillig, and the slithy toves
      Did gyre and gimble in the wabe:
    All mimsy were the borogoves,
      And the mome raths outgrabe.
    "Beware the Jabberwock, my son!
      The jaws that bite, the claws that catch!
    Beware the Jubjub bird, and shun
      The frumious Bandersnatch!"
    He took his vorpal sword in hand:
      Long time the manxome foe he sought --
    So rested he by the Tumtum tree,
      And stood awhile in thought.
    And, as in uffish thought he stood,
      The Jabberwock, with eyes of flame,
    Came whiffling through the tulgey wood,
      And burbled as it came!
    One, two! One, two! And through and through
      The vorpal blade went snicker-snack!
    He left it dead, and with its head
      He went galumphing back.
    "And, has thou slain the Jabberwock?
      Come to my arms, my beamish boy!
    O frabjous day! Callooh! Callay!'
      He chortled in his joy.
    `Twas brillig, and the slithy toves
      Did gyre and gimble in the wabe;
    All mimsy were the borogoves,
      And the mome raths outgrabe."""
POPE = """There once was a man named 'Pope' Who loved an oscilloscope And the cyclical trace
    Of their carnal embrace Had a damned-near infinite slope!"""


def readme_pipeline(text):
    tokens = re.split(r"\W+", text, flags=re.UNICODE)
    phrases = (" ".join(p).encode("utf-8") for p in simhash.shingle(tokens, 4))
    return simhash.compute(map(simhash.unsigned_hash, phrases))


def test_functional():
    # simhash-py's test asserted <= 3 bits for the added text under Python 2; seomoz's code on
    # Python 3 (simhash-pybind) gives exactly these values, and so must we.
    a = readme_pipeline(JABBERWOCKY)
    b = readme_pipeline(JABBERWOCKY + " - Lewis Carroll (Alice in Wonderland)")
    assert (a, b) == (15786910132352602089, 15111367989089554409)
    assert simhash.num_differing_bits(a, b) == 6
    assert simhash.num_differing_bits(a, readme_pipeline(JABBERWOCKY)) == 0
    assert simhash.num_differing_bits(a, readme_pipeline(POPE)) > 3


# -- the vectors of the Rust tests, and the seomoz scheme ------------------------------------


def test_unsigned_hash_vectors():
    assert simhash.unsigned_hash(b"hello") == 0x5D41402ABC4B2A76
    assert simhash.unsigned_hash(bytearray(b"hello")) == 0x5D41402ABC4B2A76
    assert simhash.unsigned_hash(memoryview(b"hello")) == 0x5D41402ABC4B2A76
    with pytest.raises(TypeError, match="encoded"):
        simhash.unsigned_hash("hello")


def test_seomoz_scheme_is_the_readme_pipeline():
    fox = "The quick brown fox jumps over the lazy dog"
    by_hand = simhash.compute(
        simhash.unsigned_hash(" ".join(s).encode()) for s in simhash.shingle(fox.split(), 4)
    )
    assert by_hand == simhashdb.fingerprint(fox, "seomoz") == 0xA103CB172B8A9085
    assert simhashdb.fingerprint("three tokens only", "seomoz") == 0


# -- arguments as simhash-py checks them ---------------------------------------------------


def test_find_all_argument_errors():
    with pytest.raises(ValueError, match="must not exceed 64"):
        simhash.find_all([1, 3], 65, 3)
    with pytest.raises(ValueError, match="greater than different_bits"):
        simhash.find_all([1, 3], 3, 3)
    with pytest.raises(OverflowError):
        simhash.find_all([1, 3], -1, 0)
    with pytest.raises(OverflowError):
        simhash.find_all([-1], 4, 3)
    with pytest.raises(OverflowError):
        simhash.find_all([1 << 64], 4, 3)
    with pytest.raises(TypeError):
        simhash.find_all([1.5], 4, 3)
    with pytest.raises(TypeError):
        simhash.compute(["a"])
    with pytest.raises(OverflowError):
        simhash.compute(np.array([-1]))
    with pytest.raises(TypeError):
        simhash.num_differing_bits(1.0, 0)
    assert simhash.find_all([1, 3], 1, 0) == []
    assert simhash.find_all([], 4, 3) == []


@pytest.mark.parametrize("seed", range(4))
def test_find_all_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**64, size=400, dtype=np.uint64)
    near = base[rng.integers(0, 400, size=400)] ^ (np.uint64(1) << rng.integers(0, 64, 400).astype(np.uint64))
    near2 = near ^ (np.uint64(1) << rng.integers(0, 64, 400).astype(np.uint64))
    hashes = np.concatenate([base, near, near2, base[:20]])  # repeats count once
    values = {int(h) for h in hashes}
    docs = {str(v): v for v in values}
    for k, blocks in [(1, 2), (2, 4), (3, 4), (3, 6), (4, 8), (3, 64), (6, 12), (20, 64)]:
        want = sorted(
            (min(docs[a], docs[b]), max(docs[a], docs[b])) for a, b, _ in brute_pairs(docs, k)
        )
        got = simhash.find_all(hashes.tolist(), blocks, k)
        assert got == want, (k, blocks)
        assert simhash.find_all(hashes, blocks, k) == want  # the numpy fast path
        assert all(type(a) is int and a < b for a, b in got)


def test_find_clusters_are_connected_components():
    far = (1 << 64) - 1 - 0xFF
    hashes = [0b0, 0b1, 0b11, 0b111, far, far ^ 1, (1 << 64) - 1 - (0xFF << 40)]
    assert simhash.find_clusters(hashes, 4, 1) == [{0, 1, 3, 7}, {far, far ^ 1}]
    rng = np.random.default_rng(9)
    hashes = rng.integers(0, 2**64, size=300, dtype=np.uint64)
    hashes = np.concatenate([hashes, hashes ^ np.uint64(5)])
    clusters = simhash.find_clusters(hashes, 6, 3)
    assert [sorted(c) for c in clusters] == components(simhash.find_all(hashes, 6, 3))


# -- against seomoz's own implementation, when installed -------------------------------------


def peer():
    try:
        module = importlib.import_module("simhash")
        if not hasattr(module, "find_all"):  # PyPI's unrelated `simhash` package
            raise ImportError("the simhash module found is not seomoz's")
        return module
    except ImportError:
        if os.environ.get("SIMHASHDB_REQUIRE_PEER"):
            raise
        pytest.skip("seomoz's simhash (pip install simhash-pybind) is not installed")


def test_identical_to_seomoz_on_random_inputs():
    seomoz = peer()
    rng = np.random.default_rng(42)
    for _ in range(50):
        data = rng.bytes(int(rng.integers(0, 40)))
        assert simhash.unsigned_hash(data) == seomoz.unsigned_hash(data)
        hashes = [int(h) for h in rng.integers(0, 2**64, size=int(rng.integers(0, 30)), dtype=np.uint64)]
        assert simhash.compute(hashes) == seomoz.compute(hashes)
        a, b = (int(x) for x in rng.integers(0, 2**64, size=2, dtype=np.uint64))
        assert simhash.num_differing_bits(a, b) == seomoz.num_differing_bits(a, b)
    tokens = "a b c d e f g".split()
    assert list(simhash.shingle(tokens, 3)) == list(seomoz.shingle(tokens, 3))
    base = rng.integers(0, 2**64, size=3000, dtype=np.uint64)
    flips = np.uint64(1) << rng.integers(0, 64, size=3000).astype(np.uint64)
    hashes = np.concatenate([base, base ^ flips, base ^ flips ^ (flips >> np.uint64(1))]).tolist()
    for blocks, k in [(4, 3), (5, 3), (6, 3), (8, 2), (4, 1)]:
        assert simhash.find_all(hashes, blocks, k) == sorted(seomoz.find_all(hashes, blocks, k))
    for blocks, k in [(65, 3), (3, 3), (0, 0)]:
        with pytest.raises(ValueError):
            seomoz.find_all(hashes, blocks, k)
        with pytest.raises(ValueError):
            simhash.find_all(hashes, blocks, k)
