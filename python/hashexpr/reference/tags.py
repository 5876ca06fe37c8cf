"""The constant bytes of the format: seed, version, value tags, and the first bytes and labels of the streams.

The seed and the version are ``docs/FORMAT.md`` sections 1 and 3, the tags section 4; the first bytes and
labels are those of by-name records (section 6), business keys (section 9) and dataset fingerprints
(sections 5 and 11).
"""

from __future__ import annotations

SEED = 0x68617368
"""MurmurHash3 seed: the ASCII bytes ``hash`` (1751217000)."""

FORMAT_VERSION = 1
"""Version byte written at the start of every record."""

# Tags, docs/FORMAT.md section 4.
NULL = 0x00
BOOLEAN = 0x01
INTEGRAL = 0x02
FLOATING = 0x03
DECIMAL = 0x04
STRING = 0x05
BINARY = 0x06
DATE = 0x07
TIMESTAMP = 0x08
TIMESTAMP_NTZ = 0x09
DAY_TIME_INTERVAL = 0x0A
YEAR_MONTH_INTERVAL = 0x0B
CALENDAR_INTERVAL = 0x0C
COLLATED_STRING = 0x0D
ARRAY = 0x10
MAP = 0x11
STRUCT = 0x12

# By-name records, docs/FORMAT.md section 6: the first byte and the end of the field list.
BY_NAME_RECORD = 0x81
BY_NAME_END = 0x00

# Business keys, docs/FORMAT.md section 9: the first byte.
KEY_RECORD = 0x82

# Dataset fingerprints, docs/FORMAT.md section 5: the 20 ASCII bytes that start the digested stream.
FINGERPRINT_LABEL = b"hashexpr-fingerprint"
# docs/FORMAT.md, section 11: the secure fingerprint.
LTHASH_LANES = 1024
LTHASH_ELEMENT_LABEL = b"hashexpr-lthash16"
LTHASH_LABEL = b"hashexpr-fingerprint-lthash16"
