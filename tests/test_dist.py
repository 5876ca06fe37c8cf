"""``make dist``'s three distributions as package indexes and pip see them: the platform wheel is manylinux2014
(auditwheel), the pure wheel is the same package without the engine, pip picks the platform wheel where it
fits and the pure wheel everywhere else, and the sdist builds with cargo (and says what is missing without
it). The release workflow that builds the other platforms' wheels is linted. tests/test_wheel.py installs the
wheels next to Spark.
"""

from __future__ import annotations

import email.parser
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from hashexpr.jar import SPARK_LINES, jar_name

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
VERSION = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
MACHINE = platform.machine()
PLATFORM = DIST / f"hashexpr-{VERSION}-cp310-abi3-manylinux2014_{MACHINE}.manylinux_2_17_{MACHINE}.whl"
PURE = DIST / f"hashexpr-{VERSION}-py3-none-any.whl"
SDIST = DIST / f"hashexpr-{VERSION}.tar.gz"
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
JARS = sorted(f"hashexpr/jars/{jar_name(s, c)}" for s, scalas in SPARK_LINES.items() for c in scalas)
#: The maturin the sdist's build backend is installed as (requirements-dev.txt's), from pip's cache.
MATURIN = next(
    line.strip()
    for line in (ROOT / "requirements-dev.txt").read_text(encoding="utf-8").splitlines()
    if line.startswith("maturin==")
)
BIN = Path(sys.executable).parent

# It reads make dist's output, which make check does not build; the sdist's build compiles the engine.
pytestmark = pytest.mark.slow


def _run(args: list, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in args], check=False, capture_output=True, text=True, timeout=900, **kwargs
    )


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    missing = [p.name for p in (PLATFORM, PURE, SDIST) if not p.is_file()]
    if missing:
        pytest.fail(f"dist/ lacks {', '.join(missing)}: `make dist` (or `make wheel`) builds them")


def _wheel(path: Path) -> tuple[dict[str, bytes], email.message.Message, list[str]]:
    """A wheel's package files, its METADATA and its tags."""
    with zipfile.ZipFile(path) as archive:
        files = {
            n: archive.read(n) for n in archive.namelist() if not n.startswith(f"hashexpr-{VERSION}.dist")
        }
        meta = email.parser.BytesParser().parsebytes(archive.read(f"hashexpr-{VERSION}.dist-info/METADATA"))
        wheel = archive.read(f"hashexpr-{VERSION}.dist-info/WHEEL").decode()
    return files, meta, [line.split(": ", 1)[1] for line in wheel.splitlines() if line.startswith("Tag: ")]


def test_the_platform_wheel_is_manylinux2014_by_auditwheel():
    run = _run([BIN / "auditwheel", "show", PLATFORM])
    assert run.returncode == 0, run.stderr
    text = " ".join(run.stdout.split())
    assert f'is consistent with the following platform tag: "manylinux_2_17_{MACHINE}"' in text, run.stdout
    # The only libraries it needs are the C library's (no libgcc_s, no libstdc++, nothing bundled).
    libraries = set(re.findall(r"(\S+\.so\.\d+) with versions", text))
    assert libraries <= {"libc.so.6", "libpthread.so.0", "libdl.so.2", "libm.so.6", "librt.so.1"}, text
    _, _, tags = _wheel(PLATFORM)
    assert sorted(tags) == [f"cp310-abi3-manylinux2014_{MACHINE}", f"cp310-abi3-manylinux_2_17_{MACHINE}"]


def test_the_pure_wheel_is_the_platform_wheel_without_the_engine():
    platform_files, platform_meta, _ = _wheel(PLATFORM)
    pure_files, pure_meta, tags = _wheel(PURE)
    assert tags == ["py3-none-any"]
    assert [n for n in platform_files if n not in pure_files] == ["hashexpr/_native.abi3.so"]
    assert not [n for n in pure_files if n not in platform_files]
    assert all(pure_files[n] == platform_files[n] for n in pure_files)
    assert sorted(n for n in pure_files if n.endswith(".jar")) == JARS
    for field in ("Name", "Version", "Summary", "License", "Requires-Python"):
        assert pure_meta[field] == platform_meta[field], field
    requirements = [
        sorted(str(Requirement(r)) for r in m.get_all("Requires-Dist")) for m in (pure_meta, platform_meta)
    ]
    assert requirements[0] == requirements[1]
    # PySpark is an extra: the platforms that run Spark give their own (docs/PYTHON.md, "Installing").
    assert [r for r in requirements[0] if "extra ==" not in r] == ["mmh3<6,>=5", "pyarrow>=15"]
    assert 'pyspark>=3.5; extra == "spark"' in requirements[0]
    assert pure_meta.get_payload().strip() == platform_meta.get_payload().strip()
    with zipfile.ZipFile(PURE) as archive:
        scripts = archive.read(f"hashexpr-{VERSION}.dist-info/entry_points.txt").decode()
    assert re.search(r"^hashexpr\s*=\s*hashexpr\.cli:main$", scripts, re.MULTILINE), scripts


