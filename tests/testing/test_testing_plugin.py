"""The pytest plugin provides stores, a recorder and a model factory that checks leftovers."""

from __future__ import annotations

import pytest

from praxo_actors.memory import InMemoryStore, SQLiteStore
from praxo_actors.testing import EventRecorder, ScriptedModel

pytest_plugins = ["pytester"]


def test_memory_store_fixture_is_an_empty_in_memory_store(memory_store: InMemoryStore) -> None:
    """``memory_store`` is a fresh InMemoryStore."""
    assert isinstance(memory_store, InMemoryStore)
    assert memory_store.list_namespaces() == []


def test_sqlite_store_fixture_is_a_file_store_under_tmp_path(
    sqlite_store: SQLiteStore, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``sqlite_store`` is a SQLiteStore on a file in the test's temporary directory."""
    assert isinstance(sqlite_store, SQLiteStore)
    assert sqlite_store.path.endswith("memory.sqlite3")
    assert sqlite_store.path.startswith(str(tmp_path_factory.getbasetemp()))
    sqlite_store.put(("a",), "k", {})
    assert sqlite_store.get(("a",), "k") is not None


def test_event_recorder_fixture_records(event_recorder: EventRecorder) -> None:
    """``event_recorder`` is an empty EventRecorder."""
    assert isinstance(event_recorder, EventRecorder)
    assert event_recorder.types() == []


def test_scripted_model_factory_builds_scripted_models(scripted_model_factory: object) -> None:
    """The factory returns a ScriptedModel over the given script."""
    model = scripted_model_factory(["x"], strict=False)  # type: ignore[operator]
    assert isinstance(model, ScriptedModel)
    assert model.remaining == 1


INNER_TESTS = """
from praxo_actors.models import Request, message_user

REQUEST = Request(messages=[message_user("hi")], tools=[], run_id="r", session_id="s", step=0)

def test_uses_everything(scripted_model_factory):
    model = scripted_model_factory(["a", "b"])
    model(REQUEST)
    model(REQUEST)

def test_leaves_a_reply(scripted_model_factory):
    scripted_model_factory(["a", "b"])(REQUEST)

def test_leaves_a_reply_but_not_strict(scripted_model_factory):
    scripted_model_factory(["a", "b"], strict=False)(REQUEST)

def test_fails_itself(scripted_model_factory):
    scripted_model_factory(["a"])
    assert False, "own failure"

def test_sqlite_store_is_closed_after(sqlite_store):
    global LAST
    LAST = sqlite_store

def test_after(sqlite_store):
    import pytest
    with pytest.raises(ValueError, match="closed"):
        LAST.get(("a",), "k")
"""


def test_the_factory_fails_a_test_that_leaves_replies_unused(pytester: pytest.Pytester) -> None:
    """A strict model with replies left errors at teardown, unless the test already failed."""
    pytester.makepyfile(test_inner=INNER_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, failed=1, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_leaves_a_reply*"])
    assert "scripted models left replies unused: [1]" in result.stdout.str()
    assert "test_fails_itself - AssertionError: own failure" in result.stdout.str()
    assert "ERROR at teardown of test_fails_itself" not in result.stdout.str()
