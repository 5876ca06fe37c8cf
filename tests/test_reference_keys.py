"""The reference's business keys (docs/FORMAT.md, section 9): hand-built bytes, the case table, frozen vectors."""

from __future__ import annotations

import hashlib
import json
import re
import struct
import sys
import unicodedata
from pathlib import Path

import mmh3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import ArrayType, CharType, IntegerType, NullType, StringType, VarcharType
from test_golden_vectors import decode, parse_type

from hashexpr.reference import case_map, encode_key, record_hash, record_key

ROOT = Path(__file__).resolve().parents[1]
SEED = 0x68617368
TABLE = ROOT / "python" / "hashexpr" / "unicode_case_14_0_0.txt"
VECTORS_FILE = ROOT / "spec" / "key-vectors-v1.json"
DOCUMENT = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))
VECTORS = DOCUMENT["vectors"]
BY_VECTOR_NAME = {vector["name"]: vector for vector in VECTORS}

INT, STRING = IntegerType(), StringType()
UNICODE_14 = pytest.mark.skipif(
    unicodedata.unidata_version != "14.0.0",
    reason=f"the case table is CPython 3.11's (Unicode 14.0.0); this Python has Unicode {unicodedata.unidata_version}",
)


def string_value(data: bytes) -> bytes:
    return b"\x05" + struct.pack("<I", len(data)) + data


def murmur(data: bytes) -> bytes:
    return mmh3.mmh3_x64_128_digest(data, SEED)


# ---------------------------------------------------------------------------------------------
# Bytes, built by hand from the spec


def test_key_bytes_are_those_of_the_spec():
    stream = b"\x82" + string_value(b"hub") + struct.pack("<I", 2) + string_value(b"C-042") + b"\x00"
    assert encode_key(["C-042", None], [STRING, INT], salt="hub") == stream
    assert record_key(["C-042", None], [STRING, INT], salt="hub") == murmur(stream)
    assert record_key(["C-042"], [STRING]) == murmur(b"\x82" + string_value(b"") + struct.pack("<I", 1)
                                                     + string_value(b"C-042"))


def test_a_key_never_equals_the_record_hash_of_its_values():
    assert record_key(["x"], [STRING]) != record_hash(["x"], [STRING])


def test_normalisation_order_trim_case_empty():
    types = [STRING]
    assert record_key([" c-1 "], types, trim=True, case="upper") == record_key(["C-1"], types)
    assert record_key(["\tc-1"], types, trim=True) == record_key(["\tc-1"], types)  # only U+0020 is trimmed
    assert record_key(["stra\u00dfe"], types, case="upper") == record_key(["STRASSE"], types)
    assert record_key(["  "], types, empty_as_null=True) == record_key(["  "], types)
    assert record_key(["  "], types, trim=True, empty_as_null=True) == record_key([None], types)


def test_normalisation_applies_to_top_level_strings_only():
    assert record_key([["a"]], [ArrayType(STRING)], case="upper") != record_key([["A"]], [ArrayType(STRING)])
    assert record_key([12], [INT], trim=True, case="upper") == record_key([12], [INT])
    for dtype in (CharType(3), VarcharType(3), StringType("UTF8_LCASE")):
        assert encode_key(["ab "], [dtype], trim=True, case="upper") == encode_key(["AB"], [dtype])


