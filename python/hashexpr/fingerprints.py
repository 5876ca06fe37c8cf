"""What a dataset fingerprint is computed from, kept so that the fingerprint can follow a table's changes.

A fingerprint (``docs/FORMAT.md``, sections 5 and 11) is a SHA-256 over a row count and a sum: the sum modulo
2^128 of the rows' MurmurHash3 record hashes, or the 1024 lane-wise sums modulo 2^16 of their LtHash16 lanes.
Sums add and subtract, so the state of a table after a change is its state before, plus the state of the rows
added, minus the state of the rows removed: equal, byte for byte, to a full recompute (``docs/FINGERPRINTS.md``).

This module is plain Python: Spark (:func:`hashexpr.fingerprints`), the Rust engine
(:func:`hashexpr.arrow.fingerprint_state`) and Delta Lake's change data feed (:func:`hashexpr.delta_fingerprint`)
all make the same :class:`FingerprintState`, and its JSON goes from one to the other.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from hashexpr.options import FINGERPRINT_ALGORITHMS, check_secret_name
from hashexpr.reference.record import record_hash
from hashexpr.reference.tags import FINGERPRINT_LABEL, FORMAT_VERSION, LTHASH_LABEL, LTHASH_LANES
from hashexpr.types import StringType

#: What the ``"hashexpr"`` entry of a state's JSON says, and the version of that JSON's layout.
JSON_KIND = "fingerprint-state"
JSON_VERSION = 1

_SUM_BITS = 128
_LANE_BITS = 16
_MAX_COUNT = 2**63 - 1


def fingerprint_of(
    algorithm: str,
    secret: str | None,
    schema: bytes,
    count: int,
    total: int | None,
    lanes: Sequence[int] | None,
) -> str:
    """The fingerprint of a state's parts: ``'hx1:'`` (``'hx1-lthash16:'``, ``'hx1-lthash16-hmac:'``) and the
    64 hex digits of the SHA-256 that sections 5 and 11 of ``docs/FORMAT.md`` define."""
    body = struct.pack("<q", count)
    if algorithm == "murmur3":
        assert total is not None
        digest = hashlib.sha256(
            FINGERPRINT_LABEL + bytes([FORMAT_VERSION]) + schema + body + total.to_bytes(16, "little")
        )
        return f"hx{FORMAT_VERSION}:{digest.hexdigest()}"
    assert lanes is not None
    digest = hashlib.sha256(
        LTHASH_LABEL + bytes([FORMAT_VERSION]) + schema + body + struct.pack(f"<{LTHASH_LANES}H", *lanes)
    )
    return f"hx{FORMAT_VERSION}-lthash16{'-hmac' if secret else ''}:{digest.hexdigest()}"


def schema_digest(algorithm: str, columns: Sequence[tuple[str, str]]) -> bytes:
    """``SCHEMA`` of the fingerprint: the record hash (SHA-256 for lthash16) of each column's name and type string."""
    strings = [text for column in columns for text in column]
    hashed_with = "murmur3" if algorithm == "murmur3" else "sha256"
    return record_hash(strings, [StringType()] * len(strings), algorithm=hashed_with)


