"""Connection URLs (``postgresql://USER:PASSWORD@HOST:PORT/DB?...``) as people write them, and never shown with
their password.

A password copied into a URL often holds characters a URL reserves (``#``, ``?``, ``/``, ``@``). libpq reads the
user information only up to the first ``@`` or ``/``, and Python's URL parser stops the host at a ``#`` or
``?``, so such a URL is read as another host, database or password, and a message that names the host or the
database would show part of the password. :func:`normalized` reads the user information up to the *last* ``@``
(the host, database and options hold none, unless percent-encoded) and percent-encodes what the password and the
user hold, so that every reader sees the password as written; :func:`masked` shows a URL with the whole
password, and every ``password`` option, replaced by ``***``.
"""

from __future__ import annotations

import re
from urllib.parse import quote

#: Options that carry a secret (libpq's ``password`` and ``sslpassword``; MySQL drivers' ``password``).
_SECRET_OPTIONS = re.compile(r"(?i)([?&](?:ssl)?password=)[^&]*")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def _split(url: str) -> tuple[str, str | None, str]:
    """``(scheme://, user information or None, the rest)``: the user information is what precedes the last
    ``@``."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "", None, url
    at = rest.rfind("@")
    if at < 0:
        return scheme + sep, None, rest
    return scheme + sep, rest[:at], rest[at + 1 :]


def _encoded(text: str) -> str:
    """``text`` percent-encoded where a URL reserves its characters; ``%XX`` escapes kept as they are."""
    parts = []
    position = 0
    for escape in _ESCAPE.finditer(text):
        parts.append(quote(text[position : escape.start()], safe=""))
        parts.append(escape.group(0))
        position = escape.end()
    parts.append(quote(text[position:], safe=""))
    return "".join(parts)


def normalized(url: str) -> str:
    """``url`` with its user name and password percent-encoded, read up to the last ``@``.

    Examples
    --------
    >>> normalized("postgresql://reader2:p@ss/w:rd#1@db:5432/shop?table=t")
    'postgresql://reader2:p%40ss%2Fw%3Ard%231@db:5432/shop?table=t'
    >>> normalized("postgresql://app:s3cr%40t@db/shop")
    'postgresql://app:s3cr%40t@db/shop'
    >>> normalized("postgresql://db/shop")
    'postgresql://db/shop'
    """
    prefix, userinfo, rest = _split(url)
    if userinfo is None:
        return url
    user, sep, password = userinfo.partition(":")
    return f"{prefix}{_encoded(user)}{sep}{_encoded(password) if sep else ''}@{rest}"


def masked(url: str) -> str:
    """``url`` without its password: the user information's password and every ``password`` option as ``***``.

    Examples
    --------
    >>> masked("postgresql://reader2:p@ss/w:rd#1@db:5432/shop?sslmode=require")
    'postgresql://reader2:***@db:5432/shop?sslmode=require'
    >>> masked("postgresql://db/shop?password=x&user=app")
    'postgresql://db/shop?password=***&user=app'
    """
    prefix, userinfo, rest = _split(url)
    if userinfo is not None:
        user, sep, _ = userinfo.partition(":")
        url = f"{prefix}{user}{':***' if sep else ''}@{rest}"
    return _SECRET_OPTIONS.sub(r"\1***", url)


def has_password(url: str) -> bool:
    """Whether ``url`` carries a password (in its user information or as an option)."""
    _, userinfo, _ = _split(url)
    return (userinfo is not None and ":" in userinfo) or bool(_SECRET_OPTIONS.search(url))
