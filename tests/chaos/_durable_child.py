"""A process that runs durable agents on a SQLite store until it is killed (or, with
``finish``, only resumes what the killed ones left and reports it).

Every model and tool call appends a line to ``effects.log`` (fsynced before it returns), and
every acknowledged run appends ``ack <session> <run id> <input>`` to ``acks.log``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

from praxo_actors import PraxoError
from praxo_actors.agent import Tool, model_context, new_agent_options, tool_context
from praxo_actors.memory import SQLiteStore
from praxo_actors.memory._log import SessionLog
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime

SESSIONS = 4


def main(db: str, logs: str, mode: str, seed: str) -> None:
    effects = open(os.path.join(logs, "effects.log"), "a")  # noqa: SIM115 - lives as long as we do

    lock = threading.Lock()  # callbacks run on several threads: one whole line at a time

    def log(line: str) -> None:
        with lock:
            os.write(effects.fileno(), (line + "\n").encode())
            os.fsync(effects.fileno())

    def model(request: Request) -> Response:
        context = model_context()
        assert context is not None
        log(f"model {request.run_id}:{request.step} 0 {os.getpid()}")
        if request.step == 1:
            calls = [ToolCall("send", {"n": 1}), ToolCall("note", {"n": 1})]
            return Response(message_assistant("", calls))
        if request.step == 2:
            return Response(message_assistant("", [ToolCall("note", {"n": 2})]))
        first = next(m for m in request.messages[::-1] if m.role == "user")
        return Response(message_assistant(f"done {first.content}"))

    def tool(kind: str) -> Any:
        def handler(_args: dict[str, Any]) -> str:
            context = tool_context()
            assert context is not None
            log(f"{kind} {context.idempotency_key} {context.attempt} {os.getpid()}")
            return kind

        return handler

    def agent() -> Any:
        tools = [
            Tool("send", "", {}, tool("send"), delivery="at_most_once"),
            Tool("note", "", {}, tool("note")),
        ]
        return new_agent_options(model, tools=tools)

    store = SQLiteStore(db, synchronous="NORMAL")  # survives a killed process
    rt = Runtime.start(store, idle_timeout=None, timeout=30.0, resume=mode == "finish")
    acks = open(os.path.join(logs, "acks.log"), "a")  # noqa: SIM115
    if mode == "finish":
        pending = SessionLog(store).pending()
        rt.register_agent("default", agent, durable=True)
        outcomes = {}
        for session_id, run in pending:
            try:
                outcomes[run.run_id] = (
                    rt.session(session_id).result(run.run_id, timeout=30.0).output
                )
            except PraxoError as exc:
                outcomes[run.run_id] = exc.code
        histories = {
            f"s{k}": [[m.role, str(m.content)] for m in rt.session(f"s{k}").history(timeout=30.0)]
            for k in range(SESSIONS)
        }
        print(json.dumps({"resumed": outcomes, "histories": histories}))
        rt.stop()
        store.close()
        return
    rt.register_agent("default", agent, durable=True)
    print("ready", flush=True)
    i = 0
    while True:
        futures = [(k, f"p{seed}-{i}-{k}") for k in range(SESSIONS)]
        started = [(k, text, rt.session(f"s{k}").run(text)) for k, text in futures]
        for k, text, future in started:
            try:
                future.get(timeout=30.0)
            except PraxoError:
                continue
            acks.write(f"ack s{k} {future.run_id} {text}\n")
            acks.flush()
            os.fsync(acks.fileno())
        i += 1


if __name__ == "__main__":
    main(*sys.argv[1:5])
