"""The session actor: one conversation, its runs in order, checkpointed after each.

A run in flight is the agent loop's suspended state machine (:func:`praxo_actors.agent.start_run`).
The actor performs the machine's effects without ever waiting: an ``async def`` callback runs on
the runtime's event loop, a plain one on the runtime's I/O pool, and its outcome comes back as an
:class:`EffectDone` message. So a scheduler thread never waits on a model, and the actor keeps
answering (history, cancel, more runs to queue) while its run waits.

A run is atomic for its session: the actor commits the run's session only when the run
completes, then saves a checkpoint through the store actor; the run's future completes when the
checkpoint is stored. A failed run leaves the session as it was.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.agent import (
    AgentRun,
    BeginStep,
    CallModel,
    CallRepairer,
    CallSummarizer,
    CallTool,
    Emit,
    start_run,
)
from praxo_actors.core import dump_checkpoint, load_checkpoint
from praxo_actors.models import Event, Session
from praxo_actors.runtime._mn import MNActor
from praxo_actors.runtime._protocol import (
    CancelRun,
    Crash,
    EffectDone,
    GetHistory,
    History,
    LoadCheckpoint,
    Passivate,
    Publish,
    SaveCheckpoint,
    StartRun,
    decode,
    encode,
)
from praxo_actors.runtime._sched import blocking

if TYPE_CHECKING:
    from praxo_actors.runtime._core import RuntimeCore

__all__ = ["SessionActor", "SessionCrashedError"]

logger = structlog.get_logger("praxo_actors.runtime")


class SessionCrashedError(PraxoError):
    """What a session actor raises when crashed on purpose (``crash_for_testing``).

    Its runs then fail with :class:`~praxo_actors.AgentError` code ``SESSION_CRASHED``, as after
    any crash of a session actor.
    """


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async def
    )


async def _await(value: Any) -> Any:
    return await value


@dataclass
class _Run:
    run: AgentRun
    agent: str
    deadline_ns: int | None
    cancelled: bool = False
    token: int = 0
    events: list[Event] = field(default_factory=list)


class SessionActor(MNActor):
    """Host one session: serialise its runs, perform their effects, checkpoint, restore."""

    # Sessions are found through the runtime's Registry; Pykka's list-based registry would make
    # stopping N sessions O(N²).
    actor_registered = False

    def __init__(self, core: RuntimeCore, session_id: str) -> None:
        super().__init__()
        self.core = core
        self.session_id = session_id
        self.session = Session(id=session_id)
        # A list, not a deque: an idle session's empty deque would cost 600 bytes.
        self.queue: list[StartRun] = []
        self.current: _Run | None = None
        # (token, ok, value) of callbacks that finished: a list, since an emptied dict keeps
        # its table (160 bytes an idle session) and an emptied list frees its array.
        self._outcomes: list[tuple[int, bool, Any]] = []
        self._next_token = 0

    # -- lifecycle (scheduler thread) -------------------------------------------------------

    def on_start(self) -> None:
        """Restore the last checkpoint, if any (on a scheduler thread, through the store actor)."""
        with blocking():
            document: str | None = self.core.store_ref.ask(
                encode(LoadCheckpoint(self.session_id)), block=True, timeout=self.core.store_timeout
            )
        if document is not None:
            self.session = load_checkpoint(
                document.encode(), allowed_types=self.core.allowed_types, key=self.core.key
            )
            logger.debug(
                "session_restored", session_id=self.session_id, messages=len(self.session.messages)
            )

    def on_failure(self, *_exc_info: Any) -> None:
        """Abandon the run in flight; the runtime fails this session's pending runs."""
        if self.current is not None:
            self.current.run.close()
            self.current = None
        self.queue.clear()
        self.core.session_down(self.session_id, self.actor_ref, crashed=True)

    def on_stop(self) -> None:
        """Abandon whatever is left (a forced stop); the runtime fails those runs."""
        if self.current is not None:
            self.current.run.close()
            self.current = None
        self.queue.clear()
        self.core.session_down(self.session_id, self.actor_ref, crashed=False)

    # -- messages --------------------------------------------------------------------------

    def on_receive(self, message: Any) -> Any:
        """Dispatch one encoded runtime message."""
        decoded = decode(message)
        if not isinstance(decoded, Passivate):
            # A passivation request is not activity: counting it would keep every session live.
            self.core.touch(self.session_id)
        match decoded:
            case StartRun() as start:
                self.queue.append(start)
                if self.current is None:
                    self._start_next()
            case EffectDone(run_id=run_id, token=token):
                outcome = self._take_outcome(token)
                current = self.current
                if (
                    outcome is not None
                    and current is not None
                    and current.run.run_id == run_id
                    and token == current.token
                ):
                    self._advance(current, *outcome)
            case CancelRun(run_id=run_id):
                self._cancel(run_id)
            case GetHistory():
                return encode(History(messages=list(self.session.messages)))
            case Passivate(idle_ns=idle_ns):
                idle = self.current is None and not self.queue
                if idle and self.core.release_if_idle(self.session_id, self.actor_ref, idle_ns):
                    self.stop()
                    return True
                return False
            case Crash(reason=reason):
                raise SessionCrashedError("SESSION_CRASHED", reason)
            case other:
                raise PraxoError("PROTOCOL_INVALID_MESSAGE", f"session got {type(other).__name__}")
        return None

    def _take_outcome(self, token: int) -> tuple[bool, Any] | None:
        """Remove and return the outcome of callback ``token`` (list ops are atomic)."""
        for item in self._outcomes:
            if item[0] == token:
                self._outcomes.remove(item)
                return item[1], item[2]
        return None

    def _cancel(self, run_id: str) -> None:
        if self.current is not None and self.current.run.run_id == run_id:
            self.current.cancelled = True  # seen at the next step boundary
            return
        for start in self.queue:
            if start.run_id == run_id:
                self.queue.remove(start)
                self.core.settle_error(run_id, AgentError("AGENT_CANCELLED", "cancelled", run_id))
                return

    # -- running ---------------------------------------------------------------------------

    def _start_next(self) -> None:
        while self.current is None and self.queue:
            start = self.queue.pop(0)
            if start.deadline_ns is not None and time.monotonic_ns() >= start.deadline_ns:
                self.core.settle_error(
                    start.run_id,
                    AgentError("AGENT_DEADLINE", "deadline passed while queued", start.run_id),
                )
                continue
            try:
                options = self.core.options_for(start.agent, events=self.core.has_subscribers())
                run = start_run(options, self.session, start.input, run_id=start.run_id)
            except Exception as exc:
                self.core.settle_error(start.run_id, exc)
                continue
            current = _Run(run=run, agent=start.agent, deadline_ns=start.deadline_ns)
            self.current = current
            self._advance(current, True, None, first=True)

    def _advance(self, current: _Run, ok: bool, value: Any, first: bool = False) -> None:
        """Feed an outcome into the machine and perform effects until one must be waited for."""
        run = current.run
        try:
            effect = run.effect if first else (run.send(value) if ok else run.throw(value))
            while effect is not None:
                match effect:
                    case Emit(event=event):
                        current.events.append(event)
                        effect = run.send(None)
                    case BeginStep():
                        effect = run.send(self._stop_code(current))
                    case CallModel(model=fn, request=request):
                        self._dispatch(current, fn, request)
                        return
                    case CallTool(tool=tool, arguments=arguments):
                        self._dispatch(current, tool.handler, arguments)
                        return
                    case CallRepairer(repairer=fn, text=text, errors=errors):
                        self._dispatch(current, fn, text, errors)
                        return
                    case CallSummarizer(summarizer=fn, messages=messages):
                        self._dispatch(current, fn, messages)
                        return
        except Exception as exc:  # AgentError with a code, or a callback's own exception
            self._publish(current)
            self.current = None
            self.core.settle_error(run.run_id, exc)
            self._start_next()
            return
        self._complete(current)

    def _stop_code(self, current: _Run) -> str | None:
        if current.cancelled:
            return "AGENT_CANCELLED"
        if current.deadline_ns is not None and time.monotonic_ns() >= current.deadline_ns:
            return "AGENT_DEADLINE"
        return None

    def _complete(self, current: _Run) -> None:
        result = current.run.result
        self._publish(current)
        self.current = None
        try:
            document = dump_checkpoint(result.session, key=self.core.key).decode()
        except PraxoError as exc:  # e.g. metadata that is not JSON: the run cannot be kept
            self.core.settle_error(result.run_id, exc)
            self._start_next()
            return
        self.session = result.session  # commit: the run completed and can be checkpointed
        self.core.settle_later(result.run_id, result)
        self.core.store_ref.tell(
            encode(SaveCheckpoint(self.session_id, document, run_id=result.run_id))
        )
        self._start_next()

    def _publish(self, current: _Run) -> None:
        if current.events:
            events, current.events = current.events, []
            self.core.count_events(len(events))
            if self.core.has_subscribers():
                self.core.bus_ref.tell(encode(Publish(events=events)))

    def _dispatch(self, current: _Run, fn: Callable[..., Any], *args: Any) -> None:
        """Run a callback off the scheduler; its outcome returns as an EffectDone message."""
        self._publish(current)
        self._next_token += 1
        token = current.token = self._next_token
        run_id = current.run.run_id
        ref = self.actor_ref

        def deliver(ok: bool, value: Any) -> None:
            self._outcomes.append((token, ok, value))
            try:
                ref.tell(encode(EffectDone(run_id, token)))
            except Exception:  # the session stopped meanwhile: its runs are settled already
                self._take_outcome(token)

        if _is_async(fn):
            self.core.bridge.submit(fn, args, deliver)
            return

        def call_sync() -> Any:
            value = fn(*args)
            if inspect.isawaitable(value):  # e.g. a partial of an async def: finish on the loop
                self.core.bridge.submit(_await, (value,), deliver)
                return _PENDING
            return value

        def finish(ok: bool, value: Any) -> None:
            if not (ok and value is _PENDING):
                deliver(ok, value)

        self.core.io_pool.submit(call_sync, (), finish)


_PENDING = object()
