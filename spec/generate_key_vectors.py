"""Generates the frozen golden vectors of business keys, ``spec/key-vectors-v1.json``.

Every vector is a key (``docs/FORMAT.md``, section 9): the options, both as the keyword arguments of
the reference's ``record_key`` (``options``, only those that are not the default) and as the options
string of ``record_key_with`` (``key_options``), the key parts (a Spark SQL expression, its Spark
type and its value, rendered in JSON as in ``spec/vectors-v1.json``, see
``spec/generate_vectors.py``), and the result: ``hex``, the 16-byte key in lowercase hex, or
``null`` when the key is NULL; a vector whose key must fail has ``hex: null`` and ``error``, a text
the error message contains. The JVM side evaluates a vector as::

    SELECT hex(record_key_with('<key_options>', <sql1>, ..., <sqln>))

and, when ``key_options`` is empty, also as ``record_key(<sql1>, ..., <sqln>)``. Before writing, every
expression is evaluated with a local Spark (its type and value must be the declared ones) and every
vector's query is run with ``hashexpr.jar``: its result must be the reference's. The case mapping
comes from the frozen table ``python/hashexpr/unicode_case_14_0_0.txt``, so the vectors do not depend
on the Python or Java version. The file is frozen once written, so this script refuses to overwrite
it; ``--check`` re-verifies the existing file instead.

Usage::

    PYTHONPATH=python python spec/generate_key_vectors.py          # create the file
    PYTHONPATH=python python spec/generate_key_vectors.py --check  # verify it, write nothing
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generate_by_name_vectors import start_spark
from generate_vectors import INT, LCASE, STRING, Arg, _check_arg, arr, freeze, render, st
from pyspark.sql.types import BinaryType, DataType, NullType

from hashexpr.reference import FORMAT_VERSION, SEED, record_key

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "spec" / "key-vectors-v1.json"
UNICODE_VERSION = "14.0.0"
NULL_KEY_ERROR = "record_key: every key part is NULL"

SIGMA, ALPHA, BETA = "\u03a3", "\u0391", "\u0392"


@dataclass(frozen=True)
class Vector:
    name: str
    options: dict[str, Any]
    args: tuple[Arg, ...]


def key_options(options: dict[str, Any]) -> str:
    """The ``record_key_with`` options string, in the order ``hx.record_key`` writes it."""
    items = [f"salt={options['salt']}"] if "salt" in options else []
    items += ["trim"] if options.get("trim") else []
    items += [f"case={options['case']}"] if options.get("case") else []
    items += ["empty_as_null"] if options.get("empty_as_null") else []
    items += [f"null_key={options['null_key']}"] if "null_key" in options else []
    return "; ".join(items)


def query(vector: Vector) -> str:
    return f"SELECT hex(record_key_with('{key_options(vector.options)}', {', '.join(a.sql for a in vector.args)}))"


def text(value: str | bytes) -> Arg:
    """A STRING key part: a literal, or the bytes cast to STRING when they are not UTF-8."""
    if isinstance(value, bytes):
        return Arg(f"CAST(X'{value.hex().upper()}' AS STRING)", STRING, value)
    return Arg("'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'", STRING, value)


NULL_INT = Arg("CAST(NULL AS INT)", INT, None)
NULL_STRING = Arg("CAST(NULL AS STRING)", STRING, None)


def vec(name: str, options: dict[str, Any], *args: Arg | str | bytes) -> Vector:
    return Vector(name, options, tuple(a if isinstance(a, Arg) else text(a) for a in args))


# ---------------------------------------------------------------------------------------------
# The vectors


def salt_vectors() -> list[Vector]:
    return [
        vec("plain", {}, "C-042"),
        vec("salt_empty", {"salt": ""}, "C-042"),
        vec("salt_hub", {"salt": "hub_customer"}, "C-042"),
        vec("salt_other_hub", {"salt": "hub_order"}, "C-042"),
        vec("salt_unicode", {"salt": "Mandant-\u00df\u20ac\U0001f600"}, "C-042"),
        vec("salt_long", {"salt": "s" * 40}, "C-042"),
        # The salt is never normalised.
        vec("salt_not_upper_cased", {"salt": "hub", "case": "upper"}, "C-042"),
        vec("salt_hub_short", {"salt": "hub"}, "C-042"),
        vec("salt_upper", {"salt": "HUB"}, "C-042"),
        vec("plain_two_parts", {}, "C-042", Arg("7", INT, 7)),
    ]


def option_vectors() -> list[Vector]:
    """Every combination of trim, case, empty_as_null and null_key, on three keys."""
    vectors = []
    for trim, case, empty, null_key in itertools.product(
        (False, True), (None, "upper", "lower"), (False, True), ("hash", "null", "error")
    ):
        options: dict[str, Any] = {}
        options.update({"trim": True} if trim else {})
        options.update({"case": case} if case else {})
        options.update({"empty_as_null": True} if empty else {})
        options.update({"null_key": null_key} if null_key != "hash" else {})
        label = f"opts_trim{int(trim)}_{case or 'keep'}_empty{int(empty)}_{null_key}"
        vectors += [
            vec(f"{label}_mixed", options, " Stra\u00dfe " + ALPHA + SIGMA + " ", NULL_INT, "  "),
            vec(f"{label}_empty", options, "", NULL_STRING),
            vec(f"{label}_blank", options, "  ", Arg("NULL", NullType(), None)),
        ]
    return vectors


def null_vectors() -> list[Vector]:
    return [
        vec("null_first", {}, NULL_STRING, "x"),
        vec("null_last", {}, "x", NULL_STRING),
        vec("null_void", {}, Arg("NULL", NullType(), None)),
        vec("null_all_error_with_a_value", {"null_key": "error"}, NULL_STRING, Arg("0", INT, 0)),
        # An array holding a NULL is a value, not a NULL key part.
        vec("null_array_element_is_a_value", {"null_key": "error"},
            Arg("array(CAST(NULL AS STRING))", arr(STRING, True), [None])),
    ]


def type_vectors() -> list[Vector]:
    """Only top-level strings are normalised; collated strings are, before their collation key."""
    return [
        vec("type_int_not_normalised", {"trim": True, "case": "upper"}, Arg("12", INT, 12)),
        vec("type_array_not_normalised", {"case": "upper"}, Arg("array(' a')", arr(STRING), [" a"])),
        vec("type_struct_not_normalised", {"trim": True, "case": "lower"},
            Arg("named_struct('s', ' A ')", st(("s", STRING, False)), (" A ",))),
        vec("type_binary_not_normalised", {"case": "upper"}, Arg("X'61'", BinaryType(), b"a")),
        vec("type_utf8_lcase", {"trim": True, "case": "upper"},
            Arg("' Stra\u00dfe ' COLLATE UTF8_LCASE", LCASE, " Stra\u00dfe ")),
    ]


def mapping_vectors() -> list[Vector]:
    up, low = {"case": "upper"}, {"case": "lower"}
    return [
        vec("upper_sharp_s", up, "stra\u00dfe"),
        vec("plain_STRASSE", {}, "STRASSE"),
        vec("upper_ligature_ffi", up, "\ufb03x"),
        vec("upper_n_apostrophe", up, "\u0149"),
        vec("upper_iota_dialytika_tonos", up, "\u0390"),
        vec("upper_alpha_ypogegrammeni", up, "\u1fb3"),
        vec("upper_dotless_i", up, "\u0131"),
        vec("upper_dotted_capital_i", up, "\u0130"),
        vec("lower_dotted_capital_i", low, "\u0130stanbul"),
        vec("lower_kelvin", low, "\u212a"),
        vec("lower_capital_sharp_s", low, "STRA\u1e9eE"),
        vec("upper_final_sigma", up, "\u03bf\u03b4\u03bf\u03c2"),
        vec("upper_titlecase_dz", up, "\u01c5"),
        vec("lower_titlecase_dz", low, "\u01c5"),
        vec("upper_deseret", up, "\U00010428"),
        vec("upper_mixed_scripts", up, "\u00fcn\u00efc\u00f6d\u00e9 stra\u00dfe \u03c3\u03bf\u03c6\u03af\u03b1 \u0434\u043e\u043c"),
        vec("upper_cjk_unchanged", up, "\u65e5\u672c\u8a9e"),
        # Case pairs new in Unicode 14.0.0 (Java 17 follows Unicode 13 and leaves them as they are).
        vec("upper_u2c5f", up, "\u2c5f"),
        vec("lower_u2c2f", low, "\u2c2f"),
        vec("upper_ua7c1", up, "\ua7c1"),
        vec("lower_ua7c0", low, "\ua7c0"),
        vec("upper_ua7d9", up, "\ua7d9"),
        vec("upper_u10597", up, "\U00010597"),
        vec("lower_u10570", low, "\U00010570"),
        vec("upper_vithkuqi_word", up, "\U00010597\U000105a8\U000105ae"),
    ]


def sigma_vectors() -> list[Vector]:
    """Final_Sigma contexts of lower(), including those where Java's word-boundary rule differs."""
    low = {"case": "lower"}
    return [
        vec("lower_final_sigma_word", low, "\u039f\u0394\u039f" + SIGMA),
        vec("plain_final_sigma_word", {}, "\u03bf\u03b4\u03bf\u03c2"),
        vec("sigma_alone", low, SIGMA),
        vec("sigma_initial", low, SIGMA + ALPHA),
        vec("sigma_two_words", low, "\u039f\u0394\u039f" + SIGMA + " " + SIGMA + ALPHA),
        vec("sigma_double", low, ALPHA + SIGMA + SIGMA),
        vec("sigma_then_period", low, ALPHA + SIGMA + "."),
        vec("sigma_period_letter", low, ALPHA + SIGMA + "." + BETA),
        vec("sigma_after_apostrophe", low, ALPHA + "'" + SIGMA),
        vec("sigma_space_letter", low, ALPHA + SIGMA + " " + BETA),
        vec("sigma_digit_letter", low, ALPHA + SIGMA + "1" + BETA),
        vec("sigma_after_digit", low, ALPHA + "1" + SIGMA),
        vec("sigma_after_underscore", low, ALPHA + "_" + SIGMA),
        vec("sigma_after_ypogegrammeni", low, ALPHA + "\u0345" + SIGMA),
        vec("sigma_ypogegrammeni_only", low, "\u0345" + SIGMA),
        vec("sigma_then_ypogegrammeni", low, ALPHA + SIGMA + "\u0345"),
        vec("sigma_modifier_h_letter", low, ALPHA + SIGMA + "\u02b0" + BETA),
        vec("sigma_soft_hyphen_acute", low, ALPHA + "\u00ad" + SIGMA + "\u0301"),
        vec("sigma_before_unicode_14_letter", low, "a" + SIGMA + "\u2c5f"),
        vec("sigma_after_unicode_14_letter", low, "\u2c5f" + SIGMA),
        vec("sigma_upper_unchanged", {"case": "upper"}, ALPHA + SIGMA),
    ]


