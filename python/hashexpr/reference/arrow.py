"""Arrow and pandas inputs: their fingerprints, and the Spark types Spark reads from Parquet for them.

The fingerprint of an Arrow table or a pandas DataFrame is the one Spark computes once the data is written to
Parquet and read back (``docs/FORMAT.md`` section 5); the Spark type of an Arrow type or of a Parquet schema's
columns follows the rules ``docs/ARROW.md`` gives for ``hashexpr.arrow``. :mod:`pyarrow` (and :mod:`pandas`)
are needed only when these functions are called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from hashexpr.reference.fingerprint import dataset_fingerprint
from hashexpr.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
    of,
)

if TYPE_CHECKING:
    import pandas
    import pyarrow
    import pyarrow.parquet


_MAX_DECIMAL_PRECISION = 38


def fingerprint_arrow(
    table: pyarrow.Table,
    types: Sequence[DataType] | None = None,
    *,
    parquet_schema: pyarrow.parquet.ParquetSchema | None = None,
) -> str:
    """
    Returns the fingerprint of an Arrow table, as Spark's ``dataset_fingerprint(*)`` computes it
    once the table is loaded into Spark.

    By default every column gets the type Spark 4 gives it when reading the Parquet file that
    :func:`pyarrow.parquet.write_table` writes (see :func:`spark_type_of_arrow`), so the result equals
    ``spark.read.parquet(path).agg(dataset_fingerprint(*))``. Column names are taken as they are.
    For a table read from a Parquet file, pass the file's ``parquet_schema``: the Arrow types alone
    do not tell an ``INT96`` timestamp (Spark: ``TIMESTAMP``) from one without a time zone
    (``TIMESTAMP_NTZ``), since pyarrow reads both as ``timestamp`` without one.

    Timestamps are taken as microseconds, the unit Spark keeps: seconds and milliseconds are
    converted exactly; nanoseconds (which Spark does not read from Parquet) are accepted only when
    every value is a whole number of microseconds, the data ``write_table(...,
    coerce_timestamps="us")`` writes. Dictionary-encoded columns are fingerprinted by their values.

    Parameters
    ----------
    table : :class:`pyarrow.Table`
        The data.
    types : sequence of :class:`hashexpr.types.DataType` (or PySpark's), optional
        The Spark type of every column once loaded, when it differs from the Parquet mapping (for
        example a schema given to the reader). Values must fit them in the conventions of this
        package: timestamps and dates arrive as ``int`` microseconds and days, structs as tuples.
    parquet_schema : :class:`pyarrow.parquet.ParquetSchema`, optional
        The schema of the Parquet file the table was read from (``pq.ParquetFile(path).schema``):
        the types are then :func:`spark_types_of_parquet` of it. Not together with ``types``.

    Returns
    -------
    str
        ``'hx1:'`` and 64 lowercase hex digits.

    Raises
    ------
    ValueError
        If the table has no columns (Spark's ``dataset_fingerprint`` needs one), if a column's
        Arrow type has no Spark counterpart (naming the column), if a nanosecond timestamp is not a
        whole number of microseconds, if a value does not fit its type, or if ``parquet_schema`` is
        not the schema of the table.

    Examples
    --------
    >>> import pyarrow as pa
    >>> table = pa.table({"id": pa.array([1, 2], pa.int32()), "s": ["a", None]})
    >>> fingerprint_arrow(table) == dataset_fingerprint([(2, None), (1, "a")], ["id", "s"],
    ...                                                 [IntegerType(), StringType()])
    True
    >>> fingerprint_arrow(pa.table({"t": pa.array([1], pa.time32("s"))}))
    Traceback (most recent call last):
        ...
    ValueError: column 't': Spark has no type for the Arrow type time32[s]
    """
    names = [str(name) for name in table.column_names]
    if not names:
        raise ValueError(
            "fingerprint_arrow: the table has no columns, and Spark's dataset_fingerprint needs at "
            "least one; fingerprint a table with columns"
        )
    arrow_types = [field.type for field in table.schema]
    if parquet_schema is not None:
        if types is not None:
            raise ValueError("pass types or parquet_schema, not both: parquet_schema gives the types")
        if parquet_schema.to_arrow_schema().names != names:
            raise ValueError(
                f"parquet_schema has the columns {parquet_schema.to_arrow_schema().names}, the table "
                f"{names}: pass the schema of the file the table was read from"
            )
        types = spark_types_of_parquet(parquet_schema)
    if types is None:
        types = [_column_type(name, arrow_type) for name, arrow_type in zip(names, arrow_types)]
    else:
        types = [of(t) for t in types]
        if len(types) != len(names):
            raise ValueError(f"the table has {len(names)} columns but {len(types)} types were given")
        for name, arrow_type in zip(names, arrow_types):
            _column_type(name, arrow_type)
    columns = [_column_values(name, table.column(i)) for i, name in enumerate(names)]
    return dataset_fingerprint(zip(*columns), names, types)


def fingerprint_pandas(df: pandas.DataFrame, types: Sequence[DataType] | None = None) -> str:
    """
    Returns the fingerprint of a pandas DataFrame, as Spark's ``dataset_fingerprint(*)`` computes it
    over ``df.to_parquet(path, coerce_timestamps="us")`` read back with ``spark.read.parquet(path)``
    (Spark reads no nanosecond timestamps, which pandas writes by default).

    The frame is converted with :meth:`pyarrow.Table.from_pandas` as ``to_parquet`` converts it
    (``preserve_index=None``): a ``RangeIndex`` is not written, whatever its name, start or step;
    any other index (one left by filtering or sorting, a named, string, datetime or categorical
    index, each level of a ``MultiIndex``) is, as columns after the frame's, named by the index's
    names or ``__index_level_<i>__``. Then it is fingerprinted with :func:`fingerprint_arrow`: so
    ``NaN`` in a float column and ``None``/``NaT`` are ``NULL``, a categorical column is its values'
    type, and an object column holding only ``None`` is an all-``NULL`` ``INT`` column, as Spark reads
    it. ``spark.createDataFrame(df)`` can infer other types (it makes naive ``datetime64`` columns
    ``TIMESTAMP`` rather than ``TIMESTAMP_NTZ``, and drops the index); pass ``types`` to fingerprint
    such a frame (one per column of the converted frame, index columns included).

    Parameters
    ----------
    df : :class:`pandas.DataFrame`
        The data; column names become strings.
    types : sequence of :class:`hashexpr.types.DataType` (or PySpark's), optional
        The Spark type of every column, as in :func:`fingerprint_arrow`.

    Returns
    -------
    str
        ``'hx1:'`` and 64 lowercase hex digits.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": [1, 2], "x": [0.5, float("nan")]})
    >>> fingerprint_pandas(df) == dataset_fingerprint([(1, 0.5), (2, None)], ["id", "x"],
    ...                                               [LongType(), DoubleType()])
    True
    >>> fingerprint_pandas(df.iloc[[1]]) == dataset_fingerprint([(2, None, 1)], ["id", "x", "__index_level_0__"],
    ...                                                         [LongType(), DoubleType(), LongType()])
    True
    """
    import pyarrow as pa

    return fingerprint_arrow(pa.Table.from_pandas(df, preserve_index=None), types)


def spark_type_of_arrow(arrow_type: pyarrow.DataType) -> DataType:
    """
    Returns the Spark type Spark 4 reads from Parquet that pyarrow wrote from a column of this type.

    ``int8``..``int64``: ``TINYINT``..``BIGINT``; ``uint8``, ``uint16``, ``uint32``: ``SMALLINT``,
    ``INT``, ``BIGINT``; ``uint64``: ``DECIMAL(20,0)``; ``float32``, ``float64``: ``FLOAT``,
    ``DOUBLE``; ``bool``: ``BOOLEAN``; decimals up to precision 38: ``DECIMAL(p,s)``; every
    string type: ``STRING``; every binary type: ``BINARY``; ``date32``, ``date64``: ``DATE``;
    a timestamp with a time zone: ``TIMESTAMP``; a timestamp without one: ``TIMESTAMP_NTZ`` (Parquet
    ``isAdjustedToUTC = false``, which Spark infers as ``TIMESTAMP_NTZ`` by default); every list
    type (list views too): ``ARRAY``; ``struct``: ``STRUCT``; ``map``: ``MAP``; a dictionary: its values' type;
    ``null``: ``INT`` (Spark reads an all-``NULL`` Parquet column as ``INT``); ``duration``:
    ``BIGINT`` (its count of units, the ``INT64`` pyarrow writes); the ``arrow.json`` extension:
    ``STRING`` (Spark reads the Parquet ``JSON`` type so). Nullability is carried over. Other types
    (``float16``, ``time32``, ``time64``, intervals, unions, other extension types, decimals above
    precision 38) raise :class:`ValueError`.

    pyarrow reads a Parquet ``INT96`` timestamp (Spark's ``spark.sql.parquet.outputTimestampType=INT96``,
    Hive, Impala) as ``timestamp[ns]`` without a time zone, which this function maps to
    ``TIMESTAMP_NTZ``; Spark reads it as ``TIMESTAMP``. For a table read from a Parquet file, take the
    types from the file's schema with :func:`spark_types_of_parquet`.

    Parameters
    ----------
    arrow_type : :class:`pyarrow.DataType`
        The Arrow type.

    Returns
    -------
    :class:`hashexpr.types.DataType` (or PySpark's)
        The Spark type.

    Examples
    --------
    >>> import pyarrow as pa
    >>> spark_type_of_arrow(pa.list_(pa.timestamp("ms"))).simpleString()
    'array<timestamp_ntz>'
    >>> spark_type_of_arrow(pa.map_(pa.string(), pa.timestamp("us", tz="UTC"))).simpleString()
    'map<string,timestamp>'
    >>> spark_type_of_arrow(pa.uint64())
    DecimalType(20,0)
    """
    return _spark_type(arrow_type, None)


def spark_types_of_parquet(schema: pyarrow.parquet.ParquetSchema) -> list[DataType]:
    """
    Returns the Spark type of every column Spark 4 reads from a Parquet file of this schema.

    Each column's type is :func:`spark_type_of_arrow` of the Arrow type pyarrow reads, except that
    timestamps stored as ``INT96`` are ``TIMESTAMP``, as Spark reads them (pyarrow reads them as
    ``timestamp[ns]`` without a time zone, which alone would say ``TIMESTAMP_NTZ``), at any depth, and
    that a ``TIMESTAMP(NANOS)`` column, which Spark cannot read, raises :class:`ValueError`.

    Parameters
    ----------
    schema : :class:`pyarrow.parquet.ParquetSchema`
        The file's schema, e.g. ``pyarrow.parquet.ParquetFile(path).schema``.

    Returns
    -------
    list of :class:`hashexpr.types.DataType` (or PySpark's)
        One type per top-level column, in order.

    Examples
    --------
    >>> import io
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> table = pa.table({"at": pa.array([0], pa.timestamp("us")),
    ...                   "ats": pa.array([[0]], pa.list_(pa.timestamp("us")))})
    >>> buffer = io.BytesIO()
    >>> pq.write_table(table, buffer, use_deprecated_int96_timestamps=True)
    >>> [t.simpleString() for t in spark_types_of_parquet(pq.ParquetFile(buffer).schema)]
    ['timestamp', 'array<timestamp>']
    >>> [spark_type_of_arrow(f.type).simpleString() for f in pq.read_table(buffer).schema]
    ['timestamp_ntz', 'array<timestamp_ntz>']
    """
    # pyarrow lists a Parquet schema's leaf columns depth first, the order of the Arrow type's leaves.
    leaves = iter([_leaf(schema.column(i)) for i in range(len(schema))])
    types = []
    for field in schema.to_arrow_schema():
        try:
            types.append(_spark_type(field.type, leaves))
        except ValueError as error:
            raise ValueError(f"column {field.name!r}: {error}") from None
    return types


def _leaf(column: Any) -> str:
    """A Parquet leaf column as far as Spark reads it otherwise than pyarrow: ``INT96``, ``TIMESTAMP(NANOS)``."""
    if column.physical_type == "INT96":
        return "INT96"
    logical = column.logical_type
    if logical is not None and '"timeUnit":"nanoseconds"' in logical.to_json().replace(" ", ""):
        return "TIMESTAMP(NANOS)"
    return column.physical_type


def _spark_type(arrow_type: pyarrow.DataType, leaves: Iterator[str] | None) -> DataType:
    """The Spark type of ``arrow_type``; ``leaves`` yields the Parquet physical type of each leaf, if known."""
    import pyarrow as pa

    types = pa.types
    if isinstance(arrow_type, pa.BaseExtensionType) and arrow_type.extension_name == "arrow.json":
        return _spark_type(arrow_type.storage_type, leaves)
    if types.is_dictionary(arrow_type):
        return _spark_type(arrow_type.value_type, leaves)
    if _is_list_type(arrow_type, types):
        field = arrow_type.value_field
        return ArrayType(_spark_type(field.type, leaves), field.nullable)
    if types.is_map(arrow_type):
        key = _spark_type(arrow_type.key_type, leaves)
        return MapType(key, _spark_type(arrow_type.item_type, leaves), arrow_type.item_field.nullable)
    if types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        return StructType([StructField(f.name, _spark_type(f.type, leaves), f.nullable) for f in fields])
    leaf = next(leaves) if leaves is not None else None
    if leaf is not None and types.is_timestamp(arrow_type):
        if leaf == "INT96":
            return TimestampType()
        if leaf == "TIMESTAMP(NANOS)":
            raise ValueError("Spark cannot read the Parquet type TIMESTAMP(NANOS) (PARQUET_TYPE_ILLEGAL)")
    for predicate, spark_type in _arrow_atomic_types(pa):
        if predicate(arrow_type):
            return spark_type
    if types.is_decimal(arrow_type) and arrow_type.precision <= _MAX_DECIMAL_PRECISION:
        return DecimalType(arrow_type.precision, arrow_type.scale)
    if types.is_timestamp(arrow_type):
        return TimestampNTZType() if arrow_type.tz is None else TimestampType()
    raise ValueError(f"Spark has no type for the Arrow type {arrow_type}")


def _is_list_type(arrow_type: pyarrow.DataType, types: Any) -> bool:
    """Every Arrow list type: list, large list, fixed-size list, and the views (pyarrow writes them as Parquet LIST)."""
    return (
        types.is_list(arrow_type)
        or types.is_large_list(arrow_type)
        or types.is_fixed_size_list(arrow_type)
        or types.is_list_view(arrow_type)
        or types.is_large_list_view(arrow_type)
    )


def _arrow_atomic_types(pa: Any) -> list[tuple[Callable[[Any], bool], DataType]]:
    types = pa.types
    return [
        (types.is_null, IntegerType()),
        (types.is_boolean, BooleanType()),
        (types.is_int8, ByteType()),
        (types.is_int16, ShortType()),
        (types.is_int32, IntegerType()),
        (types.is_int64, LongType()),
        (types.is_uint8, ShortType()),
        (types.is_uint16, IntegerType()),
        (types.is_uint32, LongType()),
        (types.is_uint64, DecimalType(20, 0)),
        (types.is_duration, LongType()),
        (types.is_float32, FloatType()),
        (types.is_float64, DoubleType()),
        (lambda t: types.is_string(t) or types.is_large_string(t) or types.is_string_view(t), StringType()),
        (
            lambda t: (
                types.is_binary(t)
                or types.is_large_binary(t)
                or types.is_binary_view(t)
                or types.is_fixed_size_binary(t)
            ),
            BinaryType(),
        ),
        (lambda t: types.is_date32(t) or types.is_date64(t), DateType()),
    ]


def _column_type(name: str, arrow_type: pyarrow.DataType) -> DataType:
    try:
        return spark_type_of_arrow(arrow_type)
    except ValueError as error:
        raise ValueError(f"column {name!r}: {error}") from None


def _column_values(name: str, column: pyarrow.ChunkedArray) -> list[Any]:
    """A column's values in the conventions of this package: timestamps and dates as ``int``."""
    import pyarrow as pa

    micros_type = _plain_type(column.type, pa, micros=True)
    try:
        if micros_type != column.type:
            column = column.cast(micros_type, safe=True)
        plain_type = _plain_type(micros_type, pa, micros=False)
        if plain_type != micros_type:
            column = column.cast(plain_type, safe=True)
    except pa.ArrowInvalid as error:
        raise ValueError(f"column {name!r}: {error}") from None
    values = column.to_pylist()
    if pa.types.is_nested(column.type):
        return [_positional(value, column.type, pa) for value in values]
    return values


def _plain_type(arrow_type: pyarrow.DataType, pa: Any, micros: bool, nulls: bool = True) -> pyarrow.DataType:
    """
    With ``micros``, every timestamp in microseconds and every date a ``date32``; without, every
    timestamp an ``int64`` and every date an ``int32``. Dictionaries are replaced by their values; with
    ``nulls``, the null type by ``int8`` (all NULL).
    """
    types = pa.types
    if types.is_duration(arrow_type):
        return pa.int64()
    if isinstance(arrow_type, pa.BaseExtensionType) and arrow_type.extension_name == "arrow.json":
        return _plain_type(arrow_type.storage_type, pa, micros, nulls)
    if types.is_null(arrow_type) and nulls:
        # pyarrow (26 at least) casts a null child of a list or map to the null type as an array as long as
        # its parent, which breaks the offsets; an all-NULL int8 child reads back as the same Nones.
        return pa.int8()
    if types.is_timestamp(arrow_type):
        return pa.timestamp("us", arrow_type.tz) if micros else pa.int64()
    if types.is_date(arrow_type):
        return pa.date32() if micros else pa.int32()
    if types.is_dictionary(arrow_type):
        return _plain_type(arrow_type.value_type, pa, micros, nulls)
    if types.is_list_view(arrow_type) or types.is_large_list_view(arrow_type):
        # pyarrow casts no list view to a list, nor a view of nulls to a view of int8: a view keeps its kind,
        # which to_pylist reads alike.
        plain = arrow_type.value_field.with_type(_plain_type(arrow_type.value_type, pa, micros, nulls=False))
        return arrow_type if plain.type == arrow_type.value_type else pa.list_view(plain)
    if _is_list_type(arrow_type, types):
        return pa.list_(
            arrow_type.value_field.with_type(_plain_type(arrow_type.value_type, pa, micros, nulls))
        )
    if types.is_map(arrow_type):
        return pa.map_(
            arrow_type.key_field.with_type(_plain_type(arrow_type.key_type, pa, micros, nulls)),
            arrow_type.item_field.with_type(_plain_type(arrow_type.item_type, pa, micros, nulls)),
        )
    if types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        return pa.struct([f.with_type(_plain_type(f.type, pa, micros, nulls)) for f in fields])
    return arrow_type


def _positional(value: Any, arrow_type: pyarrow.DataType, pa: Any) -> Any:
    """Structs as tuples (in field order), maps as (key, value) pairs, recursively."""
    if value is None:
        return None
    types = pa.types
    if types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        return tuple(_positional(value[f.name], f.type, pa) for f in fields)
    if types.is_map(arrow_type):
        return [
            (_positional(k, arrow_type.key_type, pa), _positional(v, arrow_type.item_type, pa))
            for k, v in value
        ]
    if _is_list_type(arrow_type, types):
        return [_positional(element, arrow_type.value_type, pa) for element in value]
    return value
