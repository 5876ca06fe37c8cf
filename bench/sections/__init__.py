"""The sections of `make bench`, one module each in this package, and their registry.

A section is a module ``sections/<name>.py`` with

- ``run(ctx) -> dict``: the measurements. ``ctx`` is a :class:`harness.Context`; ``run`` puts its rows of the
  report's Data table in ``ctx.sizes`` and returns its results;
- ``render(args, result, results, targets) -> list[str]``: its part of RESULTS.md from its ``result`` (``results``:
  every section's of the run), each ``## `` heading a block that a run of some sections replaces in an existing
  report (report.merge_report); its target lines go onto ``targets``;

and, where it needs them:

- ``SPARK = False``: it needs no Spark session (a run of such sections alone starts none);
- ``uses_mixed(args) -> bool``: it runs on the shared cached 10-column data (``ctx.mixed``). The sections that
  have this function run first, while that data is cached, in the registry's order; the others after it;
- ``appendix(args, result) -> list[str]``: lines after the report's Targets;
- ``add_arguments(parser)``: flags of its own, after bench/run.py's;
- ``WORKER``: the name of a hidden flag of bench/run.py (an attribute of its ``args``) and of the module's function
  ``(args, log)`` that bench/run.py runs instead of the bench when started with that flag (a section's child
  process).

Adding a section: its module, and its name in ``SECTIONS``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: Every section, in the order of the report and of ``--only``'s list.
SECTIONS = (
    "hash",
    "secure",
    "wide",
    "nested",
    "fingerprint",
    "incremental",
    "arrow",
    "nojar",
    "diff",
    "cluster",
    "scale",
    "sql",
    "reconcile",
    "reconcile_mysql",
    "imports",
)

#: Target lines drawn from several sections' results: (the section after whose part they come, whether it ran or
#: not; the module; its function ``(args, results, targets) -> list[str]``).
COMPARISONS = (("arrow", "wide", "xxhash64_target"),)


def load(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def needs_spark(names) -> bool:
    return any(getattr(load(name), "SPARK", True) for name in names)


def run_order(names, args) -> tuple[list[str], list[str], bool]:
    """``names`` in the order they run: those on the shared 10-column data, then the others; and whether that
    data is to be cached (a section of the run wants it)."""
    shared = [name for name in names if hasattr(load(name), "uses_mixed")]
    rest = [name for name in names if name not in shared]
    return shared, rest, any(load(name).uses_mixed(args) for name in shared)


def render(args, results: dict, targets: list[str]) -> list[str]:
    """The parts of the report of every section in ``results``, in the registry's order, with the comparisons."""
    lines = []
    for name in SECTIONS:
        if name in results:
            lines += load(name).render(args, results[name], results, targets)
        for after, module, function in COMPARISONS:
            if after == name:
                lines += getattr(load(module), function)(args, results, targets)
    return lines


def appendix(args, results: dict) -> list[str]:
    lines = []
    for name in SECTIONS:
        if name in results and hasattr(load(name), "appendix"):
            lines += load(name).appendix(args, results[name])
    return lines
