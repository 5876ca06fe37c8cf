{#-
  The columns to hash: each a name, or {'name': ..., 'type': <Spark SQL type>} to give its type; a type not
  given is read from the relation and mapped to its Spark SQL type (docs/SQL.md, "dbt").
-#}

{% macro hx_columns(function, columns, relation, dialect) -%}
  {%- set fn = 'hashexpr.' ~ function -%}
  {%- set columns = [columns] if columns is string or columns is mapping else columns -%}
  {%- if columns is not iterable or columns | length == 0 -%}
    {{ exceptions.raise_compiler_error(fn ~ ': columns is empty; give a list of column names') }}
  {%- endif -%}
  {%- set found = {} -%}
  {%- if relation is not none -%}
    {%- do found.update({'columns': adapter.get_columns_in_relation(relation)}) -%}
  {%- endif -%}
  {%- set cols = [] -%}
  {%- for item in columns -%}
    {%- set name = item.name if item is mapping else item -%}
    {%- if name is not string or name == '' -%}
      {{ exceptions.raise_compiler_error(fn ~ ': a column is a name or {"name": ..., "type": ...}, got ' ~ item) }}
    {%- endif -%}
    {%- set given = item.type if item is mapping and item.type is defined and item.type is not none else none -%}
    {%- if relation is not none -%}
      {%- set column = hashexpr.hx_find_column(fn, found.columns, name, relation) -%}
      {%- set name = column.name -%}
    {%- elif given is none and dialect != 'native' -%}
      {{ exceptions.raise_compiler_error(fn ~ ": column '" ~ name ~ "' has no type: pass relation=ref(...) to read "
         ~ "the types, or give {'name': ..., 'type': <Spark SQL type>}") }}
    {%- endif -%}
    {%- set where = fn ~ ': column ' ~ ('%r' % name) -%}
    {%- if dialect == 'native' -%}
      {%- set type = none -%}
    {%- elif given is not none -%}
      {%- set type = hashexpr.hx_given_type(where, given, dialect) -%}
    {%- else -%}
      {%- set type = hashexpr.hx_spark_type(where, column, dialect) -%}
    {%- endif -%}
    {%- set quote_dialect = 'spark' if dialect == 'native' else dialect -%}
    {%- do cols.append({'name': name, 'type': type, 'sql': hashexpr.hx_call(quote_dialect, 'quote', name)}) -%}
  {%- endfor -%}
  {{ return(cols) }}
{%- endmacro %}


{#- The relation's column called name: that exact name, else the one name equal to it ignoring case. -#}
{% macro hx_find_column(fn, columns, name, relation) -%}
  {%- for c in columns if c.name == name -%}{{ return(c) }}{%- endfor -%}
  {%- set like = [] -%}
  {%- for c in columns if c.name | lower == name | lower -%}{%- do like.append(c) -%}{%- endfor -%}
  {%- if like | length == 1 -%}{{ return(like[0]) }}{%- endif -%}
  {%- set names = [] -%}
  {%- for c in columns -%}{%- do names.append(c.name) -%}{%- endfor -%}
  {{ exceptions.raise_compiler_error(fn ~ ": " ~ relation ~ " has " ~ ("several columns" if like else "no column")
     ~ " called '" ~ name ~ "'" ~ ("" if like else "; its columns: " ~ names | join(', '))) }}
{%- endmacro %}


{#- A Spark SQL type given by the caller, in the form the generated macros take. -#}
{% macro hx_given_type(where, given, dialect) -%}
  {%- set t = given | lower | replace(' ', '') -%}
  {%- set atomic = ['boolean', 'tinyint', 'byte', 'smallint', 'short', 'int', 'integer', 'bigint', 'long', 'float',
                    'real', 'double', 'string', 'binary', 'date', 'timestamp', 'timestamp_ltz', 'timestamp_ntz', 'void'] -%}
  {%- if t in atomic -%}{{ return(t) }}{%- endif -%}
  {#- hashexpr.sql encodes varchar(n) as string, byte for byte (hashexpr.sql.jinja checks it). -#}
  {%- if modules.re.fullmatch('varchar\\(\\d+\\)', t) -%}{{ return('string') }}{%- endif -%}
  {%- set m = modules.re.fullmatch('(?:decimal|dec|numeric)\\((\\d+)(?:,(\\d+))?\\)', t) -%}
  {%- if m -%}
    {%- set p, s = m.group(1) | int, (m.group(2) or 0) | int -%}
    {%- if 1 <= p <= 38 and 0 <= s <= p -%}{{ return('decimal(' ~ p ~ ',' ~ s ~ ')') }}{%- endif -%}
  {%- endif -%}
  {{ return(hashexpr.hx_refuse(where, given, dialect, 'give an atomic Spark SQL type: boolean, tinyint .. bigint, '
     ~ 'float, double, decimal(p,s) with p <= 38, string, varchar(n), binary, date, timestamp, timestamp_ntz')) }}
{%- endmacro %}


{% macro hx_refuse(where, type, dialect, reason) -%}
  {{ exceptions.raise_compiler_error(where ~ ': type ' ~ type ~ ' cannot be hashed in ' ~ dialect ~ ' SQL: ' ~ reason) }}
{%- endmacro %}


{#-
  The Spark SQL type of a column of the relation: the type the lake holds it as (a Parquet or JDBC read), whose
  hash the SQL reproduces. Types without an exact counterpart are refused; cast them in a model, or give the
  type.
-#}
{% macro hx_spark_type(where, column, dialect) -%}
  {%- set dtype = column.dtype | lower | trim -%}
  {%- set cast = 'cast it in a model, or give the column as {"name": ..., "type": <Spark SQL type>}' -%}
  {%- if dialect == 'postgres' -%}
    {%- set simple = {'smallint': 'smallint', 'integer': 'int', 'bigint': 'bigint', 'real': 'float',
                      'double precision': 'double', 'text': 'string', 'character varying': 'string',
                      'boolean': 'boolean', 'date': 'date', 'timestamp with time zone': 'timestamp',
                      'timestamp without time zone': 'timestamp_ntz', 'bytea': 'binary'} -%}
    {%- if dtype in simple -%}{{ return(simple[dtype]) }}{%- endif -%}
    {%- if dtype == 'numeric' -%}
      {%- set p, s = column.numeric_precision, column.numeric_scale -%}
      {%- if p is not none and 1 <= p | int <= 38 -%}{{ return('decimal(' ~ p | int ~ ',' ~ (s or 0) | int ~ ')') }}{%- endif -%}
      {{ return(hashexpr.hx_refuse(where, 'numeric' ~ ('(' ~ p ~ ',' ~ s ~ ')' if p is not none else ''), dialect,
         'a Spark decimal has at most 38 digits and a declared scale; ' ~ cast)) }}
    {%- endif -%}
    {%- if dtype == 'character' -%}
      {{ return(hashexpr.hx_refuse(where, 'character(' ~ column.char_size ~ ')', dialect, 'a blank-padded character '
         ~ 'column is padded or not depending on how it is read; cast it to text or varchar in a model')) }}
    {%- endif -%}
  {%- elif dialect == 'duckdb' -%}
    {%- set simple = {'tinyint': 'tinyint', 'smallint': 'smallint', 'integer': 'int', 'bigint': 'bigint',
                      'utinyint': 'smallint', 'usmallint': 'int', 'uinteger': 'bigint', 'ubigint': 'decimal(20,0)',
                      'float': 'float', 'double': 'double', 'varchar': 'string', 'blob': 'binary',
                      'boolean': 'boolean', 'date': 'date', 'timestamp': 'timestamp_ntz',
                      'timestamp_s': 'timestamp_ntz', 'timestamp_ms': 'timestamp_ntz',
                      'timestamp with time zone': 'timestamp'} -%}
    {%- if dtype in simple -%}{{ return(simple[dtype]) }}{%- endif -%}
    {%- set m = modules.re.fullmatch('decimal\\((\\d+),\\s*(\\d+)\\)', dtype) -%}
    {%- if m -%}{{ return('decimal(' ~ m.group(1) ~ ',' ~ m.group(2) ~ ')') }}{%- endif -%}
  {%- elif dialect == 'spark' -%}
    {%- set t = dtype | replace(' ', '') -%}
    {%- if modules.re.fullmatch('char\\(\\d+\\)', t) -%}
      {{ return(hashexpr.hx_refuse(where, t, dialect, 'Spark hashes CHAR(n) padded to n characters, and engines '
         ~ 'differ in how they pad or strip it: declare string and pass rpad(column, n) where the lake pads')) }}
    {%- endif -%}
    {{ return(hashexpr.hx_given_type(where, t, dialect)) }}
  {%- endif -%}
  {{ return(hashexpr.hx_refuse(where, column.dtype, dialect, 'the dbt macros map atomic types only (nested values: '
     ~ 'hashexpr sql writes their SQL); ' ~ cast)) }}
{%- endmacro %}
