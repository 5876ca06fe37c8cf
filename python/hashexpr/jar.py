"""Where hashexpr's jar is, and how Spark gets it."""

from __future__ import annotations

from pathlib import Path

#: The class that registers hashexpr's SQL functions in a session (``spark.sql.extensions``).
EXTENSION_CLASS = "io.hashexpr.HashExprExtensions"

_PACKAGED = Path(__file__).resolve().parent / "jars" / "hashexpr.jar"
_BUILT = Path(__file__).resolve().parents[2] / "target" / "hashexpr.jar"


def jar_path() -> str:
    """Return the path of ``hashexpr.jar``, the Catalyst expressions behind every hashexpr function.

    The jar travels inside the Python package; in a source checkout, the one ``make jar`` built is used.

    Returns
    -------
    str
        An absolute path to an existing file.

    Raises
    ------
    FileNotFoundError
        When neither the packaged nor a built jar exists, with the command that builds it.

    Examples
    --------
    >>> import hashexpr as hx
    >>> hx.jar_path().endswith("hashexpr.jar")
    True
    """
    for candidate in (_PACKAGED, _BUILT):
        if candidate.is_file():
            return str(candidate)
    raise FileNotFoundError(
        f"hashexpr.jar is not in {_PACKAGED.parent}: build it with `make jar` in a hashexpr checkout, "
        "or install a hashexpr package that includes it"
    )
