"""Fingerprints of Delta Lake tables kept up to date from their change data feed (``docs/FINGERPRINTS.md``)."""

from __future__ import annotations

from hashexpr.spark.delta.fingerprint import DeltaFingerprint, delta_fingerprint, delta_state

__all__ = ["DeltaFingerprint", "delta_fingerprint", "delta_state"]
