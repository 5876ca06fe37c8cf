"""``--report FILE.md`` or ``FILE.html``: a reconciliation for a reviewer, from the reports ``--json`` gives.

Per table: what was compared with what (URLs without passwords), the counts, the columns one side alone has, and
a sample of the differing rows with the columns that changed (and their values, with ``--values``). The HTML is
one file with its style inline, every value escaped. The file is written whole or not at all.
"""

from __future__ import annotations

import datetime
import html
import json
import re
from collections.abc import Sequence
from typing import Any

from hashexpr.cli import outputs as houtputs

#: The counts a report shows, and how it names them.
_COUNTS = (
    ("inserted", "inserted"),
    ("deleted", "deleted"),
    ("updated", "updated"),
    ("duplicate_key", "duplicate keys"),
    ("null_key", "NULL keys"),
    ("unchanged", "unchanged"),
)
_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}td.n{text-align:right}"
    ".differs{color:#a40}.equal{color:#060}.error{color:#b00}code{background:#f4f4f4;padding:0 .2em}"
)


def check(path: str) -> str:
    """The report's format from its name: ``markdown`` or ``html``."""
    lowered = path.lower()
    if lowered.endswith(".md"):
        return "markdown"
    if lowered.endswith((".html", ".htm")):
        return "html"
    raise ValueError(f"--report {path}: name it FILE.md (Markdown) or FILE.html")


def write(path: str, mode: str, tables: Sequence[dict[str, Any]], version: str) -> None:
    """Write the report of ``tables`` (each a ``--json`` report, with ``name`` and, for a failed pair, ``error``)."""
    text = (_html if check(path) == "html" else _markdown)(tables, version)

    def write_into(staging: str) -> None:
        with open(staging, "w", encoding="utf-8") as out:
            out.write(text)

    houtputs.write_staged(path, mode, write_into)


def _status(table: dict[str, Any]) -> str:
    if "error" in table:
        return "error"
    return "differs" if table["differences"] or table["schema_differences"] else "equal"


def _heading(tables: Sequence[dict[str, Any]], version: str) -> str:
    states = [_status(t) for t in tables]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{len(tables)} table{'s' if len(tables) != 1 else ''}: {states.count('equal')} equal, "
        f"{states.count('differs')} differ, {states.count('error')} failed. hashexpr {version}, {when}."
    )


def _value(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _rows(table: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The sample's header and rows: the key, the change, the changed columns, and values where fetched."""
    sample = table.get("sample") or []
    header = [*table["key"], "change", "changed columns"]
    values = any("source" in row for row in sample)
    if values:
        header += ["source", "target"]
    rows = []
    for row in sample:
        cells = [_value(row["key"][k]) for k in table["key"]]
        cells += [row["change"], ", ".join(row["changed_columns"] or [])]
        if values:
            cells += [_value(_changed(row.get(side), row)) for side in ("source", "target")]
        rows.append(cells)
    return header, rows


def _changed(values: Any, row: dict[str, Any]) -> Any:
    """The values of the changed columns alone, for an update; all of them for an insert or a delete."""
    if values is None or not row["changed_columns"]:
        return values
    return {k: values[k] for k in row["changed_columns"] if k in values}


#: What Markdown reads as more than text, escaped by a backslash.
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_\[\]|#~!]")


def _markdown(tables: Sequence[dict[str, Any]], version: str) -> str:
    def cell(text: Any) -> str:
        # Plain text in any renderer: no HTML, no emphasis, no link, no code span, no table cell's end.
        text = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return _MARKDOWN_SPECIAL.sub(r"\\\g<0>", text).replace("\r", " ").replace("\n", " ")

    out = ["# Reconciliation report", "", _heading(tables, version), ""]
    out += ["| table | status | " + " | ".join(label for _, label in _COUNTS) + " |"]
    out += ["|---|---|" + "---:|" * len(_COUNTS)]
    for t in tables:
        counts = t.get("counts", {})
        out.append(
            f"| {cell(t['name'])} | {_status(t)} | "
            + " | ".join(f"{counts[c]:,}" if c in counts else "" for c, _ in _COUNTS)
            + " |"
        )
    for t in tables:
        out += ["", f"## {cell(t['name'])}", ""]
        if "error" in t:
            out += [f"**Failed:** {cell(t['error'])}"]
            continue
        out += [f"- source: {cell(t['source'])}", f"- target: {cell(t['target'])}"]
        out += [f"- key: {cell(', '.join(t['key']))}; compared: {len(t['compared'])} columns"]
        for d in t["schema_differences"]:
            out.append(f"- schema: column {cell(d['column'])} ({cell(d['type'])}) is only in the {d['only_in']}")
        header, rows = _rows(t)
        if rows:
            total = sum(t["counts"][c] for c in ("inserted", "deleted", "updated", "duplicate_key", "null_key"))
            out += ["", f"Differing rows, the first {len(rows):,} of {total:,}:", ""]
            out += ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
            out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def _html(tables: Sequence[dict[str, Any]], version: str) -> str:
    e = html.escape
    out = [
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Reconciliation report</title>",
        f"<style>{_STYLE}</style></head><body><h1>Reconciliation report</h1><p>{e(_heading(tables, version))}</p>",
        "<table><tr><th>table</th><th>status</th>" + "".join(f"<th>{e(label)}</th>" for _, label in _COUNTS) + "</tr>",
    ]
    for t in tables:
        counts = t.get("counts", {})
        state = _status(t)
        out.append(
            f"<tr><td>{e(t['name'])}</td><td class=\"{state}\">{state}</td>"
            + "".join(f"<td class=\"n\">{counts[c]:,}</td>" if c in counts else "<td></td>" for c, _ in _COUNTS)
            + "</tr>"
        )
    out.append("</table>")
    for t in tables:
        out.append(f"<h2>{e(t['name'])}</h2>")
        if "error" in t:
            out.append(f"<p class=\"error\">Failed: {e(t['error'])}</p>")
            continue
        items = [f"source: <code>{e(t['source'])}</code>", f"target: <code>{e(t['target'])}</code>",
                 f"key: {e(', '.join(t['key']))}; compared: {len(t['compared'])} columns"]  # fmt: skip
        items += [
            f"schema: column <code>{e(d['column'])}</code> ({e(d['type'])}) is only in the {e(d['only_in'])}"
            for d in t["schema_differences"]
        ]
        out.append("<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>")
        header, rows = _rows(t)
        if rows:
            out.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
            out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows]
            out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
