"""The ``secure`` section: ``record_hash`` under sha256 and hmac-sha256 against murmur3 and
``sha2(concat_ws(...), 256)``, the fingerprints under murmur3 and lthash16, and bench/HmacCost.java (HMAC-SHA-256
in the JDK alone)."""

from __future__ import annotations

import os
from pathlib import Path

from harness import HERE, MIXED, Bench, noop, row_hash_candidates
from report import table, verdict


def uses_mixed(args) -> bool:
    return True


def run(ctx) -> dict:
    base, base_n = ctx.mixed
    ctx.sizes["secure (the 10-column data)"] = (base_n, ", ".join(MIXED))
    return section_secure(ctx.bench, base, base_n)


def section_secure(b: Bench, df, rows: int) -> dict:
    """record_hash under sha256 and hmac-sha256 against murmur3 and sha2(concat_ws(...), 256)."""
    import hashexpr as hx

    cols = df.columns
    sha2 = row_hash_candidates(cols)["sha2(concat_ws('||', ...), 256)"]
    out = b.measure_rounds(
        [
            ("hx.record_hash(*)  [murmur3]", rows, lambda: noop(df.select(hx.record_hash(*cols).alias("h")))),
            (
                "hx.record_hash(*, algorithm='sha256')",
                rows,
                lambda: noop(df.select(hx.record_hash(*cols, algorithm="sha256").alias("h"))),
            ),
            (
                "hx.record_hash(*, algorithm='hmac-sha256')",
                rows,
                lambda: noop(
                    df.select(hx.record_hash(*cols, algorithm="hmac-sha256", secret="bench").alias("h"))
                ),
            ),
            (
                "sha2(concat_ws('||', ...), 256)",
                rows,
                lambda: noop(df.selectExpr(f"{sha2} as h")),
            ),
        ]
    )
    fingerprints = b.measure_rounds(
        [
            ("hx.dataset_fingerprint(df)  [murmur3]", rows, lambda: hx.dataset_fingerprint(df)),
            (
                "hx.dataset_fingerprint(df, 'lthash16')",
                rows,
                lambda: hx.dataset_fingerprint(df, algorithm="lthash16"),
            ),
            (
                "hx.dataset_fingerprint(df, 'lthash16', secret=...)",
                rows,
                lambda: hx.dataset_fingerprint(df, algorithm="lthash16", secret="bench"),
            ),
        ]
    )
    return {
        "results": out,
        "murmur3": out[0],
        "sha256": out[1],
        "hmac": out[2],
        "sha2": out[3],
        "fingerprints": fingerprints,
        "hmac_cost": hmac_cost(b),
    }


#: The mean length of a 10-column row's canonical encoding in the bench data (hashexpr.reference.encode_record).
ROW_ENCODING_BYTES = 105
#: Timed rounds of bench/HmacCost.java (it reports their median).
HMAC_COST_ROUNDS = 5


def hmac_cost(b: Bench) -> list[tuple[str, float, str]] | None:
    """Nanoseconds per message of SHA-256 and of each way to compute HMAC-SHA-256 with the JDK's public API
    (``bench/HmacCost.java``, in a JVM of its own): the floor under the hmac-sha256/sha256 ratio."""
    import subprocess

    java = Path(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    b.log(f"  HMAC-SHA-256 variants on {ROW_ENCODING_BYTES}-byte messages (bench/HmacCost.java)")
    try:
        done = subprocess.run(
            [str(java), str(HERE / "HmacCost.java"), str(ROW_ENCODING_BYTES), str(HMAC_COST_ROUNDS)],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as e:
        b.log(f"  HmacCost.java did not run ({e}); left out")
        return None
    rows = []
    for line in done.stdout.splitlines():
        if line and not line.startswith("#"):
            name, median, runs = line.split("\t")
            rows.append((name, float(median), runs))
            b.log(f"    {name:32s} {float(median):7.1f} ns")
    return rows


def render(args, s: dict, sections: dict, targets: list[str]) -> list[str]:
    lines = []
    mm, sha, mac, sha2 = s["murmur3"], s["sha256"], s["hmac"], s["sha2"]
    lines += ["## Row hash with SHA-256 and HMAC-SHA-256, 10 mixed columns", ""] + table(s["results"], sha)
    lines += [""]
    targets.append(
        f"- sha256 record_hash ≤ 2× murmur3 record_hash: {verdict(sha.median <= 2 * mm.median)} "
        f"(sha256 {sha.median:.3f} s / murmur3 {mm.median:.3f} s = {sha.median / mm.median:.2f})"
    )
    targets.append(
        f"- sha256 record_hash ≥ 3× faster than sha2(concat_ws, 256): {verdict(sha2.median >= 3 * sha.median)} "
        f"(sha2 {sha2.median:.3f} s / sha256 {sha.median:.3f} s = {sha2.median / sha.median:.2f}×)"
    )
    targets.append(
        f"- hmac-sha256 ≤ 1.2× sha256: {verdict(mac.median <= 1.2 * sha.median)} "
        f"(hmac {mac.median:.3f} s / sha256 {sha.median:.3f} s = {mac.median / sha.median:.2f})"
    )
    if s.get("hmac_cost"):
        costs = {name: ns for name, ns, _ in s["hmac_cost"]}
        plain, cloned = costs["sha256"], costs["clone both"]
        # local[2]: both cores hash, so a row costs twice its share of the wall time in CPU.
        row_ns = sha.median / sha.rows * 2e9
        lines += [
            (
                f"What HMAC adds per message, outside Spark (`bench/HmacCost.java`, {ROW_ENCODING_BYTES}-byte "
                f"messages, the mean encoding of a row here; median of {HMAC_COST_ROUNDS} rounds of 2,000,000 calls; every "
                "variant checked against `javax.crypto.Mac`):"
            ),
            "",
            "| variant | ns per message | over sha256 | runs (ns) |",
            "|---|---:|---:|---|",
        ]
        lines += [f"| {name} | {ns:.1f} | {ns - plain:+.1f} | {runs} |" for name, ns, runs in s["hmac_cost"]]
        lines += [
            "",
            (
                f"The encoder's way (clone both) is the cheapest: {cloned - plain:.0f} ns over SHA-256's "
                f"{plain:.0f} ns. Spent on each row of the sha256 candidate above "
                f"({row_ns:.0f} ns of CPU per row), it puts hmac-sha256/sha256 at "
                f"{(row_ns + cloned - plain) / row_ns:.2f} at best."
            ),
            "",
        ]
    fp, lt, lt_mac = s["fingerprints"]
    lines += ["## Dataset fingerprint: murmur3 sum and lthash16, 10 mixed columns", ""]
    lines += table(s["fingerprints"], fp) + [""]
    cost = (
        f"lthash16 costs {lt.median / fp.median:.1f}× the default fingerprint "
        f"({(lt.median - fp.median) / lt.rows * 1e9:.0f} ns more per row, wall time on the run's cores); "
        f"keyed, {lt_mac.median / fp.median:.1f}×."
    )
    lines += [cost, ""]
    return lines
