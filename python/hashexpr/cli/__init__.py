"""The ``hashexpr`` command line.

``hashexpr jar`` prints the path of hashexpr's jar; ``hashexpr sql`` prints SQL for engines without it;
``hashexpr hash``, ``fingerprint``, ``diff`` and ``collisions`` run on data files and tables with an embedded
Spark, or for local Parquet files with the Arrow engine. See ``docs/CLI.md``.

Each command is one module of :mod:`hashexpr.cli.commands`: its ``add_*`` function registers the command and
its options, its ``_run_*`` function runs it and returns an :class:`Outcome` (exit status, result lines,
summary, the ``--json`` report), which :func:`main` prints. A new command is a new module there, registered by
one call in :func:`build_parser`. What the commands share:

- :mod:`hashexpr.cli.main`: :func:`main`, the parser assembled from the commands, failures mapped to exit
  statuses;
- :mod:`hashexpr.cli.outcome`: the exit statuses and :class:`Outcome`;
- :mod:`hashexpr.cli.grammar`: the options several commands take (input, output, Spark, algorithm, key
  options, engine, column lists), and how they are read;
- :mod:`hashexpr.cli.report`: values, summaries and errors as text and JSON;
- :mod:`hashexpr.cli.inputs`: what a command reads (data files, Delta and Iceberg tables, catalog tables);
- :mod:`hashexpr.cli.formats`: the formats and paths of data files;
- :mod:`hashexpr.cli.outputs`: what a command writes, moved into place only once complete;
- :mod:`hashexpr.cli.session`: the Spark session; :mod:`hashexpr.cli.signals`: Ctrl-C and SIGTERM;
- :mod:`hashexpr.cli.arrow`: the Arrow engine's path, with no JVM.
"""

from __future__ import annotations

from hashexpr.cli.commands.sql import parse_column_types
from hashexpr.cli.grammar import resolve_columns
from hashexpr.cli.main import build_parser, main
from hashexpr.cli.outcome import (
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SPARK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Outcome,
)

__all__ = [
    "EXIT_FINDINGS",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_SPARK",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "Outcome",
    "build_parser",
    "main",
    "parse_column_types",
    "resolve_columns",
]
