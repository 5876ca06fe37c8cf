{#- Written by `python -m hashexpr.sql.jinja` (make dbt-macros) from hashexpr.sql. Do not edit. -#}
{% macro hx_constants() -%}
{{ return({'record': '01', 'key': '8205', 'every_part': " AND ", 'narrow_decimal_digits': 18}) }}
{%- endmacro %}
