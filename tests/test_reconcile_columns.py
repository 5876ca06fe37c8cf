"""Which columns a comparison pairs and compares: exact names before names equal ignoring case, a column only one
side has as a difference of the schemas, ``columns=`` and ``exclude=``, and refusals that name each column once
in the caller's words. Arrow data on both sides: no server is needed."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hashexpr import reconcile as rc
from hashexpr.reconcile.columns import CLI_WORDS, pair_names
from hashexpr.reconcile.protocol import Request, run

IDS = pa.array([1, 2, 3], pa.int64())


def _compare(source: pa.Table, target: pa.Table, **options) -> rc.Result:
    return rc.compare(rc.arrow(source), rc.arrow(target), key="id", **options)


def test_an_exact_name_wins_over_one_equal_ignoring_case():
    """Source (id, Val, val), target (id, val): val is compared with val, and Val is only in the source."""
    source = pa.table({"id": IDS, "Val": ["a", "b", "c"], "val": ["x", "y", "z"]})
    target = pa.table({"id": IDS, "val": ["x", "y", "z"]})
    result = _compare(source, target)
    assert result.compared == ["val"]
    assert result.counts["unchanged"] == 3 and result.counts["updated"] == 0
    (only,) = result.schema_differences
    assert (only.name, only.role) == ("Val", "only in source")
    assert only.reason == "the target's 'val' is paired with the source's 'val'"
    assert result.counts["columns_only_in_source"] == 1 and result.differences == 1


def test_names_equal_ignoring_case_pair_only_when_one_pairs_with_one():
    assert pair_names(["ID", "Amount", "x"], ["id", "AMOUNT", "X"])[0] == {"ID": "id", "Amount": "AMOUNT", "x": "X"}
    pairs, why = pair_names(["id", "A", "a"], ["id", "Aa"])
    assert pairs == {"id": "id"}
    pairs, why = pair_names(["id", "Val", "VAL"], ["id", "val"])
    assert pairs == {"id": "id"} and "ambiguous" in why["Val"] and "ambiguous" in why["val"]
    source = pa.table({"id": IDS, "Val": ["a"] * 3, "VAL": ["b"] * 3})
    target = pa.table({"id": IDS, "val": ["a"] * 3})
    result = _compare(source, target)
    assert {(c.name, c.role) for c in result.schema_differences} == {
        ("Val", "only in source"), ("VAL", "only in source"), ("val", "only in target"),
    }  # fmt: skip
    # A name the caller gives resolves as Spark resolves it, then pairs as above.
    with pytest.raises(ValueError, match=r"compared column 'val' matches several columns of the source, \['Val', 'VAL'\]"):
        _compare(source, target, columns=["val"])


def test_a_copy_that_lost_columns_differs():
    """A copy holding the key alone: every row is there, and the comparison says the columns are missing."""
    source = pa.table({"id": IDS, "a": [1, 2, 3], "b": ["x", "y", "z"]})
    result = _compare(source, pa.table({"id": IDS}))
    assert result.counts["unchanged"] == 3 and result.counts["columns_only_in_source"] == 2
    assert result.differences == 2 and result.differing_rows == 0
    assert [(c.name, c.role, c.source_type) for c in result.schema_differences] == [
        ("a", "only in source", "int64"), ("b", "only in source", "string"),
    ]  # fmt: skip
    # Left out by the caller, they are no difference; naming only the key compares which keys exist.
    assert _compare(source, pa.table({"id": IDS}), columns=["id"]).differences == 0
    assert _compare(source, pa.table({"id": IDS}), exclude=["a", "B"]).differences == 0
    extra = _compare(pa.table({"id": IDS}), source)
    assert extra.counts["columns_only_in_target"] == 2


def test_exclude_leaves_columns_of_either_side_out():
    source = pa.table({"id": IDS, "a": [1, 2, 3], "b": ["x", "y", "z"], "mine": [0, 0, 0]})
    target = pa.table({"id": IDS, "A": [1, 2, 4], "b": ["x", "y", "z"], "theirs": [0, 0, 0]})
    result = _compare(source, target, exclude=["a", "mine", "theirs"])
    assert result.compared == ["b"] and result.differences == 0
    left_out = {(c.name, c.reason) for c in result.schema if c.role == "left out"}
    assert left_out == {("a", "among exclude="), ("mine", "among exclude="), ("theirs", "among exclude=")}
    with pytest.raises(ValueError, match="give columns= or exclude=, not both"):
        _compare(source, target, columns=["b"], exclude=["a"])
    with pytest.raises(ValueError, match=r"exclude= names the key column 'id'"):
        _compare(source, target, exclude=["id"])
    with pytest.raises(ValueError, match=r"exclude= names 'bb', which is a column of neither side \(did you mean 'b'\?\)"):
        _compare(source, target, exclude=["bb"])


def test_refusals_name_each_column_once_in_the_callers_words():
    """Columns whose types never compare equal, grouped by reason, each named once; the fix in the words of the
    API (exclude=[...]) or of the command line (--exclude a,b)."""
    n = 3
    source = pa.table({"id": IDS, **{f"c{i}": pa.array([1] * n, pa.int32()) for i in range(9)}, "t": ["x"] * n})
    target = pa.table({"id": IDS, **{f"c{i}": pa.array(["1"] * n) for i in range(9)}, "t": pa.array([1] * n)})
    with pytest.raises(ValueError) as error:
        _compare(source, target)
    message = str(error.value)
    assert message.startswith("compare: 10 columns cannot be compared exactly: 'c0', 'c1', 'c2', 'c3', 'c4', 'c5' "
                              "and 3 more: int32 (int) in the source and string (string) in the target")  # fmt: skip
    assert message.count("'t'") == 1 and message.endswith(". exclude= leaves them out") and len(message) < 1_000
    with pytest.raises(ValueError, match=r"--exclude leaves them out$"):
        run(rc.arrow(source), rc.arrow(target), Request("id", words=CLI_WORDS), None)
    with pytest.raises(ValueError, match=r"--key names no column"):
        run(rc.arrow(source), rc.arrow(target), Request([], words=CLI_WORDS), None)
