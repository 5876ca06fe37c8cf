"""What a byte stream is hashed with: MurmurHash3, SHA-256 or HMAC-SHA-256.

MurmurHash3 x64 128 with :data:`~hashexpr.reference.tags.SEED` is ``docs/FORMAT.md`` section 1; SHA-256 and
HMAC-SHA-256 are section 10, under which maps combine their entries differently (:data:`SORTED_MAP_DIGESTS`,
read by :mod:`hashexpr.reference.nested`).
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
from collections.abc import Callable

import mmh3

from hashexpr.options import ALGORITHMS, word
from hashexpr.reference.tags import SEED

# docs/FORMAT.md, section 10: how a map's entries are combined while one is encoded.
SORTED_MAP_DIGESTS: contextvars.ContextVar[bool] = contextvars.ContextVar("sorted_map_digests", default=False)


def hashed(encode: Callable[[], bytes], algorithm: str, key: bytes | str | None) -> bytes:
    """Hashes the encoding ``encode`` makes under ``algorithm`` (section 10 changes how maps are encoded)."""
    algorithm = word(algorithm, "algorithm", ALGORITHMS, "reference")
    if (algorithm == "hmac-sha256") != (key is not None):
        raise ValueError("key is needed with algorithm='hmac-sha256', and only with it")
    if algorithm == "murmur3":
        return murmur3(encode())
    token = SORTED_MAP_DIGESTS.set(True)
    try:
        data = encode()
    finally:
        SORTED_MAP_DIGESTS.reset(token)
    if key is None:
        return hashlib.sha256(data).digest()
    # Spark's key is the UTF-8 value of the conf spark.hashexpr.secret.<name>.
    key_bytes = key.encode("utf-8") if isinstance(key, str) else bytes(key)
    if not key_bytes:
        raise ValueError("an HMAC key needs at least one byte")
    return hmac.new(key_bytes, data, hashlib.sha256).digest()


def murmur3(data: bytes) -> bytes:
    # mmh3 is only ever given bytes: it would encode a str itself, and crashes on lone surrogates.
    return mmh3.mmh3_x64_128_digest(bytes(data), SEED)
