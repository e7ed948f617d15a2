"""The one boundary between a session and the code its users supply.

Every call a session makes into user code goes through :func:`enter`: the agent factory and the
start of a run (:func:`~praxo_actors.runtime._session._run.open_run`), each step of the agent
loop (which calls ``instructions``, structured-output types and approval checks), the start of a
callback (a model, tool, repairer or summariser; on the I/O pool or as a task, whose outcome
comes back as a message), the encoding of what a callback returned, and the commit of a result.
What user code raises is decided here, once, as Pykka's actor loop decides once for a handler:

- an ``Exception`` keeps the Core's rule: it fails the run and reaches the run's caller
  unchanged (after ``run.failed`` where the agent loop emits one);
- any other ``BaseException`` — ``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``, a test
  framework's outcome (pytest's ``fail``/``skip``) — is caught as well and fails that run only:
  it travels as a value to the run's future and is raised again on the caller's side, by
  ``RunFuture.get`` or ``await``. Raised inside an actor it would stop every actor of the
  process (Pykka's ``stop_all``, which on the loop thread waits for itself: the whole runtime
  would be wedged).

:func:`fenced` is the last line behind it: a session handler that still lets a
``BaseException`` out turns it into an ordinary crash of that session alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from praxo_actors._errors import AgentError
from praxo_actors.agent._report import CALLBACK
from praxo_actors.codes import SESSION_CRASHED
from praxo_actors.models import Event

__all__ = ["enter", "failed_event", "fenced", "text_of", "unreported"]


def enter(fn: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
    """Call ``fn(*args)``; return ``(True, value)`` or ``(False, what it raised)``.

    Nothing escapes: a ``BaseException`` is returned like any exception, for the caller to
    fail the run with (never to raise on an actor's thread).
    """
    try:
        return True, fn(*args)
    except BaseException as exc:
        return False, exc


def text_of(exc: BaseException) -> str:
    """Return ``"<type>: <text>"`` for ``exc``, even when its ``__str__`` raises."""
    ok, text = enter(str, exc)
    return f"{type(exc).__name__}: {text if ok else '(its text could not be read)'}"


def unreported(exc: BaseException, thrown: BaseException | None) -> bool:
    """Whether the agent loop ended with ``exc`` without its ``run.failed``: a ``BaseException``
    user code raised inside the loop itself (instructions, an output type, an approval check),
    which the loop, reporting ``Exception``s only, let pass. A callback's (``thrown`` into the
    loop) was reported."""
    return not isinstance(exc, Exception) and exc is not thrown


def failed_event(run_id: str, session_id: str, last_seq: int, exc: BaseException) -> Event:
    """Return the ``run.failed`` that follows event ``last_seq`` of a run ended by ``exc``."""
    data = {"code": CALLBACK, "message": text_of(exc)}
    return Event("run.failed", run_id, session_id, last_seq + 1, time.time_ns(), data)


def fenced(exc: BaseException) -> BaseException:
    """Return what a session handler raises for ``exc``: an ``Exception`` as itself, anything
    else as a :class:`PraxoError` ``SESSION_CRASHED`` (caused by it), so that only this
    session's actor stops."""
    if isinstance(exc, Exception):
        return exc
    crash = AgentError(SESSION_CRASHED, f"a session handler raised {text_of(exc)}")
    crash.__cause__ = exc
    return crash