@dataclasses.dataclass(frozen=True)
class FingerprintState:
    """The row count and the sum (``murmur3``) or lanes (``lthash16``) a fingerprint is computed from.

    States are made by :func:`hashexpr.fingerprints` (Spark), :func:`hashexpr.arrow.fingerprint_state` (the
    Rust engine) and :func:`hashexpr.delta_fingerprint` (a Delta table), or read back with :meth:`from_json`.
    ``a + b`` is the state of both multisets of rows together, ``a - b`` the state of ``a`` without the rows of
    ``b``; both refuse states of other columns, another algorithm or another secret.

    Attributes
    ----------
    algorithm : str
        ``'murmur3'`` or ``'lthash16'``.
    columns : tuple of (str, str)
        Each column's name and type string, as the fingerprint's schema digest hashes them.
    schema : bytes
        That digest (16 bytes, or 32 for lthash16).
    count : int
        The number of rows.
    sum : int or None
        ``murmur3``: the sum of the rows' record hashes modulo 2^128.
    lanes : tuple of int or None
        ``lthash16``: the 1024 lane sums modulo 2^16.
    secret : str or None
        ``lthash16`` with rows hashed by HMAC-SHA-256: the name of the secret whose key hashed them (never the key).
    source : mapping or None
        What the rows are: for :func:`hashexpr.delta_fingerprint`, the Delta table and its version. A sum or
        difference of states has none.

    Examples
    --------
    >>> import hashexpr as hx
    >>> df = spark.createDataFrame([(1, "x"), (2, "y"), (3, "z")], "id INT, s STRING")
    >>> state = hx.fingerprint_state(df)
    >>> state.fingerprint == hx.dataset_fingerprint(df), state.count
    (True, 3)
    >>> part = hx.fingerprint_state(df.where("id = 2"))
    >>> (state - part).fingerprint == hx.dataset_fingerprint(df.where("id <> 2"))
    True
    >>> hx.FingerprintState.from_json(state.to_json()) == state
    True
    """

    algorithm: str
    columns: tuple[tuple[str, str], ...]
    schema: bytes
    count: int
    sum: int | None = None
    lanes: tuple[int, ...] | None = None
    secret: str | None = None
    source: Mapping[str, Any] | None = None

    # A state holds a mapping; it is compared by value, never hashed.
    __hash__ = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.algorithm not in FINGERPRINT_ALGORITHMS:
            raise ValueError(
                f"FingerprintState: algorithm must be 'murmur3' or 'lthash16', not {self.algorithm!r}"
            )
        object.__setattr__(self, "columns", tuple((str(n), str(t)) for n, t in self.columns))
        if not self.columns:
            raise ValueError("FingerprintState: a fingerprint has at least one column")
        if (
            not isinstance(self.count, int)
            or isinstance(self.count, bool)
            or not 0 <= self.count <= _MAX_COUNT
        ):
            raise ValueError(
                f"FingerprintState: the row count must be an integer from 0 to 2^63 - 1, not {self.count!r}"
            )
        if self.algorithm == "murmur3":
            if self.secret is not None:
                raise ValueError("FingerprintState: only lthash16 states are keyed by a secret")
            if self.lanes is not None or not isinstance(self.sum, int) or not 0 <= self.sum < 2**_SUM_BITS:
                raise ValueError(
                    "FingerprintState: a murmur3 state has a sum from 0 to 2^128 - 1 and no lanes"
                )
        else:
            if self.secret is not None:
                check_secret_name(self.secret, "FingerprintState")
            lanes = tuple(self.lanes) if self.lanes is not None else None
            if (
                self.sum is not None
                or lanes is None
                or len(lanes) != LTHASH_LANES
                or not all(isinstance(v, int) and 0 <= v < 2**_LANE_BITS for v in lanes)
            ):
                raise ValueError(
                    "FingerprintState: an lthash16 state has 1024 lanes from 0 to 65535 and no sum"
                )
            object.__setattr__(self, "lanes", lanes)
        if len(self.schema) != (16 if self.algorithm == "murmur3" else 32):
            raise ValueError(f"FingerprintState: a {self.algorithm} schema digest has the wrong length")
        if bytes(self.schema) != schema_digest(self.algorithm, self.columns):
            raise ValueError(
                "FingerprintState: the schema digest is not that of the columns "
                f"{_columns_text(self.columns)}: the state was altered"
            )
        object.__setattr__(self, "schema", bytes(self.schema))
        if self.source is not None:
            object.__setattr__(self, "source", json.loads(json.dumps(dict(self.source))))

    @property
    def fingerprint(self) -> str:
        """The fingerprint: the value :func:`hashexpr.dataset_fingerprint` gives the same rows."""
        return fingerprint_of(self.algorithm, self.secret, self.schema, self.count, self.sum, self.lanes)

    @property
    def column_names(self) -> list[str]:
        """The columns' names, in order."""
        return [name for name, _ in self.columns]

    def empty(self) -> FingerprintState:
        """The state of no rows with these columns, algorithm and secret."""
        return dataclasses.replace(
            self,
            count=0,
            sum=0 if self.algorithm == "murmur3" else None,
            lanes=(0,) * LTHASH_LANES if self.algorithm == "lthash16" else None,
            source=None,
        )

    def with_source(self, source: Mapping[str, Any] | None) -> FingerprintState:
        """The same state, recorded as the rows of ``source``."""
        return dataclasses.replace(self, source=source)

    def check_compatible(self, other: FingerprintState, operation: str = "combine") -> None:
        """Raise a :class:`ValueError` naming the difference unless ``other`` has these columns, algorithm and
        secret."""
        if not isinstance(other, FingerprintState):
            raise TypeError(f"FingerprintState: cannot {operation} a state and a {type(other).__name__}")
        if other.algorithm != self.algorithm:
            raise ValueError(
                f"FingerprintState: cannot {operation} a {self.algorithm} state and a {other.algorithm} state: "
                "compute both with one algorithm"
            )
        if other.secret != self.secret:
            keyed = [f"secret {s!r}" if s else "no secret" for s in (self.secret, other.secret)]
            raise ValueError(
                f"FingerprintState: cannot {operation} a state keyed with {keyed[0]} and one keyed with "
                f"{keyed[1]}: the rows were hashed under different keys"
            )
        if other.columns != self.columns:
            raise ValueError(
                f"FingerprintState: cannot {operation} states of different columns: "
                f"{_columns_text(self.columns)} and {_columns_text(other.columns)}"
            )

    def __add__(self, other: FingerprintState) -> FingerprintState:
        self.check_compatible(other, "add")
        return self._combined(other, 1)

    def __sub__(self, other: FingerprintState) -> FingerprintState:
        self.check_compatible(other, "subtract")
        if other.count > self.count:
            raise ValueError(
                f"FingerprintState: cannot subtract a state of {other.count:,} rows from one of {self.count:,}: "
                "the rows subtracted are not part of the rows of the first state"
            )
        return self._combined(other, -1)

    def _combined(self, other: FingerprintState, sign: int) -> FingerprintState:
        if self.algorithm == "murmur3":
            assert self.sum is not None and other.sum is not None
            total = (self.sum + sign * other.sum) % 2**_SUM_BITS
            return dataclasses.replace(self, count=self.count + sign * other.count, sum=total, source=None)
        assert self.lanes is not None and other.lanes is not None
        lanes = tuple((a + sign * b) % 2**_LANE_BITS for a, b in zip(self.lanes, other.lanes))
        return dataclasses.replace(self, count=self.count + sign * other.count, lanes=lanes, source=None)

    def to_dict(self) -> dict[str, Any]:
        """The state as the JSON of :meth:`to_json` holds it: bytes and sums as lowercase hex."""
        out: dict[str, Any] = {
            "hashexpr": JSON_KIND,
            "version": JSON_VERSION,
            "format_version": FORMAT_VERSION,
            "algorithm": self.algorithm,
            "secret": self.secret,
            "columns": [{"name": n, "type": t} for n, t in self.columns],
            "schema": self.schema.hex(),
            "count": self.count,
        }
        if self.algorithm == "murmur3":
            assert self.sum is not None
            out["sum"] = self.sum.to_bytes(16, "little").hex()
        else:
            assert self.lanes is not None
            out["lanes"] = struct.pack(f"<{LTHASH_LANES}H", *self.lanes).hex()
        out["fingerprint"] = self.fingerprint
        out["source"] = self.source
        return out

    def to_json(self) -> str:
        """The state as JSON text, which :meth:`from_json` reads back (in any engine).

        The sum is 16 bytes and the lanes 2048 bytes, little-endian, in hex; with a secret, its name only. The
        fingerprint is written too, and checked when the text is read.
        """
        return json.dumps(self.to_dict(), indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str | bytes) -> FingerprintState:
        """Read a state that :meth:`to_json` wrote; a text that is not one, or whose parts do not give its
        fingerprint, is a :class:`ValueError`."""
        try:
            data = json.loads(text)
        except (TypeError, json.JSONDecodeError) as error:
            raise ValueError(f"FingerprintState.from_json: not JSON: {error}") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> FingerprintState:
        """Read a state from the mapping :meth:`to_dict` gives."""
        what = "FingerprintState.from_json"
        if not isinstance(data, dict) or data.get("hashexpr") != JSON_KIND:
            raise ValueError(f'{what}: not a fingerprint state (no "hashexpr": "{JSON_KIND}" entry)')
        if data.get("version") != JSON_VERSION or data.get("format_version") != FORMAT_VERSION:
            raise ValueError(
                f"{what}: a state of layout {data.get('version')!r} and hash format "
                f"{data.get('format_version')!r}; this hashexpr reads layout {JSON_VERSION} of format {FORMAT_VERSION}"
            )
        try:
            algorithm = data["algorithm"]
            columns = tuple((c["name"], c["type"]) for c in data["columns"])
            if not all(isinstance(n, str) and isinstance(t, str) for n, t in columns):
                raise TypeError("a column's name and type are strings")
            total = lanes = None
            if algorithm == "murmur3":
                total = int.from_bytes(_hex(data["sum"], 16), "little")
            else:
                lanes = struct.unpack(f"<{LTHASH_LANES}H", _hex(data["lanes"], 2 * LTHASH_LANES))
            source = data.get("source")
            if source is not None and not isinstance(source, dict):
                raise TypeError("the source is an object")
            state = cls(
                algorithm=algorithm,
                columns=columns,
                schema=_hex(data["schema"], 16 if algorithm == "murmur3" else 32),
                count=data["count"],
                sum=total,
                lanes=lanes,
                secret=data.get("secret"),
                source=source,
            )
        except (KeyError, TypeError, ValueError, struct.error) as error:
            problem = str(error).removeprefix("FingerprintState: ")
            if isinstance(error, KeyError):
                problem = f"no {error} entry"
            raise ValueError(f"{what}: not a valid fingerprint state: {problem}") from None
        if data.get("fingerprint") != state.fingerprint:
            raise ValueError(
                f"{what}: the state's fingerprint {data.get('fingerprint')!r} is not that of its count and "
                f"{'sum' if algorithm == 'murmur3' else 'lanes'} ({state.fingerprint}): the state was altered"
            )
        return state

    @classmethod
    def from_parts(
        cls,
        algorithm: str,
        columns: Sequence[tuple[str, str]],
        schema: bytes,
        count: int,
        total: bytes | None = None,
        lanes: bytes | None = None,
        secret: str | None = None,
    ) -> FingerprintState:
        """A state from an engine's parts: the sum as 16 bytes or the lanes as 2048 bytes, little-endian."""
        return cls(
            algorithm=algorithm,
            columns=tuple(columns),
            schema=bytes(schema),
            count=int(count),
            sum=int.from_bytes(bytes(total), "little") if total is not None else None,
            lanes=struct.unpack(f"<{LTHASH_LANES}H", bytes(lanes)) if lanes is not None else None,
            secret=secret,
        )

    def __repr__(self) -> str:
        source = f", source={self.source!r}" if self.source else ""
        secret = f", secret={self.secret!r}" if self.secret else ""
        return (
            f"FingerprintState(algorithm={self.algorithm!r}{secret}, columns={_columns_text(self.columns)}, "
            f"count={self.count}, fingerprint={self.fingerprint!r}{source})"
        )


def _hex(text: Any, length: int) -> bytes:
    if not isinstance(text, str):
        raise TypeError(f"expected {length} bytes as hex, got {type(text).__name__}")
    value = bytes.fromhex(text)
    if len(value) != length:
        raise ValueError(f"expected {length} bytes as hex, got {len(value)}")
    return value


def _columns_text(columns: Sequence[tuple[str, str]]) -> str:
    return "(" + ", ".join(f"{name} {kind}" for name, kind in columns) + ")"
