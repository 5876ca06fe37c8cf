"""Session settings for a block of a test: set on entry, restored (or unset) on exit."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

#: The optimizer rules that evaluate constant expressions and local relations on the driver; excluded, a
#: projection runs in the execution mode under test.
FOLDING_RULES = ",".join(
    "org.apache.spark.sql.catalyst.optimizer." + rule
    for rule in ("ConstantFolding", "ConvertToLocalRelation", "FoldablePropagation")
)


@contextlib.contextmanager
def spark_conf(spark, confs: Mapping[str, str]) -> Iterator[None]:
    """Run the block with ``confs`` set on ``spark``, restoring the previous values afterwards."""
    previous = {key: spark.conf.get(key, None) for key in confs}
    try:
        for key, value in confs.items():
            spark.conf.set(key, value)
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
