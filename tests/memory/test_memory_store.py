"""Both memory store backends accept, refuse, order and copy documents alike."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from praxo_actors.memory import InMemoryStore, Item, MemoryStoreError, SQLiteStore, Store
from praxo_actors.memory._base import StoreBase

_SCHEMAS = itertools.count(1)


class Ticks:
    """A clock reading 1, 2, 3… nanoseconds, one tick per read."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def __call__(self) -> int:
        return next(self._counter)


@pytest.fixture(params=["inmemory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreBase]:
    """A fresh store of each backend with a ticking clock, closed after the test."""
    backend: StoreBase
    if request.param == "inmemory":
        backend = InMemoryStore(clock=Ticks())
    elif request.param == "sqlite":
        backend = SQLiteStore(tmp_path / "store.sqlite3", clock=Ticks())
    else:
        from praxo_actors.memory import PostgresStore

        dsn = request.getfixturevalue("postgres_dsn")
        backend = PostgresStore(dsn, schema=f"praxo_test_{next(_SCHEMAS)}", clock=Ticks())
    with backend:
        yield backend


def code_of(fn: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(MemoryStoreError) as info:
        fn(*args, **kwargs)
    return info.value.code


def test_backends_satisfy_the_store_protocol(store: StoreBase) -> None:
    """Each backend is a ``Store`` whose every protocol method answers as the protocol says."""
    assert isinstance(store, Store)
    protocol: Store = store
    protocol.put(("a", "b"), "k", {"v": 1})
    item = Item(("a", "b"), "k", {"v": 1}, 1, 1)
    assert protocol.get(("a", "b"), "k") == item
    assert protocol.search(("a",)) == [item]
    assert protocol.list_namespaces() == [("a", "b")]
    assert protocol.delete(("a", "b"), "k") is True
    assert protocol.get(("a", "b"), "k") is None
    protocol.close()
    with pytest.raises(ValueError, match="closed"):
        protocol.get(("a", "b"), "k")


def test_put_then_get_returns_the_item(store: StoreBase) -> None:
    """A stored value comes back with its namespace, key and clock stamps."""
    store.put(("users", "ada"), "profile", {"name": "Ada", "age": 36})
    assert store.get(("users", "ada"), "profile") == Item(
        ("users", "ada"), "profile", {"name": "Ada", "age": 36}, 1, 1
    )


def test_get_of_a_missing_key_is_none(store: StoreBase) -> None:
    """Reading an absent key or namespace returns None."""
    store.put(("a",), "k", {})
    assert store.get(("a",), "other") is None
    assert store.get(("b",), "k") is None


def test_update_keeps_created_ns(store: StoreBase) -> None:
    """Replacing a value keeps ``created_ns`` and advances ``updated_ns``."""
    store.put(("a",), "k", {"v": 1})
    store.put(("a",), "k", {"v": 2})
    item = store.get(("a",), "k")
    assert item is not None
    assert (item.value, item.created_ns, item.updated_ns) == ({"v": 2}, 1, 2)


def test_updated_ns_never_precedes_created_ns(tmp_path: Path) -> None:
    """A clock that goes backwards cannot make ``updated_ns`` smaller than ``created_ns``."""
    for store in (
        InMemoryStore(clock=iter([100, 50]).__next__),
        SQLiteStore(tmp_path / "s.sqlite3", clock=iter([100, 50]).__next__),
    ):
        with store:
            store.put(("a",), "k", {})
            store.put(("a",), "k", {"x": 1})
            item = store.get(("a",), "k")
            assert item is not None
            assert (item.created_ns, item.updated_ns) == (100, 100)


def test_delete_reports_whether_an_item_existed(store: StoreBase) -> None:
    """Deleting returns True once, then False, and the item is gone."""
    store.put(("a",), "k", {})
    assert store.delete(("a",), "k") is True
    assert store.delete(("a",), "k") is False
    assert store.get(("a",), "k") is None
    assert store.list_namespaces() == []


def test_values_are_copied_in_and_out(store: StoreBase) -> None:
    """Mutating the put argument or a returned value never changes the stored value."""
    value: dict[str, Any] = {"list": [1], "inner": {"x": 1}}
    store.put(("a",), "k", value)
    value["list"].append(2)
    value["inner"]["x"] = 99
    first = store.get(("a",), "k")
    assert first is not None
    first.value["list"].append(3)
    second = store.get(("a",), "k")
    assert second is not None
    assert second.value == {"list": [1], "inner": {"x": 1}}


def test_a_list_namespace_is_accepted_and_returned_as_a_tuple(store: StoreBase) -> None:
    """A namespace given as a list addresses the same item as the tuple."""
    store.put(["a", "b"], "k", {"v": 1})
    item = store.get(("a", "b"), "k")
    assert item is not None
    assert item.namespace == ("a", "b")


@pytest.mark.parametrize(
    "namespace", [(), [], "users", ("",), ("a", ""), ("a\x00b",), (1,), ("\ud800",), None]
)
def test_invalid_namespaces_are_refused(store: StoreBase, namespace: Any) -> None:
    """Every store method refuses a malformed namespace with MEMORY_INVALID_NAMESPACE."""
    assert code_of(store.put, namespace, "k", {}) == "MEMORY_INVALID_NAMESPACE"
    assert code_of(store.get, namespace, "k") == "MEMORY_INVALID_NAMESPACE"
    assert code_of(store.delete, namespace, "k") == "MEMORY_INVALID_NAMESPACE"


@pytest.mark.parametrize("prefix", ["a", ("",), ("a\x00",), (None,)])
def test_invalid_prefixes_are_refused(store: StoreBase, prefix: Any) -> None:
    """Search and list_namespaces refuse a malformed prefix (the empty prefix is fine)."""
    assert code_of(store.search, prefix) == "MEMORY_INVALID_NAMESPACE"
    assert code_of(store.list_namespaces, prefix) == "MEMORY_INVALID_NAMESPACE"


@pytest.mark.parametrize("key", ["", "a\x00", 1, None, ("k",), "\udfff"])
def test_invalid_keys_are_refused(store: StoreBase, key: Any) -> None:
    """Put, get and delete refuse a malformed key with MEMORY_INVALID_KEY."""
    assert code_of(store.put, ("a",), key, {}) == "MEMORY_INVALID_KEY"
    assert code_of(store.get, ("a",), key) == "MEMORY_INVALID_KEY"
    assert code_of(store.delete, ("a",), key) == "MEMORY_INVALID_KEY"


@pytest.mark.parametrize(
    "value",
    [
        [1, 2],
        "text",
        None,
        3,
        {"x": float("nan")},
        {"x": float("inf")},
        {1: "non-str key"},
        {"x": {1, 2}},
        {"x": b"bytes"},
        {"x": object()},
        {"x": "\ud800"},
    ],
)
def test_invalid_values_are_refused(store: StoreBase, value: Any) -> None:
    """A value that is not a JSON object is refused with MEMORY_INVALID_VALUE."""
    assert code_of(store.put, ("a",), "k", value) == "MEMORY_INVALID_VALUE"
    assert store.get(("a",), "k") is None


def test_refused_namespace_is_checked_before_key_and_value(store: StoreBase) -> None:
    """With several faults, the namespace is reported first, then the key."""
    assert code_of(store.put, (), "", []) == "MEMORY_INVALID_NAMESPACE"
    assert code_of(store.put, ("a",), "", []) == "MEMORY_INVALID_KEY"


def test_any_other_label_and_key_characters_are_fine(store: StoreBase) -> None:
    """Dots, slashes, wildcards, spaces and non-ASCII text are ordinary characters."""
    odd = ("a.b", "c/d", "%", "_", "é 🙂", "\\")
    store.put(odd, "k.%_/é", {"ok": True})
    assert store.get(odd, "k.%_/é") is not None
    assert store.list_namespaces() == [odd]


def test_large_integers_and_unicode_round_trip(store: StoreBase) -> None:
    """Integers beyond 64 bits and non-ASCII strings come back equal."""
    value = {"big": 10**30, "neg": -(10**25), "text": "Grüße ✓", "f": 0.1, "n": None}
    store.put(("a",), "k", value)
    item = store.get(("a",), "k")
    assert item is not None
    assert item.value == value


def fill(store: StoreBase, entries: list[tuple[tuple[str, ...], str]]) -> None:
    for namespace, key in entries:
        store.put(namespace, key, {"ns": list(namespace), "key": key})


def keys(items: list[Item]) -> list[tuple[tuple[str, ...], str]]:
    return [(item.namespace, item.key) for item in items]


def test_search_orders_by_namespace_then_key(store: StoreBase) -> None:
    """Results come in namespace order (a namespace before those below it), then key order."""
    fill(store, [(("b",), "1"), (("a", "b"), "2"), (("ab",), "0"), (("a",), "z"), (("a",), "Z")])
    assert keys(store.search((), limit=100)) == [
        (("a",), "Z"),
        (("a",), "z"),
        (("a", "b"), "2"),
        (("ab",), "0"),
        (("b",), "1"),
    ]


def test_search_prefix_matches_whole_labels_only(store: StoreBase) -> None:
    """A prefix selects its own namespace and those below it, never a longer label."""
    fill(store, [(("a",), "k"), (("a", "x"), "k"), (("ab",), "k"), (("b", "a"), "k")])
    assert keys(store.search(("a",))) == [(("a",), "k"), (("a", "x"), "k")]
    assert keys(store.search(("a", "x"))) == [(("a", "x"), "k")]
    assert store.search(("a", "x", "y")) == []


@pytest.mark.parametrize("label", ["%", "_", "/", "a%", "a_", "[a]", "*", "?", "'", '"', "\\"])
def test_search_prefix_treats_wildcards_literally(store: StoreBase, label: str) -> None:
    """Labels with LIKE and glob wildcards select only themselves."""
    fill(store, [((label,), "k"), (("x" + label,), "k"), (("ab",), "k"), (("a", "b"), "k")])
    assert keys(store.search((label,))) == [((label,), "k")]


def test_search_prefix_with_the_highest_code_point(store: StoreBase) -> None:
    """Labels ending in the highest code point still bound a prefix range correctly."""
    top = "\U0010ffff"
    fill(store, [((top,), "k"), ((top, top), "k"), ((top + top,), "k"), (("a",), "k")])
    assert keys(store.search((top,))) == [((top,), "k"), ((top, top), "k")]


def test_search_filter_uses_json_equality(store: StoreBase) -> None:
    """Filters compare top-level values as JSON: booleans are not numbers, 1 equals 1.0."""
    store.put(("a",), "one", {"n": 1, "tag": "x"})
    store.put(("a",), "true", {"n": True, "tag": "x"})
    store.put(("a",), "float", {"n": 1.0, "tag": "y"})
    store.put(("a",), "nested", {"n": [1, {"b": True}], "tag": "x"})
    assert [i.key for i in store.search(("a",), filter={"n": 1})] == ["float", "one"]
    assert [i.key for i in store.search(("a",), filter={"n": True})] == ["true"]
    assert [i.key for i in store.search(("a",), filter={"n": 1, "tag": "x"})] == ["one"]
    assert [i.key for i in store.search(("a",), filter={"n": [1.0, {"b": True}]})] == ["nested"]
    assert store.search(("a",), filter={"n": [1, {"b": 1}]}) == []
    assert store.search(("a",), filter={"missing": None}) == []


def test_search_filter_none_matches_only_null(store: StoreBase) -> None:
    """A null filter value matches a present null, not an absent key or a false value."""
    store.put(("a",), "null", {"v": None})
    store.put(("a",), "false", {"v": False})
    store.put(("a",), "absent", {})
    assert [i.key for i in store.search(("a",), filter={"v": None})] == ["null"]


def test_search_empty_filter_and_empty_query_match_everything(store: StoreBase) -> None:
    """An empty filter and an empty query restrict nothing."""
    fill(store, [(("a",), "1"), (("a",), "2")])
    assert len(store.search(("a",), filter={}, query="")) == 2


def test_search_query_is_a_case_insensitive_substring_of_the_json(store: StoreBase) -> None:
    """The query matches the canonical JSON text, keys included, ignoring case."""
    store.put(("a",), "1", {"note": "Buy MILK", "n": 1})
    store.put(("a",), "2", {"note": "Straße"})
    store.put(("a",), "3", {"Milkman": True})
    assert [i.key for i in store.search(("a",), query="milk")] == ["1", "3"]
    assert [i.key for i in store.search(("a",), query='"n":1')] == ["1"]
    assert [i.key for i in store.search(("a",), query="STRASSE")] == ["2"]
    assert store.search(("a",), query="eggs") == []


def test_search_pages_with_limit_and_offset(store: StoreBase) -> None:
    """Offset skips matches and limit bounds the page, with or without a predicate."""
    fill(store, [(("a",), str(i)) for i in range(7)])
    assert [i.key for i in store.search(("a",), limit=3, offset=2)] == ["2", "3", "4"]
    assert [i.key for i in store.search(("a",), query="a", limit=2, offset=4)] == ["4", "5"]
    assert [i.key for i in store.search(("a",), query="a", limit=5, offset=5)] == ["5", "6"]
    assert store.search(("a",), limit=0) == []
    assert store.search(("a",), offset=7) == []
    assert len(store.search(("a",))) == 7


def test_search_default_limit_is_ten(store: StoreBase) -> None:
    """Without a limit, at most ten items come back."""
    fill(store, [(("a",), f"{i:02}") for i in range(12)])
    assert len(store.search(("a",))) == 10


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"limit": -1}, ValueError),
        ({"offset": -1}, ValueError),
        ({"limit": 1.0}, TypeError),
        ({"limit": True}, TypeError),
        ({"offset": "1"}, TypeError),
        ({"query": 1}, TypeError),
    ],
)
def test_search_refuses_bad_paging_and_query_arguments(
    store: StoreBase, kwargs: dict[str, Any], error: type[Exception]
) -> None:
    """Negative or non-int paging and a non-str query raise ValueError or TypeError."""
    with pytest.raises(error):
        store.search((), **kwargs)


