"""A damaged or foreign SQLite file is refused with a code; no sqlite3 error reaches a caller."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _damage import DAMAGE, damage_live, garbage_pages, sound_file

from praxo_actors import PraxoError
from praxo_actors.agent import ToolError
from praxo_actors.memory import SQLiteStore, memory_tools


def _code(call: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    with pytest.raises(PraxoError) as info:
        call(*args, **kwargs)
    return info.value.code


@pytest.fixture(params=list(DAMAGE))
def damaged(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A store file damaged one way (the parameter names it)."""
    path = tmp_path / "m.sqlite3"
    DAMAGE[request.param](path, sound_file(path))
    return path


def test_opening_a_damaged_file_fails_store_corrupt(damaged: Path) -> None:
    """Truncated, garbage pages, a zeroed header, random bytes, text, a foreign schema: the
    store refuses to open with ``STORE_CORRUPT``, every time."""
    for _ in range(2):
        with pytest.raises(PraxoError) as info:
            SQLiteStore(damaged)
        assert info.value.code == "STORE_CORRUPT"
        assert str(damaged) in info.value.message


def test_a_sound_file_opens_and_keeps_every_document(tmp_path: Path) -> None:
    """The check at open passes a sound file (and an empty one, a new database)."""
    path = tmp_path / "m.sqlite3"
    sound_file(path)
    with SQLiteStore(path) as store:
        assert len(store.search(("n",), limit=5000)) == 3000
    empty = tmp_path / "empty.sqlite3"
    empty.write_bytes(b"")
    with SQLiteStore(empty) as store:
        assert store.search(("n",)) == []


def test_without_verify_a_damaged_page_fails_the_call_that_reads_it(tmp_path: Path) -> None:
    """``verify=False`` opens a file whose header and schema are sound; the search that reaches
    the garbage pages fails ``STORE_FAILED``, and the store still answers other calls."""
    path = tmp_path / "m.sqlite3"
    garbage_pages(path, sound_file(path))
    with SQLiteStore(path, verify=False) as store:
        for _ in range(2):
            assert _code(store.search, ("n",), limit=5000) == "STORE_FAILED"
        with pytest.raises(PraxoError) as info:
            store.list_namespaces()
        assert "corrupt" in info.value.message
        assert _code(store.search, ("n",), query="x", limit=5000) == "STORE_FAILED"


def test_every_call_on_a_file_damaged_in_use_fails_store_failed(tmp_path: Path) -> None:
    """Damaged under an open store, each call fails ``STORE_FAILED`` (the memory tools return
    it as a tool error); closing works, and opening the file again fails ``STORE_CORRUPT``."""
    path = tmp_path / "m.sqlite3"
    store = SQLiteStore(path)
    for i in range(50):
        store.put(("n",), f"k{i}", {"v": "y" * 500})
    damage_live(path)
    calls: list[tuple[Any, ...]] = [
        (store.get, ("n",), "k3"),
        (store.get_many, ("n",), ["k3", "k4"]),
        (store.put, ("n",), "k3", {"v": 1}),
        (store.put_many, [(("n",), "k3", {"v": 1})]),
        (store.apply, [(("n",), "k3", {"v": 1})], [(("n",), "k4")]),
        (store.delete, ("n",), "k3"),
        (store.search, ("n",)),
        (store.search, ("n",), {"v": 1}),
        (store.list_namespaces,),
    ]
    for call, *args in calls:
        assert _code(call, *args) == "STORE_FAILED", call
    remember, recall, search = memory_tools(store, ("n",))
    for tool, args in (
        (remember, {"key": "k", "value": "v"}),
        (recall, {"key": "k3"}),
        (search, {"query": "y"}),
    ):
        answer = tool.handler(args)
        assert isinstance(answer, ToolError)
        assert answer.code == "STORE_FAILED"
    store.close()
    assert _code(SQLiteStore, path) == "STORE_CORRUPT"


def test_a_path_that_cannot_be_a_database_file_fails_store_failed(tmp_path: Path) -> None:
    """A directory, or a file below a regular file, cannot be opened: ``STORE_FAILED``."""
    assert _code(SQLiteStore, tmp_path) == "STORE_FAILED"
    (tmp_path / "plain").write_text("x")
    assert _code(SQLiteStore, tmp_path / "plain" / "m.sqlite3") == "STORE_FAILED"
