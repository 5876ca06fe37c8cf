"""A MySQL or MariaDB table as one side of a comparison: hashexpr.sql's ``mysql`` dialect, run inside the server.

Everything runs in one transaction, ``REPEATABLE READ``, ``WITH CONSISTENT SNAPSHOT, READ ONLY`` (one InnoDB
snapshot, no writes), with the session's time zone at UTC and the statement timeout set for the comparison alone.
Values are hashed as bytes, never compared under the columns' collations: a change of case or of trailing spaces
is a change, and keys that a case-insensitive collation holds equal are different keys.

The record hashes of format v1 cost MySQL about 45 µs a row of ten columns; against PostgreSQL or another MySQL
table the aggregate passes compare the digests of the rows' common texts instead (:mod:`.common_texts`, a quarter
of that), and only the rows of the segments that differ get their record hashes. Each pass is one query whose
rows, a segment and a digest each, the server groups in a temporary table (``derived_merge=off``: merged, the
digest would be computed once for each of its references).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa

from hashexpr.errors import SystemFailure, require
from hashexpr.options import KeyOptions
from hashexpr.reconcile import common_texts
from hashexpr.reconcile import mysql_connection as connection_of
from hashexpr.reconcile.catalog import Refused, SideColumn
from hashexpr.reconcile.columns import SidePlan
from hashexpr.reconcile.mysql_types import MySQLColumn, mysql_projection, mysql_spark_type
from hashexpr.reconcile.mysql_values import DIALECT, arrow_values, problems, selected
from hashexpr.reconcile.postgres_values import key_text
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
    value_column,
)
from hashexpr.sql import write_record_hash, write_record_key
from hashexpr.sql.columns import expression
from hashexpr.sql.mysql import TOO_LONG

#: Error numbers: a statement over its time (MariaDB, MySQL), a query killed, and a value that failed a hash.
_TIMEOUTS = (1969, 3024)
_KILLED = 1317
_FAILED = 1690
#: Room for the temporary table a pass groups its rows in, before it moves to disk (the session's alone).
_TEMPORARY_BYTES = 256 * 1024 * 1024
_PART = re.compile(r"`((?:[^`]|``)+)`|\"((?:[^\"]|\"\")+)\"|([A-Za-z0-9_$]+)")


def table_parts(text: str) -> tuple[str | None, str]:
    """``[database.]table``: each part plain, in backquotes or in double quotes.

    Examples
    --------
    >>> table_parts("shop.orders"), table_parts("`Order Lines`"), table_parts('shop."a.b"')
    (('shop', 'orders'), (None, 'Order Lines'), ('shop', 'a.b'))
    """
    parts, position, rest = [], 0, text.strip() if isinstance(text, str) else ""
    dangling = False
    while rest:
        match = _PART.match(rest, position)
        if match is None:
            break
        dangling = False
        ticked, quoted, plain = match.groups()
        parts.append(ticked.replace("``", "`") if ticked else quoted.replace('""', '"') if quoted else plain)
        position = match.end()
        if position < len(rest) and rest[position] == ".":
            position += 1
            dangling = True
            continue
        break
    if not rest or dangling or position != len(rest) or not parts or len(parts) > 2:
        raise ValueError(
            f"mysql: cannot read the table name {text!r}: give [database.]table, each part plain or in backquotes "
            "(`Order Lines`)"
        )
    return (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])


class MySQLSource(Source):
    """A MySQL or MariaDB table or view (see :func:`hashexpr.reconcile.mysql`)."""

    system = "MySQL"
    prefers_common_texts = True

    def __init__(self, connection: Any, table: str) -> None:
        super().__init__()
        if isinstance(connection, str):
            self._settings = connection_of.settings(connection)
            self._given = None
        elif hasattr(connection, "thread_id") and hasattr(connection, "cursor"):
            self._settings = connection_of.of_connection(connection)
            self._given = connection
        else:
            raise TypeError(f"mysql: expected a mysql:// URL or a PyMySQL connection, got {type(connection).__name__}")
        require("pymysql", "a MySQL or MariaDB side", "mysql")
        self._table_text = table
        self._database, self._name = table_parts(table)
        self._where = connection_of.describe(self._settings)
        self._conn: Any = None
        self._thread = 0
        self._saved: list[tuple[str, Any]] = []
        self._columns: list[SideColumn] | None = None
        self._projections: dict[str, str] = {}
        self._primary: list[str] = []
        self._estimate = 0
        self._common: list[str] | None = None

    @property
    def label(self) -> str:
        return f"{self.system} table {self._table_text} ({self._where})"

    @property
    def _from(self) -> str:
        return ".".join(DIALECT.quote(p) for p in (self._database, self._name))

    # --- lifecycle ----------------------------------------------------------------------------------------

    def _open(self, statement_timeout: float | None) -> None:
        import pymysql

        if self._given is not None:
            conn = self._given
            if conn.server_status & 1:  # SERVER_STATUS_IN_TRANS
                raise ValueError(
                    "mysql: the connection is inside a transaction; commit or roll it back first (the comparison "
                    "reads in a read-only transaction of its own)"
                )
        else:
            try:
                conn = connection_of.connect(self._settings)
            except pymysql.err.MySQLError as error:
                raise ConnectionError(
                    f"cannot connect to MySQL at {self._where}: {connection_of.first_line(error)}"
                ) from None
        self._conn = conn
        self._common = None
        self._thread = conn.thread_id()
        version = str(self._run("SELECT VERSION()")[0][0])
        self.system = "MariaDB" if "mariadb" in version.lower() else "MySQL"
        timeout = "max_statement_time" if self.system == "MariaDB" else "max_execution_time"
        settings = {
            "time_zone": "+00:00",
            "optimizer_switch": "derived_merge=off",
            "tmp_table_size": _TEMPORARY_BYTES,
            "max_heap_table_size": _TEMPORARY_BYTES,
            timeout: 0 if statement_timeout is None else (
                statement_timeout if self.system == "MariaDB" else int(statement_timeout * 1000)
            ),
        }  # fmt: skip
        if self._given is not None:
            current = self._run("SELECT " + ", ".join(f"@@SESSION.{name}" for name in settings))[0]
            self._saved = list(zip(settings, current))
        for name, value in settings.items():
            self._run(f"SET SESSION {name} = %s", [value])
        # The next transaction's alone: a given connection's own level stays as it was.
        self._run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        self._run("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
        if self._database is None:
            self._database = self._run("SELECT DATABASE()")[0][0]
            if self._database is None:
                raise ValueError(f"mysql: {self._table_text!r} names no database: write it database.table, or "
                                 "give the database in the URL (mysql://HOST/DB)")  # fmt: skip
        found = self._run(
            "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
            [self._database, self._name],
        )
        if not found:
            raise ValueError(f"mysql: {self.label} does not exist (names are written database.table, a name with "
                             "spaces or other characters in backquotes)")  # fmt: skip
        try:
            self._conn.cursor().execute(f"SELECT 1 FROM {self._from} LIMIT 0")
        except pymysql.err.MySQLError as error:
            raise ValueError(f"mysql: {self.label}: {connection_of.first_line(error)}") from None
        self._estimate = int(found[0][0]) if found[0][0] is not None else self._explained_rows()

    def _explained_rows(self) -> int:
        """A view's row estimate: the optimizer's, which reads no rows."""
        cursor = self._conn.cursor()
        cursor.execute(f"EXPLAIN SELECT * FROM {self._from}")
        names = [d[0].lower() for d in cursor.description]
        return max((int(r[names.index("rows")] or 0) for r in cursor.fetchall()), default=0)

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            if conn.open:
                conn.rollback()
                for name, value in self._saved:
                    conn.cursor().execute(f"SET SESSION {name} = %s", [value])
        finally:
            self._saved = []
            if self._given is None:
                conn.close()

    def progress(self) -> str | None:
        return f"query running (about {self._estimate:,} rows)"

    def cancel(self) -> None:
        """Cancel the running query (from another thread): KILL QUERY on a connection of its own."""
        if self._conn is None or not self._thread:
            return
        killer = connection_of.connect(self._settings, timeout=5)
        try:
            killer.cursor().execute("KILL QUERY %s", [self._thread])
        finally:
            killer.close()

    def _run(self, query: str, params: list[Any] | None = None, plan: SidePlan | None = None) -> list[tuple[Any, ...]]:
        """Run a query; the server's errors as Python's: a value no Spark type holds (a ValueError naming the
        column and a key, found for ``plan``'s columns), a timeout, anything else the server's failure."""
        import pymysql

        cursor = self._conn.cursor()
        try:
            cursor.execute(query, params)
            return list(cursor.fetchall())
        except pymysql.err.MySQLError as error:
            code = error.args[0] if error.args else None
            text = connection_of.first_line(error)
            if code in _TIMEOUTS:
                raise TimeoutError(f"{self.system}: {self.label}: {text}") from None
            refused = re.search(r"'hashexpr: ([^']*)'", text) if code == _FAILED else None
            if refused is not None and f"hashexpr: {refused.group(1)}" == TOO_LONG:
                raise ValueError(
                    f"{self.system}: {self.label}: a value or row is longer than the server's max_allowed_packet; "
                    "raise it (SET GLOBAL max_allowed_packet), or leave the longest columns out"
                ) from None
            if refused is not None:
                found = self._diagnose(plan) if plan is not None else None
                raise ValueError(
                    f"{self.system}: {self.label}: {found or refused.group(1)}; fix or cast it in a view, or leave "
                    "the column out"
                ) from None
            if code == _KILLED:
                raise SystemFailure(f"{self.system}: {self.label}: the query was cancelled", self.system) from None
            raise SystemFailure(f"{self.system}: {self.label}: {text}", self.system) from None

    def _diagnose(self, plan: SidePlan) -> str | None:
        """After a pass failed on a value that no Spark type holds: the first column and key that hold one."""
        keys = ", ".join(self._column(n) for n, _ in plan.key)
        for name, dtype in plan.hashed:
            for predicate, problem in problems(self._column(name), dtype):
                found = self._run(f"SELECT {keys} FROM {self._from} WHERE {predicate} LIMIT 1")
                if found:
                    return f"column {name!r}, {key_text(plan, found[0])}: {problem}"
        return None

    # --- the catalog --------------------------------------------------------------------------------------

    def columns(self) -> list[SideColumn]:
        if self._columns is None:
            rows = self._run(
                "SELECT COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, CHARACTER_SET_NAME, CHARACTER_MAXIMUM_LENGTH, COLUMN_KEY "
                "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
                [self._database, self._name],
            )
            columns = []
            for name, shown, kind, charset, length, key in rows:
                column = MySQLColumn(name, _text(shown), _text(kind), charset, length)
                if key == "PRI":
                    self._primary.append(name)
                try:
                    dtype = mysql_spark_type(column)
                except Refused as why:
                    columns.append(SideColumn(name, column.column_type, None, str(why)))
                    continue
                columns.append(SideColumn(name, column.column_type, dtype))
                projection = mysql_projection(column, dtype)
                if projection is not None:
                    self._projections[name] = projection
            self._columns = columns
        return self._columns

    def primary_key(self) -> list[str] | None:
        """The primary key's columns, in the key's order."""
        rows = self._run(
            "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
            "AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION",
            [self._database, self._name],
        )
        return [r[0] for r in rows] or None

    def row_estimate(self) -> int:
        return self._estimate

    def fetch_limit(self, rows: int) -> int:
        # A fetched row's record hashes cost MySQL about 60 µs; a refining pass, about 2.5 µs a row.
        return max(10_000, rows // 64)

    def _column(self, name: str) -> str:
        """A column as the passes read it: quoted, through its projection."""
        return self._projections.get(name, "{0}").format(DIALECT.quote(name))

    # --- the passes ---------------------------------------------------------------------------------------

    def common_kinds(self, plan: SidePlan) -> list[str] | None:
        return common_texts.common_kinds([t for _, t in plan.hashed])

    def use_common_texts(self, kinds: list[str]) -> None:
        self._common = kinds

    def _null_key(self, plan: SidePlan) -> str:
        return "(" + " OR ".join(f"{self._column(n)} IS NULL" for n, _ in plan.key) + ")"

    def _specs(self, columns: list[tuple[str, Any]]) -> list[tuple[Any, Any]]:
        return [(expression(self._column(n)), t) for n, t in columns]

    def _key_hash(self, plan: SidePlan) -> str:
        return write_record_key(DIALECT, self._specs(list(plan.key)), KeyOptions())

    def _row_hash(self, plan: SidePlan) -> str:
        return write_record_hash(DIALECT, self._specs(list(plan.hashed)))

    def _segment(self, plan: SidePlan, bits: int) -> str:
        """The segment at ``bits`` of a row whose key has no NULL column."""
        if self._common is not None:
            fields = [common_texts.mysql_field(self._column(n), t, k) for (n, t), k in zip(plan.key, self._common)]
            integer = self._column(plan.key[0][0]) if common_texts.integer_key(self._common, len(plan.key)) else None
            prefix = common_texts.mysql_key_word(common_texts.mysql_text(fields), integer)
        else:
            prefix = f"CONV(HEX(LEFT({self._key_hash(plan)}, 4)), 16, 10)"
        return f"({prefix} >> {MAX_BITS - bits})"

    def _digest(self, plan: SidePlan) -> str:
        if self._common is None:
            return self._row_hash(plan)
        fields = [common_texts.mysql_field(self._column(n), t, k) for (n, t), k in zip(plan.hashed, self._common)]
        return common_texts.mysql_digest(common_texts.mysql_text(fields))

    def _chosen(self, plan: SidePlan, bits: int, segments: list[int], nulls: bool) -> str:
        listed = ", ".join(map(str, segments))
        chosen = f"(NOT {self._null_key(plan)} AND {self._segment(plan, bits)} IN ({listed}))" if segments else "FALSE"
        return f"{chosen} OR {self._null_key(plan)}" if nulls else chosen

    def _aggregate(self, plan: SidePlan, bits: int, within: tuple[int, np.ndarray] | None) -> Aggregates:
        if within is None:
            where = ""
            segment = f"CASE WHEN {self._null_key(plan)} THEN {NULL_SEGMENT} ELSE {self._segment(plan, bits)} END"
        else:
            bits0, segments = within
            where = f" WHERE {self._chosen(plan, bits0, np.asarray(segments, np.int64).tolist(), False)}"
            segment = self._segment(plan, bits)
        if self._common is not None:
            # Two 64-bit words of each digest, their sums modulo 2^64 (common_texts.py).
            sums = [f"SUM(CAST(CONV(HEX(SUBSTRING(hx_d, {1 + 8 * i}, 8)), 16, 10) AS UNSIGNED))" for i in range(2)]
        else:
            # The four 32-bit lanes, big-endian and signed, their exact sums (segments.py).
            sums = [
                f"SUM(CAST(CONV(HEX(SUBSTRING(hx_d, {1 + 4 * i}, 4)), 16, 10) AS SIGNED) - "
                f"IF(ASCII(SUBSTRING(hx_d, {1 + 4 * i}, 1)) >= 128, 4294967296, 0))"
                for i in range(4)
            ]
        query = (
            f"SELECT hx_g, COUNT(*), {', '.join(sums)} FROM (SELECT {segment} AS hx_g, {self._digest(plan)} AS hx_d "
            f"FROM {self._from}{where}) AS hx_a GROUP BY hx_g"
        )
        rows = self._run(query, plan=plan)
        self.stats.result_bytes += 28 * len(rows)
        if not rows:
            return Aggregates.empty()
        segment_of = np.array([int(r[0]) for r in rows], np.int64)
        count = np.array([int(r[1]) for r in rows], np.int64)
        if self._common is not None:
            words = [np.array([int(r[2 + i]) % 2**64 for r in rows], np.uint64) for i in range(2)]
            order = np.argsort(segment_of, kind="stable")
            return Aggregates(segment_of[order], count[order], words[0][order], words[1][order])
        sums = np.array([[int(v) for v in r[2:6]] for r in rows], np.int64)
        return Aggregates.of_sums(segment_of, count, sums)

    def _column_hash(self, name: str, dtype: Any, position: int) -> str:
        """What tells which columns of a fetched row changed: its record hash, or in common texts' passes the
        digest of its common text (a tenth of the cost, as the other side computes it)."""
        if self._common is not None:
            return common_texts.mysql_digest(common_texts.mysql_field(self._column(name), dtype, self._common[position]))
        return write_record_hash(DIALECT, self._specs([(name, dtype)]))

    def _fetch(self, plan: SidePlan, bits: int, segments: np.ndarray, values: bool) -> pa.Table:
        listed, nulls = segment_clause(segments)
        n = len(plan.key)
        column_hashes = [
            f"SUBSTRING({self._column_hash(name, t, n + i)}, 1, {COLUMN_HASH_BYTES})"
            for i, (name, t) in enumerate(plan.compared)
        ]
        selects = [selected(self._column(name), t) for name, t in plan.key]
        selects += [self._key_hash(plan), DIALECT.concat(column_hashes) if column_hashes else "X''"]
        selects += [self._null_key(plan)]
        if values:
            selects += [selected(self._column(name), t) for name, t in plan.compared]
        selects.append(self._row_hash(plan))
        query = f"SELECT {', '.join(selects)} FROM {self._from} WHERE {self._chosen(plan, bits, listed, nulls)}"
        rows = self._run(query, plan=plan)
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


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