@pytest.mark.parametrize("bad_filter", [[1], "x", {"x": float("nan")}, {2: 1}])
def test_search_refuses_a_filter_that_is_not_a_json_object(
    store: StoreBase, bad_filter: Any
) -> None:
    """A filter must be a JSON object, like a value."""
    assert code_of(store.search, (), filter=bad_filter) == "MEMORY_INVALID_VALUE"


def test_list_namespaces_is_sorted_distinct_and_prefixed(store: StoreBase) -> None:
    """Namespaces with items are listed once each, sorted, below the prefix."""
    fill(
        store,
        [(("b",), "1"), (("a", "x"), "1"), (("a", "x"), "2"), (("a",), "1"), (("ab",), "1")],
    )
    assert store.list_namespaces() == [("a",), ("a", "x"), ("ab",), ("b",)]
    assert store.list_namespaces(("a",)) == [("a",), ("a", "x")]
    assert store.list_namespaces(["a", "x"]) == [("a", "x")]
    assert store.list_namespaces(("zz",)) == []


def test_list_namespaces_truncates_to_max_depth(store: StoreBase) -> None:
    """``max_depth`` cuts each namespace and removes the duplicates that makes."""
    fill(store, [(("a", "x", "1"), "k"), (("a", "x", "2"), "k"), (("a", "y"), "k"), (("b",), "k")])
    assert store.list_namespaces(max_depth=1) == [("a",), ("b",)]
    assert store.list_namespaces(max_depth=2) == [("a", "x"), ("a", "y"), ("b",)]
    assert store.list_namespaces(("a",), max_depth=2) == [("a", "x"), ("a", "y")]


