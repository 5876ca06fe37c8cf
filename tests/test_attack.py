"""Crafted collisions: the default MurmurHash3 mode collides on chosen inputs, the SHA-256 modes do not.

MurmurHash3 x64 128 has collisions that hold for every seed (``tests/murmur_collisions.py``): two different
32-byte strings hash alike wherever they start at a multiple of 16 of the hashed stream. The encoding is
public (``docs/FORMAT.md``), so whoever controls a key's text can pad it until the crafted bytes are aligned,
whatever the salt. This module shows, on a real Spark with hashexpr's jar:

* (a) ``record_hash`` and ``record_key`` (SQL and ``hx``) give two different strings one hash, in the default
  mode, with salts of 0, 1, 5, 16 and 23 bytes and at every alignment inside a longer string; the pure-Python
  reference agrees with Spark on all of these inputs;
* (b) ``hx.find_collisions`` reports such a pair in a hub, and nothing else;
* (c) ``algorithm=sha256`` and ``algorithm=hmac-sha256`` (``record_hash_with``, ``record_key_with``, ``hx``,
  the reference) separate every pair, and hash exactly SHA-256 / HMAC-SHA-256 of the encoding, built here
  from ``docs/FORMAT.md`` alone (``docs/SECURITY.md``).

Pairs are batched: one query per test hashes every pair of it.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass

import mmh3
import pytest
from murmur_collisions import (
    C1,
    C1_INV,
    C2,
    C2_INV,
    DIFFERENTIALS,
    MASK64,
    PAIR,
    alignment_padding,
    colliding_blocks,
    colliding_strings,
    premix_k1,
    premix_k2,
    unmix_k1,
    unmix_k2,
)
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, StringType
from spark_conf import FOLDING_RULES, TEST_SECRETS, spark_conf

import hashexpr as hx
from hashexpr import reference
from hashexpr.spark.collisions import find_collisions

STRING = StringType()
#: hashexpr's MurmurHash3 seed, the ASCII bytes "hash" (docs/FORMAT.md, section 1).
SEED = 0x68617368
MURMUR3, SHA256, HMAC_SHA256 = "murmur3", "sha256", "hmac-sha256"
#: Salts of 0, 1, 5, 16 and 23 UTF-8 bytes; "sälz" is 4 characters, 5 bytes: the byte length aligns.
SALTS = ("", "x", "sälz", "customer-hub-v01", "tenant-eu-west/hub-ü-v")
#: The HMAC key's name in the SQL text, and its value (in the test session's configuration).
SECRET_NAME = "pii"
SECRET = TEST_SECRETS[SECRET_NAME]
#: A first key part or record value hashed ahead of the crafted string.
LEAD = "NL"


# --- the encoding, from docs/FORMAT.md ---------------------------------------------------------------------


def u32(n: int) -> bytes:
    return n.to_bytes(4, "little")


def string_value(data: bytes) -> bytes:
    """ENC of a STRING (section 4): tag 0x05, u32 length, the UTF-8 bytes."""
    return b"\x05" + u32(len(data)) + data


def record_encoding(strings: Sequence[bytes]) -> bytes:
    """RECORD (section 3): version 0x01, u32 argument count, every value."""
    return b"\x01" + u32(len(strings)) + b"".join(map(string_value, strings))


def key_encoding(strings: Sequence[bytes], salt: str) -> bytes:
    """KEY (section 9): 0x82, the salt as a STRING value, u32 key part count, every key part."""
    return b"\x82" + string_value(salt.encode()) + u32(len(strings)) + b"".join(map(string_value, strings))


# --- what is hashed, and how ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One hash function of a crafted string ``s``, optionally after the value :data:`LEAD`.

    ``salt`` None is ``record_key`` without options; ``""`` is ``record_key_with`` with an empty salt.
    """

    name: str
    key: bool
    algorithm: str = MURMUR3
    salt: str | None = None
    lead: bool = False

    def values(self, s: str) -> list[str]:
        return [LEAD, s] if self.lead else [s]

    def encoding(self, s: bytes) -> bytes:
        parts = [LEAD.encode(), s] if self.lead else [s]
        return key_encoding(parts, self.salt or "") if self.key else record_encoding(parts)

    @property
    def offset(self) -> int:
        """Where the crafted string's bytes start in the hashed stream: it is the last value."""
        return len(self.encoding(b""))

    def options(self) -> str | None:
        items = [] if self.algorithm == MURMUR3 else [f"algorithm={self.algorithm}"]
        items += [f"secret={SECRET_NAME}"] if self.algorithm == HMAC_SHA256 else []
        items += [f"salt={self.salt}"] if self.salt else []
        return None if self.salt is None and not items else "; ".join(items)

    def sql(self, column: str) -> str:
        args = f"'{LEAD}', {column}" if self.lead else column
        options = self.options()
        function = "record_key" if self.key else "record_hash"
        return f"{function}({args})" if options is None else f"{function}_with('{options}', {args})"

    def column(self, column: str) -> Column:
        cols = [F.lit(LEAD), F.col(column)] if self.lead else [F.col(column)]
        algorithm = {} if self.algorithm == MURMUR3 else {"algorithm": self.algorithm}
        if not self.key:
            return hx.record_hash(*cols, **algorithm)
        secret = {"secret": SECRET_NAME} if self.algorithm == HMAC_SHA256 else {}
        return hx.record_key(*cols, salt=self.salt or None, **algorithm, **secret)

    def reference(self, s: str) -> bytes:
        values, types = self.values(s), [STRING] * len(self.values(s))
        options: dict = {} if self.algorithm == MURMUR3 else {"algorithm": self.algorithm}
        if self.algorithm == HMAC_SHA256:
            options["key"] = SECRET.encode()
        if not self.key:
            return reference.record_hash(values, types, **options)
        return reference.record_key(values, types, salt=self.salt or "", **options)

    def expected(self, s: str) -> bytes:
        """The hash computed here, from the hand-built encoding."""
        data = self.encoding(s.encode())
        if self.algorithm == SHA256:
            return hashlib.sha256(data).digest()
        if self.algorithm == HMAC_SHA256:
            return hmac.new(SECRET.encode(), data, hashlib.sha256).digest()
        return mmh3.mmh3_x64_128_digest(data, SEED)