def test_the_sdist_holds_what_cargo_needs_and_the_jars_and_nothing_of_sbt():
    with tarfile.open(SDIST) as archive:
        names = {n.removeprefix(f"hashexpr-{VERSION}/") for n in archive.getnames()}
    rust = {str(p.relative_to(ROOT)) for p in (ROOT / "native").glob("*/src/**/*.rs")}
    assert rust and rust <= names, sorted(rust - names)
    assert {"pyproject.toml", "native/Cargo.toml", "native/Cargo.lock", "native/core/Cargo.toml",
            "native/python/Cargo.toml"} <= names  # fmt: skip
    # The case table that native/core/src/case.rs embeds with include_str!, at the path it names.
    assert "python/hashexpr/unicode_case_14_0_0.txt" in names
    assert {f"python/{jar}" for jar in JARS} <= names
    assert not [
        n for n in names if n.startswith(("jvm/", "project/", "build/")) or n.endswith((".sbt", ".so"))
    ]


@pytest.mark.parametrize(
    ("options", "picked"),
    [
        (["--platform", f"manylinux_2_17_{MACHINE}", "--python-version", "3.10"], PLATFORM),
        (["--platform", f"manylinux_2_17_{MACHINE}", "--python-version", "3.14"], PLATFORM),  # abi3
        # No platform wheel in dist/ fits these: pip takes the pure wheel, never the sdist.
        (["--platform", f"manylinux2010_{MACHINE}", "--python-version", "3.12"], PURE),  # glibc 2.12
        (["--platform", "macosx_11_0_arm64", "--python-version", "3.12"], PURE),
        (["--platform", "manylinux_2_17_aarch64", "--python-version", "3.12"], PURE),
        (["--platform", "musllinux_1_2_x86_64", "--python-version", "3.12"], PURE),
        (["--platform", "win_amd64", "--python-version", "3.12"], PURE),
        # PyPy and free-threaded CPython have no stable ABI.
        (
            ["--platform", f"manylinux_2_17_{MACHINE}", "--python-version", "3.11", "--implementation", "pp"],
            PURE,
        ),
        (["--platform", f"manylinux_2_17_{MACHINE}", "--python-version", "3.14", "--abi", "cp314t"], PURE),
    ],
    ids=lambda v: "-".join(v[1::2]) if isinstance(v, list) else ("pure" if v == PURE else "platform"),
)
def test_pip_picks_the_platform_wheel_where_it_fits_and_the_pure_wheel_elsewhere(options, picked, tmp_path):
    run = _run([sys.executable, "-m", "pip", "download", "-q", "--no-index", "--find-links", DIST,
                "--only-binary=:all:", "--no-deps", *options, "-d", tmp_path, f"hashexpr=={VERSION}"])  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert [p.name for p in tmp_path.iterdir()] == [picked.name]


def test_pip_picks_the_platform_wheel_on_this_machine(tmp_path):
    report = tmp_path / "report.json"
    run = _run([sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed", "--no-index",
                "--find-links", DIST, "--no-deps", "--report", report, f"hashexpr=={VERSION}"])  # fmt: skip
    assert run.returncode == 0, run.stderr
    [install] = json.loads(report.read_text(encoding="utf-8"))["install"]
    assert install["download_info"]["url"].endswith("/" + PLATFORM.name)


@pytest.fixture(scope="module")
def maturin(tmp_path_factory) -> Path:
    """A directory holding the maturin wheel that the sdist's isolated build installs (from pip's cache), so
    that the builds below need no index."""
    wheels = tmp_path_factory.mktemp("maturin")
    run = _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", wheels, MATURIN])
    assert run.returncode == 0, run.stderr
    return wheels


