"""``python -m praxo_actors``: the ``praxo-actors`` command (see :mod:`praxo_actors.cli`)."""

from __future__ import annotations

import sys

from praxo_actors.cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m praxo_actors"))
