"""A PostgreSQL table as one side of a comparison: hashexpr.sql's ``postgres`` dialect, run inside the server.

Everything runs in one transaction, ``REPEATABLE READ, READ ONLY`` (one snapshot, no writes, on a primary or a
read-only replica; no temporary object), with the statement timeout set for it alone. The first pass computes
every row's key hash and row hash and returns one ``bytea``: 28 bytes per segment. Later passes compute the key
hash of every row again (a sixth of a row hash's cost) and the row hash only of the rows of the segments asked
for. Against a second PostgreSQL table of the same types, or data whose rows' texts the Rust engine prints as
this server does (:mod:`hashexpr.reconcile.texts`), the aggregate passes use the SHA-256 of each row's text instead.
Key values come back as psycopg reads them, as Arrow arrays of the Spark type they hash as.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa

from hashexpr import sql as hsql
from hashexpr.errors import SystemFailure, require
from hashexpr.reconcile import common_texts, texts
from hashexpr.reconcile.catalog import (
    PostgresType,
    Refused,
    SideColumn,
    postgres_projection,
    postgres_spark_type,
)
from hashexpr.reconcile.columns import SidePlan
from hashexpr.reconcile.postgres_values import (
    DIALECT,
    arrow_values,
    counted,
    has_struct,
    key_text,
    problems,
    too_wide,
)
from hashexpr.reconcile.segments import MAX_BITS, NULL_SEGMENT, Aggregates
from hashexpr.reconcile.sources import (
    COLUMN_HASH_BYTES,
    COLUMN_HASHES,
    KEY_HASH,
    NULL_KEY,
    ROW_HASH,
    Source,
    key_column,
    segment_clause,
    sql_array,
    table_sql,
    value_column,
)
from hashexpr.reconcile.urls import normalized
from hashexpr.sql.layered import Layered, postgres_record_hash, postgres_record_key
from hashexpr.sql.postgres import NUMERIC_INFINITY, NUMERIC_NAN, NUMERIC_WIDE, UnconstrainedNumeric
from hashexpr.types import (
    ArrayType,
    DataType,
    DateType,
    DecimalType,
    TimestampNTZType,
    TimestampType,
)

#: What makes each type's text a one-to-one image of its values, the same on every server (every float digit,
#: instants in UTC, ISO dates, hex bytea), set for the comparison's transaction alone.
_TEXT_SETTINGS = (
    ("extra_float_digits", "3"),
    ("TimeZone", "UTC"),
    ("DateStyle", "ISO, YMD"),
    ("IntervalStyle", "postgres"),
    ("bytea_output", "hex"),
)
#: From this many rows LLVM's optimisation of the hash expressions (where the server has JIT on) pays.
JIT_ROWS = 2_000_000


def _quote(name: str) -> str:
    """A quoted identifier, its ``%`` doubled: every query goes through psycopg's placeholders (``_run``)."""
    return DIALECT.quote(name).replace("%", "%%")


def _segment(key_hash: str, bits: int) -> str:
    """The segment at ``bits`` of a key hash (``bytea``): its first 32 bits, big-endian, shifted."""
    word = " | ".join(
        f"(CAST(get_byte({key_hash}, {i}) AS bigint) << {8 * (3 - i)})"
        if i < 3
        else f"get_byte({key_hash}, 3)"
        for i in range(4)
    )
    return f"(({word}) >> {MAX_BITS - bits})" if bits else "CAST(0 AS bigint)"


def _text_segment(key_hash: str, bits: int) -> str:
    """The segment at ``bits`` of a 64-bit key hash (``bigint``): its high 32 bits, shifted."""
    return f"(((({key_hash}) >> 32) & 4294967295) >> {MAX_BITS - bits})" if bits else "CAST(0 AS bigint)"


def _lane(row_hash: str, start: int) -> str:
    """4 bytes of a row hash from ``start`` (0-based), as a signed integer (big-endian)."""
    return " | ".join(f"(get_byte({row_hash}, {start + k}) << {24 - 8 * k})" for k in range(4))


