"""Arrow data without view types, for the kernels that take no views: ``take``, ``filter``, ``concat``.

Polars hands its strings over as ``string_view`` (also inside lists and structs), DuckDB may too; the engine
hashes them as they are, but pyarrow's selection kernels have no view kernels. :func:`plain` casts every view
type, at any depth, to the large type of the same values.
"""

from __future__ import annotations

import pyarrow as pa

_VIEWS = {pa.string_view(): pa.large_string(), pa.binary_view(): pa.large_binary()}


def plain_type(t: pa.DataType) -> pa.DataType:
    """``t`` with every view type, at any depth, replaced by the large type of the same values.

    Examples
    --------
    >>> plain_type(pa.list_(pa.string_view()))
    ListType(list<item: large_string>)
    >>> plain_type(pa.struct([("a", pa.binary_view()), ("b", pa.int32())]))
    StructType(struct<a: large_binary, b: int32>)
    """
    if t in _VIEWS:
        return _VIEWS[t]
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return pa.large_list(t.value_field.with_type(plain_type(t.value_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(plain_type(t.value_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(plain_type(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(plain_type(t.value_type)), t.list_size)
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(plain_type(t.key_type)), t.item_field.with_type(plain_type(t.item_type))
        )
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(plain_type(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_dictionary(t):
        return pa.dictionary(t.index_type, plain_type(t.value_type), t.ordered)
    return t


def plain(data: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """``data`` cast to :func:`plain_type` (itself when it holds no view).

    Examples
    --------
    >>> plain(pa.array([["a"], None], pa.list_(pa.string_view()))).type
    ListType(list<item: large_string>)
    """
    wanted = plain_type(data.type)
    if wanted == data.type:
        return data
    if _has_list_view(data.type):
        # pyarrow's cast of a list view can make an array whose offsets are wrong: the values are rebuilt.
        if isinstance(data, pa.ChunkedArray):
            return pa.chunked_array([pa.array(c.to_pylist(), wanted) for c in data.chunks], wanted)
        return pa.array(data.to_pylist(), wanted)
    return data.cast(wanted)


def _has_list_view(t: pa.DataType) -> bool:
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_list_view(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _has_list_view(t.key_type) or _has_list_view(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_dictionary(t):
        return _has_list_view(t.value_type)
    return False


def plain_batch(batch: pa.RecordBatch | pa.Table) -> pa.RecordBatch | pa.Table:
    """A record batch or table whose columns are :func:`plain`."""
    columns = [plain(c) for c in batch.columns]
    if all(c is o for c, o in zip(columns, batch.columns)):
        return batch
    maker = pa.RecordBatch if isinstance(batch, pa.RecordBatch) else pa.Table
    return maker.from_arrays(columns, names=batch.schema.names)
