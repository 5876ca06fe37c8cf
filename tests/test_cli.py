"""The ``hashexpr`` command line, run in-process in the ``spark`` fixture's session (``cli_runner.run``).

Each run checks what the command wrote, printed and exited with; the expected hashes come from ``record_hash``
in SQL in the same session, on the same input. Runs that must end before Spark are checked to ask for no session.
``python -m hashexpr`` runs once as a real process, for the module's entry point.
"""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

import pytest

import hashexpr as hx

ROOT = Path(__file__).resolve().parents[1]
UTC = datetime.timezone.utc

COLUMNS = ["id", "name", "amount", "day", "ts"]
SCHEMA = "id INT, name STRING, amount DOUBLE, day DATE, ts TIMESTAMP"
ROWS = [
    (1, "a", 1.5, datetime.date(2024, 1, 1), datetime.datetime(2024, 1, 1, 10, tzinfo=UTC)),
    (2, None, None, None, None),
    (
        3,
        "x,y",
        -0.0,
        datetime.date(1969, 12, 31),
        datetime.datetime(1960, 6, 30, 23, 59, 59, 123456, tzinfo=UTC),
    ),
    (4, "é", 2.0, datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, tzinfo=UTC)),
    (4, "é", 2.0, datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, tzinfo=UTC)),
]
CSV = """\
id,name,amount,day,ts
1,a,1.5,2024-01-01,2024-01-01 10:00:00
2,,,,
3,"x,y",-0.0,1969-12-31,1960-06-30 23:59:59.123456
4,é,2.0,2024-02-29,2024-02-29 00:00:00
4,é,2.0,2024-02-29,2024-02-29 00:00:00
"""
JSON_ROWS = [
    {"id": 1, "name": "a", "tags": ["x", "y"], "attrs": {"k": 1, "j": None}},
    {"id": 2, "name": None, "tags": [], "attrs": None},
    {"id": 3, "name": "", "tags": None, "attrs": {"k": 2, "j": "z"}},
]
# A column named `a.b` beside a struct `a` with a field `b`: --by a.b names the column.
DOTTED_ROWS = [{"id": i, "a.b": v, "a": {"b": "same"}} for i, v in enumerate(["y", "x", "y"])]

from cli_runner import cli as _cli
from cli_runner import ok as _ok
from cli_runner import one_error_line as _one_error_line
from cli_runner import run as _run
from cli_runner import run_without_spark as _run_without_spark
from cli_runner import summary as _summary
from spark_conf import TEST_SECRETS

# The HMAC key of the --algorithm hmac-sha256 runs: given through the environment, never printed (the test
# session has it in its configuration, to check the hashes).
CLI_SECRET = TEST_SECRETS["cli.pii"]


def _expected(df, columns: str = "*") -> list[tuple]:
    """(id, hex hash) of every row, hashed by SQL ``record_hash`` in the fixture's session."""
    return sorted(tuple(r) for r in df.selectExpr("id", f"hex(record_hash({columns}))").collect())


def _actual(df, column: str, as_hex: bool) -> list[tuple]:
    """(id, hex hash) of every row of an output, as the command line wrote it."""
    return sorted(tuple(r) for r in df.selectExpr("id", column if as_hex else f"hex({column})").collect())


