"""The options of hashexpr's functions, read by one grammar in Python and in SQL.

``record_key_with('salt=crm; trim; case=upper', ...)`` and ``hx.record_key(..., salt="crm", trim=True,
case="upper")`` take the same options with the same rules, so that a key never depends on how it was asked
for: flags are booleans (``True``/``False`` in Python; present or absent in SQL, where ``trim=yes`` is an
error), and the words of enumerated options (``upper``, ``lower``, ``keep``, ``hash``, ``null``, ``error``, the
algorithms) are read in any case, with surrounding spaces and control characters ignored, as the jar's
``KeyOptions.parse`` reads them. Nothing here needs Spark: :mod:`hashexpr.reference` reads its options with it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

ALGORITHMS = ("murmur3", "sha256", "hmac-sha256")
FINGERPRINT_ALGORITHMS = ("murmur3", "lthash16")
CASES = ("upper", "lower")
NULL_KEYS = ("hash", "null", "error")
# What a secret's name may hold: it is the tail of a Spark conf name, never the key itself.
SECRET_NAME = re.compile(r"[A-Za-z0-9_.-]+")
# What record_key_with trims from each option: U+0000 to U+0020, as Java's String.trim.
BLANKS = "".join(map(chr, range(0x21)))

Algorithm = Literal["murmur3", "sha256", "hmac-sha256"]

#: The keyword names of the key options, in the order their SQL items are written.
KEY_OPTION_NAMES = ("salt", "trim", "case", "empty_as_null", "null_key")


def flag(value: object, name: str, function: str) -> bool:
    """Return ``value`` when it is a boolean; otherwise a TypeError naming ``function`` and the option.

    A string such as ``"no"`` or ``"false"`` is not taken as a boolean: it would be true in an ``if``, and a
    key must not depend on such a slip.

    Examples
    --------
    >>> flag(True, "trim", "record_key")
    True
    >>> flag("no", "trim", "record_key")
    Traceback (most recent call last):
        ...
    TypeError: record_key: trim must be True or False, got 'no'
    """
    # numpy's bool_ is no subclass of bool, but it is a boolean.
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise TypeError(f"{function}: {name} must be True or False, got {value!r}")


def word(value: object, name: str, choices: Sequence[str], function: str) -> str:
    """Return ``value`` read as SQL reads the word: stripped and lower-cased, one of ``choices``.

    Examples
    --------
    >>> word(" Upper", "case", CASES, "record_key")
    'upper'
    >>> word("title", "case", CASES, "record_key")
    Traceback (most recent call last):
        ...
    ValueError: record_key: case must be one of 'upper', 'lower', got 'title'
    """
    if not isinstance(value, str):
        raise TypeError(f"{function}: {name} must be a string, one of {_listed(choices)}, got {value!r}")
    read = value.strip(BLANKS).lower()
    if read not in choices:
        raise ValueError(f"{function}: {name} must be one of {_listed(choices)}, got {value!r}")
    return read


def _listed(choices: Sequence[str]) -> str:
    return ", ".join(repr(c) for c in choices)


def check_secret_name(secret: object, function: str = "secret") -> str:
    """Refuse a secret that is no conf name (e.g. the key itself), without repeating it."""
    if not isinstance(secret, str) or not SECRET_NAME.fullmatch(secret):
        length = f"a {len(secret)}-character value" if isinstance(secret, str) else type(secret).__name__
        raise ValueError(
            f"{function}: secret must be a conf name made of letters, digits, '_', '.' and '-' (the key goes "
            f"in the Spark conf spark.hashexpr.secret.<name>), got {length}"
        )
    return secret


def algorithm_of(algorithm: object, secret: object, function: str = "record_hash") -> tuple[str, str | None]:
    """Return the algorithm as SQL reads it and the secret's name, checked against each other."""
    chosen = word(algorithm, "algorithm", ALGORITHMS, function)
    if chosen == "hmac-sha256":
        if secret is None:
            raise ValueError(
                f"{function}: algorithm='hmac-sha256' needs secret=<name>: the name of the Spark conf "
                "spark.hashexpr.secret.<name> that holds the key (never the key itself)"
            )
        return chosen, check_secret_name(secret, function)
    if secret is not None:
        raise ValueError(
            f"{function}: secret is only for algorithm='hmac-sha256'; drop it, or choose that algorithm"
        )
    return chosen, None


