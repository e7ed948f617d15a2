"""What a session offers wherever it runs: one protocol for a runtime's and a cluster's."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Protocol, runtime_checkable

from praxo_actors.models import Message, RunResult

__all__ = ["AgentSession", "AwaitableRun"]


@runtime_checkable
class AwaitableRun(Protocol):
    """The future of one run: ``get(timeout=...)`` from a thread, or ``await`` it."""

    run_id: str

    def get(self, *, timeout: float | None = None) -> RunResult:
        """Wait for the run's result (or raise its error), at most ``timeout`` seconds."""
        ...

    def __await__(self) -> Generator[Any, None, RunResult]:
        """Await the run's result without blocking the event loop."""
        ...


@runtime_checkable
class AgentSession(Protocol):
    """A session of an agent: :class:`SessionHandle` on one host, ``ClusterSession`` on many.

    Code written against it runs on either runtime.
    """

    id: str

    @property
    def agent(self) -> str:
        """The agent that runs the session's runs."""
        ...

    def run(self, input: str, deadline: float | None = None) -> AwaitableRun:
        """Queue a run of ``input``; return its future at once."""
        ...

    async def arun(self, input: str, deadline: float | None = None) -> RunResult:
        """Run ``input`` and return its result."""
        ...

    def resume(self, value: Any, deadline: float | None = None) -> AwaitableRun:
        """Go on with the session's interrupted run; return its future at once."""
        ...

    async def aresume(self, value: Any, deadline: float | None = None) -> RunResult:
        """Go on with the session's interrupted run and return its result."""
        ...

    def result(self, run_id: str, timeout: float = ...) -> RunResult:
        """Return the result of run ``run_id`` of this session, or raise its error."""
        ...

    async def aresult(self, run_id: str, timeout: float = ...) -> RunResult:
        """Return the result of run ``run_id`` of this session, awaited."""
        ...

    def submit(self, input: str, deadline: float | None = None) -> str:
        """Queue a run of ``input`` and return its id at once."""
        ...

    def history(self, timeout: float = ...) -> list[Message]:
        """Return the session's committed messages."""
        ...

    async def ahistory(self, timeout: float = ...) -> list[Message]:
        """Return the session's committed messages, awaited."""
        ...
