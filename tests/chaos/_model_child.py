"""A process that hosts a durable, approval-gated agent on a SQLite store and obeys commands,
one JSON object a line on stdin, answering each with one JSON line on stdout (the driver of
``test_model_based.py``; it may be SIGKILLed at any moment between commands).

An input names its script by its first letter: ``p…`` answers at once, ``n…`` calls the tool
``note`` first, ``a…`` calls ``act``, which needs approval. A *held* input's first model call
waits until the driver releases it (so its session is busy and later runs queue behind it).
Every model and tool call appends ``model <input> <step> <generation>`` or ``tool <name>
<input> <attempt> <generation>`` to ``effects.log`` (fsynced) before it does anything else:
the driver reads it to find calls made twice. The generation counts the cuts a call in flight
may be repeated after: runtimes started on the store (``restart`` starts the next one in this
process) and sessions stopped.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import traceback
from typing import Any

import pykka
from _history import Run

from praxo_actors import PraxoError
from praxo_actors.agent import AgentOptions, Tool, new_agent_options, tool_context
from praxo_actors.memory import SQLiteStore
from praxo_actors.middleware import require_approval
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime

TIMEOUT = 30.0  # the runtime's own bound on each internal wait


class Holds:
    """The inputs whose first model call waits for the driver, and the calls waiting now."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inputs: dict[str, str] = {}  # input -> its session
        self.waiting: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Event]] = {}

    async def wait(self, input: str) -> None:
        event = asyncio.Event()
        with self.lock:
            if input not in self.inputs:
                return
            self.waiting[input] = (asyncio.get_running_loop(), event)
        await event.wait()

    def release(self, session_id: str | None) -> None:
        """Release every hold of ``session_id`` (None: of every session)."""
        with self.lock:
            inputs = [i for i, s in self.inputs.items() if session_id in (None, s)]
            for input in inputs:
                del self.inputs[input]
                loop, event = self.waiting.pop(input, (None, None))
                if loop is not None and event is not None and not loop.is_closed():
                    loop.call_soon_threadsafe(event.set)


class Child:
    """The runtime of this process, its agent and the commands it obeys."""

    def __init__(self, db: str, logs: str, generation: int) -> None:
        self.db = db
        self.generation = generation
        self.holds = Holds()
        self.effects = open(os.path.join(logs, "effects.log"), "a")  # noqa: SIM115
        self.lock = threading.Lock()  # callbacks run on several threads: one line at a time
        self.store = SQLiteStore(db, synchronous="NORMAL")  # survives a killed process
        self.rt = self._start()

    def _start(self) -> Runtime:
        rt = Runtime.start(self.store, idle_timeout=None, timeout=TIMEOUT, resume=True)
        rt.register_agent("default", self.agent, durable=True)
        return rt

    def log(self, line: str) -> None:
        with self.lock:
            os.write(self.effects.fileno(), f"{line} {self.generation}\n".encode())
            os.fsync(self.effects.fileno())

    async def model(self, request: Request) -> Response:
        input = next(str(m.content) for m in reversed(request.messages) if m.role == "user")
        self.log(f"model {input} {request.step}")
        if request.step == 1:
            await self.holds.wait(input)
            tool = {"n": "note", "a": "act"}.get(input[0])
            if tool is not None:
                return Response(message_assistant("", [ToolCall(tool, {"input": input})]))
        last = request.messages[-1]
        said = f" {last.content}" if last.role == "tool" else ""
        return Response(message_assistant(f"done {input}{said}"))

    def tool(self, name: str) -> Any:
        def handler(args: dict[str, Any]) -> str:
            context = tool_context()
            assert context is not None
            self.log(f"tool {name} {args['input']} {context.attempt}")
            return name

        return handler

    def agent(self) -> AgentOptions:
        tools = [
            Tool("note", "", {"type": "object"}, self.tool("note")),
            Tool("act", "", {"type": "object"}, self.tool("act")),
        ]
        return new_agent_options(self.model, tools=tools, approval=require_approval(["act"]))

    # -- commands ----------------------------------------------------------------------------

    def submit(self, session: str, input: str, hold: bool) -> dict[str, Any]:
        if hold:
            with self.holds.lock:
                self.holds.inputs[input] = session
        return {"run_id": self.rt.session(session).submit(input)}

    def run(self, session: str, input: str, bound: float) -> dict[str, Any]:
        future = self.rt.session(session).run(input)
        return {"run_id": future.run_id, **outcome(lambda: future.get(timeout=bound), input)}

    def resume(self, session: str, value: bool, bound: float, input: str | None) -> dict[str, Any]:
        future = self.rt.session(session).resume(value)
        got = outcome(lambda: future.get(timeout=bound), input)
        return {"run_id": future.run_id, **got}

    def results(self, runs: list[list[Any]]) -> dict[str, Any]:
        """Each run's outcome (``[session, run_id, input, wait]``: wait that long for it)."""
        out = {}
        for session, run_id, input, wait in runs:
            handle = self.rt.session(session)
            out[run_id] = outcome(lambda: handle.result(run_id, timeout=wait), input)  # noqa: B023
        return {"results": out}

    def histories(self, sessions: list[str]) -> dict[str, Any]:
        logs = {}
        for session in sessions:
            messages = self.rt.session(session).history(timeout=TIMEOUT)
            logs[session] = [[m.role, m.content] for m in messages]
        return {"histories": logs}

    def stop_session(self, session: str) -> dict[str, Any]:
        stopped = self.rt.session(session).stop(timeout=TIMEOUT)
        self.holds.release(session)  # a model call left waiting must not wait for ever
        self.generation += 1
        return {"stopped": stopped}

    def restart(self) -> dict[str, Any]:
        self.rt.stop()
        self.holds.release(None)
        self.generation += 1
        self.rt = self._start()
        return {}

    def release(self, session: str) -> dict[str, Any]:
        self.holds.release(session)
        return {}

    def close(self) -> dict[str, Any]:
        self.holds.release(None)
        self.rt.stop()
        self.store.close()
        return {}


def outcome(get: Any, input: str | None) -> dict[str, Any]:
    """How a run ended for its caller: a status (and output, interrupt, version) or a code."""
    try:
        result = get()
    except PraxoError as exc:
        return {"code": exc.code}
    except pykka.Timeout:  # what RunFuture.get raised before it raised RUNTIME_TIMEOUT
        return {"code": "RUNTIME_TIMEOUT"}
    except Exception as exc:  # an uncoded failure: the driver reports it
        return {"code": None, "error": f"{type(exc).__name__}: {exc}"}
    out: dict[str, Any] = {"status": result.status, "output": result.output, "id": result.run_id}
    if result.status == "interrupted":
        out["interrupt"] = result.interrupt
    if input is not None:
        seen = Run("", input)
        seen.acknowledge(result)
        out["version"] = seen.version
    return out


def main() -> None:
    # Imported and waiting before it is needed, a spare process takes over from a killed one
    # at once: it opens the store when told to.
    print(json.dumps({"loaded": os.getpid()}), flush=True)
    child = None
    for line in sys.stdin:
        command = json.loads(line)
        op = command.pop("op")
        if op == "open":
            child = Child(**command)
            print(json.dumps({"ready": child.generation}), flush=True)
            continue
        assert child is not None, op
        try:
            reply = getattr(child, op)(**command)
        except Exception:  # a fault of this driver, or of the runtime: the test reports it
            reply = {"child_error": traceback.format_exc()}
        print(json.dumps(reply), flush=True)
        if op == "close":
            return


if __name__ == "__main__":
    main()
