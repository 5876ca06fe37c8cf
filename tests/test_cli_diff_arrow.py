"""``hashexpr diff`` on the Arrow engine gives what its Spark path gives, from the same Parquet files, with no JVM.

Each scenario runs twice: ``--engine spark`` in the test session (``cli_runner.run``), and ``--engine arrow``
where any request for a Spark session fails the run (``cli_runner.run_without_spark``). Their exit statuses,
counts, messages and ``--out`` files (read back by Spark, compared as sets of rows) must be the same.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import one_error_line, run, run_without_spark
from spark_conf import TEST_SECRETS

D = datetime.date
DEC = decimal.Decimal
NAN = float("nan")

# A key of three columns (a string whose case matters, a date, a decimal) and values that compare by their
# hashes: NaN equals NaN, -0.0 equals 0.0, maps equal in any entry order.
KEY = ["code", "day", "price"]
MAP = pa.map_(pa.string(), pa.int32())
SCHEMA = pa.schema(
    [
        ("code", pa.string()),
        ("day", pa.date32()),
        ("price", pa.decimal128(10, 2)),
        ("x", pa.float64()),
        ("s", pa.string()),
        ("tags", pa.list_(pa.int32())),
        ("attrs", MAP),
    ]
)
OLD_ROWS = [
    # unchanged: NaN, -0.0 against 0.0, map entries in another order
    ("a", D(2024, 1, 1), DEC("1.00"), NAN, "same", [1], [("k", 1), ("j", 2)]),
    ("b", D(2024, 1, 1), DEC("1.00"), -0.0, "same", [], None),
    # updates: one value, and a list
    ("c", D(2024, 1, 2), DEC("2.50"), 1.5, "old", [1, 2], [("k", 1)]),
    ("d", D(2024, 1, 2), DEC("2.50"), None, None, None, None),
    # delete; the key in another case is an insert in new
    ("e", D(2024, 1, 3), DEC("0.10"), 2.0, "gone", [3], None),
    ("cased", D(2024, 1, 3), DEC("0.10"), 2.0, "x", [3], None),
    # duplicate keys: the same two rows on both sides (unchanged); two rows that changed; one row, two in new
    ("dup", D(2024, 2, 1), DEC("9.99"), 1.0, "p", [1], None),
    ("dup", D(2024, 2, 1), DEC("9.99"), 1.0, "q", [1], None),
    ("dup", D(2024, 2, 2), DEC("9.99"), 1.0, "p", [1], None),
    ("dup", D(2024, 2, 2), DEC("9.99"), 1.0, "q", [1], None),
    ("one", D(2024, 2, 3), DEC("1.00"), 1.0, "p", [1], None),
    # NULL key parts: never matched
    ("n", None, DEC("1.00"), 1.0, "p", [1], None),
    (None, D(2024, 3, 1), None, 1.0, "p", [1], None),
]
NEW_ROWS = [
    ("a", D(2024, 1, 1), DEC("1.00"), NAN, "same", [1], [("j", 2), ("k", 1)]),
    ("b", D(2024, 1, 1), DEC("1.00"), 0.0, "same", [], None),
    ("c", D(2024, 1, 2), DEC("2.50"), 1.5, "new", [1, 2], [("k", 1)]),
    ("d", D(2024, 1, 2), DEC("2.50"), None, None, [2], None),
    ("CASED", D(2024, 1, 3), DEC("0.10"), 2.0, "x", [3], None),
    ("dup", D(2024, 2, 1), DEC("9.99"), 1.0, "q", [1], None),
    ("dup", D(2024, 2, 1), DEC("9.99"), 1.0, "p", [1], None),
    ("dup", D(2024, 2, 2), DEC("9.99"), 1.0, "p", [1], None),
    ("dup", D(2024, 2, 2), DEC("9.99"), 1.0, "r", [1], None),
    ("one", D(2024, 2, 3), DEC("1.00"), 1.0, "p", [1], None),
    ("one", D(2024, 2, 3), DEC("1.00"), 1.0, "p", [1], None),
    ("n", None, DEC("1.00"), 1.0, "p", [1], None),
    ("f", D(2024, 4, 1), DEC("3.00"), 0.5, "added", [], [("z", 0)]),
]
EXPECTED = {"insert": 2, "update": 2, "delete": 2, "duplicate_key": 7, "null_key": 3}


def _table(rows: list[tuple], schema: pa.Schema = SCHEMA) -> pa.Table:
    return pa.table({f.name: pa.array([r[i] for r in rows], f.type) for i, f in enumerate(schema)}, schema)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli-diff-arrow")
    old, new = _table(OLD_ROWS), _table(NEW_ROWS)
    pq.write_table(old, folder / "old.parquet")
    # NEW as a directory of two part files, as Spark writes them.
    (folder / "new").mkdir()
    pq.write_table(new.slice(0, 6), folder / "new" / "part-00000.parquet")
    pq.write_table(new.slice(6), folder / "new" / "part-00001.parquet")
    (folder / "new" / "_SUCCESS").write_text("")
    pq.write_table(old.schema.empty_table(), folder / "empty.parquet")
    # A column only in each side.
    pq.write_table(old.append_column("only_old", pa.array([1] * old.num_rows)), folder / "old_more.parquet")
    pq.write_table(new.append_column("only_new", pa.array(["x"] * new.num_rows)), folder / "new_more.parquet")
    # Types that widen: INT and BIGINT, DECIMAL(10,2) and DECIMAL(12,3) in the key; FLOAT and DOUBLE, lists of
    # INT and BIGINT compared; and a column whose type changes to one that never compares equal.
    pq.write_table(
        pa.table(
            {
                "id": pa.array([1, 2, 3, None], pa.int32()),
                "amount": pa.array(
                    [DEC("1.50"), DEC("2.00"), DEC("3.00"), DEC("4.00")], pa.decimal128(10, 2)
                ),
                "x": pa.array([0.5, 1.5, 2.5, 3.5], pa.float32()),
                "tags": pa.array([[1], [2], [3], [4]], pa.list_(pa.int32())),
                "v": pa.array([1, 2, 3, 4], pa.int32()),
            }
        ),
        folder / "narrow.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "ID": pa.array([1, 2, 4, 5], pa.int64()),
                "amount": pa.array(
                    [DEC("1.500"), DEC("2.000"), DEC("4.000"), DEC("5.000")], pa.decimal128(12, 3)
                ),
                "x": pa.array([0.5, 1.25, 2.5, 3.5], pa.float64()),
                "tags": pa.array([[1], [2], [3], [4]], pa.list_(pa.int64())),
                "v": pa.array(["1", "2", "3", "4"]),
            }
        ),
        folder / "wide.parquet",
    )
    return folder


# Each scenario: the diff's arguments (OLD and NEW relative to the folder), and for --out the output's name.
SCENARIOS = {
    "counts": (["old.parquet", "new", "--key", ",".join(KEY), "--exit-code"], None),
    "out": (["old.parquet", "new", "--key", "CODE,day,price"], "full.parquet"),
    "no changed columns": (
        ["old.parquet", "new", "--key", ",".join(KEY), "--no-changed-columns"],
        "keys.parquet",
    ),
    "columns": (["old.parquet", "new", "--key", ",".join(KEY), "--columns", "s,X"], "cols.parquet"),
    "exclude": (
        ["old_more.parquet", "new", "--key", ",".join(KEY), "--exclude", "only_old,attrs"],
        "ex.parquet",
    ),
    "hmac": (
        ["old.parquet", "new", "--key", ",".join(KEY), "--algorithm", "hmac-sha256", "--secret", "cli.pii"],
        "hmac.parquet",
    ),
    "empty new": (["old.parquet", "empty.parquet", "--key", ",".join(KEY)], "gone.parquet"),
    "widened": (
        ["narrow.parquet", "wide.parquet", "--key", "id,amount", "--columns", "x,tags"],
        "wide_out.parquet",
    ),
    # Refused alike.
    "schemas differ": (["old_more.parquet", "new_more.parquet", "--key", ",".join(KEY)], None),
    "types differ": (["narrow.parquet", "wide.parquet", "--key", "id"], None),
    "never equal": (["narrow.parquet", "wide.parquet", "--key", "id", "--columns", "v"], None),
    "column in old only": (
        ["old_more.parquet", "new", "--key", ",".join(KEY), "--columns", "s,only_old"],
        None,
    ),
    "unknown key": (["old.parquet", "new_more.parquet", "--key", "code,only_new"], None),
    "columns hold the key": (["old.parquet", "new", "--key", "code", "--columns", "s,CODE"], None),
}
_REFUSED = (
    "schemas differ", "types differ", "never equal", "column in old only", "unknown key", "columns hold the key",
)  # fmt: skip
ENV = {"HASHEXPR_SECRET_CLI_PII": TEST_SECRETS["cli.pii"]}


@pytest.fixture(scope="module")
def runs(spark, folder, monkeypatch_module) -> dict[str, dict]:
    """Every scenario on both engines: Spark's in the test session, Arrow's with no session to ask for."""
    monkeypatch_module.chdir(folder)
    done: dict[str, dict] = {}
    for name, (args, out) in SCENARIOS.items():
        done[name] = {}
        for engine in ("spark", "arrow"):
            extra = ["--out", f"{engine}_{out}"] if out else []
            argv = ["diff", *args, *extra, "--engine", engine, "--json"]
            done[name][engine] = (
                run(spark, *argv, env=ENV) if engine == "spark" else run_without_spark(*argv, env=ENV)
            )
    return done


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def _report(done) -> dict:
    report = json.loads(done.stdout)
    report.pop("elapsed_seconds", None)
    return report


def _canonical(value: object) -> object:
    """A value of a collected Row as a hashable, order-free form: maps as sorted items, NaN as a word."""
    if hasattr(value, "asDict"):
        return tuple((k, _canonical(v)) for k, v in value.asDict().items())
    if isinstance(value, dict):
        return tuple(sorted((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_canonical(v) for v in value)
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


@pytest.mark.parametrize("name", [n for n in SCENARIOS if n not in _REFUSED])
def test_the_arrow_engine_counts_and_writes_what_spark_does(spark, folder, runs, name):
    spark_run, arrow_run = runs[name]["spark"], runs[name]["arrow"]
    assert spark_run.returncode == arrow_run.returncode, (spark_run.stderr, arrow_run.stderr)
    expected, actual = _report(spark_run), _report(arrow_run)
    assert (expected.pop("engine"), actual.pop("engine")) == ("spark", "arrow")
    for report in (expected, actual):
        report.get("output", {}).pop("path", None)
    assert actual == expected
    out = SCENARIOS[name][1]
    if out is None:
        return
    written = {e: spark.read.parquet(str(folder / f"{e}_{out}")) for e in ("spark", "arrow")}
    assert written["arrow"].schema.simpleString() == written["spark"].schema.simpleString()
    rows = {e: Counter(_canonical(r) for r in df.collect()) for e, df in written.items()}
    assert rows["arrow"] == rows["spark"]
    assert sum(rows["arrow"].values()) == expected["differences"]


@pytest.mark.parametrize("name", _REFUSED)
def test_the_arrow_engine_refuses_what_spark_refuses_in_the_same_words(runs, name):
    spark_run, arrow_run = runs[name]["spark"], runs[name]["arrow"]
    assert (spark_run.returncode, arrow_run.returncode) == (2, 2), (spark_run.stderr, arrow_run.stderr)
    assert arrow_run.stderr == spark_run.stderr
    assert len(arrow_run.stderr.splitlines()) == 1
    assert json.loads(arrow_run.stdout) == json.loads(spark_run.stdout)


def test_the_scenarios_cover_every_change(runs):
    counts = _report(runs["counts"]["arrow"])["counts"]
    assert counts == EXPECTED
    assert runs["counts"]["arrow"].returncode == 1  # --exit-code: differences found
    assert _report(runs["empty new"]["arrow"])["counts"] == {
        "insert": 0, "update": 0, "delete": 7, "duplicate_key": 4, "null_key": 2,
    }  # fmt: skip
    assert "only in old: ['only_old']" in runs["schemas differ"]["arrow"].stderr
    assert "'x' (float -> double)" in runs["types differ"]["arrow"].stderr


def test_auto_takes_the_arrow_engine_and_says_so(folder, monkeypatch):
    monkeypatch.chdir(folder)
    done = run_without_spark("diff", "old.parquet", "new", "--key", ",".join(KEY))
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(None, 1) for line in done.stdout.splitlines())
    assert lines["engine"] == "arrow"
    assert {k: int(lines[k]) for k in EXPECTED} == EXPECTED


def test_the_arrow_engine_says_why_it_cannot_run(folder, monkeypatch, tmp_path):
    monkeypatch.chdir(folder)
    (tmp_path / "old.csv").write_text("code,s\na,1\n")
    done = run_without_spark("diff", tmp_path / "old.csv", "new", "--key", "code", "--engine", "arrow")
    assert one_error_line(done) == (
        "--engine arrow cannot run this: the engine reads Parquet files only; use --engine spark or auto"
    )
    # Columns with_metadata wrote carry stored hashes, which hx.diff reads in Spark.
    stored = _table(OLD_ROWS).append_column("_hx_record_hash", pa.array([b"x"] * len(OLD_ROWS)))
    pq.write_table(stored, tmp_path / "stored.parquet")
    done = run_without_spark("diff", tmp_path / "stored.parquet", "new", "--key", "code", "--engine", "arrow")
    assert "with_metadata wrote (_hx_record_hash)" in one_error_line(done)


def test_a_snapshot_that_changes_between_reads_fails_instead_of_a_wrong_result(tmp_path):
    from hashexpr.arrow.diff import diff

    old, new = _table(OLD_ROWS), _table(NEW_ROWS)
    reads = []

    def changing(columns):
        # The second read of the rows gives other values: a file rewritten while the diff ran.
        reads.extend([columns] if columns is not None else [])
        table = new if len(reads) < 2 else new.set_column(4, "s", pa.array(["?"] * new.num_rows))
        return table.select(columns or table.column_names).to_reader()

    with pytest.raises(ValueError, match="new gave other rows when read a second time"):
        diff(old, changing, KEY, include_values=True)


def test_a_diff_of_int96_files_spark_wrote_is_hx_diffs(spark, tmp_path):
    """Spark writes timestamps as INT96 by default: hashexpr.arrow.diff reads each side through hashexpr.arrow's
    inputs (a path, a dataset, a table read in microseconds), INT96 as Spark's TIMESTAMP, and gives hx.diff's rows
    for the same files, instants beyond pyarrow's nanoseconds among them; the command line takes the engine."""
    import pyarrow.dataset as ds
    from spark_conf import spark_conf

    import hashexpr as hx
    from hashexpr.arrow.diff import diff

    rows = """
    SELECT id, TIMESTAMP'1900-01-01 00:00:00' + make_interval(0, 0, 0, id {shift}, 0, 0, 0) AS at,
           IF(id = 0, TIMESTAMP'9999-12-31 23:59:59.999999', TIMESTAMP'1677-09-21 00:12:43.145224') AS seen,
           'v' || id {suffix} AS v
    FROM range({start}, {end})
    """
    paths = {side: str(tmp_path / side) for side in ("old", "new")}
    with spark_conf(spark, {"spark.sql.parquet.outputTimestampType": "INT96"}):
        spark.sql(rows.format(shift="", suffix="", start=0, end=4)).write.parquet(paths["old"])
        # id 1 changes its v, id 2 its key part at; id 3 is gone and id 4 new.
        changed = rows.format(shift="+ IF(id = 2, 1, 0)", suffix="|| IF(id = 1, 'x', '')", start=0, end=5)
        spark.sql(changed).where("id != 3").write.parquet(paths["new"])
    key = ["id", "at"]
    expected = hx.diff(*(spark.read.parquet(p) for p in paths.values()), key, include_values=True)
    found = diff(paths["old"], paths["new"], key, include_values=True)
    got = spark.createDataFrame(found)
    assert got.schema.simpleString() == expected.schema.simpleString()
    assert sorted(map(repr, got.collect())) == sorted(map(repr, expected.collect()))
    assert sorted(found["change"].to_pylist()) == ["delete", "delete", "insert", "insert", "update"]
    table = pq.read_table(paths["old"], coerce_int96_timestamp_unit="us")
    again = diff(table, ds.dataset(paths["new"]), key, include_values=True)
    assert sorted(map(repr, again.to_pylist())) == sorted(map(repr, found.to_pylist()))
    done = run_without_spark("diff", paths["old"], paths["new"], "--key", "id,at", "--json")
    report = json.loads(done.stdout)
    assert (report["engine"], report["counts"]) == ("arrow", hx.summarize(expected))
