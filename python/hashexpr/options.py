"""The options text of the hashing functions: which algorithm, which secret."""

from __future__ import annotations

import re
from typing import Literal

ALGORITHMS = ("murmur3", "sha256", "hmac-sha256")
# What a secret's name may hold: it is the tail of a Spark conf name, never the key itself.
SECRET_NAME = re.compile(r"[A-Za-z0-9_.-]+")

Algorithm = Literal["murmur3", "sha256", "hmac-sha256"]


def check_secret_name(secret: str) -> None:
    """Refuse a secret that is no conf name (e.g. the key itself), without repeating it."""
    if not SECRET_NAME.fullmatch(secret):
        raise ValueError(
            f"secret must be a conf name made of letters, digits, '_', '.' and '-' (the key goes in "
            f"the Spark conf spark.hashexpr.secret.<name>), got a {len(secret)}-character value"
        )


def hash_options(algorithm: str, secret: str | None) -> list[str]:
    """The options items that choose ``algorithm`` (none for the default, murmur3)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be 'murmur3', 'sha256' or 'hmac-sha256', got {algorithm!r}")
    if algorithm == "hmac-sha256":
        if secret is None:
            raise ValueError(
                "algorithm='hmac-sha256' needs secret=<name>: the name of the Spark conf "
                "spark.hashexpr.secret.<name> that holds the key (never the key itself)"
            )
        check_secret_name(secret)
        return ["algorithm=hmac-sha256", f"secret={secret}"]
    if secret is not None:
        raise ValueError("secret is only for algorithm='hmac-sha256'; drop it, or choose that algorithm")
    return [] if algorithm == "murmur3" else [f"algorithm={algorithm}"]