def test_null_key_policies():
    types = [STRING, NullType()]
    hashed = record_key([None, None], types)
    assert hashed == murmur(b"\x82" + string_value(b"") + struct.pack("<I", 2) + b"\x00\x00")
    assert record_key([None, None], types, null_key="null") is None
    with pytest.raises(ValueError, match="record_key: every key part is NULL"):
        record_key([None, None], types, null_key="error")
    assert record_key(["", None], types, null_key="error") == record_key(["", None], types)
    assert record_key(["", None], types, empty_as_null=True, null_key="null") is None


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="case must be one of 'upper', 'lower', 'keep', got 'title'"):
        record_key(["a"], [STRING], case="title")
    with pytest.raises(ValueError, match="null_key must be"):
        record_key(["a"], [STRING], null_key="skip")
    with pytest.raises(ValueError, match=r"salt must not contain ';'"):
        record_key(["a"], [STRING], salt="a;b")
    for salt in (" a", "a\t"):
        with pytest.raises(ValueError, match="salt must not begin or end with a space or control character"):
            record_key(["a"], [STRING], salt=salt)
    # Flags are booleans, as record_key_with's are present or absent: "no" is no way to say False.
    for flag in ("trim", "empty_as_null"):
        with pytest.raises(TypeError, match=f"{flag} must be True or False, got 'no'"):
            record_key(["a"], [STRING], **{flag: "no"})
    # Words are read as SQL reads them, in any case.
    assert record_key(["a"], [STRING], case="UPPER", null_key="Error") == record_key(["A"], [STRING])
    with pytest.raises(ValueError, match="at least one key part"):
        record_key([], [])
    with pytest.raises(ValueError, match="1 values but 2 types"):
        record_key(["a"], [STRING, INT])


# ---------------------------------------------------------------------------------------------
# The case mapping


def test_case_table_is_the_one_format_md_pins():
    pinned = re.search(r"SHA-256\s+`([0-9a-f]{64})`", (ROOT / "docs" / "FORMAT.md").read_text(encoding="utf-8"))
    assert pinned, "docs/FORMAT.md section 9 gives the table's SHA-256"
    assert hashlib.sha256(TABLE.read_bytes()).hexdigest() == pinned.group(1)


@UNICODE_14
def test_every_code_point_maps_as_cpython_3_11():
    mismatches = [
        f"U+{cp:04X}"
        for cp in range(sys.maxunicode + 1)
        if case_map(chr(cp), "upper") != chr(cp).upper() or case_map(chr(cp), "lower") != chr(cp).lower()
    ]
    assert mismatches == []


def test_mappings_new_in_unicode_14_do_not_depend_on_this_python():
    for small, capital in (("\u2c5f", "\u2c2f"), ("\ua7c1", "\ua7c0"), ("\U00010597", "\U00010570")):
        assert case_map(small, "upper") == capital
        assert case_map(capital, "lower") == small


# Sigmas, cased letters, Case_Ignorable code points (U+0345 and U+02B0 are Cased as well, U+00AD is Cf,
# "'" and "." are Word_Break MidNumLet/Single_Quote, U+0301 and U+0308 are Mn), and ones that are neither.
SIGMA_ALPHABET = "\u03a3\u03a3\u03a3\u03c3\u03c2\u0391\u03b1aZ\u00df\u0130\u0345\u02b0\u00ad'.\u0301\u0308 1-_\u2c5f"


@UNICODE_14
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(alphabet=SIGMA_ALPHABET, max_size=12))
def test_final_sigma_contexts_lower_as_cpython_3_11(text):
    assert case_map(text, "lower") == text.lower()
    assert case_map(text, "upper") == text.upper()


def test_final_sigma_rule():
    sigma = "\u03a3"
    cases = {
        "\u0391" + sigma: "\u03c2",                 # after a cased letter, at the end
        sigma + "\u0391": "\u03c3",                 # nothing cased before
        "\u0391" + sigma + ".": "\u03c2",           # '.' is Case_Ignorable
        "\u0391" + sigma + ".\u0392": "\u03c3",     # ... so a cased letter after it counts
        "\u0391" + sigma + " \u0392": "\u03c2",     # a space is not
        "\u0391" + sigma + "1\u0392": "\u03c2",     # nor a digit: Java's word-boundary rule says otherwise
        "\u0391\u0345" + sigma: "\u03c2",           # U+0345 is Case_Ignorable, skipped
        "\u0345" + sigma: "\u03c3",                 # ... so only an ignorable code point is before
        "\u0391" + sigma + "\u0345": "\u03c2",
        "\u0391" + sigma + sigma: "\u03c3\u03c2",
    }
    for text, sigmas in cases.items():
        lowered = case_map(text, "lower")
        assert "".join(c for c in lowered if c in "\u03c3\u03c2") == sigmas, ascii(text)


