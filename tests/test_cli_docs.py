"""Every example of ``docs/CLI.md`` runs, in the order of the document, on the files of ``cli_doc_data``.

``bash`` blocks hold commands that must succeed (or end with ``# exit N``); ``console`` blocks hold commands
after ``$`` with the output they print, where ``…`` stands for any text (a hash, a time). A command's output is
its stdout, or with ``2>&1`` its stdout then its stderr; ``2>/dev/null`` leaves stderr out. The commands run
in-process, in the test session, in the examples' directory (``cli_runner.run``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_doc_data import make
from cli_runner import ROOT, run

DOC = ROOT / "docs" / "CLI.md"


@dataclass
class Example:
    line: int
    command: str
    status: int
    # The expected output lines of a console example; None for a bash example (only the status counts).
    output: list[str] | None


def _examples(text: str) -> list[Example]:
    examples: list[Example] = []
    blocks = re.finditer(r"^```(bash|console)\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)
    for block in blocks:
        kind, body = block.group(1), block.group(2)
        first_line = text.count("\n", 0, block.start()) + 2
        for offset, raw in enumerate(body.splitlines()):
            if kind == "bash" and raw.startswith("hashexpr "):
                examples.append(_example(first_line + offset, raw, None))
            elif kind == "console" and raw.startswith("$ "):
                examples.append(_example(first_line + offset, raw[2:], []))
            elif kind == "console" and examples and examples[-1].output is not None:
                examples[-1].output.append(raw)
    return examples


def _example(line: int, raw: str, output: list[str] | None) -> Example:
    command, _, comment = raw.partition("  # ")
    status = int(comment.removeprefix("exit ")) if comment.startswith("exit ") else 0
    return Example(line, command.strip(), status, output)


EXAMPLES = _examples(DOC.read_text(encoding="utf-8"))


def _matches(expected: str, actual: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in expected.split("…"))
    return re.fullmatch(pattern, actual) is not None


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli-docs")
    make(folder)
    return folder


def test_the_document_has_examples_of_every_command():
    commands = {shlex.split(e.command)[1] for e in EXAMPLES}
    assert commands == {"hash", "fingerprint", "diff", "collisions", "reconcile"}
    assert len(EXAMPLES) >= 20


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"CLI.md:{e.line}" for e in EXAMPLES])
def test_example(example, folder, spark, monkeypatch):
    words = shlex.split(example.command)
    stderr_to = None
    if words[-1] in ("2>&1", "2>/dev/null"):
        stderr_to = words.pop()
    assert words[0] == "hashexpr"
    monkeypatch.chdir(folder)
    done = run(spark, *words[1:])
    errors = [line for line in done.stderr.splitlines() if line.startswith("hashexpr: error:")]
    # An example that shows an error is a usage error.
    status = example.status
    if example.output is not None and any(line.startswith("hashexpr: error:") for line in example.output):
        status = 2
    assert done.returncode == status, f"{example.command}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    if example.output is None:
        assert not errors, done.stderr
        return
    shown = done.stdout.splitlines()
    if stderr_to == "2>&1" or (stderr_to is None and done.stdout == ""):
        shown += done.stderr.splitlines()
    assert len(shown) == len(example.output), f"{example.command}\n{shown}"
    for expected, actual in zip(example.output, shown, strict=True):
        assert _matches(expected, actual), f"{example.command}\nexpected: {expected}\nactual:   {actual}"