@pytest.fixture(scope="module")
def inputs(spark, tmp_path_factory) -> dict[str, Path]:
    """The same kind of data as Parquet and ORC (written by Spark), CSV and JSON (written by hand)."""
    folder = tmp_path_factory.mktemp("cli-inputs")
    df = spark.createDataFrame(ROWS, SCHEMA).coalesce(1)
    df.write.parquet(str(folder / "rows.parquet"))
    # No extension: the command line has to recognise the format from the part files.
    df.write.orc(str(folder / "rows_orc"))
    (folder / "rows.csv").write_text(CSV, encoding="utf-8")
    (folder / "nested.json").write_text("\n".join(json.dumps(r) for r in JSON_ROWS) + "\n", encoding="utf-8")
    (folder / "dotted.json").write_text(
        "\n".join(json.dumps(r) for r in DOTTED_ROWS) + "\n", encoding="utf-8"
    )
    # Parquet's magic bytes around no Parquet: only Spark's reader finds out.
    (folder / "corrupt.parquet").write_bytes(b"PAR1 not a Parquet file PAR1")
    # A later snapshot of rows.parquet: id 1 updated, id 2 deleted, id 5 inserted, one of id 4's two rows changed.
    changed = [(1, "b", *ROWS[0][2:]), *ROWS[2:4], (4, "é", 3.0, *ROWS[4][3:]), (5, "new", None, None, None)]
    spark.createDataFrame(changed, SCHEMA).coalesce(1).write.parquet(str(folder / "rows_v2.parquet"))
    # A stored hub whose hash key column has one forced collision: keys 'a' and 'b' share a hash key.
    hub = [("a", bytes([1]) * 16), ("b", bytes([1]) * 16), ("c", bytes([2]) * 16)]
    spark.createDataFrame(hub, "k STRING, hk BINARY").coalesce(1).write.parquet(str(folder / "hub.parquet"))
    return {
        "parquet": folder / "rows.parquet",
        "orc": folder / "rows_orc",
        "csv": folder / "rows.csv",
        "json": folder / "nested.json",
        "dotted": folder / "dotted.json",
        "corrupt": folder / "corrupt.parquet",
        "parquet v2": folder / "rows_v2.parquet",
        "hub": folder / "hub.parquet",
    }


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli-outputs")
    (folder / "hashed").mkdir()
    (folder / "hashed" / "stale.txt").write_text("replaced by --mode overwrite\n")
    return folder


@pytest.fixture(scope="module")
def runs(spark, inputs, outputs) -> dict[str, subprocess.CompletedProcess]:
    """The runs that use Spark, in the test session; the tests below check one each. Spark-written Parquet would
    take the Arrow engine (test_cli_arrow.py checks it against these): ``--engine spark`` keeps them on Spark."""
    spark_engine = ["--engine", "spark"]
    commands = {
            "parquet": ["hash", inputs["parquet"], "--out", outputs / "hashed.parquet", *spark_engine],
            # Columns in another order than the file's, spaces and case aside: the hash follows the order given.
            "csv": ["hash", inputs["csv"], "--out", outputs / "hashed.csv", "--hex", "--columns", "ts, NAME"],
            "json": ["hash", inputs["json"], "--out", outputs / "hashed.orc"],
            "orc": [
                "hash", inputs["orc"], "--out", outputs / "hashed", "--out-format", "json", "--hex",
                "--columns", "amount,id", "--column-name", "row hash", "--mode", "overwrite",
            ],
            "bad column": ["hash", inputs["parquet"], "--out", outputs / "x.parquet", "--columns", "id,nmae"],
            "corrupt": ["hash", inputs["corrupt"], "--out", outputs / "y.parquet"],
            "fingerprint": ["fingerprint", inputs["parquet"], *spark_engine],
            "fingerprint by": ["fingerprint", inputs["csv"], "--by", "name"],
            "fingerprint by dotted": ["fingerprint", inputs["dotted"], "--by", "a.b"],
            "diff": ["diff", inputs["parquet"], inputs["parquet v2"], "--key", "id", *spark_engine],
            "collisions": ["collisions", inputs["hub"], "--key", "k", "--hash-col", "hk"],
            "hash hmac": [
                "hash", inputs["parquet"], "--out", outputs / "hmac.parquet", "--key", "id",
                "--algorithm", "hmac-sha256", "--secret", "cli.pii", "--verbose", *spark_engine,
            ],
            "diff sha256": ["diff", inputs["parquet"], inputs["parquet v2"], "--key", "id", "--algorithm", "sha256",
                            *spark_engine],
            "hmac no key": ["hash", inputs["parquet"], "--out", outputs / "z", "--algorithm", "hmac-sha256",
                            "--secret", "absent"],
            "fingerprint lthash16 hmac": ["fingerprint", inputs["parquet"], "--algorithm", "lthash16",
                                          "--secret", "cli.pii", *spark_engine],
            "fingerprint lthash16 expects murmur3": ["fingerprint", inputs["parquet"], "--algorithm", "lthash16",
                                                     "--expect", "hx1:" + "0" * 64, *spark_engine],
    }  # fmt: skip
    env = {"HASHEXPR_SECRET_CLI_PII": CLI_SECRET}
    return {name: _run(spark, *args, env=env) for name, args in commands.items()}


