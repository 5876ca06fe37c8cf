"""What a command of the ``hashexpr`` command line returns: an :class:`Outcome`, with its exit status.

The exit statuses are the same for every command (``docs/CLI.md``), so that scripts can rely on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Exit status: done, nothing found.
EXIT_OK = 0
#: Exit status: done, and something was found (differences, collisions, a fingerprint other than expected).
EXIT_FINDINGS = 1
#: Exit status: the arguments or the input are wrong (a missing file, an unknown column, malformed data).
EXIT_USAGE = 2
#: Exit status: a system failed: Spark (it did not start, its JVM ended, a job failed), or a database a command
#: reads (a query failed for another reason than the input, the connection was lost, a statement timed out).
EXIT_SYSTEM = 3
EXIT_SPARK = EXIT_SYSTEM
#: Exit status: interrupted (Ctrl-C, SIGINT).
EXIT_INTERRUPTED = 130
#: Exit status: terminated (SIGTERM).
EXIT_TERMINATED = 143


@dataclass
class Outcome:
    """What a subcommand found: printed by :func:`main` as text, or as one JSON object with ``--json``."""

    #: The exit status.
    status: int = EXIT_OK
    #: The command's result (a fingerprint, one line per group or problem), for stdout.
    lines: list[str] = field(default_factory=list)
    #: ``label  value`` lines after the result.
    summary: list[tuple[str, str]] = field(default_factory=list)
    #: Lines after the summary (on its stream): details such as a sample of the rows found.
    after: list[str] = field(default_factory=list)
    #: Whether the summary goes to stderr, leaving stdout to the result lines.
    summary_to_stderr: bool = False
    #: A one-line message for stderr (a mismatch, differences found).
    message: str | None = None
    #: The ``--json`` object.
    report: dict[str, Any] = field(default_factory=dict)
