"""A2A tasks: each one run of its context's session, kept as the JSON the protocol speaks.

A task's id is its run's id: a task the app no longer remembers (forgotten past
:data:`MAX_TASKS`, or served before the process restarted) is found again from the runtime,
which keeps the run's outcome.

A task's documents (the task, its status, its messages and artifacts) are the dicts the
a2a-sdk's JSON-RPC binding sends (protobuf JSON: camelCase names, enum names as strings),
built once as the task changes and encoded as they are. Every change is published to the
task's listeners (the streams of ``SendStreamingMessage``) as a ``StreamResponse`` document.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.codes import AGENT_CALLBACK_EXCEPTION
from praxo_actors.protocols._runtimes import (
    cancel_run,
    journaled,
    on_cluster,
    outcome,
    session_of_run,
)

if TYPE_CHECKING:
    from praxo_actors.models import RunResult
    from praxo_actors.runtime import Runtime, SessionHandle

__all__ = ["ENDED", "MAX_TASKS", "TERMINAL", "A2ATask", "Runner", "Tasks"]

MAX_TASKS = 10_000
"""Tasks the app remembers (oldest forgotten first); one forgotten, or never known to this
process (it restarted), is found again from the runtime by its run's id."""

SUBMITTED = "TASK_STATE_SUBMITTED"
WORKING = "TASK_STATE_WORKING"
COMPLETED = "TASK_STATE_COMPLETED"
FAILED = "TASK_STATE_FAILED"
CANCELED = "TASK_STATE_CANCELED"
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELED, "TASK_STATE_REJECTED"})
ENDED = TERMINAL | {INPUT_REQUIRED, "TASK_STATE_AUTH_REQUIRED"}
"""The states a task's run has stopped in: a stream of the task ends at one."""

_ASK = "The run waits for an answer: send it as the next message of the task."


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _agent_message(task: A2ATask, parts: list[Any], code: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": str(uuid.uuid4()),
        "contextId": task.context_id,
        "taskId": task.id,
        "role": "ROLE_AGENT",
        "parts": parts,
    }
    if code is not None:
        message["metadata"] = {"praxo.code": code}
    return message


class A2ATask:
    """One task: its status, history, artifacts and metadata, and its run."""

    __slots__ = (
        "artifacts",
        "context_id",
        "history",
        "id",
        "listeners",
        "metadata",
        "run_id",
        "running",
        "status",
    )

    def __init__(self, task_id: str, context_id: str, message: dict[str, Any] | None) -> None:
        self.id = task_id
        self.context_id = context_id
        self.status: dict[str, Any] = {"state": SUBMITTED}
        self.history: list[dict[str, Any]] = [] if message is None else [message]
        self.artifacts: list[dict[str, Any]] = []
        self.metadata: dict[str, Any] = {}
        self.run_id = ""
        self.running: asyncio.Task[None] | None = None  # the run's execution, while it runs
        self.listeners: list[asyncio.Queue[dict[str, Any]]] = []

    @property
    def state(self) -> str:
        """The task's state (``TASK_STATE_...``)."""
        return str(self.status["state"])

    def doc(self, history_length: int | None = None) -> dict[str, Any]:
        """Return the task's document (its last ``history_length`` messages, if given)."""
        doc: dict[str, Any] = {"id": self.id, "contextId": self.context_id, "status": self.status}
        if self.artifacts:
            doc["artifacts"] = list(self.artifacts)
        history = self.history
        if history_length is not None:
            history = history[-history_length:] if history_length > 0 else []
        if history:
            doc["history"] = list(history)
        if self.metadata:
            doc["metadata"] = dict(self.metadata)
        return doc

    def add_message(self, message: dict[str, Any]) -> list[Any]:
        """Add a message of the client's to the history (after the status's own, if any);
        return the data parts of the status's message (what the run asked)."""
        status = dict(self.status)
        asked = status.pop("message", None)
        self.status = status
        if asked is not None:
            self.history.append(asked)
        self.history.append(message)
        return [] if asked is None else [p for p in asked["parts"] if "data" in p]

    def set_status(
        self,
        state: str,
        parts: list[Any] | None = None,
        metadata: dict[str, Any] | None = None,
        code: str | None = None,
    ) -> None:
        """Move to ``state`` (with an agent message of ``parts``, if given); publish it."""
        status: dict[str, Any] = {"state": state}
        if parts is not None:
            status["message"] = _agent_message(self, parts, code)
        status["timestamp"] = _now()
        previous = self.status.get("message")
        if previous is not None:
            self.history.append(previous)
        self.status = status
        event: dict[str, Any] = {"taskId": self.id, "contextId": self.context_id, "status": status}
        if metadata:
            self.metadata.update(metadata)
            event["metadata"] = metadata
        self._publish({"statusUpdate": event})

    def add_artifact(self, parts: list[Any], metadata: dict[str, Any]) -> None:
        """Add the run's output as the artifact ``output``; publish it."""
        artifact = {
            "artifactId": str(uuid.uuid4()),
            "name": "output",
            "parts": parts,
            "metadata": metadata,
        }
        self.artifacts.append(artifact)
        event = {"taskId": self.id, "contextId": self.context_id, "artifact": artifact}
        self._publish({"artifactUpdate": event})

    def _publish(self, event: dict[str, Any]) -> None:
        for queue in self.listeners:
            queue.put_nowait(event)


