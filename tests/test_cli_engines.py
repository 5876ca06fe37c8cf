"""Which engine runs a command, and what the Arrow engine now takes: key options in ``collisions`` and ``hash``,
and Hive-partitioned directories of Parquet files read as Spark reads them (partition columns appended, with
Spark's inferred types). Arrow runs ask for no Spark session (``cli_runner.run_without_spark``); their results are
checked against Spark reading the same files in the test session.
"""

from __future__ import annotations

import datetime
import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import one_error_line, run, run_without_spark, summary
from murmur_collisions import colliding_strings
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

import hashexpr as hx
from hashexpr import reference

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", None, "c"]})


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli-engines")
    pq.write_table(ROWS, folder / "rows.parquet")
    pq.write_table(ROWS.slice(1), folder / "rows_later.parquet")
    # A hub keyed by record_key_with('salt=hub; trim', customer): two spellings of one key, and two keys crafted
    # to collide under MurmurHash3 (their bytes start 18 bytes into the key's encoding).
    s, t = colliding_strings(b"C-", b"-x", offset=18, rng=random.Random(40))
    assert reference.record_key([s], [StringType()], salt="hub") == reference.record_key(
        [t], [StringType()], salt="hub"
    )
    customers = [f"  {s}", f"{t} ", t, " c1 ", "C1", "c2", None]
    pq.write_table(pa.table({"customer": customers}), folder / "hub.parquet")
    # A Hive-partitioned directory: integers (leading zeros, one beyond INT), dates with a NULL, text.
    for n, day, origin in [
        ("0007", "2024-02-29", "EWR"),
        ("3000000000", "2024-02-29", "JFK"),
        ("0007", "__HIVE_DEFAULT_PARTITION__", "JFK"),
    ]:
        part = folder / "hive" / f"n={n}" / f"day={day}" / f"origin={origin}"
        part.mkdir(parents=True)
        pq.write_table(ROWS, part / "part-00000.snappy.parquet")
    (folder / "hive" / "_SUCCESS").write_text("")
    return folder


def test_collisions_with_key_options_run_on_the_arrow_engine(spark, folder, monkeypatch):
    monkeypatch.chdir(folder)
    found = {}
    for options, problems in [("salt=hub; trim", 1), ("trim; case=upper", 0)]:
        args = ["collisions", "hub.parquet", "--key", "customer", "--key-options", options, "--json"]
        arrow = run_without_spark(*args)
        expected = run(spark, *args, "--engine", "spark")
        assert arrow.returncode == expected.returncode == (1 if problems else 0), arrow.stderr
        reports = [json.loads(done.stdout) for done in (arrow, expected)]
        assert [r.pop("engine") for r in reports] == ["arrow", "spark"]
        for report in reports:
            report.pop("elapsed_seconds")
        assert reports[0] == reports[1]
        assert reports[0]["problems"] == problems
        found[options] = reports[0]
    # The business keys shown are the normalised ones, as find_collisions shows them.
    business = found["salt=hub; trim"]["shown"][0]["business_keys"]
    assert len(business) == 2 and all(k[0] == k[0].strip() for k in business)


def test_hash_with_key_options_runs_on_the_arrow_engine(spark, folder, tmp_path):
    out = tmp_path / "keyed.parquet"
    done = run_without_spark(
        "hash", folder / "hub.parquet", "--out", out, "--key", "customer", "--key-options", "trim; case=upper"
    )
    assert summary(done.stdout)["engine"] == "arrow"
    written = spark.read.parquet(str(out))
    expected = written.select(F.hex(hx.record_key("customer", trim=True, case="upper")))
    assert sorted(written.select(F.hex("record_key")).collect()) == sorted(expected.collect())


def test_every_command_names_its_engine(spark, folder, tmp_path, monkeypatch):
    monkeypatch.chdir(folder)
    commands = {
        "fingerprint": ["fingerprint", "rows.parquet"],
        "hash": ["hash", "rows.parquet", "--out", tmp_path / "{engine}"],
        "diff": ["diff", "rows.parquet", "rows_later.parquet", "--key", "id"],
        "collisions": ["collisions", "rows.parquet", "--key", "name"],
    }
    for name, args in commands.items():
        for engine in ("arrow", "spark"):
            argv = [str(a).format(engine=engine) for a in args] + ["--engine", engine]
            runner = (lambda *a: run(spark, *a)) if engine == "spark" else run_without_spark
            text = runner(*argv)
            assert text.returncode == 0, text.stderr
            # fingerprint and collisions print their summary on stderr, beside the result on stdout.
            shown = text.stderr if name in ("fingerprint", "collisions") else text.stdout
            assert summary(shown)["engine"] == engine, shown
            if engine == "spark" and name == "diff":
                continue  # its --json names Spark in test_cli_diff_arrow
            if name == "hash":
                argv[argv.index("--out") + 1] += "_json"
            report = json.loads(runner(*argv, "--json").stdout)
            assert report.get("engine") == engine, (name, report)