@dataclass(frozen=True)
class Pair:
    """Two different strings crafted to collide under MurmurHash3 when hashed by ``target``."""

    target: Target
    s: str
    t: str
    padding: int


def crafted_pairs(target: Target) -> list[Pair]:
    """For every prefix length 0..15 inside the string (so every padding 0..15) and both differentials, a
    pair aligned for ``target``, with a suffix of 0..20 bytes after it."""
    rng = random.Random(target.name)
    pairs = []
    for length in range(16):
        for differential in range(len(DIFFERENTIALS)):
            prefix = "".join(rng.choices(string.ascii_letters, k=length)).encode()
            suffix = "".join(rng.choices(string.digits, k=rng.randint(0, 20))).encode()
            s, t = colliding_strings(prefix, suffix, target.offset, rng, differential)
            pairs.append(Pair(target, s, t, alignment_padding(target.offset + length)))
    return pairs


Hashes = dict[str, tuple[bytes, bytes, bytes, bytes]]


def hashes_in_spark(spark, targets: Sequence[Target], pairs: Sequence[Pair]) -> list[Hashes]:
    """Every target of every pair in one query, evaluated by the executors (not folded on the driver): per
    pair and target name, the SQL function's hash of ``s`` and ``t``, then the ``hx`` function's."""
    df = spark.createDataFrame([(i, p.s, p.t) for i, p in enumerate(pairs)], "id INT, s STRING, t STRING")
    columns = []
    for j, target in enumerate(targets):
        columns += [F.expr(target.sql("s")).alias(f"q{j}s"), F.expr(target.sql("t")).alias(f"q{j}t")]
        columns += [target.column("s").alias(f"p{j}s"), target.column("t").alias(f"p{j}t")]
    with spark_conf(spark, {"spark.sql.optimizer.excludedRules": FOLDING_RULES}):
        hashed: DataFrame = df.select("id", *columns)
        assert all(f.dataType == BinaryType() for f in hashed.schema.fields[1:])
        rows = hashed.orderBy("id").collect()
    assert [r.id for r in rows] == list(range(len(pairs)))
    return [
        {
            target.name: tuple(bytes(r[f"{kind}{j}{v}"]) for kind in "qp" for v in "st")
            for j, target in enumerate(targets)
        }
        for r in rows
    ]


