"""The dbt package's encoders, written by the dialects themselves: Jinja macros for ``integrations/dbt``.

An encoder only places the value's SQL text into its own, so a dialect asked for the encoding of a placeholder
writes a template: :func:`macros` asks each :class:`~hashexpr.sql.dialect.Dialect` for every atomic type,
decimal width, key normalisation, NULL test and ``null_key`` guard with placeholders for the value, the
precision and scale, and the column's label, and writes each answer as a macro that joins Jinja variables into
the text. The macros give the SQL that :func:`hashexpr.sql.record_key` and :func:`hashexpr.sql.record_hash`
give, byte for byte (tests/test_dbt.py compiles a dbt project and compares); ``make dbt-macros`` rewrites the
files and a test checks that they are what this module writes.

A label of a column appears only inside string literals (the messages of failed queries), which each engine
escapes its own way: there the template calls the package's ``hx_<dialect>_string_literal`` macro, the Jinja
twin of :meth:`~hashexpr.sql.dialect.Dialect.string_literal`.

    python -m hashexpr.sql.jinja integrations/dbt/macros/generated
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hashexpr.sql import DIALECTS, EVERY_PART, KEY_RECORD, RECORD_VERSION, normalised, null_key_guard
from hashexpr.sql.dialect import NARROW_DECIMAL_DIGITS, STRING, Dialect
from hashexpr.sql.types import ATOMIC
from hashexpr.types import DecimalType, StringType, VarcharType

__all__ = ["files", "macros", "main"]

# Placeholders: names of Jinja variables between NUL bytes, which no SQL the dialects write holds.
_VALUE, _PRECISION, _SCALE, _WHERE = "\x00v\x00", "\x00precision\x00", "\x00scale\x00", "\x00where\x00"
_HEX, _HEX_UPPER = "\x00hex\x00", "\x00hex_upper\x00"
_TESTS, _DIGEST = "\x00every_part_null\x00", "\x00digest\x00"
# A string literal whose text holds a placeholder: its text between these bytes.
_LITERAL_START, _LITERAL_END = "\x01", "\x02"
_PLACEHOLDER = re.compile("\x00([a-z_]+)\x00")

#: The Jinja of each dialect's string_literal (hashexpr.sql.dialect, postgres, spark: hashexpr.jar_sql.string).
STRING_LITERALS = {
    "postgres": """{{ return("E'" ~ text.replace("\\\\", "\\\\\\\\").replace("'", "''") ~ "'") }}""",
    "duckdb": """{{ return("'" ~ text.replace("'", "''") ~ "'") }}""",
    "spark": (
        """{%- if "'" in text or "\\\\" in text -%}"""
        """{{ return("CAST(X'" ~ text.encode("utf-8").hex().upper() ~ "' AS STRING)") }}"""
        """{%- else -%}{{ return("'" ~ text ~ "'") }}{%- endif -%}"""
    ),
}


class _Hex:
    """Stands for the bytes of a literal: their ``hex()`` is a placeholder."""

    def hex(self) -> str:
        return _HEX


def _templating(engine: Dialect) -> Dialect:
    """``engine``, but a string literal holding a placeholder is marked for the Jinja twin to write."""
    base = type(engine)

    def string_literal(self: Dialect, text: str) -> str:
        if "\x00" in text:
            return _LITERAL_START + text + _LITERAL_END
        return base.string_literal(self, text)

    return type(f"Templating{base.__name__}", (base,), {"string_literal": string_literal})()


def _jinja_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _jinja(text: str, dialect: str) -> str:
    """A Jinja expression for ``text``: its literal pieces, its placeholders as variables."""
    text = text.replace(_HEX.upper(), _HEX_UPPER)
    pieces: list[str] = []
    for i, part in enumerate(re.split(f"{_LITERAL_START}(.*?){_LITERAL_END}", text, flags=re.DOTALL)):
        if i % 2:
            pieces.append(f"hashexpr.hx_{dialect}_string_literal({_jinja(part, dialect)})")
            continue
        for k, piece in enumerate(_PLACEHOLDER.split(part)):
            if k % 2:
                pieces.append("hex.upper()" if piece == "hex_upper" else piece)
            elif piece:
                pieces.append(_jinja_string(piece))
    if "\x00" in "".join(p for p in pieces if p.startswith('"')):
        raise AssertionError(f"a placeholder was left in {text!r}")
    return " ~ ".join(pieces) if pieces else '""'


def _macro(name: str, arguments: str, body: str) -> str:
    return f"{{% macro {name}({arguments}) -%}}\n{body}\n{{%- endmacro %}}\n"


def _expression(text: str, dialect: str, arguments: str) -> str:
    """:func:`_jinja` of ``text``, whose placeholders must all be among the macro's ``arguments``: dbt renders an
    unknown variable as empty text."""
    used = {"hex" if name == "hex_upper" else name for name in _PLACEHOLDER.findall(text)}
    missing = used - {a.strip() for a in arguments.split(",")}
    if missing:
        raise AssertionError(
            f"a template uses {sorted(missing)}, which are not among the arguments {arguments}"
        )
    return _jinja(text, dialect)


def _returns(expression: str) -> str:
    return f"{{{{ return({expression}) }}}}"


def _branches(condition: str, cases: list[tuple[str, str]], otherwise: str) -> str:
    """``{% if ... %}`` over ``cases`` of (test value, Jinja expression returned); ``condition`` ends in its
    comparison (``x ==``, ``x in``)."""
    lines = []
    for k, (key, expression) in enumerate(cases):
        keyword = "if" if k == 0 else "elif"
        lines.append(f"{{%- {keyword} {condition} {key} -%}}\n{_returns(expression)}")
    lines.append(f"{{%- else -%}}\n{otherwise}\n{{%- endif -%}}")
    return "\n".join(lines)


def _check(expected: str, template: str, values: dict[str, str]) -> None:
    """The template with ``values`` in its placeholders is ``expected``: what the dialect writes."""
    for name, value in values.items():
        template = template.replace(f"\x00{name}\x00", value)
    if template != expected:
        raise AssertionError(f"the template does not give the dialect's text:\n{template}\n{expected}")


def macros(name: str) -> str:
    """The Jinja macros of dialect ``name`` (``postgres``, ``duckdb``, ``spark``), as the text of one file.

    Examples
    --------
    >>> from hashexpr.sql.jinja import macros
    >>> print(macros("spark").split("{% macro hx_spark_sha256(v) -%}")[1].split("{%- endmacro")[0].strip())
    {{ return("unhex(sha2(" ~ v ~ ", 256))") }}
    """
    engine = _templating(DIALECTS[name])
    d = name
    out = [
        (
            f"{{#- Written by `python -m hashexpr.sql.jinja` (make dbt-macros) from hashexpr.sql's {name} dialect. "
            "Do not edit: tests/test_dbt.py checks that it is what that writes. -#}\n"
        )
    ]
    out.append(_macro(f"hx_{d}_string_literal", "text", STRING_LITERALS[name]))
    # The quoting of an identifier: between two quote characters, each one inside doubled.
    mark = engine.quote("x")[0]
    assert engine.quote(f"a{mark}b") == f"{mark}a{mark}{mark}b{mark}"
    out.append(
        _macro(
            f"hx_{d}_quote",
            "name",
            _returns(
                f"{_jinja_string(mark)} ~ name.replace({_jinja_string(mark)}, "
                f"{_jinja_string(mark * 2)}) ~ {_jinja_string(mark)}"
            ),
        )
    )
    out.append(_macro(f"hx_{d}_literal", "hex", _returns(_expression(engine.literal(_Hex()), d, "hex"))))
    joined = engine.concat(["\x00a\x00", "\x00b\x00", "\x00c\x00"])
    opening, rest = joined.split("\x00a\x00")
    separator, rest = rest.split("\x00b\x00")
    _, closing = rest.split("\x00c\x00")
    out.append(
        _macro(
            f"hx_{d}_concat",
            "parts",
            _returns(
                f"{_jinja_string(opening)} ~ parts | join({_jinja_string(separator)}) ~ {_jinja_string(closing)}"
            ),
        )
    )
    out.append(_macro(f"hx_{d}_sha256", "v", _returns(_expression(engine.sha256(_VALUE), d, "v"))))
    out.append(
        _macro(f"hx_{d}_is_null", "v", _returns(_expression(engine.is_null(_VALUE, StringType()), d, "v")))
    )

    # Every atomic type by its Spark names (those of one encoding together), and decimals by width.
    names: dict[str, list[str]] = {}
    for type_name, dtype in ATOMIC.items():
        template = _expression(engine.value(_VALUE, dtype, _WHERE), d, "v, where")
        names.setdefault(template, []).append(_jinja_string(type_name))
    cases = [(f"[{', '.join(group)}]", template) for template, group in names.items()]
    varchar = engine.value(_VALUE, VarcharType(1), _WHERE)
    assert varchar == engine.value(_VALUE, StringType(), _WHERE)
    decimal = "v, where, precision, scale"
    declared = f"decimal({_PRECISION},{_SCALE})"
    narrow = engine.declared(
        _VALUE, declared, True, _WHERE, engine.coalesce(engine.decimal(_VALUE, _PRECISION, _SCALE, False))
    )
    wide = engine.declared(
        _VALUE, declared, True, _WHERE, engine.coalesce(engine.decimal(_VALUE, _PRECISION, _SCALE, True))
    )
    for precision, scale in ((1, 0), (18, 3), (19, 0), (38, 38)):
        template = wide if precision > NARROW_DECIMAL_DIGITS else narrow
        _check(engine.value(_VALUE, DecimalType(precision, scale), _WHERE), template,
               {"precision": str(precision), "scale": str(scale)})  # fmt: skip
    body = _branches(
        "type in",
        cases,
        f"{{%- set m = modules.re.fullmatch('decimal\\\\((\\\\d+),(\\\\d+)\\\\)', type) -%}}\n"
        f"{{%- if m is none -%}}{{{{ exceptions.raise_compiler_error('hashexpr: no encoder for ' ~ type) }}}}"
        f"{{%- endif -%}}\n"
        f"{{%- set precision, scale = m.group(1) | int, m.group(2) | int -%}}\n"
        f"{{%- if precision > {NARROW_DECIMAL_DIGITS} -%}}\n{_returns(_expression(wide, d, decimal))}\n"
        f"{{%- else -%}}\n{_returns(_expression(narrow, d, decimal))}\n{{%- endif -%}}",
    )
    out.append(_macro(f"hx_{d}_value", "v, type, where", body))

    # A string key part under each combination of trim, case and empty_as_null (format section 9).
    keyed, tests = [], []
    for trim in (False, True):
        for case in (None, "upper", "lower"):
            for empty in (False, True):
                if not (trim or case or empty):
                    continue
                key = _jinja_string(f"{trim}/{case}/{empty}")
                text = normalised(engine, engine.text(_VALUE), trim, case, empty, _WHERE)
                keyed.append((key, _expression(engine.key_part(text), d, "v, where")))
                tests.append((key, _expression(engine.is_null(text, StringType()), d, "v, where")))

    def unknown(what: str) -> str:
        return f"{{{{ exceptions.raise_compiler_error('hashexpr: no {what} ' ~ {what}) }}}}"

    out.append(
        _macro(f"hx_{d}_key_string", "v, options, where", _branches("options ==", keyed, unknown("options")))
    )
    out.append(
        _macro(
            f"hx_{d}_key_string_is_null",
            "v, options, where",
            _branches("options ==", tests, unknown("options")),
        )
    )
    guards = [
        (
            _jinja_string(null_key),
            _expression(
                null_key_guard(engine, null_key, _TESTS, _DIGEST, _VALUE), d, "every_part_null, digest, v"
            ),
        )
        for null_key in ("hash", "null", "error")
    ]
    out.append(
        _macro(
            f"hx_{d}_null_key",
            "null_key, every_part_null, digest, v",
            _branches("null_key ==", guards, unknown("null_key")),
        )
    )
    return "\n".join(out)


def files() -> dict[str, str]:
    """The generated files of ``integrations/dbt/macros/generated``: name -> text.

    Examples
    --------
    >>> from hashexpr.sql.jinja import files
    >>> sorted(files())
    ['hashexpr_constants.sql', 'hashexpr_duckdb.sql', 'hashexpr_postgres.sql', 'hashexpr_spark.sql']
    >>> "{% macro hx_duckdb_value(v, type, where) -%}" in files()["hashexpr_duckdb.sql"]
    True
    """
    constants = (
        "{#- Written by `python -m hashexpr.sql.jinja` (make dbt-macros) from hashexpr.sql. Do not edit. -#}\n"
        + _macro(
            "hx_constants",
            "",
            _returns(
                f"{{'record': '{RECORD_VERSION:02x}', 'key': '{KEY_RECORD:02x}{STRING:02x}', "
                f"'every_part': {_jinja_string(EVERY_PART)}, 'narrow_decimal_digits': {NARROW_DECIMAL_DIGITS}}}"
            ),
        )
    )
    return {
        "hashexpr_constants.sql": constants,
        **{f"hashexpr_{name}.sql": macros(name) for name in DBT_DIALECTS},
    }


#: The dialects the dbt package has macros for: the adapters its tests run (dbt-postgres, dbt-duckdb, dbt-spark).
DBT_DIALECTS = ("postgres", "duckdb", "spark")


def main(argv: list[str] | None = None) -> int:
    """Write :func:`files` into the directory given (``integrations/dbt/macros/generated``)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m hashexpr.sql.jinja DIRECTORY", file=sys.stderr)
        return 2
    target = Path(args[0])
    target.mkdir(parents=True, exist_ok=True)
    for name, text in files().items():
        (target / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
