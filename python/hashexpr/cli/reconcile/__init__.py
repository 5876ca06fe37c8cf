"""``hashexpr reconcile``'s parts: the sides as written, a configuration of many tables, and the report."""