def check_separated(spark, targets: Sequence[Target]) -> None:
    """Every target separates every pair crafted for it, hashing exactly what :meth:`Target.expected`
    computes; the same inputs collide under MurmurHash3."""
    pairs = [p for target in targets for p in crafted_pairs(target)]
    assert {p.padding for p in pairs} == set(range(16))
    for p in pairs:
        data_s, data_t = p.target.encoding(p.s.encode()), p.target.encoding(p.t.encode())
        assert mmh3.mmh3_x64_128_digest(data_s, SEED) == mmh3.mmh3_x64_128_digest(data_t, SEED)
    for p, hashes in zip(pairs, hashes_in_spark(spark, targets, pairs)):
        sql_s, sql_t, py_s, py_t = hashes[p.target.name]
        expected_s, expected_t = p.target.expected(p.s), p.target.expected(p.t)
        assert len(sql_s) == 32, p
        assert sql_s != sql_t, p
        assert (sql_s, sql_t) == (py_s, py_t) == (expected_s, expected_t), p
        assert (p.target.reference(p.s), p.target.reference(p.t)) == (expected_s, expected_t), p


# --- the generator, in pure Python ------------------------------------------------------------------------


def test_premix_inverses():
    """The inverse multipliers are right, and unmix undoes premix (so k-space differences map to bytes)."""
    assert C1 * C1_INV & MASK64 == 1
    assert C2 * C2_INV & MASK64 == 1
    assert (pow(C1, -1, 1 << 64), pow(C2, -1, 1 << 64)) == (C1_INV, C2_INV)
    rng = random.Random(1)
    for m in [0, 1, 1 << 63, MASK64, *(rng.getrandbits(64) for _ in range(1000))]:
        assert unmix_k1(premix_k1(m)) == m and premix_k1(unmix_k1(m)) == m
        assert unmix_k2(premix_k2(m)) == m and premix_k2(unmix_k2(m)) == m


def test_pairs_collide_for_every_seed_when_aligned():
    """Each pair is two different valid UTF-8 strings of 32 bytes that collide for every seed, behind any
    16-aligned prefix and before any suffix; moved off the 16-byte grid, they no longer collide."""
    rng = random.Random(2)
    seeds = [0, 1, SEED, 2**31 - 1, 2**31, 2**32 - 1, *(rng.getrandbits(32) for _ in range(6))]
    assert SEED == reference.SEED
    for differential in range(len(DIFFERENTIALS)):
        for _ in range(40):
            a, b = colliding_blocks(rng, differential)
            assert a != b and len(a) == len(b) == PAIR
            assert a.decode() != b.decode()
            prefix, suffix = rng.randbytes(16 * rng.randint(0, 3)), rng.randbytes(rng.randint(0, 40))
            for seed in seeds:
                x, y = prefix + a + suffix, prefix + b + suffix
                assert mmh3.mmh3_x64_128_digest(x, seed) == mmh3.mmh3_x64_128_digest(y, seed)
                assert mmh3.hash128(x, seed, x64arch=True) == mmh3.hash128(y, seed, x64arch=True)
            shift = rng.randbytes(rng.randint(1, 15))
            assert mmh3.mmh3_x64_128_digest(shift + a, SEED) != mmh3.mmh3_x64_128_digest(shift + b, SEED)


def test_colliding_strings_pad_to_the_stream_offset():
    """colliding_strings pads so that the crafted bytes start at a multiple of 16 of the whole stream."""
    rng = random.Random(3)
    for offset in range(0, 40, 3):
        for length in (0, 1, 5, 15, 16):
            prefix = b"p" * length
            s, t = colliding_strings(prefix, b"-tail", offset, rng)
            padding = alignment_padding(offset + length)
            assert s.encode()[: length + padding] == prefix + b"_" * padding
            assert (offset + length + padding) % 16 == 0
            assert len(s.encode()) == len(t.encode()) == length + padding + PAIR + 5
            stream, seed = rng.randbytes(offset), rng.getrandbits(32)
            x, y = stream + s.encode(), stream + t.encode()
            assert mmh3.mmh3_x64_128_digest(x, seed) == mmh3.mmh3_x64_128_digest(y, seed)


