"""Write to a SQLiteStore forever, printing each key once its ``put`` has returned.

Usage: ``python _durable_writer.py DATABASE``. Run by test_memory_durability, which kills it.
"""

from __future__ import annotations

import itertools
import sys

from praxo_actors.memory import SQLiteStore


def main(path: str) -> None:
    store = SQLiteStore(path)
    for n in itertools.count():
        key = f"k{n:06}"
        store.put(("durable",), key, {"n": n, "pad": "x" * 100})
        print(key, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
