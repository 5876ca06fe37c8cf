"""The options of ``hashexpr.arrow``, checked as the Spark functions check them."""

from __future__ import annotations

from typing import Any

from hashexpr.options import ALGORITHMS, word


def hashing(
    algorithm: Any, hmac_key: Any, function: str, algorithms: tuple[str, ...] = ALGORITHMS
) -> tuple[str, bytes | None]:
    """The algorithm, read as SQL reads it (any case), and the HMAC key's bytes (a ``str`` as UTF-8, as Spark
    takes its conf's value), checked against each other."""
    algorithm = word(algorithm, "algorithm", algorithms, function)
    return algorithm, _hmac_key_bytes(algorithm, hmac_key, function, algorithms)


def _hmac_key_bytes(
    algorithm: str, hmac_key: Any, function: str, algorithms: tuple[str, ...]
) -> bytes | None:
    keyed = "hmac-sha256" if "hmac-sha256" in algorithms else "lthash16"
    if hmac_key is None:
        if algorithm == "hmac-sha256":
            raise ValueError(
                f"{function}: algorithm='hmac-sha256' needs hmac_key, the secret's value (bytes, or str as UTF-8)"
            )
        return None
    if algorithm != keyed:
        raise ValueError(
            f"{function}: hmac_key is only for algorithm={keyed!r}, not {algorithm!r}: drop it, or choose that "
            "algorithm"
        )
    if isinstance(hmac_key, str):
        try:
            key = hmac_key.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(
                f"{function}: hmac_key has a lone surrogate, which UTF-8 cannot encode"
            ) from None
    elif isinstance(hmac_key, (bytes, bytearray, memoryview)):
        key = bytes(hmac_key)
    else:
        raise TypeError(f"{function}: hmac_key must be bytes or str, got {type(hmac_key).__name__}")
    if not key:
        raise ValueError(f"{function}: hmac_key is empty: an HMAC key needs at least one byte")
    return key


def check_threads(threads: Any, function: str) -> int | None:
    """``None`` (every core) or a positive number of threads."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"{function}: threads must be an int or None, got {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"{function}: threads must be at least 1 (or None for every core), got {threads}")
    return threads
