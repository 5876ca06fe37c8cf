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
