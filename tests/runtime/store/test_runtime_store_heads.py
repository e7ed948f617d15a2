"""A warm run's commit reads no head back: the runtime's store writer keeps the heads it wrote."""

from __future__ import annotations

from collections.abc import Callable

from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._base import Namespace
from praxo_actors.memory._log import HEADS
from praxo_actors.runtime import Runtime


class _Counting(InMemoryStore):
    """An in-memory store that counts the log's reads of heads."""

    def __init__(self) -> None:
        super().__init__()
        self.head_reads = 0

    def _read_texts(self, namespace: Namespace, keys: list[str]) -> list[str | None]:
        if namespace == HEADS:
            self.head_reads += 1
        return super()._read_texts(namespace, keys)


def test_warm_runs_read_no_head(runtime: Callable[..., Runtime]) -> None:
    """After a session's first run, its runs commit without reading its head; what they
    wrote is the log a restore reads."""
    store = _Counting()
    rt = runtime(agents={"default": echo_agent}, store=store)
    handle = rt.session("s")
    assert handle.run("one").get(timeout=TIMEOUT).output == "one"
    before = store.head_reads
    for n in range(5):
        assert handle.run(f"m{n}").get(timeout=TIMEOUT).output == f"m{n}"
    assert store.head_reads == before
    head = store.get(HEADS, "s")
    assert head is not None and head.value["version"] == 6 and head.value["results"] == 6