# --- (a) the default mode collides -----------------------------------------------------------------------


MURMUR3_TARGETS = [
    Target("record_hash(s)", key=False),
    Target("record_key(s)", key=True),
    *(Target(f"record_key salt {len(salt.encode())} bytes", key=True, salt=salt) for salt in SALTS),
    Target("record_hash(lead, s)", key=False, lead=True),
    Target("record_key salt=x (lead, s)", key=True, salt="x", lead=True),
]


@pytest.fixture(scope="module")
def murmur3_hashes(spark) -> list[tuple[Pair, Hashes]]:
    """Every MurmurHash3 target over every pair crafted for any of them, from one query."""
    pairs = [p for target in MURMUR3_TARGETS for p in crafted_pairs(target)]
    return list(zip(pairs, hashes_in_spark(spark, MURMUR3_TARGETS, pairs)))


def test_crafted_strings_start_where_the_format_says():
    """Salts have the byte lengths tested, and the crafted string starts after: the version byte, u32 count,
    STRING tag and u32 length (10 bytes) in a record; 0x82, the salt as a STRING, u32 count, STRING tag and
    u32 length (15 bytes + the salt) in a key; 7 more bytes after the lead value 'NL'."""
    assert [len(salt.encode()) for salt in SALTS] == [0, 1, 5, 16, 23]
    assert [t.offset for t in MURMUR3_TARGETS] == [10, 15, 15, 16, 20, 31, 38, 17, 23]


@pytest.mark.parametrize("target", MURMUR3_TARGETS, ids=lambda t: t.name)
def test_murmur3_collides_on_crafted_pairs(murmur3_hashes, target):
    """Two different strings, one hash: in SQL and through ``hx``, at every padding 0..15, and equal to
    MurmurHash3 of the encoding built from docs/FORMAT.md."""
    checked = [(p, h[target.name]) for p, h in murmur3_hashes if p.target == target]
    assert len(checked) == 32
    assert sorted({p.padding for p, _ in checked}) == list(range(16))
    for p, (sql_s, sql_t, py_s, py_t) in checked:
        assert p.s != p.t
        assert len(sql_s) == 16
        assert sql_s == sql_t == py_s == py_t == target.expected(p.s) == target.expected(p.t), p


def test_reference_agrees_with_spark_on_crafted_pairs(murmur3_hashes):
    """The reference gives Spark's hash for every target over every crafted string, not only the target
    the string was crafted for; the hand-built encoding is the reference's."""
    for p, hashes in murmur3_hashes:
        for target in MURMUR3_TARGETS:
            sql_s, sql_t, py_s, py_t = hashes[target.name]
            expected = (target.reference(p.s), target.reference(p.t))
            assert expected == (sql_s, sql_t) == (py_s, py_t), (p, target)
        values = p.target.values(p.s)
        if p.target.key:
            built = reference.encode_key(values, [STRING] * len(values), salt=p.target.salt or "")
        else:
            built = reference.encode_record(values, [STRING] * len(values))
        assert built == p.target.encoding(p.s.encode())


# --- (b) find_collisions reports a crafted pair ------------------------------------------------------------


