#!/usr/bin/env python3
"""``make wheel``: hashexpr's three distributions, from the jars in ``target/jars/``, into ``dist/``.

- the platform wheel, ``cp310-abi3`` with the Arrow engine (maturin, release profile); on Linux built with zig
  as the linker against glibc 2.17, so that it is ``manylinux_2_17`` (manylinux2014), which package indexes
  accept (maturin's own auditwheel check refuses a wheel that needs more; tests/test_dist.py runs
  ``auditwheel show`` on it);
- the pure wheel, ``py3-none-any``: the same package and jars without the engine (``build/pure_wheel.py``);
- the sdist (maturin): the Rust workspace, the Python package with the case table the engine embeds, and the
  jars, so that a wheel built from it with cargo is whole and nothing runs sbt or Java at install time.

The jars are staged into ``python/hashexpr/jars/`` for the builds and removed after them, whatever happens;
the distributions are built into a staging directory in ``dist/`` and moved into place only once all three
exist, replacing those of the same version.

Usage: ``build/dist.py`` (``make wheel`` runs it with ``.venv``'s Python, which has maturin, ziglang and
hatchling; ``make dist`` builds every jar first).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pure_wheel

ROOT = Path(__file__).resolve().parents[1]
JARS = ROOT / "target" / "jars"
STAGED_JARS = ROOT / "python" / "hashexpr" / "jars"


def _maturin(*args: str) -> None:
    # maturin runs zig as `python -m ziglang` of the first python on PATH: this one.
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    subprocess.run([sys.executable, "-m", "maturin", *args], cwd=ROOT, env=env, check=True)


def build(out: Path) -> list[Path]:
    """Build the three distributions into ``out`` (a new directory); return their paths."""
    jars = sorted(JARS.glob("hashexpr-spark*.jar"))
    if not jars:
        raise SystemExit("dist: target/jars/ holds no jar: `make dist` builds them (make jar jars)")
    # `pypi`: maturin refuses tags that PyPI would refuse.
    linux = ["--zig", "--compatibility", "manylinux2014", "pypi"] if sys.platform.startswith("linux") else []
    shutil.rmtree(STAGED_JARS, ignore_errors=True)
    STAGED_JARS.mkdir(parents=True)
    try:
        for jar in jars:
            shutil.copy2(jar, STAGED_JARS)
        _maturin("build", "--release", *linux, "--out", str(out))
        # The manifest named, or maturin first looks for one in the current directory (and says it found none).
        _maturin("sdist", "--manifest-path", "native/python/Cargo.toml", "--out", str(out))
        pure_wheel.build(out)
    finally:
        shutil.rmtree(STAGED_JARS, ignore_errors=True)
    return sorted(out.iterdir())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="where the distributions go (dist/)")
    out = parser.parse_args().out.resolve()
    version = pure_wheel.version()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".staging-", dir=out) as staging:
        built = build(Path(staging))
        old = [*out.glob(f"hashexpr-{version}-*.whl"), *out.glob(f"hashexpr-{version}.tar.gz")]
        for path in old:
            path.unlink()
        for path in built:
            target = out / path.name
            os.replace(path, target)
            print(
                f"{target.relative_to(Path.cwd()) if target.is_relative_to(Path.cwd()) else target}"
                f"  {target.stat().st_size:,} bytes"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
