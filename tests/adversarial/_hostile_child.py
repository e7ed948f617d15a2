"""A process hosting a runtime whose callbacks misbehave in every way a user's can.

``python _hostile_child.py DB REPORT MODE``: MODE ``mixed`` runs 200 sessions, a third of them
hostile, and writes ``REPORT`` (JSON: each run's outcome, the threads left after ``stop()``);
``exit`` acknowledges runs, then a tool calls ``os._exit(3)``; ``stop`` has a tool stop the
runtime it runs in; ``check`` reopens DB and reports the histories.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from typing import Any

from praxo_actors import PraxoError
from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime


class Hostile(BaseException):
    """A BaseException subclass of the user's own."""


class Booby:
    """A value whose every comparison and rendering raises."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        raise RuntimeError("repr")

    __str__ = __repr__


RAISES: dict[str, BaseException] = {
    "keyboard_interrupt": KeyboardInterrupt(),
    "system_exit": SystemExit(2),
    "generator_exit": GeneratorExit(),
    "stop_iteration": StopIteration(),
    "stop_async_iteration": StopAsyncIteration(),
    "memory_error": MemoryError(),
    "recursion_error": RecursionError(),
    "base_exception": Hostile(),
}

RUNTIME: dict[str, Runtime] = {}


def _tool(kind: str) -> Any:
    """A tool that misbehaves as ``kind`` says."""

    def sync(_args: dict[str, Any]) -> Any:
        if kind.startswith("raise_"):
            raise RAISES[kind[6:]]
        if kind == "not_json":
            return {1, 2}
        if kind == "booby":
            return Booby()
        if kind == "huge":
            return "x" * 2_000_000
        if kind == "blocks":
            threading.Event().wait(1.0)  # longer than the run's deadline
            return "late"
        if kind == "waits_own_session":
            return RUNTIME["rt"].session("own-h").run("inner").get(timeout=1.0)
        if kind == "thread_raises":
            threading.Thread(target=lambda: 1 / 0, name="hostile-thread").start()
            return "started a thread that raised"
        if kind == "stops_runtime":
            RUNTIME["rt"].stop()
            return "stopped"
        if kind == "exits":
            os._exit(3)
        if kind == "closes_stdout":
            sys.stdout.close()
            return "closed"
        raise AssertionError(kind)

    async def aio(_args: dict[str, Any]) -> Any:
        if kind.startswith("araise_"):
            raise RAISES[kind[7:]]
        if kind == "never_ends":
            await asyncio.Event().wait()
        if kind == "blocking_get":
            return RUNTIME["rt"].session("other").run("x").get(timeout=1.0)
        raise AssertionError(kind)

    return aio if kind.startswith("araise_") or kind in ("never_ends", "blocking_get") else sync


def _agent(kind: str) -> Any:
    def model(request: Request) -> Response:
        last = request.messages[-1]
        if last.role == "user":
            return Response(message_assistant("", [ToolCall("act", {})]))
        return Response(message_assistant("done"))

    return lambda: new_agent_options(model, tools=[Tool("act", "", {}, _tool(kind))])


def _echo() -> Any:
    async def model(request: Request) -> Response:
        return Response(message_assistant(f"echo: {request.messages[-1].content}"))

    return new_agent_options(model)


KINDS = [
    *(f"raise_{name}" for name in RAISES),
    *(f"araise_{name}" for name in RAISES),
    "not_json",
    "booby",
    "huge",
    "blocks",
    "never_ends",
    "blocking_get",
    "waits_own_session",
    "thread_raises",
]


DEADLINED = frozenset({"blocks", "never_ends", "waits_own_session"})


def _outcome(future: Any) -> str:
    try:
        future.get(timeout=90)
    except PraxoError as exc:
        return f"code:{exc.code}"
    except BaseException as exc:  # the callback's own exception, as the docs promise
        return f"exc:{type(exc).__name__}"
    return "completed"


def main(db: str, report: str, mode: str) -> None:
    rt = RUNTIME["rt"] = Runtime.start(db, idle_timeout=None, timeout=10.0)
    rt.register_agent("default", _echo)
    out: dict[str, Any] = {}
    if mode == "check":
        out["histories"] = {
            f"ok{i}": [str(m.content) for m in rt.session(f"ok{i}").history()] for i in range(134)
        }
    elif mode == "mixed":
        for kind in KINDS:
            rt.register_agent(kind, _agent(kind))
        futures = []
        for i in range(200):
            if i % 3 == 2:
                kind = KINDS[(i // 3) % len(KINDS)]
                session = "own-h" if kind == "waits_own_session" else f"h{i}"
                # Only the kinds a deadline ends get a short one: on a busy machine a run that
                # raises may not even start within 0.3 s, and its own exception is what counts.
                deadline = 0.3 if kind in DEADLINED else 60.0
                futures.append((kind, rt.session(session, agent=kind).run("go", deadline=deadline)))
            else:
                futures.append(("ok", rt.session(f"ok{i - i // 3}").run(f"m{i}")))
        out["outcomes"] = [(kind, _outcome(f)) for kind, f in futures]
        # Still serving: the well-behaved sessions answer after all of that.
        out["after"] = _outcome(rt.session("ok0").run("after"))
    elif mode in ("exit", "stop"):
        kind = "exits" if mode == "exit" else "stops_runtime"
        rt.register_agent(kind, _agent(kind))
        out["acked"] = [_outcome(rt.session(f"ok{i}").run(f"m{i}")) for i in range(5)]
        with open(report, "w") as f:  # written before the tool may end the process
            json.dump(out, f)
        out["hostile"] = _outcome(rt.session("h", agent=kind).run("go"))
        out["after"] = _outcome(rt.session("ok0").run("after"))
    rt.stop()
    out["threads"] = sorted(
        t.name for t in threading.enumerate() if t is not threading.main_thread()
    )
    with open(report, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main(*sys.argv[1:4])
