"""The A2A app: the SDK's JSON-RPC routes and agent card over an executor that runs sessions.

Built by :func:`praxo_actors.protocols.a2a_app` (imported then: it needs ``a2a-sdk`` and
Starlette, the ``protocols`` extra). A task is one run of the context's session: the executor
starts it (or resumes it, for a task waiting for input) and publishes the task's states.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import msgspec
from a2a.helpers.proto_helpers import (
    get_data_parts,
    new_data_part,
    new_message,
    new_task,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    CancelTaskRequest,
    GetTaskRequest,
    Part,
    TaskState,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from praxo_actors._errors import PraxoError
from praxo_actors.protocols._http import HostCheck
from praxo_actors.protocols._registered import agent_tools

if TYPE_CHECKING:
    from a2a.server.context import ServerCallContext
    from a2a.types import Message, Task

    from praxo_actors.models import RunResult
    from praxo_actors.runtime import Runtime, SessionHandle

__all__ = ["build"]

MAX_RUN_IDS = 10_000
"""Tasks whose run id the app remembers (oldest forgotten first), for look-ups by run id."""


class _RunIds:
    """The run id of each task and the task of each run id (bounded, oldest forgotten)."""

    def __init__(self) -> None:
        self._task_of: OrderedDict[str, str] = OrderedDict()

    def add(self, task_id: str, run_id: str) -> None:
        self._task_of[run_id] = task_id
        self._task_of.move_to_end(run_id)
        while len(self._task_of) > MAX_RUN_IDS:
            self._task_of.popitem(last=False)

    def task(self, some_id: str) -> str:
        """Return the task of run ``some_id``, or ``some_id`` itself (a task's id)."""
        return self._task_of.get(some_id, some_id)


class _Executor(AgentExecutor):
    """Run (or resume) the task's run in the context's session; publish the task's states."""

    def __init__(self, runtime: Runtime, agent: str, run_ids: _RunIds) -> None:
        self._runtime = runtime
        self._agent = agent
        self._run_ids = run_ids
        self._running: dict[str, asyncio.Task[Any]] = {}  # task id -> its execute()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        current = context.current_task
        if current is None:
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(
                new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=history)
            )
        waiting = (
            current is not None and current.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        )
        # What the run asked, copied now: the task's status changes as its events are saved.
        asked = [] if current is None else _data_parts(current.status.message)
        me = asyncio.current_task()
        if me is not None:
            self._running[task_id] = me
        try:
            handle = self._runtime.session(context_id, self._agent)  # refuses a bad id
            if waiting and current is not None:
                run_id = _run_id_of(current)
                result = await self._resume(handle, run_id, _answer(context.message), updater)
            else:
                result = await self._run(handle, task_id, _text(context.message), updater)
        except PraxoError as exc:
            if waiting and current is not None and exc.code == "AGENT_INVALID_RESUME":
                await _ask_again(updater, asked, exc)  # the run still waits: so does the task
                return
            await _fail(updater, exc.code, exc.message)
            return
        except Exception as exc:  # a callback's own exception
            await _fail(updater, "AGENT_CALLBACK_EXCEPTION", f"{type(exc).__name__}: {exc}")
            return
        finally:
            self._running.pop(task_id, None)
        await _finish(updater, result, context_id, task_id)

    async def _run(
        self, handle: SessionHandle, task_id: str, text: str, updater: TaskUpdater
    ) -> RunResult:
        """Run ``text``; cancelling the awaiting task cancels the run at once."""
        stream = handle.astream(text)
        try:
            self._run_ids.add(task_id, stream.run_id)
            await updater.update_status(
                TaskState.TASK_STATE_WORKING, metadata={"praxo.run_id": stream.run_id}
            )
            return await stream.result()
        finally:
            await stream.aclose()

    async def _resume(
        self, handle: SessionHandle, run_id: str, value: Any, updater: TaskUpdater
    ) -> RunResult:
        """Resume the task's run with ``value``; cancelling the awaiting task cancels it."""
        await updater.update_status(TaskState.TASK_STATE_WORKING, metadata={"praxo.run_id": run_id})
        return await handle.aresume(value)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        # Cancelling execute()'s task cancels the run in flight at once (the SDK does so
        # too); a run waiting for input stays pending in its session until it is answered.
        running = self._running.pop(context.task_id or "", None)
        if running is not None and running is not asyncio.current_task():
            running.cancel()
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def _run_id_of(task: Task) -> str:
    return str(task.metadata["praxo.run_id"]) if "praxo.run_id" in task.metadata else ""


