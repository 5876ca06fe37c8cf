"""Generates the frozen case mapping table of ``record_key_with``, ``python/hashexpr/unicode_case_14_0_0.txt``.

``case=upper`` and ``case=lower`` are defined as CPython 3.11's ``str.upper()`` and ``str.lower()``:
the Unicode 14.0.0 full case mappings, with CPython's Final_Sigma rule for U+03A3 in ``lower()``
(``docs/FORMAT.md``, section 9). This script reads them from the running CPython, which must carry
Unicode 14.0.0, and writes them as a table that the JVM (``KeyNormalizer``) and the Python
reference both load, so that neither depends on its platform's case functions:

* the upper- and lower-case mapping of every code point whose mapping is not the code point itself,
  from ``chr(cp).upper()`` and ``chr(cp).lower()``;
* the ranges of the ``Cased`` property: ``islower()``, ``isupper()`` or general category ``Lt``
  (Unicode's definition of ``Cased``; CPython's ``Lowercase``, ``Uppercase`` and ``Lt`` flags);
* the ranges of the ``Case_Ignorable`` property, from the Final_Sigma behaviour of ``lower()``:
  with ``c`` between a cased letter and a sigma, ``("A" + c + "Σ").lower()`` ends in a final sigma
  exactly when ``c`` is Case_Ignorable or Cased, and ``(c + "Σ").lower()`` does exactly when ``c`` is
  Cased and not Case_Ignorable.

Before writing, the two properties are cross-checked: ``Cased`` agrees with the sigma probe on every
code point that is not Case_Ignorable; ``Case_Ignorable`` is general categories Mn, Me, Cf, Lm and
Sk plus the 17 code points of Word_Break MidLetter, MidNumLet and Single_Quote (its Unicode
definition); every code point with a mapping is Cased; and the Final_Sigma rule applied with the
table reproduces ``str.lower()`` on random strings rich in sigma contexts. The file is frozen once
written, so this script refuses to overwrite it; ``--check`` rebuilds the table and compares.

Usage::

    PYTHONPATH=python python spec/generate_case_table.py          # create the file
    PYTHONPATH=python python spec/generate_case_table.py --check  # verify it, write nothing
"""

from __future__ import annotations

import platform
import random
import sys
import unicodedata
from pathlib import Path

from generate_vectors import freeze

UNICODE_VERSION = "14.0.0"
OUTPUT = Path(__file__).resolve().parents[1] / "python" / "hashexpr" / "unicode_case_14_0_0.txt"

MAX_CODE_POINT = 0x10FFFF
CAPITAL_SIGMA, SMALL_SIGMA, FINAL_SIGMA = "\u03a3", "\u03c3", "\u03c2"

# Case_Ignorable beyond general categories Mn, Me, Cf, Lm and Sk: Word_Break MidLetter, MidNumLet and
# Single_Quote in Unicode 14.0.0 (auxiliary/WordBreakProperty.txt).
WORD_BREAK_IGNORABLE = frozenset([
    0x0027, 0x002E, 0x003A, 0x00B7, 0x0387, 0x055F, 0x05F4, 0x2018, 0x2019, 0x2024, 0x2027,
    0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A,
])
IGNORABLE_CATEGORIES = frozenset(["Mn", "Me", "Cf", "Lm", "Sk"])

HEADER = f"""\
# hashexpr case mapping: Unicode {UNICODE_VERSION} full case mappings, as CPython 3.11's str.upper() and
# str.lower(). Generated once by spec/generate_case_table.py and frozen; docs/FORMAT.md, section 9.
# U cp m...    upper-case mapping of cp (hex code points), where it is not cp itself
# L cp m...    lower-case mapping of cp, where it is not cp itself (U+03A3 has Final_Sigma besides)
# C first last code points first..last are Cased
# I first last code points first..last are Case_Ignorable
# end n        the number of U, L, C and I lines
"""


def _hex(code_points: str | list[int]) -> str:
    return " ".join(f"{c if isinstance(c, int) else ord(c):04X}" for c in code_points)


