"""The encodings of nested values: arrays, maps and structs.

``docs/FORMAT.md`` section 4, with maps in section 4.6 (and section 10's sorted entry digests under SHA-256).
Each encoder takes ``encode``, the encoder of any value (:func:`hashexpr.reference.values.encode`), for its
elements, keys, values and fields, so that this module does not import the dispatcher that imports it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from hashexpr.reference.algorithms import SORTED_MAP_DIGESTS, murmur3
from hashexpr.reference.atomic import expect, u32
from hashexpr.reference.tags import ARRAY, MAP, STRUCT
from hashexpr.reference.types import type_name
from hashexpr.types import ArrayType, DataType, MapType, StructType


def encode_array(value: Any, dtype: ArrayType, encode: Callable[[Any, DataType], bytes]) -> bytes:
    expect(value, (list, tuple), dtype, "a list or tuple")
    parts = [bytes([ARRAY]), u32(len(value))]
    parts.extend(encode(element, dtype.elementType) for element in value)
    return b"".join(parts)


def encode_map(value: Any, dtype: MapType, encode: Callable[[Any, DataType], bytes]) -> bytes:
    entries = _map_entries(value, dtype)
    if SORTED_MAP_DIGESTS.get():
        # Section 10: the entries' SHA-256 digests in ascending order; a sum could be forged.
        digests = []
        for key, item in entries:
            if key is None:
                raise ValueError(f"{type_name(dtype)} keys cannot be NULL")
            digests.append(
                hashlib.sha256(encode(key, dtype.keyType) + encode(item, dtype.valueType)).digest()
            )
        return bytes([MAP]) + u32(len(entries)) + b"".join(sorted(digests))
    total = 0
    for key, item in entries:
        if key is None:
            raise ValueError(f"{type_name(dtype)} keys cannot be NULL")
        digest = murmur3(encode(key, dtype.keyType) + encode(item, dtype.valueType))
        total += int.from_bytes(digest, "little")
    # Addition, not XOR, so that equal entries accumulate instead of cancelling.
    return bytes([MAP]) + u32(len(entries)) + (total % 2**128).to_bytes(16, "little")


def _map_entries(value: Any, dtype: MapType) -> list[tuple[Any, Any]]:
    if isinstance(value, dict):
        return list(value.items())
    expect(value, (list, tuple), dtype, "a dict or a sequence of (key, value) pairs")
    entries = []
    for entry in value:
        if not isinstance(entry, (list, tuple)) or len(entry) != 2:
            raise ValueError(f"{type_name(dtype)} entry must be a (key, value) pair: {entry!r}")
        entries.append((entry[0], entry[1]))
    return entries


def encode_struct(value: Any, dtype: StructType, encode: Callable[[Any, DataType], bytes]) -> bytes:
    fields = _struct_values(value, dtype)
    parts = [bytes([STRUCT]), u32(len(fields))]
    parts.extend(encode(item, field.dataType) for item, field in zip(fields, dtype.fields))
    return b"".join(parts)


def _struct_values(value: Any, dtype: StructType) -> list[Any]:
    if _is_row(value) and hasattr(value, "__fields__"):
        names = list(value.__fields__)
        if len(set(names)) != len(names):
            raise ValueError(f"Row has duplicate field names {names}; pass a tuple instead")
        value = dict(zip(names, value))
    if isinstance(value, dict):
        return _struct_values_by_name(value, dtype)
    expect(value, (tuple, list), dtype, "a tuple, list, dict or Row")
    if len(value) != len(dtype.fields):
        raise ValueError(f"{type_name(dtype)} has {len(dtype.fields)} fields, got {len(value)} values")
    return list(value)


def _is_row(value: Any) -> bool:
    """Whether ``value`` is a PySpark ``Row`` (a tuple that can name its fields), told without importing it."""
    return isinstance(value, tuple) and any(
        k.__name__ == "Row" and k.__module__.startswith("pyspark.") for k in type(value).__mro__
    )


def _struct_values_by_name(value: dict[str, Any], dtype: StructType) -> list[Any]:
    names = dtype.names
    if len(set(names)) != len(names):
        raise ValueError(f"{type_name(dtype)} has duplicate field names; pass a tuple instead")
    missing = [name for name in names if name not in value]
    unexpected = [name for name in value if name not in names]
    if missing or unexpected:
        raise ValueError(
            f"{type_name(dtype)} value does not match its fields: missing {missing}, unexpected {unexpected}"
        )
    return [value[name] for name in names]