async def _finish(updater: TaskUpdater, result: RunResult, context_id: str, task_id: str) -> None:
    """Publish the task's end: its output and ``completed``, or ``input-required``."""
    if result.status == "interrupted":
        parts = [
            new_text_part("The run waits for an answer: send it as the next message of the task."),
            new_data_part(_jsonable(result.interrupt)),
        ]
        message = new_message(parts, context_id=context_id, task_id=task_id)
        await updater.requires_input(message)
        return
    parts = [new_text_part(result.output)]
    if result.structured is not None:
        parts.append(new_data_part(_jsonable(result.structured)))
    await updater.add_artifact(parts, name="output", metadata={"praxo.run_id": result.run_id})
    await updater.complete()


def _data_parts(message: Message) -> list[Part]:
    copies = []
    for part in message.parts:
        if part.HasField("data"):
            copy = Part()
            copy.CopyFrom(part)
            copies.append(copy)
    return copies


async def _ask_again(updater: TaskUpdater, asked: list[Part], error: PraxoError) -> None:
    """Keep the task waiting for input after an answer its run refused, saying why."""
    parts = [new_text_part(f"{error.code}: {error.message}"), *asked]
    message = updater.new_agent_message(parts, {"praxo.code": error.code})
    await updater.requires_input(message)


async def _fail(updater: TaskUpdater, code: str, text: str) -> None:
    message = updater.new_agent_message([new_text_part(f"{code}: {text}")], {"praxo.code": code})
    await updater.failed(message)


def _jsonable(value: Any) -> Any:
    try:
        return msgspec.json.decode(msgspec.json.encode(value))
    except (TypeError, msgspec.EncodeError):
        return str(value)


def _text(message: Message | None) -> str:
    """Return the message's text (its text parts, joined)."""
    parts = [] if message is None else [p.text for p in message.parts if p.HasField("text")]
    return "\n".join(parts)


def _answer(message: Message | None) -> Any:
    """Return what a message answers an interrupt with: its data, its JSON text, or its text."""
    data = [] if message is None else get_data_parts(message.parts)
    if data:
        return data[0]
    text = _text(message)
    try:
        return msgspec.json.decode(text.encode("utf-8", "surrogatepass"))
    except msgspec.DecodeError:
        return text


class _Handler(DefaultRequestHandler):
    """The SDK's handler, also finding a task by its run's id."""

    def __init__(self, run_ids: _RunIds, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._run_ids = run_ids

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        params.id = self._run_ids.task(params.id)
        task: Task | None = await super().on_get_task(params, context)
        return task

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        params.id = self._run_ids.task(params.id)
        task: Task | None = await super().on_cancel_task(params, context)
        return task


def agent_card(runtime: Runtime, agent: str, url: str | None) -> AgentCard:
    """Return the card of ``agent``: its tools as skills, JSON-RPC at ``url``, streaming."""
    skills = [
        AgentSkill(id=t.name, name=t.name, description=t.description or t.name, tags=["tool"])
        for t in agent_tools(runtime, agent)
    ]
    if not skills:  # a card lists at least one skill: the conversation itself
        skills = [AgentSkill(id=agent, name=agent, description=f"Talk to {agent}.", tags=["chat"])]
    return AgentCard(
        name=agent,
        description=f"The praxo-actors agent {agent!r}.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", protocol_version="1.0", url=url or "/")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )


def build(
    runtime: Runtime, agent: str, card: Any, url: str | None, allowed_hosts: Iterable[str] | None
) -> HostCheck:
    """Return the A2A app of ``runtime``'s ``agent``."""
    if card is None:
        card = agent_card(runtime, agent, url)
    elif not isinstance(card, AgentCard):
        raise PraxoError("RUNTIME_INVALID_INPUT", "card must be an a2a.types.AgentCard")
    else:
        agent_tools(runtime, agent)  # the agent is registered
    run_ids = _RunIds()
    handler = _Handler(
        run_ids,
        agent_executor=_Executor(runtime, agent, run_ids),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    cards = create_agent_card_routes(card) if url is not None else [_card_here(card)]
    routes = [*cards, *create_jsonrpc_routes(handler, "/")]
    return HostCheck(Starlette(routes=routes), allowed_hosts)


def _card_here(card: AgentCard) -> Route:
    """Return the card's route, telling clients to use the URL the card was fetched from."""

    async def get_card(request: Request) -> Response:
        here = AgentCard()
        here.CopyFrom(card)
        # The full URL (a mount's prefix included) less the card's own path.
        fetched = str(request.url.replace(query="", fragment=""))
        base = fetched.removesuffix(AGENT_CARD_WELL_KNOWN_PATH) + "/"
        for interface in here.supported_interfaces:
            interface.url = base
        return JSONResponse(agent_card_to_dict(here))

    return Route(AGENT_CARD_WELL_KNOWN_PATH, get_card, methods=["GET"])
