"""Seed-independent collisions of MurmurHash3 x64 128, as valid UTF-8 strings.

MurmurHash3 x64 128 reads its input in 16-byte blocks of two little-endian 64-bit words ``m1``, ``m2`` and
pre-mixes them as ``k1 = c2 * rotl64(c1 * m1, 31)`` and ``k2 = c1 * rotl64(c2 * m2, 33)`` (mod 2^64) before
they touch the state ``h1``, ``h2``. Both pre-mixes are bijections (odd multipliers, a rotation), so whoever
picks the bytes picks ``k1`` and ``k2`` directly.

Two consecutive blocks whose pre-mixed words differ by the XOR differences of :data:`DIFFERENTIALS` leave
the state unchanged, whatever the state was: the first block's difference becomes bit 63 of ``h1`` and ``h2``
(bit 63 survives ``* 5``, ``+ constant`` and ``+`` as a plain flip), and the second block's difference
cancels it (two flips of bit 63 cancel in ``h1 += h2``). So two different 32-byte strings collide for every
seed, behind any common prefix and before any common suffix, as long as they start at a multiple of 16
bytes of the hashed stream (Aumasson, Bernstein and Boßlet, "Hash-flooding DoS reloaded", 2012, did the same
for MurmurHash3 x86_32; ``/work/shared/research/security.md``).

The strings here are also valid UTF-8, so that they can be STRING values: each 8-byte word of both blocks
is valid UTF-8 on its own (hence so is their concatenation). A word is drawn as random valid UTF-8, its
partner computed through the inverse pre-mix, and the draw repeated until the partner is valid UTF-8 too
(about one in a hundred draws is). Only the standard library is used; the tests check the pairs with
``mmh3``.

>>> import mmh3
>>> a, b = colliding_blocks(random.Random(1))
>>> a != b, len(a), len(b), a.decode() != b.decode()
(True, 32, 32, True)
>>> mmh3.mmh3_x64_128_digest(a, 0x68617368) == mmh3.mmh3_x64_128_digest(b, 0x68617368)
True
"""

from __future__ import annotations

import random

MASK64 = (1 << 64) - 1
#: The multipliers of MurmurHash3 x64 128's block pre-mix.
C1 = 0x87C37B91114253D5
C2 = 0x4CF5AD432745937F
#: Their inverses modulo 2^64.
C1_INV = 0xA98409E882CE4D7D
C2_INV = 0xA81E14EDD9DE2C7F

BLOCK = 16
#: The length of a colliding pair: two blocks.
PAIR = 2 * BLOCK

#: XOR differences of the pre-mixed words (block 1 k1, block 1 k2, block 2 k1, block 2 k2) that leave no
#: state difference after the second block.
DIFFERENTIALS: tuple[tuple[int, int, int, int], ...] = (
    (1 << 36, 0, (1 << 63) ^ (1 << 36), 1 << 63),
    (0, 1 << 32, 1 << 36, 1 << 63),
)

# Code point ranges a random word is drawn from: ASCII, and 2-, 3- and 4-byte sequences (no surrogates).
_RANGES = ((0x20, 0x7E), (0x80, 0x7FF), (0x800, 0xD7FF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF))


def rotl64(x: int, r: int) -> int:
    """Rotate a 64-bit word left by ``r`` bits."""
    return ((x << r) | (x >> (64 - r))) & MASK64


def premix_k1(m: int) -> int:
    """The pre-mix of a block's first word: ``c2 * rotl64(c1 * m, 31)``."""
    return (rotl64((m * C1) & MASK64, 31) * C2) & MASK64


def premix_k2(m: int) -> int:
    """The pre-mix of a block's second word: ``c1 * rotl64(c2 * m, 33)``."""
    return (rotl64((m * C2) & MASK64, 33) * C1) & MASK64


def unmix_k1(k: int) -> int:
    """The word whose :func:`premix_k1` is ``k`` (a right rotation by 31 is a left rotation by 33)."""
    return (rotl64((k * C2_INV) & MASK64, 33) * C1_INV) & MASK64


def unmix_k2(k: int) -> int:
    """The word whose :func:`premix_k2` is ``k``."""
    return (rotl64((k * C1_INV) & MASK64, 31) * C2_INV) & MASK64