def test_parquet_every_column_binary_and_summary(spark, inputs, outputs, runs):
    summary = _summary(_ok(runs["parquet"]))

    out = outputs / "hashed.parquet"
    hashed = spark.read.parquet(str(out))
    assert hashed.columns == [*COLUMNS, "record_hash"]
    assert hashed.schema["record_hash"].dataType.simpleString() == "binary"
    expected = _expected(spark.read.parquet(str(inputs["parquet"])))
    assert _actual(hashed, "record_hash", as_hex=False) == expected
    assert summary["input"] == f"{inputs['parquet']} (parquet)"
    assert summary["rows read"] == "5"
    assert summary["columns hashed"] == "5 of 5: id, name, amount, day, ts"
    assert summary["output"] == f"{out} (parquet), column record_hash BINARY(16)"
    assert summary["distinct hashes"] == "4 of 5 rows (1 duplicate)"
    assert float(summary["elapsed"].removesuffix(" s")) > 0


def test_csv_chosen_columns_hex_to_csv(spark, inputs, outputs, runs):
    summary = _summary(_ok(runs["csv"]))

    hashed = spark.read.option("header", True).option("inferSchema", True).csv(str(outputs / "hashed.csv"))
    assert hashed.columns == [*COLUMNS, "record_hash"]
    source = spark.read.option("header", True).option("inferSchema", True).csv(str(inputs["csv"]))
    assert _actual(hashed, "record_hash", as_hex=True) == _expected(source, "ts, name")
    assert _expected(source, "ts, name") != _expected(source, "name, ts")
    assert summary["columns hashed"] == "2 of 5: ts, name"
    assert summary["output"] == f"{outputs / 'hashed.csv'} (csv), column record_hash STRING (hex)"


def test_json_nested_to_orc(spark, inputs, outputs, runs):
    _ok(runs["json"])

    hashed = spark.read.orc(str(outputs / "hashed.orc"))
    expected = _expected(spark.read.json(str(inputs["json"])))
    assert _actual(hashed, "record_hash", as_hex=False) == expected
    assert len({h for _, h in expected}) == len(JSON_ROWS)


def test_orc_directory_to_json_hex_named_column_overwrite(spark, inputs, outputs, runs):
    summary = _summary(_ok(runs["orc"]))

    assert not (outputs / "hashed" / "stale.txt").exists()
    assert summary["input"] == f"{inputs['orc']} (orc)"
    hashed = spark.read.json(str(outputs / "hashed"))
    expected = _expected(spark.read.orc(str(inputs["orc"])), "amount, id")
    assert _actual(hashed, "`row hash`", as_hex=True) == expected


def test_fingerprint_prints_the_fingerprint_alone_on_stdout(spark, inputs, runs):
    import hashexpr as hx

    expected = hx.dataset_fingerprint(spark.read.parquet(str(inputs["parquet"])))
    assert _ok(runs["fingerprint"]).splitlines() == [expected]
    assert "rows" in runs["fingerprint"].stderr and "5" in runs["fingerprint"].stderr


def test_fingerprint_by_prints_one_line_per_group(spark, inputs, runs):
    import hashexpr as hx

    csv = spark.read.csv(str(inputs["csv"]), header=True, inferSchema=True)
    groups = hx.fingerprints_by(csv, "name").orderBy("name").collect()
    # A NULL group prints as NULL.
    expected = [f"{'NULL' if g['name'] is None else g['name']}\t{g['fingerprint']}" for g in groups]
    assert _ok(runs["fingerprint by"]).splitlines() == expected
    assert len(expected) == 4


def test_fingerprint_by_takes_a_dotted_name_literally(spark, inputs, runs):
    import hashexpr as hx
    from hashexpr.names import column

    dotted = spark.read.json(str(inputs["dotted"]))
    expected = [f"{v}\t{hx.dataset_fingerprint(dotted.where(column('a.b') == v))}" for v in ("x", "y")]
    assert _ok(runs["fingerprint by dotted"]).splitlines() == expected


