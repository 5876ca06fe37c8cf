"""The case mapping of business keys: CPython 3.11's ``str.upper`` and ``str.lower``, whatever the Python.

``docs/FORMAT.md`` section 9.1: the mappings and the Final_Sigma properties are read from the frozen Unicode
14.0.0 table ``python/hashexpr/unicode_case_14_0_0.txt``, a resource of the ``hashexpr`` package (the jar and
the Rust engine read the same file).
"""

from __future__ import annotations

import functools
import importlib.resources

from hashexpr.options import CASES, word


def case_map(text: str, case: str) -> str:
    """
    Returns ``text`` mapped to upper or lower case as ``record_key_with('case=upper|lower', ...)`` maps it.

    The mapping is CPython 3.11's :meth:`str.upper` and :meth:`str.lower`, the Unicode 14.0.0 full case
    mappings with CPython's Final_Sigma rule for U+03A3 (``docs/FORMAT.md``, section 9.1), read from the
    frozen table ``unicode_case_14_0_0.txt`` of the ``hashexpr`` package, so the result does not depend on the
    Python version. Lone surrogates (the bytes that are not UTF-8, decoded with ``surrogateescape``)
    stay as they are and are neither Cased nor Case_Ignorable.

    Parameters
    ----------
    text : str
        The text.
    case : {'upper', 'lower'}
        The mapping.

    Returns
    -------
    str
        The mapped text.

    Examples
    --------
    >>> case_map("Stra\\u00dfe", "upper")
    'STRASSE'
    >>> case_map("\\u039f\\u0394\\u039f\\u03a3 \\u03a3\\u0391", "lower") == "\\u03bf\\u03b4\\u03bf\\u03c2 \\u03c3\\u03b1"
    True
    >>> case_map("\\u2c5f", "upper") == "\\u2c2f"
    True
    """
    if not isinstance(text, str):
        raise TypeError(f"case_map needs a str, got {type(text).__name__}")
    table = _case_table()
    if word(case, "case", CASES, "case_map") == "upper":
        return text.translate(table.upper)
    if _CAPITAL_SIGMA not in text:
        return text.translate(table.lower)
    pieces = text.split(_CAPITAL_SIGMA)
    out = [pieces[0].translate(table.lower)]
    position = len(pieces[0])
    for piece in pieces[1:]:
        out.append(_FINAL_SIGMA if _is_final_sigma(text, position, table) else _SMALL_SIGMA)
        out.append(piece.translate(table.lower))
        position += 1 + len(piece)
    return "".join(out)


_CASE_TABLE = "unicode_case_14_0_0.txt"
_CASE_UNICODE_VERSION = "14.0.0"
_CAPITAL_SIGMA, _SMALL_SIGMA, _FINAL_SIGMA = "\u03a3", "\u03c3", "\u03c2"


class _CaseTable:
    """The frozen case table: mappings for :meth:`str.translate`, and the two Final_Sigma properties."""

    def __init__(self, text: str) -> None:
        self.upper: dict[int, str] = {}
        self.lower: dict[int, str] = {}
        self.cased: set[int] = set()
        self.ignorable: set[int] = set()
        lines = [line for line in text.splitlines() if line and not line.startswith("#")]
        if (
            not lines
            or lines[0] != f"unicode {_CASE_UNICODE_VERSION}"
            or lines[-1] != f"end {len(lines) - 2}"
        ):
            raise RuntimeError(f"{_CASE_TABLE} is damaged: reinstall hashexpr")
        for line in lines[1:-1]:
            kind, *fields = line.split()
            numbers = [int(field, 16) for field in fields]
            if kind in ("U", "L"):
                target = self.upper if kind == "U" else self.lower
                target[numbers[0]] = "".join(map(chr, numbers[1:]))
            elif kind in ("C", "I"):
                target_set = self.cased if kind == "C" else self.ignorable
                target_set.update(range(numbers[0], numbers[1] + 1))
            else:
                raise RuntimeError(f"{_CASE_TABLE} is damaged at {line!r}: reinstall hashexpr")


@functools.cache
def _case_table() -> _CaseTable:
    return _CaseTable(importlib.resources.files("hashexpr").joinpath(_CASE_TABLE).read_text(encoding="ascii"))


def _is_final_sigma(text: str, index: int, table: _CaseTable) -> bool:
    """CPython's Final_Sigma: a Cased code point before, none after, skipping Case_Ignorable ones."""
    before = index - 1
    while before >= 0 and ord(text[before]) in table.ignorable:
        before -= 1
    if before < 0 or ord(text[before]) not in table.cased:
        return False
    after = index + 1
    while after < len(text) and ord(text[after]) in table.ignorable:
        after += 1
    return after == len(text) or ord(text[after]) not in table.cased
