"""DuckDB (tested on 2.0): BLOB, ``sha256``, the IEEE bits of a double through a cast to ``BIT``.

A cast to ``BIT`` (and from it to ``BLOB``) writes a number's bytes big-endian, so integers are byte-swapped
with shifts and masks first. Lists, structs and maps are walked with lambdas (``lambda x: ...``, DuckDB 1.3
and later). DuckDB evaluates a repeated subexpression as often as it appears, so a decimal's digits and
unscaled value, and a normalised key part's bytes, are bound to lambda variables and computed once. ``epoch_us``
of an infinite timestamp is NULL, so infinite dates and timestamps fail the query.
"""

from __future__ import annotations

from hashexpr.sql.dialect import (
    ARRAY,
    BINARY,
    CANONICAL_NAN,
    DATE,
    DECIMAL,
    FLOATING,
    INTEGRAL,
    MAP,
    STRING,
    STRUCT,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    Dialect,
    Encoder,
)
from hashexpr.sql.numbers import LENGTH_BYTES, minimal_bytes
from hashexpr.types import DataType


class DuckDB(Dialect):
    name = "duckdb"
    engine = "DuckDB"

    def literal(self, data: bytes) -> str:
        return f"from_hex('{data.hex()}')"

    def concat(self, parts: list[str]) -> str:
        return "(" + " || ".join(parts) + ")"

    def sha256(self, stream: str) -> str:
        return f"from_hex(sha256({stream}))"

    def le64(self, value: str) -> str:
        return f"CAST(CAST({_swap(value, 8, 'UBIGINT')} AS BIT) AS BLOB)"

    def le32(self, value: str) -> str:
        return f"CAST(CAST({_swap(value, 4, 'UINTEGER')} AS BIT) AS BLOB)"

    def fail(self, message: str, witness: str) -> str:
        return f"error({self.string_literal(message)})"

    def text(self, value: str) -> str:
        return f"CAST(({value}) AS VARCHAR)"

    def integral(self, value: str) -> str:
        return self.tagged(INTEGRAL, self.le64(f"CAST(({value}) AS BIGINT)"))

    def floating(self, value: str, single: bool) -> str:
        number = f"CAST(CAST(({value}) AS FLOAT) AS DOUBLE)" if single else f"CAST(({value}) AS DOUBLE)"
        bits = (
            f"(CASE WHEN {number} = 0 THEN CAST(0 AS BIGINT) WHEN isnan({number}) THEN CAST({CANONICAL_NAN} AS BIGINT) "
            f"ELSE CAST(CAST({number} AS BIT) AS BIGINT) END)"
        )
        return self.tagged(FLOATING, self.le64(bits))

    def decimal(self, value: str, precision: object, scale: object, wide: bool) -> str:
        number = f"CAST(({value}) AS DECIMAL({precision}, {scale}))"
        if not wide:
            return self._narrow_decimal(number, scale)
        # The digits and the unscaled value, used a dozen times each, are bound to lambda variables and
        # computed once (DuckDB evaluates a repeated subexpression inside CASE as often as it appears).
        digits, stripped = "hx_g", "NULLIF(rtrim(hx_g, '0'), '')"
        normal_scale = f"({scale} - (length({digits}) - length({stripped})))"
        unscaled = "hx_u"
        little_endian = self.concat([self.le64(unscaled), self.le64(f"({unscaled} >> 64)")])
        sized = minimal_bytes(unscaled, little_endian, wide, self.literal, _substring)
        encoding = _bind(
            f"replace(CAST({number} AS VARCHAR), '.', '')",
            digits,
            _bind(f"CAST({stripped} AS HUGEINT)", unscaled, self.tagged(DECIMAL, self.le32(normal_scale), *sized)),
        )
        zero = self.literal(bytes([DECIMAL, 0, 0, 0, 0, 1, 0]))
        # Zero of the same type: against an integer 0 the comparison could round the value to 0.
        return f"CASE WHEN {number} = CAST(0 AS DECIMAL({precision}, {scale})) THEN {zero} ELSE {encoding} END"

    def _narrow_decimal(self, number: str, scale: object) -> str:
        """A decimal of at most 18 digits, by integer arithmetic and without CASE or lambdas: DuckDB computes a
        repeated subexpression once outside them (a lambda's body runs several times slower)."""
        # The unscaled value at the declared scale; the product has at most 37 digits, and no fraction.
        unscaled = f"CAST({number} * CAST(pow(10, {scale}) AS BIGINT) AS BIGINT)"
        text = f"CAST({unscaled} AS VARCHAR)"
        zeros = f"(length({text}) - length(rtrim({text}, '0')))"
        normal = f"({unscaled} // CAST(pow(10, {zeros}) AS BIGINT))"
        # Zero: one trailing zero, normal value 0, and scale 0 (the product with 0).
        normal_scale = f"(({scale} - {zeros}) * CAST({unscaled} <> 0 AS INTEGER))"
        # The fewest two's complement bytes: the significant bits of v, or of NOT v when v < 0, and a sign bit.
        size = f"((length(ltrim(CAST(CAST(xor({normal}, {normal} >> 63) AS BIT) AS VARCHAR), '0')) + 8) // 8)"
        sized = [_substring(self.literal(LENGTH_BYTES), size, "1"), _substring(self.le64(normal), "1", size)]
        return self.tagged(DECIMAL, self.le32(normal_scale), *sized)

    def string(self, text: str) -> str:
        data = f"encode({text})"
        return self.tagged(STRING, self.le32(f"octet_length({data})"), data)

    def binary(self, value: str) -> str:
        data = f"CAST(({value}) AS BLOB)"
        return self.tagged(BINARY, self.le32(f"octet_length({data})"), data)

    def date(self, value: str, where: str) -> str:
        day = f"CAST(({value}) AS DATE)"
        return self._finite(day, where, self.tagged(DATE, self.le32(f"({day} - DATE '1970-01-01')")))

    def timestamp(self, value: str, where: str) -> str:
        instant = f"CAST(({value}) AS TIMESTAMPTZ)"
        return self._finite(instant, where, self.tagged(TIMESTAMP, self.le64(f"epoch_us({instant})")))

    def timestamp_ntz(self, value: str, where: str) -> str:
        wall_clock = f"CAST(({value}) AS TIMESTAMP)"
        return self._finite(wall_clock, where, self.tagged(TIMESTAMP_NTZ, self.le64(f"epoch_us({wall_clock})")))

    def _finite(self, value: str, where: str, encoding: str) -> str:
        message = f"hashexpr: {where} holds an infinite date or timestamp, which Spark cannot hold"
        return f"CASE WHEN isinf({value}) THEN {self.fail(message, value)} ELSE {encoding} END"

    def _joined(self, items: str, depth: int) -> str:
        left, right = f"hx_a{depth}", f"hx_b{depth}"
        return f"list_reduce({items}, lambda {left}, {right}: {left} || {right}, {self.literal(b'')})"

    def array(self, value: str, element: Encoder, depth: int) -> str:
        item = f"hx_e{depth}"
        items = f"list_transform({value}, lambda {item}: {self.element(element, item)})"
        return self.tagged(ARRAY, self.le32(f"len({value})"), self._joined(items, depth))

    def struct(self, value: str, fields: list[tuple[str, DataType, Encoder]], depth: int) -> str:
        count = self.literal(bytes([STRUCT]) + len(fields).to_bytes(4, "little"))
        parts = [
            self.element(encoder, f"struct_extract({value}, {self.string_literal(name)})") for name, _, encoder in fields
        ]
        return f"CASE WHEN ({value}) IS NULL THEN NULL ELSE {self.concat([count, *parts])} END"

    def map(self, value: str, key: Encoder, item: Encoder, depth: int) -> str:
        entry = f"hx_e{depth}"
        digest = self.sha256(
            self.concat([
                self.element(key, f"struct_extract({entry}, 'key')"),
                self.element(item, f"struct_extract({entry}, 'value')"),
            ])
        )
        # ASC explicitly: list_sort's default order follows the setting default_order.
        digests = f"list_sort(list_transform(map_entries({value}), lambda {entry}: {digest}), 'ASC')"
        return self.tagged(MAP, self.le32(f"cardinality({value})"), self._joined(digests, depth))

    def check_map(self, dtype, where: str) -> None:
        """DuckDB has maps."""

    def key_part(self, text: str) -> str:
        # The normalised text's bytes, bound once: the encoding names them twice and their length four times.
        data = "hx_b"
        return self.coalesce(
            _bind(f"encode({text})", data, self.tagged(STRING, self.le32(f"octet_length({data})"), data))
        )

    def ascii_case(self, text: str, case: str) -> str:
        # On ASCII text upper and lower map the ASCII letters alone, faster than translate.
        return f"{case}({text})"

    def trim(self, text: str) -> str:
        return f"trim({text}, ' ')"

    def is_ascii(self, text: str) -> str:
        return f"(strlen({text}) = length({text}))"


def _bind(value: str, name: str, body: str) -> str:
    """``body`` with the lambda variable ``name`` bound to ``value``, computed once; NULL when it is NULL."""
    return f"list_transform([{value}], lambda {name}: {body})[1]"


def _substring(data: str, start: str, length: str) -> str:
    return f"({data})[{start}:({start}) + ({length}) - 1]"


def _swap(value: str, width: int, unsigned: str) -> str:
    """The unsigned integer whose big-endian bytes are the ``width`` low bytes of ``value``, little-endian."""
    terms = []
    for i in range(width):
        byte = f"({value})" if i == 0 else f"(({value}) >> {8 * i})"
        shift = 8 * (width - 1 - i)
        term = f"CAST({byte} & 255 AS {unsigned})"
        terms.append(f"({term} << {shift})" if shift else term)
    return "(" + " | ".join(terms) + ")"