_PREMIX = (premix_k1, premix_k2)
_UNMIX = (unmix_k1, unmix_k2)


def _utf8_word(rng: random.Random) -> bytes:
    """8 random bytes that are valid UTF-8: mostly 8 ASCII bytes (cheap to draw, as most draws are thrown
    away), else random code points while they fit, ASCII to fill."""
    if rng.random() < 0.75:
        return (rng.getrandbits(64) & 0x7F7F7F7F7F7F7F7F).to_bytes(8, "little")
    data = b""
    while len(data) < 8:
        low, high = rng.choice(_RANGES)
        char = chr(rng.randint(low, high)).encode("utf-8")
        if len(data) + len(char) <= 8:
            data += char
        elif rng.random() < 0.5:
            data += chr(rng.randint(0x20, 0x7E)).encode("ascii")
    return data


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _word_pair(rng: random.Random, position: int, difference: int) -> tuple[bytes, bytes]:
    """Two valid UTF-8 words whose pre-mixes (first or second word of a block) differ by ``difference``."""
    if difference == 0:
        word = _utf8_word(rng)
        return word, word
    while True:
        word = _utf8_word(rng)
        m = int.from_bytes(word, "little")
        partner = _UNMIX[position](_PREMIX[position](m) ^ difference).to_bytes(8, "little")
        if _is_utf8(partner):
            return word, partner


def colliding_blocks(rng: random.Random, differential: int = 0) -> tuple[bytes, bytes]:
    """Return two different 32-byte valid UTF-8 strings whose MurmurHash3 x64 128 collide for every seed.

    They collide wherever they are placed in a hashed stream (with equal bytes around them), as long as they
    start at a multiple of 16 bytes from its start.

    Parameters
    ----------
    rng : random.Random
        The source of randomness; a seeded one gives the same pairs on every run.
    differential : int, optional
        Which of :data:`DIFFERENTIALS` to use (default the first).

    Returns
    -------
    tuple of bytes
        The two strings, each 32 bytes.
    """
    differences = DIFFERENTIALS[differential]
    words = [_word_pair(rng, i % 2, d) for i, d in enumerate(differences)]
    return b"".join(w for w, _ in words), b"".join(p for _, p in words)


def alignment_padding(offset: int) -> int:
    """The number of bytes (0 to 15) that take a stream position ``offset`` to a multiple of 16."""
    return -offset % BLOCK


def colliding_strings(
    prefix: bytes,
    suffix: bytes,
    offset: int,
    rng: random.Random,
    differential: int = 0,
    fill: bytes = b"_",
) -> tuple[str, str]:
    """Return two different strings that MurmurHash3 x64 128 hashes alike where they start at ``offset``.

    Each string is ``prefix``, padding, a pair from :func:`colliding_blocks`, then ``suffix``; the padding
    (0 to 15 copies of ``fill``) makes the pair start at a multiple of 16 of the hashed stream when the
    string's first byte is at position ``offset`` of it. Two streams equal but for these strings (same bytes
    before position ``offset`` and after the strings) then hash alike for every seed.

    Parameters
    ----------
    prefix, suffix : bytes
        Valid UTF-8, the same in both strings.
    offset : int
        The position of the string's first byte in the hashed stream.
    rng : random.Random
        The source of randomness.
    differential : int, optional
        Which of :data:`DIFFERENTIALS` to use.
    fill : bytes, optional
        One ASCII byte to pad with.

    Returns
    -------
    tuple of str
        The two strings, of equal UTF-8 length.

    Examples
    --------
    >>> import mmh3
    >>> s, t = colliding_strings(b"id-", b"-x", offset=10, rng=random.Random(7))
    >>> s[:6], len(s.encode()), s != t
    ('id-___', 40, True)
    >>> stream = b"0123456789"
    >>> mmh3.mmh3_x64_128_digest(stream + s.encode(), 0) == mmh3.mmh3_x64_128_digest(stream + t.encode(), 0)
    True
    """
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    if len(fill) != 1 or fill[0] >= 0x80:
        raise ValueError(f"fill must be one ASCII byte, got {fill!r}")
    padding = fill * alignment_padding(offset + len(prefix))
    a, b = colliding_blocks(rng, differential)
    return (prefix + padding + a + suffix).decode("utf-8"), (prefix + padding + b + suffix).decode("utf-8")
