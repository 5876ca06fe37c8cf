"""The compiled engine, ``hashexpr._native``, or an ImportError that says how to build it."""

from __future__ import annotations

from types import ModuleType


def native() -> ModuleType:
    """Return the extension module ``hashexpr._native``.

    Raises
    ------
    ImportError
        If the extension is not built, with the commands that build it.
    """
    try:
        from hashexpr import _native
    except ImportError as error:
        raise ImportError(
            "hashexpr.arrow needs the compiled engine hashexpr._native, which this installation lacks "
            f"({error}). Install a hashexpr wheel (make dist builds one), or build it into a checkout's "
            "virtualenv with `make venv` (pip install -e . needs Rust: https://rustup.rs)"
        ) from error
    return _native