def hash_options(algorithm: object, secret: object, function: str = "record_hash") -> list[str]:
    """The options items that choose ``algorithm`` (none for the default, murmur3).

    Examples
    --------
    >>> hash_options("SHA256", None)
    ['algorithm=sha256']
    >>> hash_options("hmac-sha256", "pii")
    ['algorithm=hmac-sha256', 'secret=pii']
    """
    chosen, name = algorithm_of(algorithm, secret, function)
    if chosen == "hmac-sha256":
        return ["algorithm=hmac-sha256", f"secret={name}"]
    return [] if chosen == "murmur3" else [f"algorithm={chosen}"]


def check_salt(salt: object, function: str) -> str:
    """Return ``salt`` ('' for None) when ``record_key_with`` can take it as an option, as written."""
    if salt is None:
        return ""
    if not isinstance(salt, str):
        raise TypeError(f"{function}: salt must be a string, got {type(salt).__name__}")
    if ";" in salt:
        raise ValueError(f"{function}: salt must not contain ';' (it separates options), got {salt!r}")
    if salt != salt.strip(BLANKS):
        raise ValueError(
            f"{function}: salt must not begin or end with a space or control character (options are "
            f"trimmed), got {salt!r}"
        )
    try:
        salt.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"{function}: salt {salt!r} has a lone surrogate, which UTF-8 cannot encode"
        ) from None
    return salt


