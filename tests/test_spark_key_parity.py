"""Spark's record_key_with and the reference's record_key agree on case mapping: every code point, sigma
contexts and bytes that are not UTF-8, in every execution mode (docs/FORMAT.md, section 9)."""

from __future__ import annotations

import contextlib
import functools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import StringType
from spark_conf import FOLDING_RULES, spark_conf

from hashexpr.reference import record_key

STRING = StringType()
BATCH = 256
MAX_CODE_POINT = 0x10FFFF

MODES = {
    "interpreted": ("NO_CODEGEN", "false"),
    "codegen": ("CODEGEN_ONLY", "true"),
    "codegen-no-whole-stage": ("CODEGEN_ONLY", "false"),
}


@contextlib.contextmanager
def execution_mode(spark, name: str):
    """One execution mode, with folding off so that the keys are computed in that mode."""
    factory_mode, whole_stage = MODES[name]
    confs = {
        "spark.sql.codegen.factoryMode": factory_mode,
        "spark.sql.codegen.wholeStage": whole_stage,
        "spark.sql.optimizer.excludedRules": FOLDING_RULES,
    }
    with spark_conf(spark, confs):
        yield


@pytest.fixture(params=list(MODES), ids=list(MODES))
def mode(request, spark):
    with execution_mode(spark, request.param):
        yield request.param


def options_string(trim: bool = False, case: str | None = None, empty_as_null: bool = False) -> str:
    return "; ".join(["trim"] * trim + [f"case={case}"] * (case is not None) + ["empty_as_null"] * empty_as_null)


@functools.cache
def every_code_point() -> list[bytes]:
    """Every code point 0..U+10FFFF, BATCH to a string, separated by spaces. Surrogates are written as
    their three-byte encodings, which are not UTF-8: both sides must copy them unchanged."""
    return [
        b" ".join(chr(cp).encode("utf-8", "surrogatepass") for cp in range(start, min(start + BATCH, MAX_CODE_POINT + 1)))
        for start in range(0, MAX_CODE_POINT + 1, BATCH)
    ]


def keys_in_spark(spark, data: list[bytes], options: str, as_hex: bool = False) -> list[bytes | None]:
    """record_key_with(options, s) of every value, s cast to STRING from BINARY, or with as_hex from
    unhex(...) of its hex digits as SQL builds such strings."""
    if as_hex:
        df = spark.createDataFrame([(i, value.hex()) for i, value in enumerate(data)], "id INT, h STRING")
        string = "CAST(unhex(h) AS STRING)"
    else:
        df = spark.createDataFrame(list(enumerate(data)), "id INT, b BINARY")
        string = "CAST(b AS STRING)"
    keyed = df.selectExpr("id", f"record_key_with('{options}', {string}) AS k")
    assert "record_key_with" in keyed._jdf.queryExecution().optimizedPlan().toString(), "the keys were folded"
    rows = keyed.orderBy("id").collect()
    assert [row.id for row in rows] == list(range(len(data)))
    return [bytes(row.k) if row.k is not None else None for row in rows]


def mismatches(data: list[bytes], actual: list[bytes | None], **options) -> list[str]:
    return [repr(value[:40]) for value, key in zip(data, actual) if key != record_key([value], [STRING], **options)]


@functools.cache
def every_code_point_keys(case: str) -> tuple[bytes | None, ...]:
    return tuple(record_key([value], [STRING], case=case) for value in every_code_point())


@pytest.mark.parametrize("case", ["upper", "lower"])
def test_every_code_point_as_the_reference(spark, mode, case):
    actual = keys_in_spark(spark, every_code_point(), f"case={case}")
    wrong = [repr(value[:40]) for value, key, expected in zip(every_code_point(), actual, every_code_point_keys(case))
             if key != expected]
    assert wrong == []


INVALID_UTF8 = [
    "FF", "61FF", "C0AF61", "C1BF", "EDA080", "EDBFBF61", "F4908080", "F5808080", "E282", "E282C39F",
    "80", "BF41", "F09F98", "F09F9861", "E0808061", "F08080803A", "CE91FFCEA3", "CE91CEA3FFCE92",
    "20FF20", "C3", "E2", "F0", "C39FFF", "FFC39F",
]


def random_invalid_utf8(count: int) -> list[str]:
    generator = random.Random(20)
    pieces = ["ce a3", "ce 91", "61", "41", "c3 9f", "cd 85", "2e", "20", "ff", "80", "e2 82", "ed a0 80",
              "f0 9f 98", "f4 90 80 80", "c0 af"]
    return ["".join(generator.choice(pieces) for _ in range(generator.randint(1, 8))).replace(" ", "")
            for _ in range(count)]


@pytest.mark.parametrize("options", [
    {"case": "upper"}, {"case": "lower"}, {"trim": True, "case": "upper", "empty_as_null": True},
])
def test_invalid_utf8_as_the_reference(spark, mode, options):
    hexes = INVALID_UTF8 + random_invalid_utf8(300)
    data = [bytes.fromhex(h) for h in hexes]
    actual = keys_in_spark(spark, data, options_string(**options), as_hex=True)
    assert mismatches(data, actual, **options) == []


# Sigmas, cased letters, Case_Ignorable code points and others, as in tests/test_reference_keys.py.
SIGMA_ALPHABET = "\u03a3\u03a3\u03a3\u03c3\u03c2\u0391\u03b1aZ\u00df\u0130\u0345\u02b0\u00ad'.\u0301\u0308 1-_\u2c5f"
SIGMA_TEXT = st.text(alphabet=SIGMA_ALPHABET, max_size=10).map(str.encode)
JUNK = st.sampled_from([b"", b"", b"\xff", b"\xe2\x82", b"\xed\xa0\x80"])


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(SIGMA_TEXT, JUNK, SIGMA_TEXT).map(b"".join), min_size=1, max_size=50),
       st.sampled_from(["upper", "lower"]), st.booleans())
def test_sigma_contexts_as_the_reference(spark, data, case, trim):
    with execution_mode(spark, "codegen"):
        actual = keys_in_spark(spark, data, options_string(trim=trim, case=case))
    assert mismatches(data, actual, case=case, trim=trim) == []
