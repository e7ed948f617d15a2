"""Find the run a resume goes on with, on the loop, so that ``resume`` never waits for it.

``handle.resume(value)`` returns its future at once, from any thread; the run it resumes is
looked up here, on the runtime's loop, when the resume arrives (the session's actor is asked,
or its log read). Meanwhile the session's later runs and resumes are held, in order, so that a
resume followed by a run still reaches the session before the run. The future then takes the
resumed run's id and is admitted as any run is (the kernel refuses a resume of a run that is
not waiting with ``SESSION_NOT_INTERRUPTED``).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import TYPE_CHECKING

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.actors._checks import loop_owned
from praxo_actors.codes import AGENT_CANCELLED, RUNTIME_STOPPED, RUNTIME_TIMEOUT, STORE_FAILED
from praxo_actors.runtime._kernel._run_future import RunFuture

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._kernel import Kernel, Lookup

__all__ = ["ResumeFinder"]

# A run or resume held while its session's lookup runs: (future, agent, input, deadline,
# resume, whether it is a resume whose run is to be found, whether it is a submitted durable
# run to accept into its session's inbox).
Held = tuple[RunFuture, str, str, int | None, str | None, bool, bool]

_ALIASES_KEPT = 1000  # a future's first id, for a cancel that read it before the lookup ended


@loop_owned
class ResumeFinder:
    """Owned by the kernel, on the loop thread: the lookups of resumes and what they hold."""

    def __init__(self, kernel: Kernel, lookup: Lookup, timeout: float) -> None:
        self.kernel = kernel
        self.lookup = lookup
        self.timeout = timeout
        self.held: dict[str, list[Held]] = {}
        self.aliases: OrderedDict[str, str] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

    def holds(self, session_id: str) -> bool:
        """Return whether the session's runs wait for a lookup now."""
        return bool(self.held) and session_id in self.held

    def hold(
        self,
        future: RunFuture,
        agent: str,
        input: str,
        deadline_ns: int | None,
        resume: str | None,
        journal: bool = False,
    ) -> None:
        """Hold a run of a session whose lookup runs, to admit it after the lookup."""
        item = (future, agent, input, deadline_ns, resume, False, journal)
        self.held[future.session_id].append(item)

    def find(
        self,
        future: RunFuture,
        agent: str,
        deadline_ns: int | None,
        resume: str,
        timeout: float | None,
    ) -> None:
        """Look up the run ``future`` resumes, then admit it (behind what its session holds)."""
        session_id = future.session_id
        item: Held = (future, agent, "", deadline_ns, resume, True, False)
        if session_id in self.held:
            self.held[session_id].append(item)
            return
        self.held[session_id] = [item]
        bound = self.timeout if timeout is None else timeout
        task = asyncio.get_running_loop().create_task(self._find(session_id, bound))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def alias(self, run_id: str) -> str:
        """Return the id a resume's future took, given the one it was made with."""
        return self.aliases.get(run_id, run_id)

    def cancel(self, run_id: str) -> bool:
        """Cancel a resume still waiting for its lookup; return whether one was."""
        for items in self.held.values():
            for future, *_ in items:
                if future.run_id == run_id and not future.done():
                    self.kernel.refuse(future, AgentError(AGENT_CANCELLED, "cancelled", run_id))
                    return True
        return False

    def stop(self) -> None:
        """Refuse everything held (the runtime is stopping) and end the lookups."""
        held, self.held = self.held, {}
        for items in held.values():
            for future, *_ in items:
                if not future.done():
                    error = AgentError(RUNTIME_STOPPED, "the runtime stopped", future.run_id)
                    self.kernel.refuse(future, error)
        for task in list(self._tasks):
            task.cancel()

    async def _find(self, session_id: str, timeout: float) -> None:
        run_id: str | None = None
        error: PraxoError | None = None
        try:
            async with asyncio.timeout(timeout):
                run_id = await self.lookup(self.kernel, session_id)
        except TimeoutError:
            error = PraxoError(RUNTIME_TIMEOUT, f"no interrupted run found within {timeout} s")
        except PraxoError as exc:
            error = exc
        except Exception as exc:  # a store's own failure
            error = PraxoError(STORE_FAILED, f"{type(exc).__name__}: {exc}")
        self._found(session_id, run_id, error)

    def _found(self, session_id: str, run_id: str | None, error: PraxoError | None) -> None:
        items = self.held.pop(session_id, None)
        kernel = self.kernel
        same = True  # resumes before any other run resume the run just found
        for future, agent, input, deadline_ns, resume, find, journal in items or ():
            if future.done():
                continue  # cancelled meanwhile
            if not find:
                same = False
                kernel.submit(future, agent, input, deadline_ns, resume, journal)
            elif not same:
                assert resume is not None
                self.find(future, agent, deadline_ns, resume, None)
            elif error is not None:
                kernel.refuse(future, error)
            else:
                if run_id is not None:
                    self._rename(future, run_id)
                kernel.submit(future, agent, input, deadline_ns, resume)

    def _rename(self, future: RunFuture, run_id: str) -> None:
        self.aliases[future.run_id] = run_id
        if len(self.aliases) > _ALIASES_KEPT:
            self.aliases.popitem(last=False)
        future.run_id = run_id