def invalid_utf8_vectors() -> list[Vector]:
    up, low = {"case": "upper"}, {"case": "lower"}
    return [
        vec("invalid_ff_upper", up, b"a\xff"),
        vec("invalid_ff_lower", low, b"A\xff"),
        vec("invalid_overlong_upper", up, b"\xc0\xafa"),
        vec("invalid_surrogate_upper", up, b"\xed\xa0\x80a"),
        vec("invalid_above_10ffff_lower", low, b"\xf4\x90\x80\x80A"),
        vec("invalid_truncated_then_sharp_s_upper", up, b"\xe2\x82\xc3\x9f"),
        vec("invalid_continuations_lower", low, b"\x80\xbfA"),
        vec("invalid_truncated_at_end_upper", up, b"a\xf0\x9f\x98"),
        vec("invalid_before_sigma_lower", low, ALPHA.encode() + b"\xff" + SIGMA.encode()),
        vec("invalid_after_sigma_lower", low, (ALPHA + SIGMA).encode() + b"\xff" + BETA.encode()),
        vec("invalid_trim_upper", {"trim": True, "case": "upper"}, b" \xffa "),
        vec("invalid_unchanged_without_case", {"trim": True, "empty_as_null": True}, b" \xff "),
        vec("invalid_ff_no_options", {}, b"a\xff"),
    ]