class Tasks:
    """The tasks the app remembers, by their id (bounded: a task forgotten is found again
    from the runtime, see :meth:`Runner.recover`)."""

    def __init__(self, limit: int = MAX_TASKS) -> None:
        self._limit = limit
        self._by_id: OrderedDict[str, A2ATask] = OrderedDict()

    def add(self, task: A2ATask) -> None:
        """Remember ``task`` (forgetting the oldest past the limit)."""
        self._by_id[task.id] = task
        while len(self._by_id) > self._limit:
            self._by_id.popitem(last=False)

    def get(self, task_id: str) -> A2ATask | None:
        """Return the task of id ``task_id`` (its run's id), if remembered."""
        return self._by_id.get(task_id)


class Runner:
    """Run (or resume) a task's run in its context's session; move the task as it goes."""

    def __init__(self, runtime: Runtime, agent: str, tasks: Tasks) -> None:
        self._runtime = runtime
        self._agent = agent
        self._tasks = tasks
        self.on_cluster = on_cluster(runtime)
        """Whether the runtime is a cluster's (a run in flight there cannot be cancelled)."""

    async def start(
        self, context_id: str, text: str, message: Callable[[str], dict[str, Any]]
    ) -> A2ATask:
        """Submit the run of ``text`` in the context's session; return its task, remembered:
        its id is the run's, its first message ``message(task_id)``. A durable agent's run is
        in the store before this returns (the task outlives the process). A run refused
        before it is submitted (a context that cannot be a session...) is a failed task of
        its own id."""
        step: Callable[[], Awaitable[RunResult]]
        try:
            handle = self._runtime.session(context_id, self._agent)  # refuses a bad id
            if journaled(self._runtime, self._agent):
                run_id = await handle.asubmit(text)
                step = lambda: self._submitted(task, handle)  # noqa: E731
            else:
                future = handle.run(text)
                run_id = future.run_id
                step = lambda: self._first(task, handle, future)  # noqa: E731
        except PraxoError as exc:
            task_id = str(uuid.uuid4())
            task = A2ATask(task_id, context_id, message(task_id))
            self._tasks.add(task)
            self._end(task, FAILED, [_text(f"{exc.code}: {exc.message}")], exc.code)
            return task
        task = A2ATask(run_id, context_id, message(run_id))
        task.run_id = run_id
        self._tasks.add(task)
        task.running = asyncio.get_running_loop().create_task(self._execute(task, step, None))
        return task

    def resume(self, task: A2ATask, answer: Any, asked: list[Any]) -> None:
        """Resume the task's run, waiting for input, with ``answer`` (``asked``: the data
        parts of the question, asked again if the run refuses the answer)."""
        task.running = asyncio.get_running_loop().create_task(
            self._execute(task, lambda: self._resumed(task, answer), asked)
        )

    def cancel(self, task: A2ATask) -> None:
        """Cancel the task (and its run in flight, at once); a run waiting for input stays
        pending in its session until it is answered."""
        running, task.running = task.running, None
        task.set_status(CANCELED)
        if running is not None and running is not asyncio.current_task():
            running.cancel()
            if task.run_id:  # also when the awaiting task had not started yet
                cancel_run(self._runtime, task.run_id)

    async def recover(self, run_id: str) -> A2ATask | None:
        """Return the task of run ``run_id`` as the runtime knows the run, remembered again
        (None: no session knows such a run): ``completed`` with its output, ``input-required``
        with its question, ``failed`` with its code (``canceled`` if it was cancelled), or
        ``working`` (not waited for: the task follows the run from now on).

        Raises:
            PraxoError: The look-up's (``RUNTIME_TIMEOUT``, ``RUNTIME_STOPPED``...).
        """
        if not run_id or "\x00" in run_id:
            return None
        session_id = await session_of_run(self._runtime, run_id)
        if session_id is None:
            return None
        handle = self._runtime.session(session_id, self._agent)
        task = A2ATask(run_id, session_id, None)
        task.run_id = run_id
        task.metadata["praxo.run_id"] = run_id
        pending = False
        try:
            self._finish(task, await handle.aresult(run_id, 0))
        except AgentError as exc:
            if exc.code == "AGENT_CANCELLED":
                self._end(task, CANCELED)
            else:
                self._failed(task, exc)
        except PraxoError as exc:
            if exc.code == "RUNTIME_UNKNOWN_RUN":
                return None
            if exc.code != "RUNTIME_TIMEOUT":
                raise
            pending = True
        known = self._tasks.get(run_id)  # found again meanwhile, by another request
        if known is not None:
            return known
        self._tasks.add(task)
        if pending:
            task.set_status(WORKING)
            task.running = asyncio.get_running_loop().create_task(
                self._execute(task, lambda: handle.aresult(run_id, None), None)
            )
        return task

    async def _first(self, task: A2ATask, handle: SessionHandle, future: Any) -> RunResult:
        task.set_status(WORKING, metadata={"praxo.run_id": task.run_id})
        # Awaited as ``arun`` awaits its run: a cancellation cancels the run at once.
        return await outcome(handle, future)

    async def _submitted(self, task: A2ATask, handle: SessionHandle) -> RunResult:
        task.set_status(WORKING, metadata={"praxo.run_id": task.run_id})
        return await handle.aresult(task.run_id, None)  # cancelled by :meth:`cancel`

    async def _resumed(self, task: A2ATask, answer: Any) -> RunResult:
        handle = self._runtime.session(task.context_id, self._agent)  # refuses a bad id
        task.set_status(WORKING, metadata={"praxo.run_id": task.run_id})
        return await handle.aresume(answer)

    async def _execute(
        self, task: A2ATask, step: Callable[[], Awaitable[RunResult]], asked: list[Any] | None
    ) -> None:
        try:
            result = await step()
        except PraxoError as exc:
            if asked is not None and exc.code == "AGENT_INVALID_RESUME":
                # The run still waits: so does the task, saying why.
                parts = [_text(f"{exc.code}: {exc.message}"), *asked]
                self._end(task, INPUT_REQUIRED, parts, exc.code)
                return
            self._failed(task, exc)
            return
        except Exception as exc:  # a callback's own exception
            text = f"AGENT_CALLBACK_EXCEPTION: {type(exc).__name__}: {exc}"
            self._end(task, FAILED, [_text(text)], AGENT_CALLBACK_EXCEPTION)
            return
        self._finish(task, result)

    def _failed(self, task: A2ATask, exc: PraxoError) -> None:
        self._end(task, FAILED, [_text(f"{exc.code}: {exc.message}")], exc.code)

    def _finish(self, task: A2ATask, result: RunResult) -> None:
        """Publish the task's end: its output and ``completed``, or ``input-required``."""
        if task.state in TERMINAL:  # cancelled as the run ended
            return
        if result.status == "interrupted":
            parts = [_text(_ASK), {"data": _jsonable(result.interrupt)}]
            self._end(task, INPUT_REQUIRED, parts)
            return
        parts = [_text(result.output)]
        if result.structured is not None:
            parts.append({"data": _jsonable(result.structured)})
        task.add_artifact(parts, {"praxo.run_id": result.run_id})
        self._end(task, COMPLETED)

    def _end(
        self, task: A2ATask, state: str, parts: list[Any] | None = None, code: str | None = None
    ) -> None:
        if task.state not in TERMINAL:
            task.running = None
            task.set_status(state, parts, code=code)


def _text(text: str) -> dict[str, Any]:
    return {"text": text}


def _jsonable(value: Any) -> Any:
    try:
        return msgspec.json.decode(msgspec.json.encode(value))
    except (TypeError, msgspec.EncodeError):
        return str(value)
