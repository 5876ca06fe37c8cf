-- One row per business key: the customer code, trimmed and upper-cased, under the salt 'customer'.
select distinct
    {{ hashexpr.record_key(['customer_code'], relation=ref('raw_customers'), salt='customer', trim=true, case='upper') }} as hk_customer,
    upper(trim(customer_code)) as customer_code,
    'raw_customers' as record_source
from {{ ref('raw_customers') }}
