"""The parts of the decimal encoding (docs/FORMAT.md, section 4.3) that every dialect writes alike."""

from __future__ import annotations

from collections.abc import Callable

#: The most bytes an unscaled value of up to 38 digits needs: 10^38 - 1 < 2^127.
WIDE_BYTES = 16
NARROW_BYTES = 8

#: The bytes 1 to 16: the length byte u8(n) is the n-th of them.
LENGTH_BYTES = bytes(range(1, WIDE_BYTES + 1))


def minimal_size(unscaled: str, wide: bool) -> str:
    """The fewest bytes that hold the unscaled value in two's complement (Java's ``BigInteger.toByteArray``):
    ``n`` bytes hold ``-2^(8n-1) .. 2^(8n-1) - 1``."""
    largest = WIDE_BYTES if wide else NARROW_BYTES
    arms = " ".join(
        f"WHEN {unscaled} BETWEEN {-(2 ** (8 * n - 1))} AND {2 ** (8 * n - 1) - 1} THEN {n}" for n in range(1, largest)
    )
    return f"(CASE {arms} ELSE {largest} END)"


def minimal_bytes(
    unscaled: str, little_endian: str, wide: bool, literal: Callable[[bytes], str], substring: Callable[[str, str, str], str]
) -> list[str]:
    """``u8(n)`` and the ``n`` low bytes of the unscaled value, from its 8 (or 16) little-endian bytes."""
    size = minimal_size(unscaled, wide)
    return [substring(literal(LENGTH_BYTES), size, "1"), substring(little_endian, "1", size)]
