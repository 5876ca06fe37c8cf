"""hashexpr: deterministic record hashing for Apache Spark."""