def test_a_hive_partitioned_directory_is_read_by_the_arrow_engine_as_spark_reads_it(spark, folder, tmp_path):
    hive = str(folder / "hive")
    df = spark.read.parquet(hive)
    assert df.schema.simpleString() == "struct<id:bigint,name:string,n:bigint,day:date,origin:string>"
    done = run_without_spark("fingerprint", hive, "--json")
    report = json.loads(done.stdout)
    assert (report["engine"], report["columns"], report["rows"]) == ("arrow", df.columns, 9)
    assert report["fingerprint"] == hx.dataset_fingerprint(df)
    # Grouped by a partition column, NULL first.
    groups = json.loads(run_without_spark("fingerprint", hive, "--by", "day", "--json").stdout)[
        "fingerprints"
    ]
    expected = {r["day"]: r["fingerprint"] for r in hx.fingerprints_by(df, "day").collect()}
    assert [g["group"]["day"] for g in groups] == [None, "2024-02-29"]
    assert groups[1]["fingerprint"] == expected[datetime.date(2024, 2, 29)]
    out = tmp_path / "hashed.parquet"
    assert (
        summary(run_without_spark("hash", hive, "--out", out, "--key", "n,origin").stdout)["engine"]
        == "arrow"
    )
    written = spark.read.parquet(str(out))
    assert written.columns == [*df.columns, "record_key", "record_hash"]
    hashed = [F.hex(hx.record_key("n", "origin")), F.hex(hx.record_hash(*df.columns))]
    assert sorted(written.select(F.hex("record_key"), F.hex("record_hash")).collect()) == sorted(
        df.select(*hashed).collect()
    )


@pytest.mark.parametrize(
    ("parts", "reason"),
    [
        (
            ["x=1e3"],
            "the partition value '1e3' of 'x' is a number in a form Spark reads as a DOUBLE or DECIMAL",
        ),
        (["t=2024-01-05 10%3A00%3A00"], "of 't' is a timestamp, which Spark reads in the session time zone"),
        (["k=__HIVE_DEFAULT_PARTITION__"], "every value of the partition column 'k' is NULL"),
        (["k=1/j=2", "k=2"], "the files are at different partition levels"),
        (["plain"], "the directory 'plain' (of "),
        (["id=1"], "'id' is both a column of the files and a partition directory"),
    ],
)
def test_partitions_spark_reads_by_rules_of_its_own_are_left_to_spark(tmp_path, parts, reason):
    """The Arrow engine reads partition directories through hashexpr.arrow, with its refusals and reasons."""
    for part in parts:
        (tmp_path / "data" / part).mkdir(parents=True)
        pq.write_table(ROWS, tmp_path / "data" / part / "part-0.parquet")
    done = run_without_spark("fingerprint", tmp_path / "data", "--engine", "arrow")
    message = one_error_line(done)
    assert message.startswith("--engine arrow cannot run this: ") and reason in message, message


def test_groups_show_the_values_spark_shows(spark, tmp_path, monkeypatch):
    """-0.0 and 0.0 are one group shown as 0.0, NaN orders last, a struct shows as a Row and a timestamp as
    PySpark's local datetime, on both engines, whatever the session time zone."""
    utc = datetime.timezone.utc
    at = [
        datetime.datetime(2024, 1, 1, 10, tzinfo=utc),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 5, tzinfo=utc),
    ]
    table = pa.table(
        {
            "f": pa.array([-0.0, 0.0, float("nan"), 1.5, None, 1.5]),
            "s": pa.array([{"a": 1, "b": "x"}, {"a": 1, "b": "x"}, None, {"a": 2, "b": None}, {"a": 0, "b": "y"}] * 1
                          + [{"a": 2, "b": None}]),
            "ts": pa.array([at[0], at[0], at[1], None, at[1], at[1]], pa.timestamp("us", tz="UTC")),
            "v": [1, 2, 3, 4, 5, 6],
        }
    )  # fmt: skip
    pq.write_table(table, tmp_path / "groups.parquet")
    monkeypatch.chdir(tmp_path)
    # The session time zone changes nothing on Parquet: it leaves the run to the Arrow engine.
    for extra in ([], ["--json", "--conf", "spark.sql.session.timeZone=America/New_York"]):
        args = ["fingerprint", "groups.parquet", "--by", "f,s,ts", *extra]
        arrow, expected = run_without_spark(*args), run(spark, *args, "--engine", "spark")
        assert arrow.returncode == expected.returncode == 0, arrow.stderr
        if extra:
            reports = [json.loads(done.stdout) for done in (arrow, expected)]
            assert [r.pop("engine") for r in reports] == ["arrow", "spark"]
            assert [r.pop("elapsed_seconds") > 0 for r in reports] == [True, True]
            assert reports[0] == reports[1]
        else:
            assert arrow.stdout == expected.stdout
            assert arrow.stdout.splitlines()[1].startswith("0.0\tRow(a=1, b='x')\t2024-01-01 ")
