"""Resume the durable runs a previous process left in the store (``resume=True``,
``runtime.resume_pending()``): restoring a session resumes its journaled run, then runs the
runs its inbox holds (accepted by ``submit``, not begun), in order."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors._errors import AgentError, PraxoError, ProtocolError
from praxo_actors.actors._checks import any_thread, loop_owned
from praxo_actors.codes import (
    PROTOCOL_INVALID_MESSAGE,
    RUNTIME_STOPPED,
    RUNTIME_TIMEOUT,
    STORE_FAILED,
)
from praxo_actors.runtime._protocol import LoadPending, Pending, decode, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._agents import Agents
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["Resumer"]


@loop_owned
class Resumer:
    """Which sessions hold a journaled run, by agent; wakes them when their agent is known.

    The store is read on the caller's thread (it waits); the plan is kept, and sessions are
    woken, on the loop's thread, where agents are registered.
    """

    def __init__(self, kernel: Kernel, agents: Agents, timeout: float) -> None:
        self.kernel = kernel
        self.agents = agents
        self.timeout = timeout
        self._plan: dict[str, list[str]] = {}

    @any_thread
    def pending(self) -> dict[str, list[str]]:
        """Read every session with a journaled run from the store: agent name -> session ids.

        Raises:
            PraxoError: ``RUNTIME_STOPPED``, ``RUNTIME_TIMEOUT`` or ``STORE_FAILED``.
        """
        try:
            reply = self._ask().get(timeout=self.timeout)
        except pykka.Timeout:
            raise PraxoError(RUNTIME_TIMEOUT, "the store did not answer") from None
        except Exception as exc:
            raise _store_error(exc) from None
        return self._plan_of(reply)

    @any_thread
    async def apending(self) -> dict[str, list[str]]:
        """:meth:`pending`, awaited."""
        try:
            async with asyncio.timeout(self.timeout):
                reply = await self._ask()
        except TimeoutError:
            raise PraxoError(RUNTIME_TIMEOUT, "the store did not answer") from None
        except Exception as exc:
            raise _store_error(exc) from None
        return self._plan_of(reply)

    def _ask(self) -> pykka.Future[Any]:
        return self.kernel.ask_store(encode(LoadPending()))

    def _plan_of(self, reply: Any) -> dict[str, list[str]]:
        try:
            decoded = decode(reply)
        except Exception as exc:
            raise _store_error(exc) from None
        if not isinstance(decoded, Pending):
            raise ProtocolError(PROTOCOL_INVALID_MESSAGE, "bad store reply")
        plan: dict[str, list[str]] = {}
        seen: set[str] = set()  # a session with runs in progress and accepted: woken once
        for session_id, run in zip(decoded.sessions, decoded.runs, strict=True):
            if session_id not in seen:
                seen.add(session_id)
                plan.setdefault(run.agent, []).append(session_id)
        return plan

    @any_thread
    def plan(self) -> None:
        """Remember what to resume as agents register (``Runtime.start(..., resume=True)``)."""
        self.kernel.call(self.adopt, self.pending(), timeout=self.timeout)

    def adopt(self, plan: dict[str, list[str]]) -> None:
        """Keep ``plan``, and wake at once the sessions of the agents already registered."""
        self._plan = plan
        for name in list(plan):
            if name in self.agents:
                self.agent_registered(name)

    def agent_registered(self, name: str) -> None:
        """Wake the sessions of the plan that wait for agent ``name``."""
        sessions = self._plan.pop(name, [])
        if sessions:
            self.wake(sessions)

    def wake(self, sessions: list[str]) -> None:
        """Activate ``sessions`` (each resumes its journaled run)."""
        for session_id in sessions:
            self.kernel.wake(session_id)

    @any_thread
    def resume_pending(self) -> int:
        """Restore every session with a journaled run of a registered agent; return how many."""
        return self._wake_registered(self.pending())

    @any_thread
    async def aresume_pending(self) -> int:
        """:meth:`resume_pending`, awaited."""
        return self._wake_registered(await self.apending())

    def _wake_registered(self, plan: dict[str, list[str]]) -> int:
        # Any thread: the agents' view is immutable, and the wake is posted to the loop.
        view = self.agents.view()
        sessions = [sid for name, ids in plan.items() if name in view.factories for sid in ids]
        if sessions and not self.kernel.post(self.wake, sessions):
            raise AgentError(RUNTIME_STOPPED, "the runtime has stopped")
        return len(sessions)


def _store_error(exc: Exception) -> PraxoError:
    """The code a failed read of the pending runs gives its caller."""
    if isinstance(exc, PraxoError):
        return exc
    if isinstance(exc, pykka.ActorDeadError):
        return AgentError(RUNTIME_STOPPED, "the runtime has stopped")
    return PraxoError(STORE_FAILED, f"{type(exc).__name__}: {exc}")