def _build_sdist(maturin: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``pip wheel`` of the sdist as a user runs it (an isolated build environment), maturin from ``maturin``
    and no wheel cache (pip would otherwise reuse a wheel it built from the same path before)."""
    return _run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-cache-dir", "--no-index", "--find-links",
         maturin, "-w", out, SDIST],
        env=env, cwd=out.parent,
    )  # fmt: skip


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CARGO_TARGET_DIR")}
    return {**env, **extra}


def test_the_sdist_without_cargo_says_what_is_missing(maturin, tmp_path):
    # A PATH without cargo (~/.cargo/bin), and no Rust installed on the fly (maturin 1.8.4 and later would
    # download one into ~/.cache/puccinialin otherwise: docs/ARROW.md).
    path = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "cargo").exists()
    )
    assert shutil.which("cargo", path=path) is None
    (tmp_path / "out").mkdir()
    run = _build_sdist(maturin, tmp_path / "out", _clean_env(PATH=path, MATURIN_NO_INSTALL_RUST="1"))
    assert run.returncode != 0
    output = " ".join((run.stdout + run.stderr).split())
    assert "Cargo, the Rust package manager, is not installed or is not on PATH." in output, output[-3000:]
    assert "Install it through the system's package manager or via https://rustup.rs/" in output
    assert not list((tmp_path / "out").iterdir())


def test_the_sdist_builds_with_cargo_into_a_whole_wheel(maturin, tmp_path):
    # Cargo reuses the crates.io dependencies that make venv compiled (a copy of native/target/release with
    # their build times, without hashexpr's own crates): the sdist's own sources are compiled below.
    target = tmp_path / "target"
    built = ROOT / "native" / "target" / "release"
    if built.is_dir():
        shutil.copytree(built, target / "release", symlinks=True,
                        ignore=shutil.ignore_patterns("*hashexpr*", "*_native*", "incremental"))  # fmt: skip
    (tmp_path / "out").mkdir()
    run = _build_sdist(maturin, tmp_path / "out", _clean_env(CARGO_TARGET_DIR=str(target)))
    assert run.returncode == 0, (run.stdout + run.stderr)[-5000:]
    compiled = re.findall(
        r"Compiling (hashexpr-core|hashexpr-python) v\S+ \((\S+)\)", run.stdout + run.stderr
    )
    assert sorted(name for name, _ in compiled) == ["hashexpr-core", "hashexpr-python"], compiled
    assert all(not where.startswith(str(ROOT)) for _, where in compiled), compiled
    [wheel] = (tmp_path / "out").iterdir()
    assert wheel.name.startswith(f"hashexpr-{VERSION}-cp310-abi3-"), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path / "site")
    assert sorted(n for n in names if n.endswith(".jar")) == JARS
    assert [n for n in names if n.startswith("hashexpr/_native")] == ["hashexpr/_native.abi3.so"]
    # The wheel's package, on its own path (no checkout), hashes with its own engine.
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import pyarrow as pa, hashexpr, hashexpr._native\n"
        "from hashexpr import arrow as hxa\n"
        "assert hashexpr._native.__file__.startswith(sys.argv[1]), hashexpr._native.__file__\n"
        "print(hxa.record_hash(pa.table({'id': pa.array([1], pa.int32()), 'name': ['a']}))[0].as_py().hex())\n"
    )
    run = _run([sys.executable, "-c", code, tmp_path / "site"], cwd=tmp_path, env=_clean_env())
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "bb9718ed625b2fc5763e75f3abfd7c5a"


def test_the_release_workflow_passes_the_linters():
    schema = _run([BIN / "check-jsonschema", "--builtin-schema", "vendor.github-workflows", WORKFLOW])
    assert schema.returncode == 0, schema.stdout + schema.stderr
    # zizmor's audits (template injection, unpinned actions, credentials, permissions), offline.
    audit = _run([BIN / "zizmor", "--offline", "--no-progress", WORKFLOW])
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_the_release_workflow_builds_every_platform_and_publishes_only_tags():
    from ruamel.yaml import YAML

    jobs = YAML(typ="safe").load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    # Neither linter checks that `needs` names a job.
    for name, job in jobs.items():
        needs = job.get("needs", [])
        assert set([needs] if isinstance(needs, str) else needs) <= set(jobs), name
    wheels = {p["name"] for p in jobs["wheels"]["strategy"]["matrix"]["platform"]}
    assert wheels == {"manylinux-x86_64", "manylinux-aarch64", "musllinux-x86_64", "musllinux-aarch64",
                      "macos-x86_64", "macos-arm64", "windows-amd64"}  # fmt: skip
    assert {"jars", "pure", "sdist", "test", "publish"} <= set(jobs)
    assert all(jobs[j]["needs"] == "jars" for j in ("wheels", "pure", "sdist"))
    publish = jobs["publish"]
    assert publish["if"] == "startsWith(github.ref, 'refs/tags/v')"
    assert set(publish["needs"]) == {"wheels", "pure", "sdist", "test"}
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["steps"][-1]["uses"].startswith("pypa/gh-action-pypi-publish@")
    assert all(j.get("permissions", {}).get("id-token") is None for n, j in jobs.items() if n != "publish")