def test_diff_prints_the_counts_per_change(spark, inputs, runs):
    import hashexpr as hx

    old, new = (spark.read.parquet(str(inputs[name])) for name in ("parquet", "parquet v2"))
    expected = hx.summarize(hx.diff(old, new, ["id"]))
    summary = _summary(_ok(runs["diff"]))
    assert {k: int(summary[k].replace(",", "")) for k in expected} == expected
    assert expected["insert"] == 1 and expected["update"] == 1 and expected["delete"] == 1
    # Id 4 is on two rows of each snapshot and one of them changed: all four rows are reported, none merged.
    assert expected["duplicate_key"] == 4


def test_hash_with_hmac_reads_the_key_from_the_environment_and_never_prints_it(spark, inputs, outputs, runs):
    summary = _summary(_ok(runs["hash hmac"]))
    assert summary["output"] == f"{outputs / 'hmac.parquet'} (parquet), column record_hash BINARY(32)"
    hashed = spark.read.parquet(str(outputs / "hmac.parquet"))
    expected = hashed.selectExpr(
        "record_hash = record_hash_with('algorithm=hmac-sha256; secret=cli.pii', id, name, amount, day, ts)",
        "record_key = record_key_with('algorithm=hmac-sha256; secret=cli.pii', id)",
    ).collect()
    assert len(expected) == 5 and all(all(r) for r in expected)
    for run in runs.values():
        assert CLI_SECRET not in run.stdout + run.stderr
    assert _one_error_line(runs["hmac no key"]) == (
        "--secret absent: set the environment variable HASHEXPR_SECRET_ABSENT to the key "
        "(or pass --conf spark.hashexpr.secret.absent=...)"
    )


def test_fingerprint_lthash16_with_a_secret_from_the_environment(spark, inputs, runs):
    import hashexpr as hx

    expected = hx.dataset_fingerprint(spark.read.parquet(str(inputs["parquet"])), "lthash16", secret="cli.pii")
    assert expected.startswith("hx1-lthash16-hmac:")
    assert _ok(runs["fingerprint lthash16 hmac"]).splitlines() == [expected]
    assert _one_error_line(runs["fingerprint lthash16 expects murmur3"]) == (
        "--expect is a fingerprint starting 'hx1:', which this command computes with no --algorithm; "
        "it computes one starting 'hx1-lthash16:'"
    )


def test_diff_with_sha256_counts_as_the_default(spark, inputs, runs):
    assert _summary(_ok(runs["diff sha256"])) | {"elapsed": ""} == _summary(_ok(runs["diff"])) | {
        "elapsed": ""
    }


def test_collisions_prints_each_problem_and_fails(runs):
    run = runs["collisions"]
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("collision\t")
    assert "01" * 16 in lines[0] and "('a',)" in lines[0] and "('b',)" in lines[0]


def test_unknown_column_lists_the_available_ones(outputs, runs):
    message = _one_error_line(runs["bad column"])
    assert message == "unknown column 'nmae' (did you mean 'name'?); available columns: id, name, amount, day, ts"
    assert not (outputs / "x.parquet").exists()


def test_a_bad_file_ends_in_one_line_without_stack_traces(runs):
    # Spark finds it only while a job runs, but it is an input error: exit status 2.
    run = runs["corrupt"]
    assert run.returncode == 2, run.stderr
    assert len(run.stderr.splitlines()) == 1, run.stderr
    last = run.stderr.splitlines()[-1]
    assert last.startswith("hashexpr: error: org.apache.spark.SparkException: [FAILED_READ_FILE"), run.stderr
    assert "corrupt.parquet" in last
    assert "\tat " not in run.stderr and "Traceback" not in run.stderr, run.stderr


