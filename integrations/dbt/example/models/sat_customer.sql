-- The customer's attributes, with a hash diff of them all: a changed row has another hash diff.
select
    {{ hashexpr.record_key(['customer_code'], relation=ref('raw_customers'), salt='customer', trim=true, case='upper') }} as hk_customer,
    {{ hashexpr.record_hash(['name', 'email', 'country', 'balance', 'score', 'visits', 'signed_up', 'updated_at', 'active'], relation=ref('raw_customers')) }} as hash_diff,
    customer_code,
    name,
    email,
    country,
    balance,
    score,
    visits,
    signed_up,
    updated_at,
    active
from {{ ref('raw_customers') }}
