"""The in-memory store's packed rows answer every read as the SQLite store does."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._base import StoreBase


class Ticks:
    """A clock reading 1, 2, 3… nanoseconds, one tick per read."""

    def __init__(self, start: int = 1) -> None:
        self._counter = itertools.count(start)

    def __call__(self) -> int:
        return next(self._counter)


def _everything(store: StoreBase) -> list[tuple[object, ...]]:
    found = store.search((), limit=10_000)
    return [(i.namespace, i.key, i.value, i.created_ns, i.updated_ns) for i in found]


def test_many_commits_read_back_as_in_sqlite(tmp_path: Path) -> None:
    """After 400 random puts, batches and deletes, every read matches SQLite's answer."""
    rng = random.Random(7)
    memory, sqlite = InMemoryStore(clock=Ticks()), SQLiteStore(tmp_path / "s.db", clock=Ticks())
    namespaces = [("praxo", "records"), ("praxo", "heads"), ("app", "ü")]
    keys = [f"s{i}#{j}" for i in range(6) for j in range(3)]
    with memory, sqlite:
        for step in range(400):
            ns, key = rng.choice(namespaces), rng.choice(keys)
            value = {"step": step, "text": "é" * rng.randrange(4), "n": rng.randrange(2**62)}
            op = rng.randrange(4)
            if op == 0:
                assert memory.delete(ns, key) == sqlite.delete(ns, key)
            for store in (memory, sqlite) if op else ():
                if op == 1:
                    store.apply([(ns, key, value), (ns, key + "x", {})], [(ns, keys[0])])
                else:
                    store.put(ns, key, value)
            assert memory.get(ns, key) == sqlite.get(ns, key)
            assert memory.get_many(ns, keys) == sqlite.get_many(ns, keys)
        assert _everything(memory) == _everything(sqlite) != []
        assert memory.list_namespaces() == sqlite.list_namespaces()
        assert [i.key for i in memory.search(("praxo",), limit=5, offset=3)] == [
            i.key for i in sqlite.search(("praxo",), limit=5, offset=3)
        ]


@pytest.mark.parametrize("start", [2**63 - 1, 2**63 + 5, -(2**63) - 1, 0])
def test_stamps_of_any_size_round_trip(start: int) -> None:
    """A clock past 64 bits still gives back exact ``created_ns`` and ``updated_ns``."""
    with InMemoryStore(clock=Ticks(start)) as store:
        store.put(("a",), "k", {"v": "x\u2028y"})
        store.put(("a",), "k", {"v": 2})
        item = store.get(("a",), "k")
        assert item is not None
        assert (item.value, item.created_ns, item.updated_ns) == ({"v": 2}, start, start + 1)
        assert [i.created_ns for i in store.search(("a",))] == [start]


_LOG_LIKE = [
    # Values whose canonical text starts with each of the log's documents' first phrases, and
    # repeats its other phrases, control characters and escapes inside strings.
    {"record": '{"format":"praxo.record","messages":[{"content":"\\u0001","name":null}'},
    {"record": '{"format":"praxo.record","messages":[', "x": '","seq":' * 3 + "\x01\x1f"},
    {"result": '{"agent":"a","model_calls":1,"output":"\x02"}', "usage": '"usage":{}}"}'},
    {"base": 0, "results": 1, "version": 2, "more": ',"results":,"version":'},
    {"base": "\x03", "é": "😀", "q": '\\"'},
]


@pytest.mark.parametrize("value", _LOG_LIKE)
def test_documents_shaped_like_the_log_read_back_exactly(value: dict[str, object]) -> None:
    """A document that looks like the log's own (or holds control characters) reads back whole."""
    with InMemoryStore(clock=Ticks()) as store:
        store.put(("a",), "k", value)
        item = store.get(("a",), "k")
        assert item is not None and item.value == value
        assert [i.value for i in store.search(("a",), query=next(iter(value)))] == [value]


_RECORD_START = '{"record":"{\\"format\\":\\"praxo.record\\",\\"messages\\":['


@pytest.mark.parametrize(
    "text",
    [
        _RECORD_START + '\x01\\",\\"seq\\":1}"}',  # a raw control character among phrases
        _RECORD_START + '{\\"content\\":\\"' * 2 + "]}",
        "\x00" + _RECORD_START,
        "\x01" + _RECORD_START,
        "\x1f",
        "",
        '{"base":0,"results":1,"version":2}\x10',
    ],
)
def test_any_text_a_backend_is_given_reads_back_exactly(text: str) -> None:
    """Below the public API, any text (control characters too) comes back as it was written."""
    with InMemoryStore() as store:
        store._write(("a",), "k", text, 7)
        row = store._read(("a",), "k")
        assert row is not None and (row.text, row.created_ns, row.updated_ns) == (text, 7, 7)


def test_a_session_restored_from_the_in_memory_store_is_whole() -> None:
    """Runs, a passivation and more runs: the restored session holds every message in order."""
    from praxo_actors.agent import new_agent_options
    from praxo_actors.models import Request, Response, message_assistant
    from praxo_actors.runtime import Runtime

    async def echo(request: Request) -> Response:
        return Response(message_assistant(f"re: {request.messages[-1].content}"))

    inputs = ["x", 'quote " and \\ and \x01', "é 😀", '{"record":"{\\"format\\"'] * 2
    with Runtime.start(idle_timeout=None) as rt:
        rt.register_agent("echo", lambda: new_agent_options(echo))
        handle = rt.session("s", agent="echo")
        for i, text in enumerate(inputs):
            assert handle.run(text).get(timeout=10).output == f"re: {text}"
            if i % 3 == 1:
                assert handle.passivate(timeout=10) and not handle.live
        assert not handle.live  # the last run's session was passivated: history restores it
        history = [(m.role, m.content) for m in handle.history(timeout=10)]
    expected = [p for text in inputs for p in (("user", text), ("assistant", f"re: {text}"))]
    assert history == expected
