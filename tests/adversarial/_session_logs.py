"""Real session logs to forge: written by a runtime with a ``checkpoint_key``, then stopped.

``write_logs()`` runs a few sessions with tools through a runtime on an ``InMemoryStore``:
short ones (records only), long ones (snapshots mid-log, records after them), ids that share a
prefix (``a``, ``a#1``) and durable sessions whose last run is cut off by the stop (a pending run
and its journal). It keeps every stored document after each run (the older generations a store
writer could put back) and each session's history at every version.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._log import HEADS, JOURNAL, PENDING, RECORDS, RESULTS, SNAPSHOTS
from praxo_actors.models import Message, Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime, read_session

__all__ = ["KEY", "NAMESPACES", "Logs", "agents", "load_store", "write_logs"]

KEY = b"k" * 32
TIMEOUT = 10.0
NAMESPACES = (HEADS, SNAPSHOTS, RECORDS, PENDING, JOURNAL, RESULTS)
PLAIN = {"s0": 3, "s1": 7, "a": 2, "a#1": 2}  # session -> committed runs
DURABLE = {"p0": 1, "p1": 2}  # committed runs before the one cut off

Docs = dict[tuple[tuple[str, ...], str], dict[str, Any]]


class Cut:
    """Whether the ``wait`` tool blocks (until cancelled), and a signal once it does."""

    def __init__(self, blocking: bool) -> None:
        self.blocking = blocking
        self.entered = threading.Semaphore(0)


def _model(request: Request) -> Response:
    last = request.messages[-1]
    if last.role == "user":
        text = str(last.content)
        calls = [ToolCall("lookup", {"q": text}, id="c1")]
        if text.startswith("wait"):
            calls.append(ToolCall("wait", {}, id="c2"))
        return Response(message_assistant("", calls))
    long = "x" * 900 if request.session_id.startswith("s1") else ""
    return Response(message_assistant(f"answer {request.step}: {last.content}{long}"))


def _lookup(args: dict[str, Any]) -> dict[str, Any]:
    return {"found": str(args.get("q"))[::-1], "n": len(str(args.get("q")))}


def agents(cut: Cut) -> dict[str, Any]:
    """The agents the logs were written with (``cut.blocking``: ``wait`` blocks until stopped)."""

    async def wait(_args: dict[str, Any]) -> str:
        if cut.blocking:
            cut.entered.release()
            await asyncio.sleep(TIMEOUT * 3)  # cancelled by the stop
        return "waited"

    def options() -> AgentOptions:
        tools = [Tool("lookup", "", {}, _lookup), Tool("wait", "", {}, wait)]
        return new_agent_options(_model, tools=tools)

    return {"plain": options, "durable": options}


def dump(store: InMemoryStore) -> Docs:
    """Every document of the session log, by (namespace, key)."""
    return {
        (ns, item.key): item.value for ns in NAMESPACES for item in store.search(ns, limit=100_000)
    }


def load_store(docs: Docs) -> InMemoryStore:
    store = InMemoryStore()
    store.put_many((ns, key, value) for (ns, key), value in docs.items())
    return store


@dataclass
class Logs:
    docs: Docs
    generations: list[Docs] = field(default_factory=list)  # the documents after each run
    states: dict[str, list[list[Message]]] = field(default_factory=dict)  # history by version
    pending: dict[str, str] = field(default_factory=dict)  # session -> run id cut off

    def history(self, session_id: str) -> list[Message]:
        return self.states[session_id][-1]


def write_logs() -> Logs:
    store = InMemoryStore()
    cut = Cut(blocking=False)
    logs = Logs(docs={})
    runtime = Runtime.start(store, checkpoint_key=KEY, idle_timeout=None, timeout=TIMEOUT)
    try:
        for name, factory in agents(cut).items():
            runtime.register_agent(name, factory, durable=name == "durable")
        plan = [(sid, "plain", n) for sid, n in PLAIN.items()]
        plan += [(sid, "durable", n) for sid, n in DURABLE.items()]
        for sid, agent, runs in plan:
            logs.states[sid] = [[]]
            for i in range(runs):
                runtime.session(sid, agent=agent).run(f"q{i} of {sid}").get(timeout=TIMEOUT)
                logs.states[sid].append(read_session(store, sid, key=KEY).messages)
                logs.generations.append(dump(store))
        cut.blocking = True
        for sid in DURABLE:
            future = runtime.session(sid, agent="durable").run(f"wait for {sid}")
            logs.pending[sid] = future.run_id
            assert cut.entered.acquire(timeout=TIMEOUT)
        for sid, agent, _ in plan:
            assert runtime.session(sid, agent=agent).history() == logs.history(sid)
    finally:
        runtime.stop()
    logs.docs = dump(store)
    store.close()
    return logs
