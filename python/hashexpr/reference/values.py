"""``ENC(v, T)``: the encoding of any value of any type that format v1 defines.

``docs/FORMAT.md`` section 4: ``NULL`` is one byte for every type, a user-defined type's value is encoded as
its SQL type (section 4.7), and every other value is handed to the encoder of its type, atomic
(:mod:`hashexpr.reference.atomic`) or nested (:mod:`hashexpr.reference.nested`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hashexpr.reference.atomic import ATOMIC_ENCODERS
from hashexpr.reference.nested import encode_array, encode_map, encode_struct
from hashexpr.reference.tags import NULL
from hashexpr.reference.types import type_name, unsupported
from hashexpr.types import ArrayType, DataType, MapType, StructType, UserDefinedType


def encode_argument(value: Any, dtype: DataType, label: str) -> bytes:
    """``ENC(value, dtype)`` of a top-level argument; a TypeError or ValueError names it by ``label``."""
    try:
        return encode(value, dtype)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{label} ({type_name(dtype)}): {error}") from None


def _plain(value: Any) -> Any:
    """A NumPy scalar (``numpy.int64(7)``, ``numpy.float32(0.5)``, ``numpy.bool_(True)``) as the Python
    value it holds; a NumPy date or duration is refused, since its unit is not the format's."""
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind is None or getattr(value, "shape", None) != () or not hasattr(value, "item"):
        return value
    if kind in "biuf":
        return value.item()
    if kind in "mM":
        raise TypeError(
            f"got a NumPy {value.dtype}, whose unit this module does not guess: pass a datetime, a timedelta "
            "or int microseconds (e.g. value.astype('datetime64[us]').item())"
        )
    return value


def encode(value: Any, dtype: DataType) -> bytes:
    """``ENC(value, dtype)``: the tag and payload of any value, ``NULL`` included."""
    value = _plain(value)
    if isinstance(dtype, UserDefinedType):
        return encode(value, dtype.sqlType())
    if value is None:
        return bytes([NULL])
    for type_class, encoder in _ENCODERS:
        if isinstance(dtype, type_class):
            return encoder(value, dtype)
    raise unsupported(dtype)


_ENCODERS: tuple[tuple[Any, Callable[[Any, Any], bytes]], ...] = (
    *ATOMIC_ENCODERS,
    (ArrayType, functools.partial(encode_array, encode=encode)),
    (MapType, functools.partial(encode_map, encode=encode)),
    (StructType, functools.partial(encode_struct, encode=encode)),
)
