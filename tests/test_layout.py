"""The package's shape: no import circle, no oversized module, and the layout the docs describe is the tree's."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "hashexpr"
# Past this a module holds several concerns: split it (docs/ARCHITECTURE.md).
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in it (in functions too, and under TYPE_CHECKING)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + [base]
                ).strip(".")
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            # The longest module of the package that the target names (a module, or a name in one).
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _package_parents(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def test_the_package_has_no_import_circle():
    modules = _modules()
    # Importing a.b.c runs a/__init__ and a/b/__init__ first: an edge to a parent package is not a dependency
    # of the module on the package's other contents, so only the imports a package's __init__ makes count.
    graph = {name: _imports(name, path, modules) - _package_parents(name) for name, path in modules.items()}
    circles = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append(trail[trail.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def test_no_module_is_over_the_size_of_one_concern():
    tracked = subprocess.run(
        ["git", "ls-files", "python", "bench"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    sizes = {path: len((ROOT / path).read_text().splitlines()) for path in tracked if path.endswith(".py")}
    assert sizes, "git ls-files listed no module"
    over = {path: n for path, n in sizes.items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines: {over}"


def _documented_paths(text: str) -> list[str]:
    """Backquoted paths of the repository in a page: `a/b/`, `a/b.py` and the like."""
    paths = []
    for token in re.findall(r"`([^`\s]+)`", text):
        if "/" in token and not token.startswith(("http", "io.", "-")) and re.fullmatch(r"[\w./*-]+", token):
            paths.append(token)
    return paths


def _unresolved(line: str) -> list[str]:
    """The paths a line names that are not in the tree. A path may be relative to the package, to docs/, or to
    a path named before it on the same line or beside one (a table row: `native/` | `core/`, `tests/x.rs`)."""
    bases = [ROOT, PACKAGE, ROOT / "docs"]
    missing = []
    for path in _documented_paths(line):
        found = [
            base / path for base in bases if (any(base.glob(path)) if "*" in path else (base / path).exists())
        ]
        if not found:
            missing.append(path)
            continue
        bases += [found[0], found[0].parent]
    return missing


@pytest.mark.parametrize("page", ["README.md", "docs/ARCHITECTURE.md"])
def test_every_path_the_layout_names_exists(page):
    text = (ROOT / page).read_text()
    if page == "README.md":
        text = text.split("## Layout", 1)[1]
    missing = [path for line in text.splitlines() for path in _unresolved(line)]
    assert not missing, f"{page} names paths that are not in the tree: {missing}"


def test_the_readme_layout_lists_every_folder_and_subpackage():
    layout = (ROOT / "README.md").read_text().split("## Layout", 1)[1]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    folders = {line.split("/")[0] for line in tracked.split() if "/" in line and not line.startswith(".")}
    subpackages = {p.parent.relative_to(ROOT).as_posix() for p in PACKAGE.glob("*/__init__.py")}
    listed = set(_documented_paths(layout)) | set(re.findall(r"`([\w.-]+)/`", layout))
    listed = {p.rstrip("/") for p in listed}
    absent = sorted(
        f for f in folders | subpackages if f not in listed and not any(p.startswith(f + "/") for p in listed)
    )
    assert not absent, f"README.md's Layout does not list: {absent}"


# What needs PySpark lives in hashexpr/spark/; the rest of the package runs where no PySpark is installed
# (docs/ARCHITECTURE.md): it may reach PySpark or hashexpr.spark inside a function that serves Spark, never
# when it is imported.
_SPARK_ONLY = ("pyspark", "py4j", "hashexpr.spark")


def _imported_on_import(path: Path) -> list[str]:
    """The modules ``path`` imports when it is imported: its module-level statements (class bodies included,
    ``if TYPE_CHECKING:`` blocks and function bodies not)."""
    found = []

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                found.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                found.append(node.module or "")
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, (ast.ClassDef, ast.With)):
                visit(node.body)

    visit(ast.parse(path.read_text()).body)
    return found


def test_nothing_outside_hashexpr_spark_imports_pyspark_when_imported():
    modules = _modules()
    offenders = {
        name: hits
        for name, path in modules.items()
        if not (name == "hashexpr.spark" or name.startswith("hashexpr.spark."))
        for hits in [
            [m for m in _imported_on_import(path) if m.split(".")[0] in _SPARK_ONLY[:2] or m.startswith(_SPARK_ONLY[2])]
        ]
        if hits
    }
    assert not offenders, f"modules outside hashexpr/spark/ that import PySpark when imported: {offenders}"
    spark_side = [n for n in modules if n.startswith("hashexpr.spark.")]
    assert len(spark_side) > 20, spark_side  # the split is real: the Spark modules are there


def test_every_module_outside_hashexpr_spark_imports_where_pyspark_cannot():
    """In an interpreter where importing PySpark or py4j fails, every other module of the package imports;
    the top-level Spark functions are there and say what to install when called; hashexpr.spark says it."""
    import sys

    names = sorted(n for n in _modules() if not (n == "hashexpr.spark" or n.startswith("hashexpr.spark.")))
    code = f"""
