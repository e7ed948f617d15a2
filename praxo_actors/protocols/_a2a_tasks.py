"""A2A tasks: each one run of its context's session, kept as the JSON the protocol speaks.

A task's documents (the task, its status, its messages and artifacts) are the dicts the
a2a-sdk's JSON-RPC binding sends (protobuf JSON: camelCase names, enum names as strings),
built once as the task changes and encoded as they are. Every change is published to the
task's listeners (the streams of ``SendStreamingMessage``) as a ``StreamResponse`` document.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from praxo_actors._errors import PraxoError
from praxo_actors.codes import AGENT_CALLBACK_EXCEPTION
from praxo_actors.protocols._runtimes import on_cluster, outcome

if TYPE_CHECKING:
    from praxo_actors.models import RunResult
    from praxo_actors.runtime import Runtime, SessionHandle

__all__ = ["ENDED", "MAX_TASKS", "TERMINAL", "A2ATask", "Runner", "Tasks"]

MAX_TASKS = 10_000
"""Tasks the app remembers (oldest forgotten first), for ``GetTask`` and ``CancelTask``."""

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

    def __init__(self, task_id: str, context_id: str, message: dict[str, Any]) -> None:
        self.id = task_id
        self.context_id = context_id
        self.status: dict[str, Any] = {"state": SUBMITTED}
        self.history: list[dict[str, Any]] = [message]
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
    """The tasks the app remembers, by their id and by their run's id (bounded)."""

    def __init__(self, limit: int = MAX_TASKS) -> None:
        self._limit = limit
        self._by_id: OrderedDict[str, A2ATask] = OrderedDict()
        self._by_run: dict[str, A2ATask] = {}

    def add(self, task: A2ATask) -> None:
        """Remember ``task`` (forgetting the oldest past the limit)."""
        self._by_id[task.id] = task
        while len(self._by_id) > self._limit:
            _, old = self._by_id.popitem(last=False)
            if self._by_run.get(old.run_id) is old:
                del self._by_run[old.run_id]

    def ran(self, task: A2ATask, run_id: str) -> None:
        """Record that ``task`` is run ``run_id``."""
        task.run_id = run_id
        if task.id in self._by_id:
            self._by_run[run_id] = task

    def get(self, some_id: str) -> A2ATask | None:
        """Return the task of id ``some_id``, or of run ``some_id``."""
        return self._by_id.get(some_id) or self._by_run.get(some_id)


class Runner:
    """Run (or resume) a task's run in its context's session; move the task as it goes."""

    def __init__(self, runtime: Runtime, agent: str, tasks: Tasks) -> None:
        self._runtime = runtime
        self._agent = agent
        self._tasks = tasks
        self.on_cluster = on_cluster(runtime)
        """Whether the runtime is a cluster's (a run in flight there cannot be cancelled)."""

    def start(self, task: A2ATask, text: str) -> None:
        """Start the task's run of ``text``."""
        task.running = asyncio.get_running_loop().create_task(self._execute(task, text, None))

    def resume(self, task: A2ATask, answer: Any, asked: list[Any]) -> None:
        """Resume the task's run, waiting for input, with ``answer`` (``asked``: the data
        parts of the question, asked again if the run refuses the answer)."""
        task.running = asyncio.get_running_loop().create_task(self._execute(task, answer, asked))

    def cancel(self, task: A2ATask) -> None:
        """Cancel the task (and its run in flight, at once); a run waiting for input stays
        pending in its session until it is answered."""
        running, task.running = task.running, None
        task.set_status(CANCELED)
        if running is not None and running is not asyncio.current_task():
            running.cancel()

    async def _execute(self, task: A2ATask, given: Any, asked: list[Any] | None) -> None:
        try:
            handle = self._runtime.session(task.context_id, self._agent)  # refuses a bad id
            if asked is None:
                result = await self._run(handle, task, given)
            else:
                task.set_status(WORKING, metadata={"praxo.run_id": task.run_id})
                result = await handle.aresume(given)
        except PraxoError as exc:
            if asked is not None and exc.code == "AGENT_INVALID_RESUME":
                # The run still waits: so does the task, saying why.
                parts = [_text(f"{exc.code}: {exc.message}"), *asked]
                self._end(task, INPUT_REQUIRED, parts, exc.code)
                return
            self._end(task, FAILED, [_text(f"{exc.code}: {exc.message}")], exc.code)
            return
        except Exception as exc:  # a callback's own exception
            text = f"AGENT_CALLBACK_EXCEPTION: {type(exc).__name__}: {exc}"
            self._end(task, FAILED, [_text(text)], AGENT_CALLBACK_EXCEPTION)
            return
        self._finish(task, result)

    async def _run(self, handle: SessionHandle, task: A2ATask, text: str) -> RunResult:
        """Run ``text``; cancelling the awaiting task cancels the run at once."""
        future = handle.run(text)
        self._tasks.ran(task, future.run_id)
        task.set_status(WORKING, metadata={"praxo.run_id": future.run_id})
        # Awaited as ``arun`` awaits its run: a cancellation cancels the run at once.
        return await (handle._outcome(future) if not self.on_cluster else outcome(handle, future))

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
