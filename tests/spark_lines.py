"""The Spark lines the tests run on, read from the files that pin them (``spark-version``, ``spark-lines/``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The pinned pyspark version, and its line (``4.3``).
PINNED_VERSION = (ROOT / "spark-version").read_text(encoding="utf-8").strip()
PINNED_LINE = ".".join(PINNED_VERSION.split(".")[:2])


def pyspark_version(line: str) -> str:
    """The pyspark version a line is tested on: the pinned one, or the one its ``spark-lines/`` file pins."""
    if line == PINNED_LINE:
        return PINNED_VERSION
    text = (ROOT / "spark-lines" / f"{line}.txt").read_text(encoding="utf-8")
    return re.search(r"^pyspark(?:\[[\w,]+\])?==(\S+)$", text, re.MULTILINE).group(1)


#: Every line with a pyspark on PyPI, oldest first.
LINES = sorted([PINNED_LINE, *(p.stem for p in (ROOT / "spark-lines").glob("*.txt") if p.stem.count(".") == 1)])
