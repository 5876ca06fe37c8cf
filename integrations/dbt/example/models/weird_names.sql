-- Names that need quoting (a quote of each kind, a dot, a space, a backslash), with types given: no relation.
with src as (
    select customer_code as "Code ""A"".b'\", visits as "Visits" from {{ ref('raw_customers') }}
)
select
    {{ hashexpr.record_key([{'name': 'Code "A".b\'\\', 'type': 'string'}], trim=true, case='upper', null_key='null') }} as k,
    {{ hashexpr.record_hash([{'name': 'Code "A".b\'\\', 'type': 'string'}, {'name': 'Visits', 'type': 'int'}]) }} as h
from src
