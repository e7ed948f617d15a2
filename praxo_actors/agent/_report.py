"""What a run reports on its way: its numbered events, and the failures that end it.

Both the step loop (``_machine``) and the tool-call step (``_tool_step``) end a run through
these: with a code (:func:`_fail`), or with a callback's exception (:func:`_crashed`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from praxo_actors._errors import AgentError
from praxo_actors.agent._effects import Effect, Emit
from praxo_actors.agent._options import Sink
from praxo_actors.models import Event

__all__ = ["CALLBACK", "RunInterrupted"]

CALLBACK = "AGENT_CALLBACK_EXCEPTION"


class _Events:
    """Numbers a run's events from 0 and stamps them with the driver's clock."""

    __slots__ = ("clock", "run_id", "seq", "session_id", "sink")

    def __init__(self, sink: Sink, run_id: str, session_id: str, clock: Callable[[], int]) -> None:
        self.sink = sink
        self.run_id = run_id
        self.session_id = session_id
        self.clock = clock
        self.seq = 0

    def __call__(self, type: str, data: dict[str, Any]) -> Emit:
        seq = self.seq
        self.seq = seq + 1
        return Emit(self.sink, Event(type, self.run_id, self.session_id, seq, self.clock(), data))


# Both emit run.failed (with a sink) and return the exception: ``raise (yield from _fail(...))``.
def _fail(
    event: _Events | None, run_id: str, code: str, message: str
) -> Generator[Effect, Any, AgentError]:
    if event is not None:
        yield event("run.failed", {"code": code, "message": message})
    return AgentError(code, message, run_id)


class RunInterrupted(AgentError):
    """Thrown by a driver into a run whose callback is in flight: its deadline passed, or it
    was cancelled outright. The run fails with this code (``AGENT_DEADLINE``,
    ``AGENT_CANCELLED``) and its ``run.failed`` event says so."""


def _crashed(
    event: _Events | None, exc: BaseException, code: str
) -> Generator[Effect, Any, BaseException]:
    if event is not None:
        if isinstance(exc, RunInterrupted):
            yield event("run.failed", {"code": exc.code, "message": exc.message})
            return exc
        shown = exc.exc if isinstance(exc, _Carried) else exc
        yield event("run.failed", {"code": code, "message": f"{type(shown).__name__}: {shown}"})
    return exc


class _Carried(Exception):
    """Carries a callback's exception through the machine when it cannot be thrown as itself.

    A ``StopIteration`` thrown into a generator comes out as ``RuntimeError`` (PEP 479), and a
    ``BaseException`` would pass the machine's ``except Exception`` handlers by.
    """

    def __init__(self, exc: BaseException) -> None:
        super().__init__(exc)
        self.exc = exc
