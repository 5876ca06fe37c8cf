"""Connection URLs (``postgresql://USER:PASSWORD@HOST:PORT/DB?...``) as people write them, and never shown with
their password.

A password copied into a URL often holds characters a URL reserves (``#``, ``?``, ``/``, ``@``). libpq reads the
user information only up to the first ``@`` or ``/``, and Python's URL parser stops the host at a ``#`` or
``?``, so such a URL is read as another host, database or password, and a message that names the host or the
database would show part of the password. :func:`split` finds where the user information ends: at the one ``@``
after which the URL reads as hosts (``host[:port]``, comma-separated), an optional database name and options;
where more than one ``@`` could end it (or none could where the URL needs one), the URL is refused with everything
after the scheme hidden. :func:`normalized`
percent-encodes the user name and password so that every reader sees them as written, and :func:`masked` shows a
URL with the password, and every option whose name holds ``password`` (percent-encoded or not), as ``***``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_HOST = r"(?:\[[^\]/?#@]*\]|[A-Za-z0-9._~%-]*)(?::\d*)?"
#: What follows the user information: hosts, an optional database name (no ``/:#@``), optional options.
_REST = re.compile(rf"{_HOST}(?:,{_HOST})*(?:/[^/?#@:]*)?(?:\?.*)?", re.DOTALL)


class AmbiguousURL(ValueError):
    """A URL whose user information could end at more than one ``@``: which part is the password is unsure."""


@dataclass(frozen=True)
class Parts:
    """A URL cut where its user information ends: ``scheme://``, the user information (None without), the rest."""

    prefix: str
    userinfo: str | None
    rest: str


def split(url: str) -> Parts:
    """Cut ``url`` after its user information (see the module's description); :class:`AmbiguousURL` when the
    URL reads more than one way.

    Examples
    --------
    >>> split("postgresql://reader2:p@ss/w:rd#1@db:5432/shop?table=t").userinfo
    'reader2:p@ss/w:rd#1'
    >>> split("postgresql://db/shop?password=p@ss/w:rd").userinfo is None
    True
    >>> split("postgresql://app@db/shop?application_name=me@corp")
    Traceback (most recent call last):
        ...
    hashexpr.reconcile.urls.AmbiguousURL: postgresql://*** reads more than one way: more than one '@' could end its user information; percent-encode an '@' of the password or of an option (%40), or give the password in PGPASSWORD (MYSQL_PWD) or a password file
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return Parts("", None, url)
    readings: list[int | None] = [i for i, c in enumerate(rest) if c == "@" and _REST.fullmatch(rest[i + 1 :])]
    if _REST.fullmatch(rest):
        readings.append(None)
    if len(readings) != 1:
        why = "more than one '@' could end its user information" if readings else "it is no URL of hosts"
        raise AmbiguousURL(
            f"{scheme}://*** reads more than one way: {why}; percent-encode an '@' of the password or of an option "
            "(%40), or give the password in PGPASSWORD (MYSQL_PWD) or a password file"
        )
    (end,) = readings
    if end is None:
        return Parts(scheme + sep, None, rest)
    return Parts(scheme + sep, rest[:end], rest[end + 1 :])


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
    """``url`` with its user name and password percent-encoded (:class:`AmbiguousURL` as :func:`split`).

    Examples
    --------
    >>> normalized("postgresql://reader2:p@ss/w:rd#1@db:5432/shop?table=t")
    'postgresql://reader2:p%40ss%2Fw%3Ard%231@db:5432/shop?table=t'
    >>> normalized("postgresql://app:s3cr%40t@db/shop")
    'postgresql://app:s3cr%40t@db/shop'
    >>> normalized("postgresql://db/shop")
    'postgresql://db/shop'
    """
    parts = split(url)
    if parts.userinfo is None:
        return url
    user, sep, password = parts.userinfo.partition(":")
    return f"{parts.prefix}{_encoded(user)}{sep}{_encoded(password) if sep else ''}@{parts.rest}"


def masked(url: str) -> str:
    """``url`` without its password: the user information's password and the value of every option whose name
    holds ``password`` as ``***``; all after the scheme where the URL reads more than one way.

    Examples
    --------
    >>> masked("postgresql://reader2:p@ss/w:rd#1@db:5432/shop?sslmode=require")
    'postgresql://reader2:***@db:5432/shop?sslmode=require'
    >>> masked("postgresql://db/shop?pass%77ord=x@y&user=app")
    'postgresql://db/shop?pass%77ord=***&user=app'
    >>> masked("postgresql://u:p@h/d?x=y@h2/d2")
    'postgresql://***'
    """
    try:
        parts = split(url)
    except AmbiguousURL:
        scheme, sep, _ = url.partition("://")
        return f"{scheme}{sep}***" if sep else "***"
    shown = parts.rest
    path, question, options = shown.partition("?")
    if question:
        kept = []
        for option in options.split("&"):
            name, equals, _ = option.partition("=")
            kept.append(f"{name}=***" if equals and "password" in unquote(name).lower() else option)
        shown = f"{path}?{'&'.join(kept)}"
    if parts.userinfo is None:
        return f"{parts.prefix}{shown}"
    user, sep, _ = parts.userinfo.partition(":")
    return f"{parts.prefix}{user}{':***' if sep else ''}@{shown}"
