"""``hashexpr jar``: the path of hashexpr's jar for the installed pyspark's Spark line, or for another one."""

from __future__ import annotations

import argparse

import hashexpr as hx
from hashexpr.cli.outcome import Outcome
from hashexpr.cli.session import PROG


def add_jar(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "jar",
        help="print the path of the hashexpr jar for a Spark line",
        description=(
            "Print the path of the hashexpr jar for the installed pyspark's Spark line and Scala version, or for "
            "another line (--spark, --scala), for spark-submit --jars or a Spark Connect server."
        ),
        epilog=(
            f'Examples: spark-submit --jars "$({PROG} jar)" job.py; '
            f"{PROG} jar --spark 3.5 --scala 2.12 (Databricks 15.4 LTS, EMR 7, Glue 5)"
        ),
    )
    parser.add_argument("--spark", metavar="X.Y", help="the Spark line (default: the installed pyspark's)")
    parser.add_argument(
        "--scala", metavar="2.1x", help="the Scala version (default: pyspark's, or the line's usual one)"
    )
    parser.set_defaults(run=_run_jar)


def _run_jar(args: argparse.Namespace) -> Outcome:
    """``hashexpr jar``: print the jar's absolute path."""
    path = hx.jar_path(spark=args.spark, scala=args.scala)
    return Outcome(lines=[path], report={"jar": path})