def all_vectors() -> list[Vector]:
    return (salt_vectors() + option_vectors() + null_vectors() + type_vectors() + mapping_vectors()
            + sigma_vectors() + invalid_utf8_vectors())


# ---------------------------------------------------------------------------------------------
# JSON


def reference_result(vector: Vector) -> tuple[str | None, str | None]:
    """The key's hex (None for a NULL key), and the error text when the key must fail."""
    values = [a.value for a in vector.args]
    types: list[DataType] = [a.dtype for a in vector.args]
    try:
        result = record_key(values, types, **vector.options)
    except ValueError as error:
        if NULL_KEY_ERROR not in str(error):
            raise
        return None, NULL_KEY_ERROR
    return (result.hex() if result is not None else None), None


def to_json(vectors: list[Vector]) -> dict[str, Any]:
    entries = []
    for vector in vectors:
        hex_value, error = reference_result(vector)
        entry: dict[str, Any] = {
            "name": vector.name,
            "options": vector.options,
            "key_options": key_options(vector.options),
            "args": [
                {"sql": a.sql, "type": a.dtype.jsonValue(), "value": render(a.value, a.dtype)} for a in vector.args
            ],
            "hex": hex_value,
        }
        if error:
            entry["error"] = error
        entries.append(entry)
    return {"format_version": FORMAT_VERSION, "seed": SEED, "unicode_version": UNICODE_VERSION, "vectors": entries}