def test_find_collisions_reports_a_crafted_pair(spark):
    """A hub of ordinary business keys plus two crafted pairs, one aligned for the unsalted key, one for the
    salt "hub": each key definition reports exactly its own pair (the duplicate row counts in ``rows``)."""
    rng = random.Random(4)
    plain, salted = Target("record_key(s)", key=True), Target("salt=hub", key=True, salt="hub")
    s1, t1 = colliding_strings(b"C-", b"", plain.offset, rng)
    s2, t2 = colliding_strings(b"C-", b"", salted.offset, rng, differential=1)
    ids = [f"C-{i:04d}" for i in range(200)] + [s1, t1, s1, s2, t2]
    hub = spark.createDataFrame([(i,) for i in ids], "customer_id STRING")

    def problems(found: DataFrame) -> list[tuple]:
        return [
            (r.kind, [bytes(h) for h in r.hash_keys], [b.customer_id for b in r.business_keys], r.rows)
            for r in found.collect()
        ]

    def reported(s: str, t: str, target: Target, rows: int) -> list[tuple]:
        assert target.reference(s) == target.reference(t)
        return [("collision", [target.reference(s)], sorted([s, t], key=str.encode), rows)]

    assert problems(find_collisions(hub, "customer_id")) == reported(s1, t1, plain, 3)
    assert problems(find_collisions(hub, "customer_id", salt="hub")) == reported(s2, t2, salted, 2)
    stored = hub.select("customer_id", hx.record_key("customer_id").alias("hk"))
    assert problems(find_collisions(stored, "customer_id", hash_col="hk")) == reported(s1, t1, plain, 3)


# --- (c) the SHA-256 modes separate every pair -------------------------------------------------------------


def test_sha256_record_hash_separates_crafted_pairs(spark):
    """record_hash_with('algorithm=sha256', ...) is SHA-256 of the record encoding: 32 bytes, and different
    for every pair that collides under MurmurHash3."""
    check_separated(
        spark,
        [
            Target("sha256 record_hash(s)", key=False, algorithm=SHA256),
            Target("sha256 record_hash(lead, s)", key=False, algorithm=SHA256, lead=True),
        ],
    )


def test_sha256_record_key_separates_crafted_pairs(spark):
    """record_key_with('algorithm=sha256; salt=...', ...) is SHA-256 of the key encoding, for every salt and
    for a key of two parts."""
    targets = [Target("sha256 record_key salt=x (lead, s)", key=True, algorithm=SHA256, salt="x", lead=True)]
    targets += [
        Target(f"sha256 record_key salt {len(salt.encode())} bytes", key=True, algorithm=SHA256, salt=salt)
        for salt in SALTS
    ]
    check_separated(spark, targets)


def test_hmac_sha256_record_key_separates_crafted_pairs(spark):
    """record_key_with('algorithm=hmac-sha256; secret=pii; salt=...', ...) is HMAC-SHA-256 of the key
    encoding under the UTF-8 bytes of spark.hashexpr.secret.pii, for every salt."""
    targets = [
        Target(f"hmac record_key salt {len(salt.encode())} bytes", key=True, algorithm=HMAC_SHA256, salt=salt)
        for salt in SALTS
    ]
    check_separated(spark, targets)


def test_hmac_without_its_secret_names_the_conf(spark):
    """A secret that is not set fails the query, naming the conf to set."""
    df = spark.createDataFrame([("a",)], "s STRING")
    with pytest.raises(Exception, match=r"spark\.hashexpr\.secret\.absent"):
        df.selectExpr("record_key_with('algorithm=hmac-sha256; secret=absent', s)").collect()


# --- fingerprints: the additive default collides, lthash16 does not ----------------------------------------


def test_crafted_rows_forge_the_default_fingerprint_not_lthash16(spark):
    """Two tables that differ in one row, crafted to collide under ``record_hash``: one default fingerprint
    (the murmur3 sum cannot tell them apart), two lthash16 fingerprints, keyed or not, each the reference's."""
    rng = random.Random(8)
    target = Target("record_hash(s)", key=False)
    s, t = colliding_strings(b"order-", b"-paid", target.offset, rng)
    common = [f"order-{i}" for i in range(50)]
    tables = [spark.createDataFrame([(v,) for v in [*common, x]], "s STRING") for x in (s, t)]
    default = [hx.dataset_fingerprint(df) for df in tables]
    assert default[0] == default[1]
    for options in ({"algorithm": "lthash16"}, {"algorithm": "lthash16", "secret": SECRET_NAME}):
        secure = [hx.dataset_fingerprint(df, **options) for df in tables]
        assert secure[0] != secure[1], options
        key = {"key": SECRET} if "secret" in options else {}
        expected = [
            reference.dataset_fingerprint(
                [(v,) for v in [*common, x]], ["s"], [STRING], algorithm="lthash16", **key
            )
            for x in (s, t)
        ]
        assert secure == expected, options
