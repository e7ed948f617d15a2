"""Ways to damage a store's SQLite file, for the tests of what opening and using it does."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

from praxo_actors.memory import SQLiteStore

PAGE = 4096
"""SQLite's default page size, which the files here are written with."""


def sound_file(path: Path, documents: int = 3000) -> int:
    """Write a store of ``documents`` documents (~1 MB) to ``path``; return its size."""
    with SQLiteStore(path) as store:
        store.put_many(
            [((("n", str(i % 7)), f"k{i}", {"v": "x" * 200, "i": i})) for i in range(documents)]
        )
    assert not Path(f"{path}-wal").exists()  # closed: every page is in the file itself
    return path.stat().st_size


def _truncated(path: Path, size: int) -> None:
    with path.open("r+b") as fh:
        fh.truncate(size // 2)


def _truncated_by_a_page(path: Path, size: int) -> None:
    with path.open("r+b") as fh:
        fh.truncate(size - PAGE)


def garbage_pages(path: Path, size: int) -> None:
    with path.open("r+b") as fh:  # the header and the schema page stay sound
        fh.seek(3 * PAGE)
        fh.write(random.Random(1).randbytes(5 * PAGE))


def _zeroed_header(path: Path, size: int) -> None:
    with path.open("r+b") as fh:
        fh.write(b"\0" * 100)


def _random_bytes(path: Path, size: int) -> None:
    path.write_bytes(random.Random(2).randbytes(size))


def _text(path: Path, size: int) -> None:
    path.write_bytes(b"not a database\n" * 1000)


def _foreign_table(path: Path, size: int) -> None:
    """A sound SQLite file at the store's schema version, without the store's table."""
    path.unlink()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE other (x)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


DAMAGE: dict[str, Callable[[Path, int], None]] = {
    "truncated": _truncated,
    "truncated by a page": _truncated_by_a_page,
    "garbage pages": garbage_pages,
    "zeroed header": _zeroed_header,
    "random bytes": _random_bytes,
    "text": _text,
    "foreign table": _foreign_table,
}


def damage_live(path: Path) -> None:
    """Overwrite a store file in use — its pages after the header, its log and its index —
    with garbage, so that its connection finds the index changed and reads the garbage."""
    rnd = random.Random(3)
    for part, start in ((path, 100), (Path(f"{path}-wal"), 0), (Path(f"{path}-shm"), 0)):
        size = part.stat().st_size
        with part.open("r+b") as fh:
            fh.seek(start)
            fh.write(rnd.randbytes(size - start))
