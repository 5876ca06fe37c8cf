"""The columns the SQL writers hash: a column name (quoted for the dialect) or SQL expression text, with a type."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hashexpr.sql.dialect import Dialect
from hashexpr.sql.types import parse_type, type_name
from hashexpr.types import DataType, of

__all__ = ["Column", "column", "expression", "parse_columns"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Column:
    """A value to hash: a column's exact name, or SQL expression text, and its Spark SQL type."""

    #: The column name, or the expression's text.
    text: str
    #: Whether :attr:`text` is SQL to write as it is rather than a name to quote.
    is_expression: bool
    dtype: DataType

    def sql(self, dialect: Dialect) -> str:
        """The value as SQL of ``dialect``: the quoted name, or the expression in parentheses."""
        return f"({self.text})" if self.is_expression else dialect.quote(self.text)

    @property
    def label(self) -> str:
        """How messages name the value."""
        return f"expression {self.text!r}" if self.is_expression else f"column {self.text!r}"


@dataclass(frozen=True)
class _Name:
    """A column name, quoted whatever it holds."""

    name: str


@dataclass(frozen=True)
class _Expression:
    text: str


def column(name: str) -> _Name:
    """Mark ``name`` as a column name, whatever it holds (spaces, dots, quotes): it is quoted, never parsed.

    Examples
    --------
    >>> from hashexpr.sql import column, record_hash
    >>> record_hash([(column("unit price"), "double")], dialect="duckdb").count('"unit price"') > 0
    True
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a column name must be a non-empty str, got {name!r}")
    return _Name(name)


def expression(text: str) -> _Expression:
    """Mark ``text`` as SQL expression text of the dialect, written in parentheses as it is.

    Examples
    --------
    >>> from hashexpr.sql import expression, record_hash
    >>> "(lower(email))" in record_hash([(expression("lower(email)"), "string")], dialect="postgres")
    True
    """
    return _Expression(_checked_expression(text))


ColumnSpec = str | _Name | _Expression


def parse_columns(columns: Sequence[tuple[ColumnSpec, str | DataType]], function: str) -> list[Column]:
    """Read ``columns`` as the writers take them: ``(name or expression, type)`` pairs.

    A ``str`` that is an identifier (letters, digits and ``_``, not starting with a digit) is a column name,
    quoted with its case kept; any other ``str`` is expression text; :func:`column` and :func:`expression`
    say which explicitly.
    """
    if isinstance(columns, (str, bytes)) or not isinstance(columns, Sequence):
        raise TypeError(f"{function}: columns must be a sequence of (column, type) pairs, got {type(columns).__name__}")
    if not columns:
        raise ValueError(f"{function}: columns is empty; give at least one (column, type) pair")
    parsed = []
    for item in columns:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ValueError(f"{function}: expected a (column, type) pair, got {item!r}")
        spec, dtype = item
        if isinstance(spec, _Name):
            text, is_expression = spec.name, False
        elif isinstance(spec, _Expression):
            text, is_expression = spec.text, True
        elif isinstance(spec, str):
            is_expression = _IDENTIFIER.fullmatch(spec) is None
            text = _checked_expression(spec) if is_expression else spec
        else:
            raise TypeError(f"{function}: a column is a name or expression str, got {type(spec).__name__}")
        where = f"{function}: " + (f"expression {text!r}" if is_expression else f"column {text!r}")
        if isinstance(dtype, DataType):
            parsed_type = dtype
        elif any(k.__name__ == "DataType" for k in type(dtype).__mro__):
            parsed_type = of(dtype)  # PySpark's type
        elif isinstance(dtype, str):
            try:
                parsed_type = parse_type(dtype)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
        else:
            raise TypeError(f"{where}: the type must be a Spark SQL type name, got {type(dtype).__name__}")
        type_name(parsed_type)
        parsed.append(Column(text, is_expression, parsed_type))
    return parsed


def _checked_expression(text: str) -> str:
    """``text`` when it is one SQL expression: balanced quotes and parentheses, no ``;``, no comments, no
    backslash and no ``$``.

    Anything else could end the expression early or turn what follows into a comment, and so change what the
    rest of the generated SQL means. Quotes are read as every dialect reads them without backslashes: a quote
    inside a literal is doubled. A backslash escapes a quote in Spark's literals and PostgreSQL's and DuckDB's
    ``E'...'``, and ``$`` starts PostgreSQL's dollar quoting, so either would let a text that looks balanced here
    close the parenthesis around it in the engine.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"an SQL expression must be non-empty text, got {text!r}")
    for char in "\\$":
        if char in text:
            raise ValueError(
                f"expression {text!r} holds {char!r}, which engines read differently inside literals: compute it "
                "in a view or a model, or mark a column name with column()"
            )
    depth = 0
    quote: str | None = None
    i = 0
    while i < len(text):
        char = text[i]
        if quote is not None:
            if char == quote:
                if text[i + 1 : i + 2] == quote:
                    i += 1
                else:
                    quote = None
        elif char in "'\"`":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise ValueError(f"expression {text!r} closes a parenthesis it did not open")
        elif char == ";":
            raise ValueError(f"expression {text!r} holds ';': give one expression, not statements")
        elif text.startswith(("--", "/*"), i):
            raise ValueError(f"expression {text!r} holds a comment, which would hide the SQL after it")
        i += 1
    if quote is not None:
        raise ValueError(f"expression {text!r} leaves a {quote} quote open")
    if depth:
        raise ValueError(f"expression {text!r} leaves a parenthesis open")
    return text
