"""``python -m hashexpr``: the ``hashexpr`` command line (see :mod:`hashexpr.cli`)."""

from __future__ import annotations

import sys

from hashexpr.cli import main

if __name__ == "__main__":
    sys.exit(main())
