"""UUIDs as their canonical text: Arrow's ``arrow.uuid`` extension type (which pyarrow gives a Parquet ``UUID``).

Spark has no UUID type and refuses Parquet's ``UUID`` logical type, so the engine refuses these columns when it
hashes as Spark does. A comparison across systems compares UUIDs by their canonical lower-case text instead
(``0eebc99a-9c0b-4ef8-bb6d-6bb9bd380a11``), the form PostgreSQL, DuckDB and a JDBC read give them
(docs/RECONCILE.md); :func:`uuid_text` writes it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_HEX = np.frombuffer(b"0123456789abcdef", np.uint8)
#: Where each of the 32 hex digits goes in the 36 characters of the canonical form (8-4-4-4-12).
_DIGITS = np.array([i for i in range(36) if i not in (8, 13, 18, 23)])


def is_uuid(t: pa.DataType) -> bool:
    """Whether ``t`` is Arrow's UUID extension type."""
    return isinstance(t, pa.BaseExtensionType) and t.extension_name == "arrow.uuid"


def uuid_text(data: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """The canonical lower-case text of each UUID (NULL stays NULL).

    Examples
    --------
    >>> import uuid
    >>> u = uuid.UUID("0EEBC99A-9C0B-4EF8-BB6D-6BB9BD380A11")
    >>> uuid_text(pa.array([u.bytes, None], pa.binary(16))).to_pylist()
    ['0eebc99a-9c0b-4ef8-bb6d-6bb9bd380a11', None]
    """
    if isinstance(data, pa.ChunkedArray):
        return pa.chunked_array([uuid_text(c) for c in data.chunks], pa.string())
    storage = data.storage if isinstance(data, pa.ExtensionArray) else data
    if storage.type != pa.binary(16):
        raise ValueError(f"a UUID is 16 bytes, got {storage.type}")
    n = len(storage)
    raw = np.frombuffer(storage.buffers()[1], np.uint8)[storage.offset * 16 : (storage.offset + n) * 16]
    nibbles = np.empty((n, 32), np.uint8)
    nibbles[:, 0::2] = _HEX[raw.reshape(n, 16) >> 4]
    nibbles[:, 1::2] = _HEX[raw.reshape(n, 16) & 15]
    text = np.full((n, 36), ord("-"), np.uint8)
    text[:, _DIGITS] = nibbles
    offsets = np.arange(0, 36 * (n + 1), 36, dtype=np.int32)
    strings = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(text.tobytes()))
    if storage.null_count:
        strings = pc.if_else(pc.is_valid(storage), strings, pa.scalar(None, pa.string()))
    return strings