def _ranges(code_points: list[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for cp in code_points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return ranges


def _ends_in_final_sigma(text: str) -> bool:
    return text.lower()[-1] == FINAL_SIGMA


def read_cpython() -> tuple[dict[int, str], dict[int, str], list[int], list[int]]:
    """The mappings and both properties, read from this CPython and cross-checked."""
    upper: dict[int, str] = {}
    lower: dict[int, str] = {}
    cased: list[int] = []
    ignorable: list[int] = []
    problems: list[str] = []
    for cp in range(MAX_CODE_POINT + 1):
        char = chr(cp)
        if char.upper() != char:
            upper[cp] = char.upper()
        if char.lower() != char:
            lower[cp] = char.lower()
        is_cased = char.islower() or char.isupper() or unicodedata.category(char) == "Lt"
        final_after_cased = _ends_in_final_sigma("A" + char + CAPITAL_SIGMA)
        final_alone = _ends_in_final_sigma(char + CAPITAL_SIGMA)
        is_ignorable = final_after_cased and not final_alone
        if is_cased:
            cased.append(cp)
        if is_ignorable:
            ignorable.append(cp)
        # Cased is consulted only on code points that are not Case_Ignorable; there the probe sees it.
        if not is_ignorable and final_alone != is_cased:
            problems.append(f"U+{cp:04X}: Cased {is_cased}, but the sigma probe says {final_alone}")
        expected_ignorable = unicodedata.category(char) in IGNORABLE_CATEGORIES or cp in WORD_BREAK_IGNORABLE
        if is_ignorable != expected_ignorable:
            problems.append(f"U+{cp:04X}: Case_Ignorable {is_ignorable}, expected {expected_ignorable}")
        if (cp in upper or cp in lower) and not is_cased:
            problems.append(f"U+{cp:04X} has a case mapping but is not Cased")
    if problems:
        raise SystemExit("CPython's case properties fail the cross-checks:\n" + "\n".join(problems[:50]))
    return upper, lower, cased, ignorable


def lower_with_table(text: str, lower: dict[int, str], cased: set[int], ignorable: set[int]) -> str:
    """``str.lower()`` as the table and docs/FORMAT.md define it, to check the table against CPython."""
    out = []
    for i, char in enumerate(text):
        if char != CAPITAL_SIGMA:
            out.append(lower.get(ord(char), char))
            continue
        j = i - 1
        while j >= 0 and ord(text[j]) in ignorable:
            j -= 1
        final = j >= 0 and ord(text[j]) in cased
        if final:
            j = i + 1
            while j < len(text) and ord(text[j]) in ignorable:
                j += 1
            final = j == len(text) or ord(text[j]) not in cased
        out.append(FINAL_SIGMA if final else SMALL_SIGMA)
    return "".join(out)


def check_final_sigma(lower: dict[int, str], cased: list[int], ignorable: list[int]) -> int:
    """Random strings of sigmas, cased letters, Case_Ignorable and other code points: lower() agrees."""
    generator = random.Random(1400)
    cased_set, ignorable_set = set(cased), set(ignorable)
    others = [cp for cp in generator.sample(range(MAX_CODE_POINT + 1), 400)
              if cp not in cased_set and cp not in ignorable_set]
    alphabet = [chr(cp) for cp in generator.sample(cased, 200) + generator.sample(ignorable, 200) + others]
    alphabet += [CAPITAL_SIGMA] * 40 + list("A.' 1\u0345\u02b0\u00ad\u0301\u00df\u0130")
    count = 20_000
    for _ in range(count):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(1, 12)))
        if lower_with_table(text, lower, cased_set, ignorable_set) != text.lower():
            raise SystemExit(f"the table and str.lower() disagree on {text!r}")
    return count


def render(upper: dict[int, str], lower: dict[int, str], cased: list[int], ignorable: list[int]) -> tuple[int, str]:
    lines = [f"U {cp:04X} {_hex(mapped)}" for cp, mapped in sorted(upper.items())]
    lines += [f"L {cp:04X} {_hex(mapped)}" for cp, mapped in sorted(lower.items())]
    lines += [f"C {first:04X} {last:04X}" for first, last in _ranges(cased)]
    lines += [f"I {first:04X} {last:04X}" for first, last in _ranges(ignorable)]
    text = HEADER + f"unicode {UNICODE_VERSION}\n" + "".join(line + "\n" for line in lines) + f"end {len(lines)}\n"
    return len(lines), text


def _build() -> tuple[int, str]:
    if platform.python_implementation() != "CPython" or unicodedata.unidata_version != UNICODE_VERSION:
        raise SystemExit(
            f"the table is read from CPython with Unicode {UNICODE_VERSION} (CPython 3.11); this is "
            f"{platform.python_implementation()} {platform.python_version()} with Unicode "
            f"{unicodedata.unidata_version}"
        )
    upper, lower, cased, ignorable = read_cpython()
    check_final_sigma(lower, cased, ignorable)
    return render(upper, lower, cased, ignorable)


def main(argv: list[str] | None = None) -> int:
    return freeze(argv, __doc__, OUTPUT, _build, checked="lines agree with this CPython")


if __name__ == "__main__":
    sys.exit(main())
