"""One option grammar in Python and in SQL: flags are booleans, words are read in any case, and the same options
give the same key through hx.record_key, record_key_with, the reference and the command line."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

import hashexpr as hx
from hashexpr import reference
from hashexpr.options import KeyOptions, parse_key_options

STRING = StringType()


@pytest.mark.parametrize("flag", ["trim", "empty_as_null"])
@pytest.mark.parametrize("value", ["no", "false", "False", 0, 1, None, "yes"])
def test_flags_are_booleans_everywhere(flag, value):
    with pytest.raises(TypeError, match=f"{flag} must be True or False, got {value!r}"):
        hx.record_key("s", **{flag: value})
    with pytest.raises(TypeError, match=f"{flag} must be True or False"):
        reference.record_key(["a"], [STRING], **{flag: value})
    with pytest.raises(TypeError, match=f"{flag} must be True or False"):
        hx.normalize_key("s", **{flag: value})


def test_other_flags_are_booleans_too(spark):
    df = spark.createDataFrame([(1, "a")], "id INT, s STRING")
    with pytest.raises(TypeError, match="by_name must be True or False"):
        hx.record_hash("s", by_name="yes")
    with pytest.raises(TypeError, match="hash_single_field must be True or False"):
        hx.record_key("s", hash_single_field="false")
    with pytest.raises(TypeError, match="include_unchanged must be True or False"):
        hx.diff(df, df, "id", include_unchanged="false")
    with pytest.raises(TypeError, match="include_values must be True or False"):
        hx.diff(df, df, "id", include_values=1)
    with pytest.raises(TypeError, match="source_file must be True or False"):
        hx.with_metadata(df, "id", source_file="no")
    with pytest.raises(TypeError, match="with_metadata: trim must be True or False"):
        hx.with_metadata(df, "id", key_options={"trim": "no"})
    with pytest.raises(ValueError, match=r"key_options has unknown options \['slat'\]"):
        hx.with_metadata(df, "id", key_options={"slat": "crm"})


def test_words_are_read_in_any_case_in_python_as_in_sql(spark):
    df = spark.createDataFrame([(" stra\u00dfe ",), ("",), (None,)], "s STRING")
    python = [
        hx.record_key("s", trim=True, case="UPPER", empty_as_null=True, null_key="Null", algorithm="SHA256"),
        hx.record_key("s", case=" Lower "),
        hx.record_key("s", case="KEEP"),
        hx.record_hash("s", algorithm="Sha256"),
    ]
    sql = [
        "record_key_with('TRIM; CASE=UPPER; Empty_As_Null; NULL_KEY=NULL; ALGORITHM=SHA256', s)",
        "record_key_with('case = Lower ', s)",
        "record_key_with('case=keep', s)",
        "record_hash_with('algorithm=SHA256', s)",
    ]
    rows = df.select(
        *(c.alias(f"p{i}") for i, c in enumerate(python)),
        *(F.expr(f"{t} AS q{i}") for i, t in enumerate(sql)),
    ).collect()
    for r in rows:
        for i in range(len(python)):
            assert r[f"p{i}"] == r[f"q{i}"], sql[i]
    expected = reference.record_key(
        [" stra\u00dfe "], [STRING], trim=True, case="upper", empty_as_null=True, algorithm="sha256"
    )
    assert bytes(rows[0].p0) == expected
    assert rows[1].p0 is None and rows[2].p0 is None
    assert hx.dataset_fingerprint(df, algorithm="LTHASH16") == hx.dataset_fingerprint(
        df, algorithm="lthash16"
    )


def test_unknown_words_are_refused_with_the_choices():
    with pytest.raises(ValueError, match="case must be one of 'upper', 'lower', 'keep', got 'title'"):
        hx.record_key("s", case="title")
    with pytest.raises(ValueError, match="null_key must be one of 'hash', 'null', 'error', got 'skip'"):
        hx.record_key("s", null_key="skip")
    with pytest.raises(
        ValueError, match="algorithm must be one of 'murmur3', 'sha256', 'hmac-sha256', got 'md5'"
    ):
        hx.record_hash("s", algorithm="md5")
    with pytest.raises(TypeError, match="case must be a string"):
        hx.record_key("s", case=True)


def test_the_options_text_is_read_as_record_key_with_reads_it():
    assert parse_key_options(" SALT=crm;TRIM; case = Upper ;; null_key=ERROR", "f") == KeyOptions(
        salt="crm", trim=True, case="upper", null_key="error"
    )
    refused = {
        "trim, case=upper": "unknown option 'trim, case=upper' (options are separated by ';', not ',')",
        "trim=yes": "option 'trim=yes': 'trim' takes no value",
        "case=title": "case must be one of",
        "case=upper; CASE=lower": "option 'case' given twice",
        "salt= crm": "salt must not begin or end with a space",
        "slat=crm": "unknown option 'slat=crm'",
        "null_key": "option 'null_key' with a missing or unknown value",
    }
    for text, message in refused.items():
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            parse_key_options(text, "f")
    assert KeyOptions.of(salt="hub", trim=True, case="lower", empty_as_null=True, null_key="null").text == (
        "salt=hub; trim; case=lower; empty_as_null; null_key=null"
    )
