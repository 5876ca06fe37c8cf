"""The options of ``hashexpr.arrow``, checked as the Spark functions check them."""

from __future__ import annotations

from typing import Any

from hashexpr.options import ALGORITHMS

_NULL_KEYS = ("hash", "null", "error")
_CASES = ("upper", "lower")
# What record_key_with trims from each option: U+0000 to U+0020, as Java's String.trim.
_OPTION_BLANKS = "".join(map(chr, range(0x21)))


def hmac_key_bytes(
    algorithm: str, hmac_key: Any, function: str, algorithms: tuple[str, ...] = ALGORITHMS
) -> bytes | None:
    """The HMAC key's bytes (a ``str`` as UTF-8, as Spark takes its conf's value), checked against ``algorithm``."""
    if algorithm not in algorithms:
        raise ValueError(
            f"{function}: algorithm must be one of {', '.join(map(repr, algorithms))}, got {algorithm!r}"
        )
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


def check_key_options(salt: Any, trim: Any, case: Any, empty_as_null: Any, null_key: Any) -> str:
    """Refuse what ``record_key_with`` refuses; return the salt (``''`` for none)."""
    for name, flag in (("trim", trim), ("empty_as_null", empty_as_null)):
        if not isinstance(flag, bool):
            raise TypeError(f"record_key: {name} must be a bool, got {type(flag).__name__}")
    if case is not None and case not in _CASES:
        raise ValueError(f"record_key: case must be 'upper', 'lower' or None, got {case!r}")
    if null_key not in _NULL_KEYS:
        raise ValueError(f"record_key: null_key must be 'hash', 'null' or 'error', got {null_key!r}")
    if salt is None:
        return ""
    if not isinstance(salt, str):
        raise TypeError(f"record_key: salt must be a str, got {type(salt).__name__}")
    if ";" in salt:
        raise ValueError(f"record_key: salt must not contain ';', got {salt!r}")
    if salt != salt.strip(_OPTION_BLANKS):
        raise ValueError(
            "record_key: salt must not begin or end with a space or control character (options are trimmed), "
            f"got {salt!r}"
        )
    try:
        salt.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"record_key: salt {salt!r} has a lone surrogate, which UTF-8 cannot encode"
        ) from None
    return salt


def check_threads(threads: Any, function: str) -> int | None:
    """``None`` (every core) or a positive number of threads."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"{function}: threads must be an int or None, got {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"{function}: threads must be at least 1 (or None for every core), got {threads}")
    return threads
