"""hashexpr calls nested in each other, and expression arguments, against the reference in every mode.

Hypothesis builds random expression trees: columns and expressions at the leaves; ``record_hash``, ``record_key``,
``record_hash_by_name``, ``array`` and ``named_struct`` above them. Each tree's value is computed by the reference
(an inner hash is a BINARY value of the outer one; a by-name argument goes by the name of docs/FORMAT.md section
6.1) and by Spark: interpreted (over local rows, as Spark Connect's client-side data runs) and generated code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)
from spark_conf import EXECUTION_MODES, spark_conf

from hashexpr import reference

SCHEMA = StructType([
    StructField("c0", IntegerType()),
    StructField("c1", StringType()),
    StructField("c2", ArrayType(IntegerType())),
])


@dataclass(frozen=True)
class Node:
    """An expression: its SQL, its name as an argument (FORMAT.md 6.1), its type and its value per row."""

    sql: str
    name: str
    dtype: DataType
    value: Callable[[tuple[Any, ...]], Any]


def _column(i: int) -> Node:
    field = SCHEMA.fields[i]
    return Node(field.name, field.name, field.dataType, lambda row: row[i])


LEAVES = [
    _column(0),
    _column(1),
    _column(2),
    # Typed in another case: the argument still goes by the schema's name.
    Node("C1", "c1", StringType(), lambda row: row[1]),
    Node("upper(c1)", "upper(c1)", StringType(), lambda row: None if row[1] is None else row[1].upper()),
    Node("c0 + 1", "(c0 + 1)", IntegerType(), lambda row: None if row[0] is None else row[0] + 1),
]


def _call(function: str, args: list[Node], dtype: DataType, compute: Callable[[list[Any]], Any]) -> Node:
    sql = f"{function}({', '.join(a.sql for a in args)})"
    name = f"{function}({', '.join(a.name for a in args)})"
    return Node(sql, name, dtype, lambda row: compute([a.value(row) for a in args]))


def _record_hash(args: list[Node]) -> Node:
    types = [a.dtype for a in args]
    return _call("record_hash", args, BinaryType(), lambda vs: reference.record_hash(vs, types))


def _record_key(args: list[Node]) -> Node:
    types = [a.dtype for a in args]
    return _call("record_key", args, BinaryType(), lambda vs: reference.record_key(vs, types))


def _by_name(args: list[Node]) -> Node:
    names = [a.name for a in args]
    assume(len(set(names)) == len(names))
    types = {a.name: a.dtype for a in args}
    return _call("record_hash_by_name", args, BinaryType(),
                 lambda vs: reference.record_hash_by_name(dict(zip(names, vs)), types))


def _array(args: list[Node]) -> Node:
    # Hashes are BINARY and never NULL: an array of them needs no common type.
    hashed = [_record_hash([a]) for a in args]
    return _call("array", hashed, ArrayType(BinaryType(), containsNull=False), lambda vs: vs)


def _struct(args: list[Node]) -> Node:
    fields = [StructField(f"f{i}", a.dtype) for i, a in enumerate(args)]
    sql = f"named_struct({', '.join(f'{chr(39)}f{i}{chr(39)}, {a.sql}' for i, a in enumerate(args))})"
    name = f"named_struct({', '.join(f'f{i}, {a.name}' for i, a in enumerate(args))})"
    return Node(sql, name, StructType(fields), lambda row: tuple(a.value(row) for a in args))


CALLS = [_record_hash, _record_key, _by_name, _array, _struct]


def _trees() -> st.SearchStrategy[Node]:
    """Trees whose top is a hash (so a BINARY value), with any call or leaf below."""
    tree = st.recursive(
        st.sampled_from(LEAVES),
        lambda inner: st.builds(lambda f, args: f(args), st.sampled_from(CALLS), st.lists(inner, min_size=1, max_size=3)),
        max_leaves=8,
    )
    hashes = st.sampled_from([_record_hash, _record_key, _by_name])
    return st.builds(lambda f, args: f(args), hashes, st.lists(tree, min_size=1, max_size=3))


ROWS = st.lists(
    st.tuples(
        st.none() | st.integers(-1000, 1000),
        st.none() | st.text(alphabet="abcXYZ -'", max_size=6),
        st.none() | st.lists(st.none() | st.integers(-5, 5), max_size=3),
    ),
    min_size=1,
    max_size=8,
)


@pytest.fixture
def modes(spark):
    """Runs a function under each execution mode, restoring the session's settings afterwards."""

    def run(f: Callable[[str], None]) -> None:
        for mode, conf in EXECUTION_MODES.items():
            with spark_conf(spark, conf):
                f(mode)

    return run


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(trees=st.lists(_trees(), min_size=1, max_size=3), rows=ROWS)
def test_nested_calls_match_reference_in_every_mode(spark, modes, trees, rows):
    df = spark.createDataFrame([(i, *row) for i, row in enumerate(rows)],
                               StructType([StructField("idx", LongType()), *SCHEMA.fields]))
    expected = [[bytes(t.value(row)) for t in trees] for row in rows]

    def check(mode: str) -> None:
        got = df.selectExpr("idx", *(t.sql for t in trees)).orderBy("idx").collect()
        assert [[bytes(v) for v in r[1:]] for r in got] == expected, f"{mode}: {[t.sql for t in trees]}"
        fingerprint = df.selectExpr(f"dataset_fingerprint({trees[0].sql})").first()[0]
        assert fingerprint == reference.dataset_fingerprint(
            [[trees[0].value(row)] for row in rows], [trees[0].name], [trees[0].dtype]
        ), f"{mode}: {trees[0].sql}"

    modes(check)
