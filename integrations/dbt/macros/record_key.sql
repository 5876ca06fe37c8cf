{#-
  hashexpr.record_key and hashexpr.record_hash: the SHA-256 business key and row hash of format v1 (docs/SQL.md).

  On PostgreSQL and DuckDB they write hashexpr.sql's SQL for the columns' types, read from the relation; on
  Spark they call the jar's record_key_with / record_hash_with('algorithm=sha256; ...'), or, with the variable
  hashexpr_spark_native set to false (and always on Databricks), write the spark dialect's SQL, which needs no
  jar. Every way gives the same 32 bytes.
-#}

{% macro record_key(columns, relation=none, salt='', trim=false, case=none, empty_as_null=false, null_key='hash') -%}
  {%- if not execute -%}{{ return('') }}{%- endif -%}
  {%- set function = 'record_key' -%}
  {%- do hashexpr.hx_check_key_options(salt, trim, case, empty_as_null, null_key) -%}
  {%- set dialect = hashexpr.hx_dialect(function) -%}
  {%- set cols = hashexpr.hx_columns(function, columns, relation, dialect) -%}
  {%- if dialect == 'native' -%}
    {%- set items = ['salt=' ~ salt] if salt else [] -%}
    {%- do items.append('trim') if trim -%}
    {%- do items.append('case=' ~ case) if case -%}
    {%- do items.append('empty_as_null') if empty_as_null -%}
    {%- do items.append('null_key=' ~ null_key) if null_key != 'hash' -%}
    {%- do items.append('algorithm=sha256') -%}
    {{ return(hashexpr.hx_native_call(function, items, cols)) }}
  {%- endif -%}
  {%- set constants = hashexpr.hx_constants() -%}
  {%- set normalises = trim or case or empty_as_null -%}
  {%- set options = (true if trim else false) ~ '/' ~ (case if case else none) ~ '/' ~ (true if empty_as_null else false) -%}
  {%- set parts, tests = [], [] -%}
  {%- for c in cols -%}
    {%- set where = hashexpr.hx_where(function, c.name) -%}
    {%- if normalises and c.type == 'string' -%}
      {%- do parts.append(hashexpr.hx_call(dialect, 'key_string', c.sql, options, where)) -%}
      {%- do tests.append(hashexpr.hx_call(dialect, 'key_string_is_null', c.sql, options, where)) -%}
    {%- else -%}
      {%- do parts.append(hashexpr.hx_call(dialect, 'value', c.sql, c.type, where)) -%}
      {%- do tests.append(hashexpr.hx_call(dialect, 'is_null', c.sql)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set salt_hex = salt.encode('utf-8').hex() -%}
  {%- set prefix = constants.key ~ hashexpr.hx_u32(salt_hex | length // 2) ~ salt_hex ~ hashexpr.hx_u32(cols | length) -%}
  {%- set digest = hashexpr.hx_digest(dialect, prefix, parts) -%}
  {{ return(hashexpr.hx_call(dialect, 'null_key', null_key, tests | join(constants.every_part), digest, cols[0].sql)) }}
{%- endmacro %}


{% macro record_hash(columns, relation=none) -%}
  {%- if not execute -%}{{ return('') }}{%- endif -%}
  {%- set function = 'record_hash' -%}
  {%- set dialect = hashexpr.hx_dialect(function) -%}
  {%- set cols = hashexpr.hx_columns(function, columns, relation, dialect) -%}
  {%- if dialect == 'native' -%}
    {{ return(hashexpr.hx_native_call(function, ['algorithm=sha256'], cols)) }}
  {%- endif -%}
  {%- set parts = [] -%}
  {%- for c in cols -%}
    {%- do parts.append(hashexpr.hx_call(dialect, 'value', c.sql, c.type, hashexpr.hx_where(function, c.name))) -%}
  {%- endfor -%}
  {%- set prefix = hashexpr.hx_constants().record ~ hashexpr.hx_u32(cols | length) -%}
  {{ return(hashexpr.hx_digest(dialect, prefix, parts)) }}
{%- endmacro %}


{#- SHA-256 of the prefix bytes (hex) and the encoded parts, in the dialect. -#}
{% macro hx_digest(dialect, prefix, parts) -%}
  {%- set stream = hashexpr.hx_call(dialect, 'concat', [hashexpr.hx_call(dialect, 'literal', prefix)] + parts) -%}
  {{ return(hashexpr.hx_call(dialect, 'sha256', stream)) }}
{%- endmacro %}


{#- The jar's function on Spark: name_with('options', `col`, ...), as hashexpr.jar_sql.call writes it. -#}
{% macro hx_native_call(function, items, cols) -%}
  {%- set args = [] -%}
  {%- for c in cols -%}{%- do args.append(c.sql) -%}{%- endfor -%}
  {{ return(function ~ '_with(' ~ hashexpr.hx_spark_string_literal(items | join('; ')) ~ ', ' ~ args | join(', ') ~ ')') }}
{%- endmacro %}


{#- The generated macro hx_<dialect>_<what>, called with the arguments given. -#}
{% macro hx_call(dialect, what, a=none, b=none, c=none, d=none) -%}
  {%- set m = context['hashexpr']['hx_' ~ dialect ~ '_' ~ what] -%}
  {%- if what in ('literal', 'concat', 'sha256', 'is_null', 'quote', 'string_literal') -%}{{ return(m(a)) }}
  {%- elif what in ('value', 'key_string', 'key_string_is_null') -%}{{ return(m(a, b, c)) }}
  {%- else -%}{{ return(m(a, b, c, d)) }}
  {%- endif -%}
{%- endmacro %}


{#- How hashexpr.sql names a column in its messages: "record_key: column 'name'". -#}
{% macro hx_where(function, name) -%}
  {{ return(function ~ ': column ' ~ ('%r' % name)) }}
{%- endmacro %}


{#- u32(n) of format v1: 4 bytes, little-endian, in hex. -#}
{% macro hx_u32(n) -%}
  {{ return('%02x%02x%02x%02x' % (n % 256, (n // 256) % 256, (n // 65536) % 256, (n // 16777216) % 256)) }}
{%- endmacro %}


{#-
  The dialect of the target: postgres, duckdb, spark, or native (Spark with hashexpr's jar); the variable
  hashexpr_dialect chooses one for SQL that runs elsewhere.
-#}
{% macro hx_dialect(function) -%}
  {%- set chosen = var('hashexpr_dialect', none) -%}
  {%- if chosen is not none -%}
    {%- if chosen in ('postgres', 'duckdb', 'spark', 'native') -%}{{ return(chosen) }}{%- endif -%}
    {{ exceptions.raise_compiler_error('hashexpr.' ~ function ~ ': hashexpr_dialect must be postgres, duckdb, '
       ~ 'spark or native, got ' ~ ('%r' % chosen)) }}
  {%- endif -%}
  {%- if target.type in ('postgres', 'duckdb') -%}{{ return(target.type) }}
  {%- elif target.type == 'spark' -%}{{ return('native' if var('hashexpr_spark_native', true) else 'spark') }}
  {%- elif target.type == 'databricks' -%}{{ return('native' if var('hashexpr_spark_native', false) else 'spark') }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error('hashexpr.' ~ function ~ ': no SQL for the ' ~ target.type ~ ' adapter; '
     ~ 'hashexpr writes it for postgres, duckdb, spark and databricks, or for the engine that '
     ~ 'vars: {hashexpr_dialect: ...} names (docs/SQL.md lists what other engines need)') }}
{%- endmacro %}


{% macro hx_check_key_options(salt, trim, case, empty_as_null, null_key) -%}
  {%- set blanks = modules.re.compile('^[\\x00-\\x20]|[\\x00-\\x20]$') -%}
  {%- if salt is not string or ';' in salt or blanks.search(salt) -%}
    {{ exceptions.raise_compiler_error('hashexpr.record_key: salt must be text without \';\' that neither starts '
       ~ 'nor ends with whitespace or control characters, got ' ~ ('%r' % salt)) }}
  {%- endif -%}
  {%- if case not in (none, 'upper', 'lower') -%}
    {{ exceptions.raise_compiler_error("hashexpr.record_key: case must be 'upper', 'lower' or none, got " ~ ('%r' % case)) }}
  {%- endif -%}
  {%- if null_key not in ('hash', 'null', 'error') -%}
    {{ exceptions.raise_compiler_error("hashexpr.record_key: null_key must be 'hash', 'null' or 'error', got " ~ ('%r' % null_key)) }}
  {%- endif -%}
  {%- if trim not in (true, false) or empty_as_null not in (true, false) -%}
    {{ exceptions.raise_compiler_error('hashexpr.record_key: trim and empty_as_null are true or false') }}
  {%- endif -%}
{%- endmacro %}