import importlib, sys
sys.modules["pyspark"] = None
sys.modules["py4j"] = None
for name in {names!r}:
    if name == "hashexpr.__main__":
        continue
    importlib.import_module(name)
import hashexpr as hx
from hashexpr import record_hash, configure
assert not [m for m in sys.modules if m.startswith(("pyspark.", "py4j."))]
for call in (lambda: record_hash("*"), lambda: configure(None), lambda: hx.diff(None, None, "id")):
    try:
        call()
    except hx.PySparkMissingError as error:
        print(error)
    else:
        raise AssertionError("no error")
try:
    import hashexpr.spark.functions
except ModuleNotFoundError as error:
    print(type(error).__name__, error)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        'hx.record_hash needs PySpark, which is not installed: pip install "hashexpr[spark]", or run it where the '
        "platform gives PySpark (a Databricks runtime, databricks-connect, pyspark-client, EMR, Glue, Dataproc, "
        "Fabric)"
    )
    assert lines[1].startswith("hx.configure needs PySpark") and lines[2].startswith("hx.diff needs PySpark")
    assert lines[3].startswith("PySparkMissingError hashexpr's Spark API needs PySpark")


def test_no_top_level_name_is_shadowed_by_a_module():
    """A submodule of the package named like a top-level function would replace the function once imported."""
    import hashexpr as hx

    modules = {n.split(".")[1] for n in _modules() if n.count(".") >= 1}
    for name in hx.__all__:
        assert name not in modules, name
        assert not isinstance(getattr(hx, name), type(hx)), name


def test_the_command_lines_own_paths_need_no_pyspark():
    """Where PySpark cannot be imported: an interrupt's clean-up, struct values printed as Rows, and the errors
    of what needs Spark (a Delta table; a run the Arrow engine leaves to Spark, with its reason); where only py4j
    is missing (a Spark Connect client), the error says that a local Spark is what is missing."""
    import sys

    code = """
import argparse, sys
sys.modules["pyspark"] = None
sys.modules["py4j"] = None
import pyarrow as pa
from hashexpr.cli import arrow, grammar, inputs, session
from hashexpr.errors import local_spark_missing
from hashexpr.errors import PySparkMissingError
session.abandon()
table = pa.table({"s": pa.array([{"a": 1, "b": "x"}, None])})
print(arrow.spark_rows(table))
for call in (lambda: inputs.require_library("delta", "lake/orders", []),
             lambda: grammar.fall_back(argparse.Namespace(engine="auto"), ValueError("column 't' is time64"))):
    try:
        call()
    except PySparkMissingError as error:
        print(error)
del sys.modules["pyspark"]
print(local_spark_missing()("the command"))
assert not [m for m in sys.modules if m.startswith(("pyspark.", "py4j."))]
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "[{'s': Row(a=1, b='x')}, {'s': None}]"
    assert lines[1].startswith("reading lake/orders (a Delta table, through Spark) needs PySpark, which is not installed")
    assert lines[2].startswith(
        "the Arrow engine cannot run this (column 't' is time64), and Spark, which can, needs PySpark, which is not "
        'installed: pip install "hashexpr[spark]"'
    )
    assert lines[3].startswith("the command needs a local Spark (a JVM driven through py4j), which this PySpark lacks")