# ---------------------------------------------------------------------------------------------
# Checks


def check_vectors(vectors: list[Vector]) -> None:
    names = [vector.name for vector in vectors]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise SystemExit(f"duplicate vector names: {duplicates}")
    for vector in vectors:
        if any(c in key_options(vector.options) for c in "'\\"):
            raise SystemExit(f"{vector.name}: the options string must not need quoting")


def check_with_spark(vectors: list[Vector]) -> None:
    """Every argument has its declared type and value, and Spark's key is the reference's.

    Runs under ANSI and non-ANSI mode, so that the vectors do not depend on either setting.
    """
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    spark = start_spark()
    failures = []
    for ansi in ("true", "false"):
        spark.conf.set("spark.sql.ansi.enabled", ansi)
        for vector in vectors:
            try:
                problems = _check_vector(spark, vector)
            except (PySparkException, Py4JJavaError) as error:  # report every failure
                problems = [f"{type(error).__name__}: {str(error).splitlines()[0]}"]
            failures += [f"{vector.name} ansi={ansi}: {problem}" for problem in problems]
    spark.stop()
    if failures:
        raise SystemExit("Spark disagrees with the declared vectors:\n" + "\n".join(failures))


def _check_vector(spark: Any, vector: Vector) -> list[str]:
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    problems = [f"arg {i}: {p}" for i, a in enumerate(vector.args) if (p := _check_arg(spark, a))]
    expected, error = reference_result(vector)
    queries = [query(vector)]
    if not vector.options:
        queries.append(f"SELECT hex(record_key({', '.join(a.sql for a in vector.args)}))")
    for sql in queries:
        if error:
            try:
                spark.sql(sql).collect()
                problems.append(f"{sql}: no error, expected {error!r}")
            except (PySparkException, Py4JJavaError) as failure:
                if error not in str(failure):
                    problems.append(f"{sql}: error {str(failure).splitlines()[0]!r}, expected {error!r}")
            continue
        actual = spark.sql(sql).collect()[0][0]
        if (actual.lower() if actual is not None else None) != expected:
            problems.append(f"{sql}: Spark {actual} != reference {expected}")
    return problems


def _build() -> tuple[int, dict[str, Any]]:
    vectors = all_vectors()
    check_vectors(vectors)
    check_with_spark(vectors)
    return len(vectors), to_json(vectors)


def main(argv: list[str] | None = None) -> int:
    return freeze(argv, __doc__, OUTPUT, _build)


if __name__ == "__main__":
    sys.exit(main())