@dataclass(frozen=True)
class KeyOptions:
    """The options of ``record_key_with`` besides the algorithm: a salt, normalisation and the NULL-key policy.

    Build it with :meth:`of` or :meth:`from_mapping`, which check every value; ``text`` is the options string
    ``record_key_with`` takes.
    """

    salt: str = ""
    trim: bool = False
    case: str | None = None
    empty_as_null: bool = False
    null_key: str = "hash"

    @classmethod
    def of(
        cls,
        salt: object = None,
        trim: object = False,
        case: object = None,
        empty_as_null: object = False,
        null_key: object = "hash",
        *,
        function: str = "record_key",
    ) -> KeyOptions:
        """Check each option as SQL would read it; ``case='keep'`` is ``None``.

        Examples
        --------
        >>> KeyOptions.of(salt="crm", trim=True, case="UPPER").text
        'salt=crm; trim; case=upper'
        >>> KeyOptions.of(trim="false")
        Traceback (most recent call last):
            ...
        TypeError: record_key: trim must be True or False, got 'false'
        """
        chosen_case = None if case is None else word(case, "case", (*CASES, "keep"), function)
        return cls(
            salt=check_salt(salt, function),
            trim=flag(trim, "trim", function),
            case=None if chosen_case == "keep" else chosen_case,
            empty_as_null=flag(empty_as_null, "empty_as_null", function),
            null_key=word(null_key, "null_key", NULL_KEYS, function),
        )

    @classmethod
    def from_mapping(
        cls, options: Mapping[str, Any] | None, function: str, what: str = "key_options"
    ) -> KeyOptions:
        """Read a mapping of key options (``{"trim": True, "case": "upper"}``), refusing unknown names."""
        given = dict(options or {})
        unknown = sorted(set(given) - set(KEY_OPTION_NAMES))
        if unknown:
            raise ValueError(
                f"{function}: {what} has unknown options {unknown}; the key options are "
                f"{', '.join(KEY_OPTION_NAMES)} (algorithm and secret are arguments of their own)"
            )
        return cls.of(**given, function=function)

    @property
    def normalizes(self) -> bool:
        """Whether string key parts are changed before they are hashed."""
        return self.trim or self.case is not None or self.empty_as_null

    @property
    def normalization(self) -> str:
        """The options items that normalise (``'trim; case=upper'``): what decides which spellings are one key."""
        items = ["trim"] if self.trim else []
        items += [f"case={self.case}"] if self.case else []
        items += ["empty_as_null"] if self.empty_as_null else []
        return "; ".join(items)

    @property
    def items(self) -> list[str]:
        """The options items, in the order ``record_key_with`` documents them."""
        items = [f"salt={self.salt}"] if self.salt else []
        items += [self.normalization] if self.normalizes else []
        items += [f"null_key={self.null_key}"] if self.null_key != "hash" else []
        return items

    @property
    def text(self) -> str:
        return "; ".join(self.items)

    @property
    def normalizing(self) -> dict[str, Any]:
        """The normalisation options as keyword arguments of ``hx.normalize_key``."""
        return {"trim": self.trim, "case": self.case, "empty_as_null": self.empty_as_null}

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments of ``hx.record_key``."""
        return {
            "salt": self.salt or None,
            "trim": self.trim,
            "case": self.case,
            "empty_as_null": self.empty_as_null,
            "null_key": self.null_key,
        }

    def described(self) -> dict[str, Any]:
        """The options as with_metadata records them: no salt, only its digest (a salt is not shown)."""
        return {
            "salt_sha256": salt_digest(self.salt) if self.salt else None,
            "trim": self.trim,
            "case": self.case,
            "empty_as_null": self.empty_as_null,
            "null_key": self.null_key,
        }


def salt_digest(salt: str) -> str:
    """The SHA-256 hex digest that stands for a salt where the salt itself is not written."""
    return hashlib.sha256(b"hashexpr-salt\x00" + salt.encode("utf-8")).hexdigest()


def parse_key_options(text: object, function: str, names: Sequence[str] = KEY_OPTION_NAMES) -> KeyOptions:
    """Read a ``record_key_with`` options string (``'salt=crm; trim; case=upper'``) as the jar reads it.

    Items are separated by ``;``, option names and words are read in any case, and each option may be given
    once; ``names`` are the options the caller takes (the others are refused, naming the ones it takes).

    Examples
    --------
    >>> parse_key_options(" TRIM ; Case=Upper; salt=crm", "hashexpr hash").text
    'salt=crm; trim; case=upper'
    >>> parse_key_options("trim, case=upper", "hashexpr hash")
    Traceback (most recent call last):
        ...
    ValueError: hashexpr hash: unknown option 'trim, case=upper' (options are separated by ';', not ',')
    """
    if not isinstance(text, str):
        raise TypeError(f"{function}: key options must be a string, got {type(text).__name__}")
    found: dict[str, Any] = {}
    for item in (i for i in text.split(";") if i.strip(BLANKS)):
        name, sep, value = item.partition("=")
        name = name.strip(BLANKS).lower()
        shown = item.strip(BLANKS)
        hint = " (options are separated by ';', not ',')" if "," in item else ""
        if name not in names:
            takes = f"; {function} takes {', '.join(names)}" if name in KEY_OPTION_NAMES else ""
            raise ValueError(f"{function}: unknown option {shown!r}{hint}{takes}")
        if name in found:
            raise ValueError(f"{function}: option {name!r} given twice; give each option once")
        if name in ("trim", "empty_as_null"):
            if sep:
                raise ValueError(f"{function}: option {shown!r}: {name!r} takes no value")
            found[name] = True
        elif not sep or (name != "salt" and not value.strip(BLANKS)):
            raise ValueError(f"{function}: option {shown!r} with a missing or unknown value{hint}")
        else:
            # A salt is taken as written (check_salt refuses blanks around it); words are read as SQL reads them.
            found[name] = value
    return KeyOptions.of(**found, function=function)


def parse_normalization(text: object, function: str) -> KeyOptions:
    """Read the normalisation items of an options string (``'trim; case=upper'``), as ``record_key_with`` does.

    Only ``trim``, ``case=`` and ``empty_as_null`` may appear: the text says which spellings are one business key.

    Examples
    --------
    >>> parse_normalization(" TRIM ; Case=Upper", "resolve_collisions").normalization
    'trim; case=upper'
    """
    return parse_key_options(text, function, ("trim", "case", "empty_as_null"))


#: The name of the fingerprint column that :func:`fingerprints_by` adds.
FINGERPRINT_COLUMN = "fingerprint"

#: How rows are combined: the sum of their MurmurHash3 hashes, or the LtHash16 multiset hash of their SHA-256
#: (with ``secret``, HMAC-SHA-256) hashes, which an adversary cannot forge (``docs/FORMAT.md``, section 11).
FingerprintAlgorithm = Literal["murmur3", "lthash16"]


def check_fingerprint_options(
    algorithm: object, secret: object, function: str = "dataset_fingerprint"
) -> tuple[str, str | None]:
    """The algorithm as SQL reads it and the secret's name; refuses an unknown algorithm, or a secret that
    lthash16 does not go with or that is no conf name."""
    chosen = word(algorithm, "algorithm", FINGERPRINT_ALGORITHMS, function)
    if secret is not None:
        if chosen != "lthash16":
            raise ValueError(
                f"{function}: secret is only for algorithm='lthash16' (rows hashed with HMAC-SHA-256); drop it"
            )
        check_secret_name(secret, function)
    return chosen, secret


def fingerprint_prefix(algorithm: str = "murmur3", secret: str | None = None) -> str:
    """The text a fingerprint of ``algorithm`` starts with: ``'hx1:'``, ``'hx1-lthash16:'`` or
    ``'hx1-lthash16-hmac:'``."""
    algorithm, secret = check_fingerprint_options(algorithm, secret)
    if algorithm == "murmur3":
        return "hx1:"
    return "hx1-lthash16-hmac:" if secret else "hx1-lthash16:"
