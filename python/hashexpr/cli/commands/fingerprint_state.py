"""``hashexpr fingerprint DELTA_TABLE --state FILE``: a Delta table's fingerprint kept in a state file, updated
from the table's change data feed (``docs/FINGERPRINTS.md``)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from hashexpr import names as hnames
from hashexpr.cli import formats as hformats
from hashexpr.cli import inputs as hinputs
from hashexpr.cli import outputs as houtputs
from hashexpr.cli.grammar import chosen_columns, session
from hashexpr.cli.outcome import Outcome
from hashexpr.cli.report import SPARK, ran_on
from hashexpr.fingerprints import FingerprintState


def add_state_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state",
        metavar="FILE",
        help="with a Delta table: keep its fingerprint's state in FILE, a local JSON file; when FILE exists, "
        "update it from the table's change data feed since the state's version (reading only the changes), "
        "else compute it from every row; FILE is then replaced atomically",
    )


def check_state_run(args: argparse.Namespace, src: hinputs.Source, by: list[str]) -> FingerprintState | None:
    """Check a ``--state`` run before Spark starts; return the state FILE holds, or None when it does not
    exist yet."""
    problems = [
        ("--by", bool(by)),
        ("--out", bool(args.out)),
        ("--timestamp", args.timestamp is not None),
        ("--schema", args.schema is not None),
    ]
    for flag, given in problems:
        if given:
            raise ValueError(
                f"--state keeps the fingerprint of a whole Delta table: it cannot go with {flag}"
            )
    if src.fmt not in ("delta", "table"):
        raise ValueError(
            f"--state keeps a Delta table's fingerprint up to date from its change data feed; {src.label()} is "
            f"{src.fmt}"
        )
    local = hformats.local_path(args.state)
    if local is None:
        raise ValueError(f"--state {args.state}: the state is a local file")
    try:
        houtputs.check_output(local, "overwrite", [src.path] if src.path is not None else [])
    except ValueError as error:
        raise ValueError(f"--state: {error}") from None
    if os.path.isdir(local):
        raise ValueError(f"--state {args.state} is a directory: name a file")
    parent = os.path.dirname(os.path.abspath(local))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"--state {args.state}: the directory {parent} does not exist")
    if not os.path.exists(local):
        return None
    with open(local, encoding="utf-8") as f:
        text = f.read()
    try:
        return FingerprintState.from_json(text)
    except ValueError as error:
        raise ValueError(f"--state {args.state}: {error}") from None


def run_state(
    args: argparse.Namespace,
    src: hinputs.Source,
    since: FingerprintState | None,
    excluded: list[str],
    hashing: dict[str, Any],
    outcome_of: Any,
) -> Outcome:
    """Compute or update the state, write it, and report the fingerprint as ``outcome_of`` (the command's
    ``_fingerprint_outcome``) does."""
    from hashexpr.spark.delta import delta_state

    table = os.path.abspath(src.path) if src.path is not None else src.table
    assert table is not None
    with session(args, ["delta"]) as spark:
        columns = None
        if excluded:
            exact = hnames.case_sensitive(spark)
            columns = chosen_columns(src.read(spark).columns, [], excluded, exact)
        done = delta_state(
            table,
            since,
            algorithm=hashing.get("algorithm", "murmur3"),
            secret=hashing.get("secret"),
            columns=columns,
            version=src.version,
            spark=spark,
        )
    state = done.state
    write_state(args.state, state.to_json())
    outcome = outcome_of(state.count, state.fingerprint, state.column_names, args.expect)
    version = state.source["version"] if state.source else None
    if done.since_version is None:
        how = f"version {version}, from every row"
    else:
        how = (
            f"version {done.since_version} -> {version}, from the change data feed: "
            f"{done.added:,} rows in, {done.removed:,} out"
        )
    outcome.summary = [("input", src.label()), *outcome.summary, ("state", f"{args.state} ({how})")]
    outcome.report = {
        "input": src.as_dict(),
        "columns": state.column_names,
        **outcome.report,
        "state": {
            "path": args.state,
            "version": version,
            "since_version": done.since_version,
            "rows_added": done.added,
            "rows_removed": done.removed,
        },
    }
    outcome.summary_to_stderr = True
    return ran_on(outcome, SPARK)


def write_state(path: str, text: str) -> None:
    """Replace the file ``path`` by ``text`` atomically: written to a hidden sibling, flushed, then renamed over
    it, so that a failed or killed run leaves the previous state (or none), never part of one."""
    target = os.path.abspath(path)
    staging = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.hashexpr-tmp-{os.getpid()}")
    try:
        with open(staging, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(staging, target)
    finally:
        if os.path.lexists(staging):
            os.remove(staging)
