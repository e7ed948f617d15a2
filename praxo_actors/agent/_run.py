"""The handle a driver uses to step one run of the agent state machine."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

from praxo_actors._errors import AgentError
from praxo_actors.agent._effects import Effect
from praxo_actors.agent._interrupt import PENDING_KEY, pending_of, resume_value
from praxo_actors.agent._machine import Machine, Steps, machine, throw_into
from praxo_actors.agent._options import AgentOptions
from praxo_actors.agent._report import _Carried
from praxo_actors.agent._runid import new_run_id
from praxo_actors.codes import SESSION_INTERRUPTED, SESSION_NOT_INTERRUPTED
from praxo_actors.models import Message, RunResult, Session

__all__ = ["AgentRun", "resume_run", "start_run"]


class AgentRun:
    """One run of the agent loop, suspended at its current :attr:`effect`.

    A driver repeats: perform :attr:`effect`, then pass the reply to :meth:`send` — or, if
    performing it raised an ``Exception``, pass that exception to :meth:`throw` (never swallow
    it: the run decides, see below). Both return the next effect, or ``None`` once the run has
    completed and :attr:`result` holds its :class:`RunResult`.

    :meth:`send` and :meth:`throw` raise when the run ends otherwise:

    - :class:`AgentError` with a code, after the ``run.failed`` event was emitted;
    - the callback's own exception, unchanged, after ``run.failed`` with
      ``AGENT_CALLBACK_EXCEPTION`` (``AGENT_STRUCTURED_OUTPUT`` for a repairer);
    - a sink's exception, unchanged and with no further event.

    The run holds no thread, clock or I/O of its own, so it can be driven synchronously, from
    asyncio, or one message at a time by an actor.
    """

    __slots__ = ("_gen", "_result", "effect", "run_id", "thrown")

    def __init__(self, gen: Machine, run_id: str) -> None:
        self._gen = gen
        self._result: RunResult | None = None
        self.run_id = run_id
        self.effect: Effect | None = None
        # The callback exception last thrown in: if the run ends with it, it is the callback's.
        self.thrown: BaseException | None = None
        self.send(None)

    def send(self, reply: Any = None) -> Effect | None:
        """Resume the run with the reply to the current effect; return the next effect."""
        return self._resume(self._gen.send, reply)

    def throw(self, exc: BaseException) -> Effect | None:
        """Resume the run with the exception performing the current effect raised.

        Any exception may be passed, a ``BaseException`` or ``StopIteration`` too; if the run ends
        with it, the same object is raised here.
        """
        self.thrown = exc
        try:
            self.effect = throw_into(self._gen, exc)
        except StopIteration as stop:
            self.effect = None
            if stop is exc:  # the callback's own StopIteration, not the run's return
                raise
            self._result = stop.value
        except BaseException:
            self.effect = None
            raise
        return self.effect

    def _resume(self, step: Callable[[Any], Effect], value: Any) -> Effect | None:
        try:
            self.effect = step(value)
        except StopIteration as stop:
            self.effect = None
            self._result = stop.value
            return None
        except _Carried as carried:
            # The run failed with a callback's exception that had to be carried (a sink was told
            # first, so it surfaces here rather than in throw): raised as itself, below.
            self.effect = None
            exc = carried.exc
        except BaseException:
            self.effect = None
            raise
        else:
            return self.effect
        raise exc

    def close(self) -> None:
        """Abandon the run where it stands; no further events are emitted."""
        self.effect = None
        self._gen.close()

    @property
    def done(self) -> bool:
        """Whether the run has ended (completed, failed or closed)."""
        return self.effect is None

    @property
    def result(self) -> RunResult:
        """The completed run's result.

        Raises:
            RuntimeError: The run has not completed.
        """
        if self._result is None:
            raise RuntimeError(f"run {self.run_id} has not completed")
        return self._result


def start_run(
    options: AgentOptions,
    session: Session,
    input: str | Message,
    run_id: str | None = None,
    clock: Callable[[], int] = time.time_ns,
) -> AgentRun:
    """Start a run and return it suspended at its first effect.

    Args:
        options: The agent's options.
        session: The conversation so far; never mutated.
        input: The user's text, or a ready user :class:`Message` (e.g. with image blocks).
        run_id: The run's id; None draws a fresh one with :func:`new_run_id`.
        clock: Gives each event's ``time_ns``.

    Raises:
        TypeError: An argument of the wrong type.
    """
    if not isinstance(options, AgentOptions):
        raise TypeError("options must be AgentOptions (see new_agent_options)")
    if not isinstance(session, Session):
        raise TypeError("session must be a Session")
    if PENDING_KEY in session.metadata:
        raise AgentError(
            SESSION_INTERRUPTED, "the session's last run is interrupted: resume it first"
        )
    if isinstance(input, str):
        user = Message(role="user", content=input)
    elif isinstance(input, Message):
        user = input
    else:
        raise TypeError(f"input must be str or Message, got {type(input).__name__}")
    rid = new_run_id() if run_id is None else run_id
    telemetry = _telemetry(options)
    gen = machine(options, session, user, rid, clock, traced=telemetry is not None)
    return AgentRun(_wrapped(gen, telemetry, options, session.id, rid, user), rid)


_modules = sys.modules
# A provider named in these variables is made by the API on its first use, not by the host.
_FROM_ENV = any(
    name in os.environ for name in ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
)


def _telemetry(options: AgentOptions) -> Any:
    """The telemetry a run of ``options`` reports to, or None (not traced at all)."""
    # One attribute and one dict lookup when nothing is configured (see bench/otel.py).
    if not (options._telemetry or ("opentelemetry" in _modules and (_FROM_ENV or _global_set()))):
        return None
    from praxo_actors.agent._tracing import telemetry_for

    # None too when the providers found are placeholders.
    return telemetry_for(options)


def _wrapped(
    gen: Steps,
    telemetry: Any,
    options: AgentOptions,
    session_id: str,
    run_id: str,
    user: Message,
) -> Machine:
    """Wrap the run in its spans and metrics (with ``telemetry``; else it is its own)."""
    if telemetry is None:
        # Not traced: the machine yields no RefusedCall, only the effects drivers perform.
        machine: Machine = gen  # type: ignore[assignment]  # not cast: a call on every run
        return machine
    from praxo_actors.agent._tracing import traced

    return traced(gen, telemetry, options, session_id, run_id, user)


def _global_set() -> bool:
    # The API keeps the global providers in these module attributes (None until set); when a
    # version of it does not, assume one may be set and let the tracing module decide.
    api = _modules.get("opentelemetry.trace")
    if api is not None and getattr(api, "_TRACER_PROVIDER", api) is not None:
        return True
    api = _modules.get("opentelemetry.metrics._internal")
    return api is not None and getattr(api, "_METER_PROVIDER", api) is not None


def resume_run(
    options: AgentOptions,
    session: Session,
    value: Any,
    clock: Callable[[], int] = time.time_ns,
) -> AgentRun:
    """Go on with the session's interrupted run, ``value`` answering what it asked.

    Raises:
        AgentError: ``SESSION_NOT_INTERRUPTED`` when no run is pending; ``AGENT_INVALID_RESUME``
            for a value the run cannot take; ``CHECKPOINT_INVALID`` for a malformed pending run.
        TypeError: An argument of the wrong type.
    """
    if not isinstance(options, AgentOptions):
        raise TypeError("options must be AgentOptions (see new_agent_options)")
    if not isinstance(session, Session):
        raise TypeError("session must be a Session")
    pending = pending_of(session)
    if pending is None:
        raise AgentError(SESSION_NOT_INTERRUPTED, "the session has no interrupted run")
    checked = resume_value(pending, value, pending.run_id)
    telemetry = _telemetry(options)
    resume = (pending, checked)
    gen = machine(options, session, None, pending.run_id, clock, resume, telemetry is not None)
    user = Message(role="user", content="")
    if telemetry is not None:  # the run's span shows the input the run answers
        users = [m for m in session.messages if m.role == "user"]
        user = users[-1] if users else user
    rid = pending.run_id
    return AgentRun(_wrapped(gen, telemetry, options, session.id, rid, user), rid)
