"""The compiled engine, ``hashexpr._native``, or an ImportError that says what to install.

The platform wheels carry the engine; the pure wheel (``py3-none-any``), which pip installs only where no
platform wheel fits, does not. Everything that runs on Spark works without it.
"""

from __future__ import annotations

import importlib.metadata
import platform
import sysconfig
from pathlib import Path
from types import ModuleType

_PACKAGE = Path(__file__).resolve().parents[1]
#: The checkout root when the package runs from one (``make venv`` builds the engine there).
_CHECKOUT = _PACKAGE.parent.parent

#: Where a platform wheel exists (the release workflow builds them; ``docs/ARROW.md``).
PLATFORM_WHEELS = (
    "CPython 3.10 and later on Linux x86_64 and aarch64 (glibc 2.17 or later, or musl 1.2 or later), "
    "macOS x86_64 and arm64, and Windows amd64"
)


def native() -> ModuleType:
    """Return the extension module ``hashexpr._native``.

    Raises
    ------
    ImportError
        If this installation has no engine for this platform, with what to install (see :func:`missing`).
    """
    try:
        from hashexpr import _native
    except ImportError as error:
        raise ImportError(missing(error)) from error
    return _native


def unavailable() -> str | None:
    """Why the engine does not load here (the message of :func:`native`'s ImportError), or ``None`` where it
    loads; the command line's ``--engine auto`` uses Spark where it does not.

    Examples
    --------
    >>> unavailable() is None  # make venv built it into this checkout
    True
    """
    try:
        native()
    except ImportError as error:
        return str(error)
    return None


def missing(error: ImportError) -> str:
    """Why ``hashexpr._native`` did not load (``error``), and what to install or build instead: one line.

    Examples
    --------
    >>> "hashexpr.arrow needs the compiled engine hashexpr._native" in missing(ImportError("gone"))
    True
    """
    here = f"{platform.python_implementation()} {platform.python_version()} on {sysconfig.get_platform()}"
    start = "hashexpr.arrow needs the compiled engine hashexpr._native"
    if (_CHECKOUT / "native" / "Cargo.toml").is_file() and (_CHECKOUT / "Makefile").is_file():
        return (
            f"{start}, which this checkout has not built for {here} ({error}): `make venv` builds it "
            "(pip install -e . needs Rust's cargo: https://rustup.rs)"
        )
    version = _version()
    if any(_PACKAGE.glob("_native*")):
        return (
            f"{start}, which does not load on {here} ({error}): reinstall hashexpr so that pip picks the wheel "
            f"for this platform: pip install --force-reinstall --no-deps hashexpr=={version}"
        )
    installed = (
        "this is hashexpr's pure wheel (py3-none-any), which pip installs where no platform wheel fits"
        if "py3-none-any" in _wheel_tags()
        else "this installation of hashexpr has none"
    )
    return (
        f"{start}, which is not installed for {here}: {installed}. Platform wheels exist for "
        f"{PLATFORM_WHEELS}; elsewhere, build the engine from hashexpr's sdist with Rust's cargo on PATH "
        f"(https://rustup.rs): pip install --force-reinstall --no-deps --no-binary hashexpr hashexpr=={version}. "
        "Everything that runs on Spark works without it, and the command line's --engine auto uses Spark"
    )


def _version() -> str:
    try:
        return importlib.metadata.version("hashexpr")
    except importlib.metadata.PackageNotFoundError:
        return "<version>"


def _wheel_tags() -> list[str]:
    """The tags of the wheel hashexpr was installed from (its ``.dist-info/WHEEL``), if any."""
    try:
        text = importlib.metadata.distribution("hashexpr").read_text("WHEEL") or ""
    except importlib.metadata.PackageNotFoundError:
        return []
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]
