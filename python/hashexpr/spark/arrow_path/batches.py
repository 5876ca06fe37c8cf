"""The size of the Arrow batches Spark sends hashexpr's own jobs.

Since Spark 4, the JVM checks an Arrow batch's byte size against ``spark.sql.execution.arrow.maxBytesPerBatch``
after every row it writes, unless the cap is ``Int.MaxValue``; for ``mapInArrow``, whose rows travel as one
struct, that check costs more than writing the row (measured in ``make bench --only nojar``: a pass over 5
million rows of ten columns took 6.0 s with it and 1.6 s without). Batches stay capped at
``spark.sql.execution.arrow.maxRecordsPerBatch`` rows either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

MAX_BYTES = "spark.sql.execution.arrow.maxBytesPerBatch"
#: The value for which Spark skips the check (``Int.MaxValue``).
UNCHECKED = str(2**31 - 1)


@contextmanager
def unchecked_batch_bytes(spark: SparkSession) -> Iterator[None]:
    """Around an action hashexpr runs itself: batches capped by rows alone, unless the session sets the byte cap
    (then it is left as set), and the session's conf as it was afterwards."""
    lifted = False
    try:
        if spark.conf.get(MAX_BYTES, None) is None:
            spark.conf.set(MAX_BYTES, UNCHECKED)
            lifted = True
    except PySparkException:  # a runtime that refuses the setting (some serverless ones) keeps its own
        pass
    try:
        yield
    finally:
        if lifted:
            spark.conf.unset(MAX_BYTES)