@UNICODE_14
@given(st.binary(max_size=24) | st.text(alphabet=SIGMA_ALPHABET, max_size=8).map(str.encode), st.binary(max_size=3),
       st.sampled_from(["upper", "lower"]))
@settings(max_examples=1000, deadline=None)
def test_bytes_that_are_not_utf8_are_kept(data, junk, case):
    # A byte that starts no well-formed sequence is copied, and is neither Cased nor Case_Ignorable, so
    # it splits the text into runs that CPython maps on their own (a sigma at a run's edge sees it as
    # a non-cased neighbour, as at the end of a string).
    data = data[: len(data) // 2] + junk + data[len(data) // 2:]
    runs = re.split("([\udc80-\udcff])", data.decode("utf-8", "surrogateescape"))
    expected = "".join(run if re.fullmatch("[\udc80-\udcff]", run) else getattr(run, case)() for run in runs)
    key = encode_key([data], [STRING], case=case)
    assert key == encode_key([expected.encode("utf-8", "surrogateescape")], [STRING])


def test_invalid_utf8_examples():
    for data, upper in (
        (b"a\xff", b"A\xff"),
        (b"\xc0\xafa", b"\xc0\xafA"),              # overlong '/'
        (b"\xed\xa0\x80a", b"\xed\xa0\x80A"),      # an encoded surrogate
        (b"\xf4\x90\x80\x80a", b"\xf4\x90\x80\x80A"),  # above U+10FFFF
        (b"\xe2\x82a\xc3\x9f", b"\xe2\x82ASS"),    # truncated, then valid
    ):
        assert encode_key([data], [STRING], case="upper") == encode_key([upper], [STRING]), data
    # Not UTF-8 is neither Cased nor Case_Ignorable.
    assert encode_key(["\u0391".encode() + b"\xff\xce\xa3"], [STRING], case="lower")[-2:] == "\u03c3".encode()
    assert encode_key(["\u0391\u03a3".encode() + b"\xff\xce\x92"], [STRING], case="lower")[-5:-3] == "\u03c2".encode()


# ---------------------------------------------------------------------------------------------
# Frozen vectors (spec/key-vectors-v1.json)


def test_file_header_and_size():
    assert DOCUMENT["format_version"] == 1
    assert DOCUMENT["unicode_version"] == "14.0.0"
    assert len(VECTORS) >= 100
    assert len(BY_VECTOR_NAME) == len(VECTORS)


@pytest.mark.parametrize("vector", VECTORS, ids=[vector["name"] for vector in VECTORS])
def test_reference_reproduces_vector(vector):
    types = [parse_type(arg["type"]) for arg in vector["args"]]
    values = [decode(arg["value"], dtype) for arg, dtype in zip(vector["args"], types)]
    if "error" in vector:
        with pytest.raises(ValueError, match=re.escape(vector["error"])):
            record_key(values, types, **vector["options"])
    else:
        result = record_key(values, types, **vector["options"])
        assert (result.hex() if result is not None else None) == vector["hex"]


EQUAL_GROUPS = [
    ["plain", "salt_empty"],
    ["upper_sharp_s", "plain_STRASSE"],
    ["lower_final_sigma_word", "plain_final_sigma_word"],
]


@pytest.mark.parametrize("names", EQUAL_GROUPS, ids=lambda names: names[0])
def test_frozen_vectors_that_must_agree(names):
    assert len({BY_VECTOR_NAME[name]["hex"] for name in names}) == 1


def test_vectors_cover_every_option_combination():
    combinations = {
        (o.get("trim", False), o.get("case"), o.get("empty_as_null", False), o.get("null_key", "hash"))
        for o in (vector["options"] for vector in VECTORS)
    }
    assert len(combinations) == 2 * 3 * 2 * 3