FORMATS = "parquet, csv, json, orc"
INPUT_FORMATS = f"{FORMATS}, delta, iceberg"
OUTPUT_FORMATS = f"{FORMATS}, delta"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["missing.parquet", "--out", "o.parquet"], "input not found: missing.parquet", id="missing"
        ),
        pytest.param(
            ["rows.csv", "--out", "o.csv"],
            "CSV cannot hold the binary hash: add --hex to write it as hex text",
            id="csv without --hex",
        ),
        pytest.param(
            ["rows.txt", "--out", "o.parquet"],
            f"cannot tell the format of rows.txt: name one with --format ({FORMATS})",
            id="unknown extension",
        ),
        pytest.param(
            ["rows.csv", "--format", "xml", "--out", "o"],
            f"unknown format 'xml': use one of {INPUT_FORMATS}",
            id="unknown --format",
        ),
        pytest.param(
            ["rows.csv", "--out", "o", "--out-format", "avro"],
            f"unknown format 'avro': use one of {OUTPUT_FORMATS}",
            id="unknown --out-format",
        ),
        pytest.param(
            ["rows.csv", "--out", "taken.parquet"],
            "output already exists: taken.parquet (pass --mode overwrite to replace it)",
            id="output exists",
        ),
        pytest.param(
            ["rows.csv", "--out", "./rows.csv", "--hex", "--mode", "overwrite"],
            "OUTPUT is INPUT: ./rows.csv (write the output elsewhere)",
            id="output is input",
        ),
        pytest.param(
            ["rows.csv", "--out", ".", "--hex", "--mode", "overwrite"],
            "OUTPUT . is or holds the current directory: write to a new directory",
            id="output is the current directory",
        ),
        pytest.param(
            ["rows.csv", "--out", "..", "--hex", "--mode", "overwrite"],
            "OUTPUT .. is or holds the current directory: write to a new directory",
            id="output holds the current directory",
        ),
        pytest.param(
            ["rows.csv", "--out", "/", "--hex", "--mode", "overwrite"],
            "OUTPUT / is a file system root: write to a new directory",
            id="output is a root",
        ),
        pytest.param(
            ["data/in.csv", "--out", "data", "--hex", "--mode", "overwrite"],
            "OUTPUT data holds INPUT data/in.csv: overwriting it would delete the input; write elsewhere",
            id="output holds the input",
        ),
        pytest.param(
            ["data", "--format", "csv", "--out", "data/o", "--hex"],
            "OUTPUT data/o is inside INPUT data: write elsewhere",
            id="output inside the input",
        ),
        pytest.param(
            ["data/*.csv", "--out", "data/o", "--hex", "--mode", "OVERWRITE"],
            "OUTPUT data/o is inside INPUT data/*.csv: write elsewhere",
            id="output inside a glob's directory",
        ),
        pytest.param(
            ["rows.csv", "--out", "o", "--columns", "a,,b"],
            "--columns has an empty name: 'a,,b'",
            id="empty name",
        ),
        pytest.param(
            ["rows.csv", "--out", "o", "--mode", "append"],
            "unknown mode 'append': use one of error, overwrite",
            id="unknown mode",
        ),
        pytest.param(
            ["planes.parquet", "--format", "csv", "--out", "o", "--hex"],
            "planes.parquet is not CSV: it is Parquet data; read it with --format parquet",
            id="parquet read as csv",
        ),
        pytest.param(
            ["rows.csv", "--format", "parquet", "--out", "o"],
            "rows.csv is not Parquet: it does not start and end with PAR1, Parquet's magic bytes",
            id="csv read as parquet",
        ),
        pytest.param(
            ["data", "--format", "delta", "--out", "o"],
            "data is not a Delta table: it has no _delta_log",
            id="a directory read as delta",
        ),
        pytest.param(
            ["rows.csv", "--out", "o.prquet", "--hex"],
            "cannot tell the format of o.prquet from its extension '.prquet': name it with --out-format "
            f"({OUTPUT_FORMATS}), or drop the extension to write parquet",
            id="unknown output extension",
        ),
        pytest.param(
            ["rows.csv", "--out", "o", "--key", "id", "--key-options", "trim, case=upper"],
            "--key-options: unknown option 'trim, case=upper' (options are separated by ';', not ',')",
            id="key options with a comma",
        ),
        pytest.param(
            ["rows.csv", "--out", "o", "--key-options", "trim"],
            "--key-options are the options of the --key column: add --key",
            id="key options without a key",
        ),
    ],
)
def test_bad_arguments_fail_in_one_line_before_spark(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rows.csv").write_text(CSV, encoding="utf-8")
    (tmp_path / "rows.txt").write_text(CSV, encoding="utf-8")
    (tmp_path / "taken.parquet").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "in.csv").write_text(CSV, encoding="utf-8")
    (tmp_path / "planes.parquet").write_bytes(b"PAR1" + bytes(range(256)) + b"PAR1")
    run = _run_without_spark("hash", *args, "--verbose")
    assert _one_error_line(run) == message
    # Nothing was written, and no Spark session was asked for.
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.parquet").exists()
    assert (tmp_path / "rows.csv").read_text(encoding="utf-8") == CSV
    assert (tmp_path / "data" / "in.csv").read_text(encoding="utf-8") == CSV
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "data",
        "planes.parquet",
        "rows.csv",
        "rows.txt",
        "taken.parquet",
    ]


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("old.csv", "OUTPUT is INPUT: old.csv (write the output elsewhere)"),
        ("./new.csv", "OUTPUT is INPUT: ./new.csv (write the output elsewhere)"),
        (
            "snap",
            "OUTPUT snap holds INPUT snap/old.csv: overwriting it would delete the input; write elsewhere",
        ),
    ],
)
def test_diff_never_writes_over_its_inputs(out, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("old.csv", "new.csv"):
        (tmp_path / name).write_text(CSV, encoding="utf-8")
    (tmp_path / "snap").mkdir()
    (tmp_path / "snap" / "old.csv").write_text(CSV, encoding="utf-8")
    old = "snap/old.csv" if out == "snap" else "old.csv"
    run = _run_without_spark("diff", old, "new.csv", "--key", "id", "--out", out, "--mode", "overwrite", "--verbose")
    assert _one_error_line(run) == message
    assert all(
        (tmp_path / n).read_text(encoding="utf-8") == CSV for n in ("old.csv", "new.csv", "snap/old.csv")
    )


def test_jar_prints_an_existing_jar():
    # A real process: python -m hashexpr, the module's entry point.
    path = Path(_ok(_cli("jar")).strip())
    assert path.is_absolute() and path.is_file() and path == Path(hx.jar_path())
    assert path.name == f"hashexpr-spark{hx.jar.running_spark()[0]}_2.13.jar"
    other = Path(_ok(_run_without_spark("jar", "--spark", "3.5")).strip())
    assert other.name == "hashexpr-spark3.5_2.12.jar" and other.is_file()
    assert (
        Path(_ok(_run_without_spark("jar", "--spark", "3.5.2", "--scala", "2.13")).strip()).name
        == "hashexpr-spark3.5_2.13.jar"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--spark", "3.4"],
            "hashexpr has no jar for Spark 3.4: it is built for Spark 3.5 (Scala 2.12, 2.13), 4.0",
        ),
        (["--spark", "4.0", "--scala", "2.12"], "hashexpr has no jar for Spark 4.0 with Scala 2.12"),
        (["--scala", "2.11"], "hashexpr has no jar for Spark"),
        (["--spark", "four"], "not a Spark or Scala version: 'four'"),
    ],
)
def test_jar_for_another_line_names_the_lines_there_are(args, message):
    run = _run_without_spark("jar", *args)
    assert run.returncode == 2 and message in _one_error_line(run)


@pytest.mark.parametrize("command", [[], ["jar"], ["hash"], ["fingerprint"], ["diff"], ["collisions"]])
def test_help(command):
    stdout = _ok(_run_without_spark(*command, "--help"))
    assert stdout.startswith(f"usage: {' '.join(['hashexpr', *command])} ")
    if command == ["hash"]:
        for option in (
            "--out",
            "--columns",
            "--format",
            "--out-format",
            "--hex",
            "--column-name",
            "--mode",
            "--master",
        ):
            assert option in stdout


def test_no_command_is_a_usage_error():
    run = _run_without_spark()
    assert run.returncode == 2
    assert "COMMAND" in run.stderr