@pytest.mark.parametrize(("depth", "error"), [(0, ValueError), (-1, ValueError), ("2", TypeError)])
def test_list_namespaces_refuses_a_bad_max_depth(
    store: StoreBase, depth: Any, error: type[Exception]
) -> None:
    """``max_depth`` must be a positive int."""
    with pytest.raises(error):
        store.list_namespaces(max_depth=depth)


def test_a_closed_store_refuses_calls(store: StoreBase) -> None:
    """After close, every operation raises ValueError; closing again is harmless."""
    store.put(("a",), "k", {})
    store.close()
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.get(("a",), "k")
    with pytest.raises(ValueError, match="closed"):
        store.put(("a",), "k", {})
    with pytest.raises(ValueError, match="closed"):
        store.search(())


def test_concurrent_writers_lose_nothing(store: StoreBase) -> None:
    """Threads writing and reading one store at once leave every write readable."""
    barrier = threading.Barrier(4, timeout=10)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            barrier.wait()
            for i in range(50):
                store.put(("w", str(worker)), str(i), {"i": i})
                assert store.get(("w", str(worker)), str(i)) is not None
                store.search(("w",), query=str(i), limit=3)
        except BaseException as exc:  # reported to the test thread below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert len(store.search(("w",), limit=1000)) == 200
    assert store.list_namespaces(("w",)) == [("w", str(n)) for n in range(4)]


def test_get_many_returns_one_item_or_none_per_key_in_order(store: StoreBase) -> None:
    """get_many reads many keys at once: each key's item, or None, in the keys' order."""
    keys = [f"k{i}" for i in range(1000)]
    store.put_many([(("ns",), key, {"n": i}) for i, key in enumerate(keys) if i % 3])
    found = store.get_many(("ns",), ["missing", *keys, "k1"])
    assert found[0] is None
    assert [None if item is None else item.value["n"] for item in found[1:-1]] == [
        None if i % 3 == 0 else i for i in range(1000)
    ]
    assert found[-1] is not None and found[-1].key == "k1"
    assert store.get_many(("ns",), []) == []
    assert code_of(store.get_many, ("ns",), ["ok", ""]) == "MEMORY_INVALID_KEY"
