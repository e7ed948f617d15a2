"""The session log's documents: canonical JSON, read back the same through every store's API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from praxo_actors import CheckpointError
from praxo_actors.core import encode_json, parse_json
from praxo_actors.core._log_docs import dump_record
from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.memory._base import StoreBase
from praxo_actors.memory._log import Commit, JournalAppend, PendingRun, SessionLog
from praxo_actors.models import Message, message_assistant, message_user

NAMESPACES = ["heads", "records", "results", "pending", "journal"]


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreBase]:
    """An in-memory store or a SQLite one, closed after the test."""
    made: StoreBase = (
        InMemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "log.db")
    )
    with made:
        yield made


def test_a_commit_writes_canonical_json_that_the_public_api_reads_back(store: StoreBase) -> None:
    """Record, result, head, pending run and journal entry are stored as canonical JSON text,
    quotes, backslashes, control and non-ASCII characters included."""
    tricky = 'a "quoted" \\ back\\slash, a tab\t, a NUL-free ünïcode ✓ and </script>'
    record = dump_record("s", 1, "r1", [message_user(tricky), message_assistant("ok")])
    result = encode_json({"output": tricky, "run_id": "r1"})
    log = SessionLog(store)
    pending = PendingRun("r2", "default", tricky, entries=1)
    commit = Commit("s", 0, "r1", record, result=result, agent=tricky)
    assert log.write([commit], [JournalAppend("s", pending, tricky)]) == [True]
    for name in NAMESPACES:
        items = store.search(("praxo", name))
        assert items, name
        for item in items:
            # Canonical: what the public API would have written for the same value.
            [text] = store._read_texts(("praxo", name), [item.key])
            assert text == encode_json(item.value)
    # A record and a result are stored as the documents the session built, byte for byte.
    assert store._read_texts(("praxo", "records"), ["s#1"]) == [record]
    assert store._read_texts(("praxo", "results"), ["s#0"]) == [result]
    assert store.get(("praxo", "records"), "s#1").value == parse_json(record)  # type: ignore[union-attr]
    head = {"version": 1, "base": 0, "results": 1, "agent": tricky}
    assert store.get(("praxo", "heads"), "s").value == head  # type: ignore[union-attr]
    [state] = log.load(["s"])
    assert state is not None and state.records == [record] and state.journal == [tricky]


def test_read_texts_answers_none_for_missing_keys_and_namespaces(store: StoreBase) -> None:
    """A key or a namespace with nothing stored reads as None, in the order asked."""
    store.put(("a",), "k", {"v": 1})
    assert store._read_texts(("a",), ["x", "k", "y"]) == [None, '{"v":1}', None]
    assert store._read_texts(("a",), ["k"]) == ['{"v":1}']
    assert store._read_texts(("a",), ["x"]) == [None]
    assert store._read_texts(("none",), ["k", "k"]) == [None, None]


def test_read_texts_reads_more_keys_than_one_statement_takes(store: StoreBase) -> None:
    """Two thousand keys, half of them stored, read back in the order asked."""
    store.put_many((("b",), f"k{i}", {"i": i}) for i in range(0, 2000, 2))
    keys = [f"k{i}" for i in reversed(range(2000))]
    expected = [None if i % 2 else f'{{"i":{i}}}' for i in reversed(range(2000))]
    assert store._read_texts(("b",), keys) == expected


def test_a_plain_message_is_written_as_the_full_document() -> None:
    """A plain text message's record holds every field of the message document."""
    record = dump_record("s", 1, "r1", [message_user("hi")])
    doc = parse_json(record)
    assert doc["messages"] == [
        {
            "type": "message",
            "role": "user",
            "content": "hi",
            "tool_calls": [],
            "tool_call_id": None,
            "name": None,
        }
    ]


def test_a_message_with_a_call_id_or_a_name_keeps_them() -> None:
    """A tool result's call id and name are written (not the plain message's nulls)."""
    message = Message("tool", "4", tool_call_id="c1", name="add")
    [doc] = parse_json(dump_record("s", 1, "r1", [message]))["messages"]
    assert doc["tool_call_id"] == "c1" and doc["name"] == "add" and doc["content"] == "4"


@pytest.mark.parametrize(
    "message",
    [
        Message("robot", "x"),  # type: ignore[arg-type]
        Message("user", "x", tool_calls=()),  # type: ignore[arg-type]
        Message("user", "x", name=3),  # type: ignore[arg-type]
        Message(["user"], "x"),  # type: ignore[arg-type]
    ],
)
def test_a_malformed_message_is_refused_with_a_code(message: Message) -> None:
    """A message built around the type hints (msgspec does not check them on init) is refused
    with CHECKPOINT_INVALID, not written."""
    with pytest.raises(CheckpointError) as info:
        dump_record("s", 1, "r1", [message])
    assert info.value.code == "CHECKPOINT_INVALID"