class PostgresSource(Source):
    """A PostgreSQL table, view or materialized view (see :func:`hashexpr.reconcile.postgres`)."""

    system = "PostgreSQL"

    def __init__(self, connection: Any, table: str) -> None:
        super().__init__()
        self._given = connection if not isinstance(connection, str) else None
        self._dsn = connection if isinstance(connection, str) else None
        if self._dsn is not None and self._dsn.startswith(("postgresql://", "postgres://")):
            # A password with characters a URL reserves, written as it is, is read as the user wrote it.
            self._dsn = normalized(self._dsn)
        if self._dsn is None and not hasattr(connection, "execute"):
            raise TypeError(
                f"postgres: expected a connection string or a psycopg connection, got {type(connection).__name__}"
            )
        self._table_text = table
        self.table = table_sql(table, "postgres")
        # The name as the queries' SQL holds it: a '%' doubled for psycopg's placeholders (_run).
        self._from = self.table.replace("%", "%%")
        self._conn: Any = None
        self._saved: tuple[Any, ...] | None = None
        self._columns: list[SideColumn] | None = None
        self._projections: dict[str, str] = {}
        self._types: dict[int, PostgresType] = {}
        self._relation: int | None = None
        self._text = False
        # The kinds of the common texts the aggregate passes compare (common_texts.py), once chosen.
        self._common: list[str] | None = None
        self._estimate = 0
        self._where = self._describe_dsn()

    def _describe_dsn(self) -> str:
        require("psycopg", "a PostgreSQL side", "reconcile")
        from psycopg import conninfo

        if self._given is not None:
            info = self._given.info
            return f"{info.user}@{info.host}:{info.port}/{info.dbname}"
        try:
            parts = conninfo.conninfo_to_dict(self._dsn)
        except Exception as error:  # noqa: BLE001 - psycopg's message may quote the string; never repeat it
            raise ValueError(
                "postgres: cannot read the connection string (give a postgresql:// URL or key=value pairs): "
                f"{type(error).__name__}"
            ) from None
        user = parts.get("user", "")
        host = parts.get("host", "") or "localhost"
        port = parts.get("port", "5432")
        return f"{user + '@' if user else ''}{host}:{port}/{parts.get('dbname', '')}"

    @property
    def label(self) -> str:
        return f"PostgreSQL table {self._table_text} ({self._where})"

    # --- lifecycle ----------------------------------------------------------------------------------------

    def _open(self, statement_timeout: float | None) -> None:
        import psycopg

        if self._given is not None:
            conn = self._given
            if conn.info.transaction_status != 0:  # idle
                raise ValueError(
                    "postgres: the connection is inside a transaction; commit or roll it back first (the "
                    "comparison reads in a read-only transaction of its own)"
                )
            self._saved = (conn.autocommit,)
            conn.autocommit = True
        else:
            try:
                conn = psycopg.connect(
                    self._dsn, autocommit=True, connect_timeout=30, application_name="hashexpr reconcile"
                )
            except psycopg.Error as error:
                raise ConnectionError(
                    f"cannot connect to PostgreSQL at {self._where}: {_first_line(error)}"
                ) from None
        self._conn = conn
        self._text = False
        self._common = None
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        if statement_timeout is not None:
            conn.execute(
                "SELECT set_config('statement_timeout', %s, true)", [f"{int(statement_timeout * 1000)}ms"]
            )
        # The aggregate's groups (up to 2^18, about 90 MB of hash table) stay in memory rather than spill to
        # temporary files.
        conn.execute(
            "SELECT set_config('work_mem', '128MB', true) "
            "WHERE pg_size_bytes(current_setting('work_mem')) < 128 * 1024 * 1024"
        )
        found = conn.execute("SELECT to_regclass(%s)::oid", [self.table]).fetchone()[0]
        if found is None:
            raise ValueError(
                f"postgres: {self.label} does not exist (or is not on the search_path): name it schema.table, "
                'with double quotes around a name that holds capitals or other characters ("My Table")'
            )
        allowed = conn.execute("SELECT has_table_privilege(%s::oid, 'SELECT')", [found]).fetchone()[0]
        if not allowed:
            raise ValueError(f"postgres: {self.label}: user {conn.info.user} may not SELECT from it")
        self._relation = found
        self._estimate = self._row_estimate()
        if self._estimate < JIT_ROWS:
            # Where JIT is on, LLVM's optimisation of the long hash expressions took 1 to 4 s a query, more than it
            # saved below a few million rows; compiled without it, 0.1 s. For this transaction only.
            self._run(
                "SELECT set_config('jit_optimize_above_cost', '-1', true), set_config('jit_inline_above_cost', '-1', true)",
                binary=False,
            )

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            if not conn.closed and conn.info.transaction_status != 0:
                conn.execute("ROLLBACK")
        finally:
            if self._given is None:
                conn.close()
            elif self._saved is not None:
                conn.autocommit = self._saved[0]

    def progress(self) -> str | None:
        return f"query running (about {self._estimate:,} rows)"

    def cancel(self) -> None:
        """Cancel the running query (from another thread)."""
        conn = self._conn
        if conn is not None:
            conn.cancel_safe() if hasattr(conn, "cancel_safe") else conn.cancel()

    def _run(
        self, query: str, params: list[Any] | None = None, binary: bool = True, plan: SidePlan | None = None
    ) -> list[tuple[Any, ...]]:
        """Run a query; PostgreSQL's errors as Python's: a value no Spark type holds (a ValueError naming the
        column and a key, found for ``plan``'s columns), a timeout, anything else the server's failure."""
        import psycopg

        try:
            # Always with parameters, so that psycopg reads every query alike ('%' doubled: _quote).
            return self._conn.execute(query, params if params is not None else [], binary=binary).fetchall()
        except psycopg.errors.QueryCanceled as error:
            raise TimeoutError(f"PostgreSQL: {self.label}: {_first_line(error)}") from None
        except psycopg.DataError as error:
            # A value no Spark type holds fails a pass (the SQL's own refusal, or a conversion that overflows).
            refused = re.search(r'"hashexpr: ([^"]*)"', _first_line(error))
            found = self._diagnose(plan) if plan is not None else None
            if refused is None and found is None:
                raise SystemFailure(f"PostgreSQL: {self.label}: {_first_line(error)}", self.system) from None
            raise ValueError(
                f"PostgreSQL: {self.label}: {found or refused.group(1)}; fix or cast it in a view, or leave the "
                "column out"
            ) from None
        except psycopg.Error as error:
            raise SystemFailure(f"PostgreSQL: {self.label}: {_first_line(error)}", self.system) from None

    def _diagnose(self, plan: SidePlan) -> str | None:
        """After a pass failed on a value that no Spark type holds: the first column and key that hold one, and
        what it is (found by a query per column, in a snapshot of its own)."""
        import psycopg

        keys = ", ".join(f"CAST({_quote(n)} AS text)" for n, _ in plan.key)
        for name, dtype in plan.hashed:
            for predicate, problem in problems(_quote(name), dtype):
                query = f"SELECT {keys} FROM {self._from} WHERE {predicate} LIMIT 1"
                try:
                    found = self._conn.execute(query, []).fetchall()
                except psycopg.Error:
                    # The failed pass ended the transaction: look in a new one.
                    self._conn.execute("ROLLBACK")
                    self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    found = self._conn.execute(query, []).fetchall()
                if found:
                    return f"column {name!r}, {key_text(plan, found[0])}: {problem}"
        return None

    # --- the catalog --------------------------------------------------------------------------------------

    def _type(self, oid: int) -> PostgresType:
        if oid not in self._types:
            row = self._run(
                "SELECT oid, typname, typtype, typcategory, typelem, typbasetype, typtypmod, typrelid FROM pg_type "
                "WHERE oid = %s",
                [oid],
                binary=False,
            )[0]
            fields: tuple[tuple[str, int, int], ...] = ()
            if row[2] == "c":
                fields = tuple(
                    self._run(
                        "SELECT attname, atttypid, atttypmod FROM pg_attribute WHERE attrelid = %s AND attnum > 0 "
                        "AND NOT attisdropped ORDER BY attnum",
                        [row[7]],
                        binary=False,
                    )
                )
            self._types[oid] = PostgresType(row[0], row[1], row[2], row[3], row[4], row[5], row[6], fields)
        return self._types[oid]

    def columns(self) -> list[SideColumn]:
        if self._columns is None:
            rows = self._run(
                "SELECT attname, format_type(atttypid, atttypmod), atttypid, atttypmod FROM pg_attribute "
                "WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                [self._relation],
                binary=False,
            )
            columns = []
            for name, shown, oid, typmod in rows:
                try:
                    columns.append(
                        SideColumn(name, shown, postgres_spark_type(self._type, oid, typmod, shown))
                    )
                except Refused as why:
                    columns.append(SideColumn(name, shown, None, str(why)))
                    continue
                projection = postgres_projection(self._type, oid)
                if projection is not None:
                    self._projections[name] = projection
            self._columns = columns
        return self._columns

    def row_estimate(self) -> int:
        return self._estimate

    def primary_key(self) -> list[str] | None:
        rows = self._run(
            "SELECT a.attname FROM pg_index AS i JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND "
            "a.attnum = ANY(i.indkey) WHERE i.indrelid = %s AND i.indisprimary "
            "ORDER BY array_position(CAST(i.indkey AS int2[]), a.attnum)",
            [self._relation],
            binary=False,
        )
        return [r[0] for r in rows] or None

    def _row_estimate(self) -> int:
        estimate = self._run("SELECT reltuples FROM pg_class WHERE oid = %s", [self._relation], binary=False)[
            0
        ][0]
        if estimate is None or estimate < 0:
            # Never analysed, or a view: the planner's estimate, which runs nothing.
            plan = self._run(f"EXPLAIN (FORMAT JSON) SELECT * FROM {self._from}", binary=False)[0][0]
            return int(plan[0]["Plan"]["Plan Rows"])
        return int(estimate)

    # --- the passes ---------------------------------------------------------------------------------------

    def _aliased(self, plan: SidePlan) -> str:
        """Every row: the hashed columns as ``hx_c0``, ``hx_c1``, ..."""
        columns = [f"hx_c{i}" for i in range(len(plan.hashed))]
        values = ", ".join(
            f"{self._projections.get(n, '{0}').format(_quote(n))} AS {c}" for c, (n, _) in zip(columns, plan.hashed)
        )
        return f"SELECT {values} FROM {self._from}"

    def _keyed(self, plan: SidePlan, rows: str | None = None) -> str:
        """Every row (of ``rows``, whose columns are ``hx_c0``, ``hx_c1``, ...): the hashed columns, its key hash
        ``hx_k`` and whether a key column is NULL, ``hx_z``."""
        columns = [f"hx_c{i}" for i in range(len(plan.hashed))]
        aliased = rows if rows is not None else self._aliased(plan)
        key = postgres_record_key(
            [(hsql.column(c), t) for c, (_, t) in zip(columns, plan.key)], prefix="hx_kb", infinite=True
        )
        null = " OR ".join(DIALECT.is_null(c, t) for c, (_, t) in zip(columns, plan.key))
        bound = _bound(aliased, key, columns, " ".join(columns) + " " + null)
        return f"SELECT {', '.join(columns)}, {key.expression} AS hx_k, ({null}) AS hx_z FROM ({bound}) AS hx_r OFFSET 0"

    def _row_hashed(self, plan: SidePlan, rows: str, keep: list[str]) -> str:
        """``rows`` (the columns of :meth:`_keyed`) with their row hash as ``hx_h``, and the columns ``keep``."""
        columns = [f"hx_c{i}" for i in range(len(plan.hashed))]
        row = postgres_record_hash(
            [(hsql.column(c), t) for c, (_, t) in zip(columns, plan.hashed)], prefix="hx_hb", infinite=True
        )
        bound = _bound(rows, row, [*columns, "hx_k", "hx_z"], " ".join(keep))
        return f"SELECT {', '.join(keep)}, {row.expression} AS hx_h FROM ({bound}) AS hx_q"

    # --- row texts in place of row hashes -------------------------------------------------------------

    def digest_signature(self, plan: SidePlan) -> str | None:
        """The server's major version and the catalog types of the hashed columns: two PostgreSQL tables with
        the same signature are compared by their rows' texts in the aggregate passes (:meth:`use_text_digests`)."""
        if any(isinstance(t, UnconstrainedNumeric) for _, t in plan.hashed):
            # Each value prints its own scale: equal values written with other scales would make every
            # segment differ and be fetched.
            return None
        major = int(self._run("SELECT current_setting('server_version_num')", binary=False)[0][0]) // 10000
        shown = {c.name: c.type_text for c in self.columns()}
        return f"PostgreSQL {major}: " + ", ".join(shown[name] for name, _ in plan.hashed)

    def use_text_digests(self) -> None:
        """Aggregate by the SHA-256 of each row's text (and segment by PostgreSQL's hash of its key's) instead of
        the record hashes, which cost PostgreSQL ten times more to compute.

        Only where the other side is PostgreSQL with the same types (:meth:`digest_signature`), or prints the
        same texts from its own data (:meth:`postgres_text_kinds`): with these settings a type's text is a
        one-to-one image of its values, so equal texts are equal values, whose encodings are equal. Values that are equal but written differently (``-0`` and ``0``) put their
        segments among those that differ, which the rows fetched then settle by their record hashes, as ever.
        """
        for name, value in _TEXT_SETTINGS:
            self._run("SELECT set_config(%s, %s, true)", [name, value], binary=False)
        self._text = True

    def postgres_text_kinds(self, plan: SidePlan) -> list[str] | None:
        """How the Rust engine prints each hashed column's values as this server does
        (:mod:`hashexpr.reconcile.texts`), or None: a column without a printer, a server encoding other than
        UTF-8, or a ``hashtextextended`` that is not the engine's (another byte order)."""
        kinds = texts.postgres_kinds(plan)
        if kinds is None:
            return None
        encoding, probe = self._run(
            "SELECT current_setting('server_encoding'), "
            "hashtextextended(CAST(ROW(CAST(%s AS text), CAST(%s AS text)) AS text), 0)",
            list(texts.PROBE),
            binary=False,
        )[0]
        if encoding != "UTF8" or int(probe) != texts.probe_hash():
            return None
        return kinds

    def common_kinds(self, plan: SidePlan) -> list[str] | None:
        """The common text kinds of the hashed columns (:mod:`.common_texts`), on a UTF-8 server."""
        if self._run("SELECT current_setting('server_encoding')", binary=False)[0][0] != "UTF8":
            return None
        return common_texts.common_kinds([t for _, t in plan.hashed])

    def use_common_texts(self, kinds: list[str]) -> None:
        self._common = kinds

    def _common_rows(self, plan: SidePlan) -> str:
        """Every row: the hashed columns, its key's common text's MD5 (its first 8 bytes, ``hx_t``), the SHA-256
        of its common text ``hx_d``, and whether a key column is NULL, ``hx_z``."""
        assert self._common is not None
        columns = [f"hx_c{i}" for i in range(len(plan.hashed))]
        fields = [common_texts.postgres_field(c, t, k) for c, (_, t), k in zip(columns, plan.hashed, self._common)]
        key = common_texts.postgres_text(fields[: len(plan.key)])
        integer = columns[0] if common_texts.integer_key(self._common, len(plan.key)) else None
        null = " OR ".join(DIALECT.is_null(c, t) for c, (_, t) in zip(columns, plan.key))
        return (
            f"SELECT {', '.join(columns)}, {common_texts.postgres_key_word(key, integer)} AS hx_t, "
            f"{common_texts.postgres_digest(common_texts.postgres_text(fields))} AS hx_d, ({null}) AS hx_z "
            f"FROM ({self._aliased(plan)}) AS hx_r"
        )

    def _digested(self, plan: SidePlan) -> str:
        """The rows with a digest of their own in place of the record hashes (``hx_t``, ``hx_d``, ``hx_z``)."""
        return self._common_rows(plan) if self._common is not None else self._texted(plan)

    def _texted(self, plan: SidePlan) -> str:
        """Every row: the hashed columns, a 64-bit hash of its key's text ``hx_t`` (which only places the row in a
        segment: PostgreSQL's own, the cheapest), the SHA-256 of its own text (UTF-8) ``hx_d``, and
        whether a key column is NULL, ``hx_z``."""
        columns = [f"hx_c{i}" for i in range(len(plan.hashed))]
        keys = ", ".join(columns[: len(plan.key)])
        # A numeric NaN prints as NaN but has no record hash: it fails here, as the record hashes' pass fails.
        nan = [
            f"CASE WHEN {c} = CAST('NaN' AS numeric) THEN CAST({DIALECT.fail_text(NUMERIC_NAN, c)} AS boolean) ELSE false END"
            for c, (_, t) in zip(columns, plan.hashed)
            if isinstance(t, DecimalType)
        ]
        nan += [
            f"CASE WHEN CAST({c} AS text) IN ('Infinity', '-Infinity') THEN "
            f"CAST({DIALECT.fail_text(NUMERIC_INFINITY, c)} AS boolean) WHEN {too_wide(c)} THEN "
            f"CAST({DIALECT.fail_text(NUMERIC_WIDE, c)} AS boolean) ELSE false END"
            for c, (_, t) in zip(columns, plan.hashed)
            if isinstance(t, UnconstrainedNumeric)
        ]
        null = " OR ".join(nan + [DIALECT.is_null(c, t) for c, (_, t) in zip(columns, plan.key)])
        return (
            f"SELECT {', '.join(columns)}, hashtextextended(CAST(ROW({keys}) AS text), 0) AS hx_t, "
            f"sha256(convert_to(CAST(ROW({', '.join(columns)}) AS text), 'UTF8')) AS hx_d, ({null}) AS hx_z "
            f"FROM ({self._aliased(plan)}) AS hx_r"
        )

    def _aggregate(self, plan: SidePlan, bits: int, within: tuple[int, np.ndarray] | None) -> Aggregates:
        params: list[Any] = []
        digested = self._text or self._common is not None
        segmented, digest = ("hx_t", "hx_d") if digested else ("hx_k", "hx_h")
        segment_of = _text_segment if digested else _segment
        rows = self._digested(plan) if digested else self._keyed(plan)
        if within is None:
            segment = f"CASE WHEN hx_z THEN {NULL_SEGMENT} ELSE {segment_of(segmented, bits)} END"
        else:
            bits0, segments = within
            rows = f"SELECT * FROM ({rows}) AS hx_w WHERE NOT hx_z AND {segment_of(segmented, bits0)} = ANY(%s::bigint[])"
            params.append(sql_array(segments))
            segment = segment_of(segmented, bits)
        hashed = (
            f"SELECT hx_z, hx_t, hx_d FROM ({rows}) AS hx_v"
            if digested
            else self._row_hashed(plan, rows, ["hx_k", "hx_z"])
        )
        if self._common is not None:
            # Two 64-bit words of each digest, their sums modulo 2^64 (common_texts.py).
            lanes = ", ".join(f"{common_texts.postgres_word(digest, 8 * i)} AS hx_l{i}" for i in range(2))
            sums = ", ".join(f"{common_texts.postgres_wrapped(f'sum(hx_l{i})')} AS hx_s{i + 1}" for i in range(2))
        else:
            lanes = ", ".join(f"{_lane(digest, 4 * i)} AS hx_l{i}" for i in range(4))
            # sum(integer) is a bigint: the lanes' exact sums, folded in pairs (segments.py).
            sums = "(sum(hx_l0) << 32) # sum(hx_l1) AS hx_s1, (sum(hx_l2) << 32) # sum(hx_l3) AS hx_s2"
        query = (
            "SELECT string_agg(int8send(hx_g) || int4send(CAST(hx_n AS integer)) || int8send(hx_s1) || int8send(hx_s2), "
            f"''::bytea) FROM (SELECT hx_g, count(*) AS hx_n, {sums} FROM ("
            f"SELECT {segment} AS hx_g, {lanes} FROM ("
            f"{hashed} OFFSET 0) AS hx_p) AS hx_s GROUP BY hx_g) AS hx_a"
        )
        data = self._run(query, params, plan=plan)[0][0]
        payload = bytes(data or b"")
        self.stats.result_bytes += len(payload)
        return Aggregates.decode(payload)

    def _fetch(self, plan: SidePlan, bits: int, segments: np.ndarray, values: bool) -> pa.Table:
        listed, nulls = segment_clause(segments)
        column_hashes = [
            f"substring({self._column_hash(f'hx_c{i}', t, i)} from 1 for {COLUMN_HASH_BYTES})"
            for i, (_, t) in enumerate(plan.hashed)
            if i >= len(plan.key)
        ]
        hashes = " || ".join(column_hashes) if column_hashes else "''::bytea"
        if self._text or self._common is not None:
            # The rows of the segments of their keys' texts, then their record hashes, for these rows alone.
            columns = ", ".join(f"hx_c{i}" for i in range(len(plan.hashed)))
            texted = (
                f"SELECT {columns} FROM ({self._digested(plan)}) AS hx_w "
                f"WHERE (NOT hx_z AND {_text_segment('hx_t', bits)} = ANY(%s::bigint[])) OR (hx_z AND %s) OFFSET 0"
            )
            chosen = f"{self._keyed(plan, texted)}"
        else:
            chosen = (
                f"SELECT * FROM ({self._keyed(plan)}) AS hx_w "
                f"WHERE (NOT hx_z AND {_segment('hx_k', bits)} = ANY(%s::bigint[])) OR (hx_z AND %s) OFFSET 0"
            )
        n = len(plan.key)
        keys = [self._key_value(f"hx_c{i}", t) for i, (_, t) in enumerate(plan.key)]
        shown = [self._key_value(f"hx_c{n + i}", t) for i, (_, t) in enumerate(plan.compared)] if values else []
        query = self._row_hashed(plan, chosen, [*keys, "hx_k", f"{hashes} AS hx_cc", "hx_z", *shown])
        rows = self._run(query, [sql_array(np.array(listed, np.int64)), nulls], plan=plan)
        columns: dict[str, pa.Array] = {}
        for i, (_, dtype) in enumerate(plan.key):
            columns[key_column(i)] = arrow_values([r[i] for r in rows], dtype)
        columns[KEY_HASH] = pa.array([bytes(r[n]) for r in rows], pa.binary())
        columns[ROW_HASH] = pa.array([bytes(r[-1]) for r in rows], pa.binary())
        columns[COLUMN_HASHES] = pa.array([bytes(r[n + 1]) for r in rows], pa.binary())
        columns[NULL_KEY] = pa.array([bool(r[n + 2]) for r in rows], pa.bool_())
        for i, (_, dtype) in enumerate(plan.compared if values else ()):
            columns[value_column(i)] = arrow_values([r[n + 3 + i] for r in rows], dtype)
        table = pa.table(columns)
        self.stats.result_bytes += table.nbytes
        return table

    def _column_hash(self, column: str, dtype: DataType, position: int) -> str:
        """What tells which columns of a fetched row changed: a column's record hash, or against a side that
        prints common texts, the digest of its common text (both sides' alike, a fraction of MySQL's cost)."""
        if self._common is not None:
            field = common_texts.postgres_field(column, dtype, self._common[position])
            return common_texts.postgres_digest(field)
        return hsql.write_record_hash(DIALECT, [(hsql.column(column), dtype)])

    def _key_value(self, alias: str, dtype: DataType) -> str:
        # psycopg reads composite values as their text unless each type is registered: such key columns (rare)
        # are given as text. Dates and timestamps come as their day and microsecond counts, which hold
        # infinity as DuckDB does (no Python date holds it).
        if has_struct(dtype):
            return f"CAST({alias} AS text)"
        if isinstance(dtype, (DateType, TimestampType, TimestampNTZType)):
            return counted(alias, dtype)
        if isinstance(dtype, ArrayType) and isinstance(dtype.elementType, (DateType, TimestampType, TimestampNTZType)):
            element = counted("hx_e", dtype.elementType)
            return (
                f"(CASE WHEN {alias} IS NULL THEN NULL ELSE ARRAY(SELECT {element} FROM unnest({alias}) "
                "WITH ORDINALITY AS hx_u(hx_e, hx_i) ORDER BY hx_i) END)"
            )
        return alias


def _bound(rows: str, layered: Layered, columns: list[str], needed: str) -> str:
    """``rows`` (whose columns are ``columns``) with the bindings of ``layered``, each level a subquery that
    PostgreSQL does not inline; a level carries on only the columns that later levels, the expression or
    ``needed`` (SQL text after it) read."""
    available = list(columns)
    for i, level in enumerate(layered.levels):
        later = " ".join(sql for after in layered.levels[i + 1 :] for _, sql in after)
        later += f" {layered.expression} {needed}"
        carried = [c for c in available if re.search(rf"\b{c}\b", later)]
        bound = [f"{sql} AS {name}" for name, sql in level]
        rows = f"SELECT {', '.join(carried + bound)} FROM ({rows}) AS hx_l OFFSET 0"
        available = carried + [name for name, _ in level]
    return rows


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
