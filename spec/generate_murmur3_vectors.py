"""Writes ``spec/murmur3-vectors.json``: raw MurmurHash3_x64_128 digests computed with mmh3.

The JVM tests replay them against the Scala/Java MurmurHash3; ``tests/test_murmur3.py`` checks them
against an independent port of the C reference. Every input length 0..40 (so every tail length),
several seeds including ones >= 2^31 (which must be zero-extended), and a few inputs of 1000+ bytes.
Refuses to overwrite an existing file.

Usage::

    python spec/generate_murmur3_vectors.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mmh3

OUTPUT = Path(__file__).resolve().parent / "murmur3-vectors.json"
HASH_SEED = 0x68617368
SEEDS = [0, 1, 42, HASH_SEED, 2**31 - 1, 0xFFFFFFFF]


def inputs_and_seeds() -> list[tuple[bytes, int]]:
    cases = [(bytes(range(n)), SEEDS[n % len(SEEDS)]) for n in range(41)]
    cases += [(bytes(range(255, 255 - n, -1)), HASH_SEED) for n in range(1, 16)]
    cases += [(bytes(range(16)), seed) for seed in SEEDS]
    cases += [(b"hashexpr", seed) for seed in SEEDS]
    cases += [
        (bytes(i & 0xFF for i in range(1000)), 0),
        (bytes((31 * i + 7) & 0xFF for i in range(1024)), HASH_SEED),
        (bytes((13 * i) & 0xFF for i in range(1031)), 0xFFFFFFFF),
        (b"x" * 10_000, HASH_SEED),
    ]
    return cases


def main() -> int:
    vectors = [
        {"input_hex": data.hex(), "seed": seed, "digest_hex": mmh3.mmh3_x64_128_digest(data, seed).hex()}
        for data, seed in inputs_and_seeds()
    ]
    if OUTPUT.exists():
        raise SystemExit(f"{OUTPUT} exists; refusing to overwrite it")
    with open(OUTPUT, "x", encoding="utf-8") as out:
        json.dump({"vectors": vectors}, out, indent=1)
        out.write("\n")
    print(f"wrote {len(vectors)} vectors to {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
