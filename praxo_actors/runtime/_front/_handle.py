"""What a user holds: a handle on one session."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.actors import MNFuture
from praxo_actors.agent import new_run_id
from praxo_actors.agent._caller import capture
from praxo_actors.codes import EVENTS_INVALID_SUBSCRIPTION, RUNTIME_INVALID_INPUT, RUNTIME_STOPPED
from praxo_actors.models import Message, RunResult
from praxo_actors.runtime._events._stream import RunStream
from praxo_actors.runtime._front import _history, _stopping, _submit
from praxo_actors.runtime._front._inputs import check_text, deadline_in_ns, resume_document
from praxo_actors.runtime._front._inspect import interrupted_run
from praxo_actors.runtime._front._on_loop import on_loop, run_on_loop
from praxo_actors.runtime._front._results import run_result
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._kernel._runs import fail
from praxo_actors.runtime._kernel._waits import check_timeout
from praxo_actors.runtime._protocol import Crash, encode
from praxo_actors.runtime._schedule import _front as _sched_front
from praxo_actors.runtime._schedule._front import Schedule

if TYPE_CHECKING:
    from praxo_actors.runtime._front._runtime import Runtime
    from praxo_actors.runtime._kernel._kernel import Kernel

__all__ = ["SessionHandle"]


class SessionHandle:
    """A lightweight handle on one session; creating it starts nothing.

    A thin front: every method reaches the runtime's kernel through its public methods, which
    post to the runtime's loop (nothing here reads the kernel's state from the caller's thread).
    """

    def __init__(
        self, runtime: Runtime, kernel: Kernel, session_id: str, agent: str | None
    ) -> None:
        self._runtime = runtime  # for the streams of its runs
        self._kernel = kernel
        self.id = session_id
        # None: the agent the session was last run with, which the session itself applies to
        # each run (see :mod:`~praxo_actors.runtime._front._remembered`).
        self._agent = agent
        # The last run submitted through this handle, until its result is asked for: a run
        # that completes before ``result(run_id)`` is called is answered from here, not the store.
        self._submitted: RunFuture | None = None

    def __repr__(self) -> str:
        return f"<SessionHandle {self.id!r} agent={self._agent!r}>"

    @property
    def agent(self) -> str:
        """The agent that runs this session's runs.

        For a handle made with no agent, the agent the session was last run with (``"default"``
        for a session never run), read once (from the runtime's loop, else the store) and kept.

        Raises:
            PraxoError: ``RUNTIME_TIMEOUT`` or the store's own code, when it must be read.
        """
        if self._agent is None:
            from praxo_actors.runtime._front._remembered import remembered_agent

            self._agent = remembered_agent(self._runtime, self.id)
        return self._agent

    def _agent_for_run(self) -> str:
        """The agent to name in a run: ``""`` lets the session run it with its last one."""
        return "" if self._agent is None else self._agent

    def run(self, input: str, deadline: float | None = None) -> RunFuture:
        """Queue a run of ``input``; return its future at once (from any thread).

        The session is activated (restored from its checkpoint) if it is not live. The future
        gives the :class:`~praxo_actors.models.RunResult`, or raises
        :class:`~praxo_actors.AgentError` (with the run's code), a callback's own exception, or
        :class:`~praxo_actors.PraxoError` (``SESSION_BUSY``, ``SESSION_OVERLOADED``,
        ``RUNTIME_SESSION_LIMIT``, ``SESSION_CRASHED``, ``RUNTIME_STOPPED``...).

        Args:
            input: The user's message text.
            deadline: Seconds from now; checked between steps (``AGENT_DEADLINE``).

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a non-str input or a bad deadline.
        """
        if not isinstance(input, str):
            raise PraxoError(RUNTIME_INVALID_INPUT, "input must be a str")
        check_text(input, "input")
        return self._submit(new_run_id(), input, deadline, None)

    def _submit(
        self,
        run_id: str,
        input: str,
        deadline: float | None,
        resume: str | None,
        journal: bool = False,
        parent: str | None = None,
        chain: tuple[str, ...] = (),
    ) -> RunFuture:
        kernel = self._kernel
        deadline_ns = (
            None if deadline is None else deadline_in_ns(deadline, kernel.clock.monotonic_ns)
        )
        capture(run_id)  # the caller's span, the run's parent
        future = RunFuture(run_id, self.id, kernel.request_cancel)
        agent = "" if self._agent is None else self._agent  # "": the session's last agent
        args = (future, agent, input, deadline_ns, resume, journal, parent, chain)
        if not kernel.post_now(kernel.submit, *args):
            fail(future, AgentError(RUNTIME_STOPPED, "the runtime has stopped"))
        return future

    def _post(self, future: RunFuture, fn: Callable[..., None], *args: Any) -> RunFuture:
        """Post ``fn(*args)`` to the kernel, which settles ``future`` (failed at once if the
        runtime's loop has closed; a stopping kernel refuses it with ``RUNTIME_STOPPED``)."""
        if not self._kernel.post_now(fn, *args):
            fail(future, AgentError(RUNTIME_STOPPED, "the runtime has stopped"))
        return future

    def resume(
        self, value: Any, deadline: float | None = None, timeout: float | None = None
    ) -> RunFuture:
        """Go on with the session's interrupted run; ``value`` answers what it asked.

        It returns the run's future at once, from any thread (the runtime's loop included): the
        runtime's loop finds the interrupted run when the resume arrives, and runs given to the
        session after this call wait behind it. For a tool's ``Interrupt``, ``value`` (JSON)
        becomes that call's result; for an approval, ``True``, ``False`` or
        ``{"approved": True, "arguments": {...}}``. The future is the same run's: called off the
        runtime's loop, ``resume`` finds the interrupted run first, so the future's ``run_id``
        is that run's from the start (on the loop it becomes that run's once the loop has found
        it, before the future settles); its result's ``run_id`` is that run's. It fails with
        ``SESSION_NOT_INTERRUPTED`` when no run is pending, ``AGENT_INVALID_RESUME`` for a
        value the run cannot take (the run stays interrupted: resume it again with a value it
        takes), ``RUNTIME_TIMEOUT`` when the interrupted run is not found within ``timeout``.

        Of concurrent resumes of one run (a double click), exactly one resumes it; each other
        fails at once with ``SESSION_NOT_INTERRUPTED``, each caller on its own future.

        Args:
            value: The answer (JSON).
            deadline: Seconds from now, for the resumed run (as :meth:`run`'s).
            timeout: Seconds the loop may take to find the interrupted run (None: the
                runtime's ``timeout``).

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a value that is not JSON, a bad deadline
                or timeout.
        """
        document = resume_document(value)
        kernel = self._kernel
        deadline_ns = deadline_in_ns(deadline, kernel.clock.monotonic_ns)
        check_timeout(timeout, none=True, zero=False)
        run_id = self._interrupted(timeout) or new_run_id()
        future = RunFuture(run_id, self.id, kernel.request_cancel)
        resume = kernel.resume
        agent = self._agent_for_run()
        return self._post(future, resume, future, agent, deadline_ns, document, timeout)

    def _interrupted(self, timeout: float | None) -> str | None:
        """The id of the session's interrupted run, found on the loop (None on the loop itself,
        or when it is not found: the resume then finds it, or says why not, on its future)."""
        kernel = self._kernel
        if on_loop(kernel.host):
            return None
        bound = kernel.timeout if timeout is None else timeout
        try:
            return run_on_loop(kernel.host, lambda: interrupted_run(kernel, self.id), bound)
        except Exception:
            return None

    async def aresume(self, value: Any, deadline: float | None = None) -> RunResult:
        """:meth:`resume`, awaited: its result (safe on the runtime's own loop).

        Cancelling the awaiting task cancels the resumed run, as for :meth:`arun`.

        Raises:
            PraxoError: As :meth:`resume` and its future.
        """
        return await self._outcome(self.resume(value, deadline))

    async def arun(self, input: str, deadline: float | None = None) -> RunResult:
        """Run ``input`` and return its result: a coroutine, for ``create_task``, ``wait_for``...

        Cancelling the awaiting task cancels the run at once: an ``async`` callback in flight is
        cancelled, the run fails with ``AGENT_CANCELLED`` and commits nothing.

        Raises:
            PraxoError: As :meth:`run` and its future.
        """
        future = self.run(input, deadline)
        try:  # as :meth:`_outcome` (inline: one coroutine per run, not two)
            return await future
        except asyncio.CancelledError:
            if not future.done():
                self._kernel.post(self._kernel.cancel, future.run_id, True)
            raise

    async def _outcome(self, future: RunFuture) -> RunResult:
        """Await a run's future; cancelling the awaiting task cancels the run at once."""
        try:
            return await future
        except asyncio.CancelledError:
            if not future.done():
                self._kernel.post(self._kernel.cancel, future.run_id, True)
            raise

    def history(self, timeout: float = 5.0) -> list[Message]:
        """Return the session's committed messages (from its checkpoint if it is not live).

        Raises:
            PraxoError: ``RUNTIME_TIMEOUT``, ``RUNTIME_STOPPED``, a checkpoint code, or
                ``RUNTIME_BLOCKING_CALL`` on the runtime's loop thread (use :meth:`ahistory`).
        """
        return _history.history(self._ready, self._kernel, self.id, timeout)

    async def ahistory(self, timeout: float = 5.0) -> list[Message]:
        """Like :meth:`history`, awaited (safe on the runtime's own event loop)."""
        return await _history.ahistory(self._ready, self._kernel, self.id, timeout)

    def _ready(self) -> MNFuture[pykka.ActorRef[Any] | None]:
        """Return a future of the session's actor once it is live (None if it is not)."""
        kernel = self._kernel
        ready: MNFuture[pykka.ActorRef[Any] | None] = MNFuture()
        if not kernel.post(kernel.when_ready, self.id, ready.set):
            raise AgentError(RUNTIME_STOPPED, "the runtime has stopped")
        return ready

    def result(self, run_id: str, timeout: float | None = 5.0) -> RunResult:
        """Return the result of run ``run_id`` of this session, or raise its error.

        The run may be pending (this waits for it), among the session's last 100 runs (kept in
        the store, also across restarts: the ``RunResult``'s ``session`` is then the session
        as it is now), or a durable run left journaled by a previous process (the session is
        restored, which resumes it, and this waits for it to end). The last run submitted
        through this handle, once completed, is answered from the handle itself (no store
        read; its ``session`` is the session as that run left it). ``timeout`` bounds the wait
        for a run still going (None: as long as it takes; 0 polls); each store look-up is
        bounded by the runtime's ``timeout``. On the runtime's loop use :meth:`aresult`.

        Raises:
            AgentError: The run's own error (its code).
            PraxoError: ``RUNTIME_UNKNOWN_RUN``, ``RUNTIME_TIMEOUT``, ``RUNTIME_STOPPED``,
                ``RUNTIME_INVALID_INPUT``, or ``RUNTIME_BLOCKING_CALL`` on the loop thread.
        """
        return run_result(self, self._kernel, run_id, timeout)

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop the session actor now; runs still pending fail with ``AGENT_CANCELLED``.

        Its committed messages stay in its checkpoint. Return False if it was not live.

        Raises:
            PraxoError: ``RUNTIME_TIMEOUT`` if it has not stopped within ``timeout``;
                ``RUNTIME_BLOCKING_CALL`` on the runtime's loop thread (use :meth:`astop`).
        """
        kernel = self._kernel
        return _stopping.stop_with(self._ready, kernel, self.id, kernel.stop_session, timeout)

    def passivate(self, timeout: float = 5.0) -> bool:
        """Stop the session if it is idle (its state stays in its checkpoint); return success.

        Raises:
            PraxoError: As :meth:`stop` (on the runtime's loop, use :meth:`apassivate`).
        """
        kernel = self._kernel
        return _stopping.stop_with(self._ready, kernel, self.id, kernel.passivate, timeout)

    async def astop(self, timeout: float = 5.0) -> bool:
        """:meth:`stop`, awaited (safe on the runtime's own loop)."""
        kernel = self._kernel
        return await _stopping.astop_with(
            self._ready, kernel, self.id, kernel.stop_session, timeout
        )

    async def apassivate(self, timeout: float = 5.0) -> bool:
        """:meth:`passivate`, awaited (safe on the runtime's own loop)."""
        kernel = self._kernel
        return await _stopping.astop_with(self._ready, kernel, self.id, kernel.passivate, timeout)

    @property
    def live(self) -> bool:
        """Whether an actor hosts (or is being started to host) this session now.

        The runtime's loop answers (off it, this waits for it, bounded by the runtime's
        ``timeout``); False once the runtime has stopped.
        """
        kernel = self._kernel
        try:
            return kernel.call(kernel.is_live, self.id, timeout=kernel.timeout)
        except PraxoError as exc:
            if exc.code == "RUNTIME_STOPPED":
                return False
            raise

    def crash_for_testing(self, reason: str = "crash requested") -> None:
        """Make the session actor fail as if its code raised (a test hook for crash recovery)."""
        ref = self._ready().get(timeout=self._kernel.timeout)
        if ref is not None:
            ref.tell(encode(Crash(reason)))

    def astream(self, input: str, deadline: float | None = None, buffer: int = 1000) -> RunStream:
        """Run ``input`` and return a stream of that run's events (call it inside a coroutine).

        The stream is subscribed before the run is sent, so no event of the run is missed
        (its ``model.delta``s included); it ends after the run's terminal event.
        ``await stream.result()`` gives the :class:`RunResult` or raises the run's error.
        Cancelling the task that iterates the stream cancels the run, as with :meth:`arun`.
        The run is never slowed by its reader: past ``buffer`` unread events the newest are
        dropped and counted in ``stream.dropped`` (the terminal event is always kept).

        Raises:
            PraxoError: As :meth:`run`; ``EVENTS_INVALID_SUBSCRIPTION`` for a bad ``buffer``;
                ``RUNTIME_STOPPED``.
            RuntimeError: No event loop is running in this thread.
        """
        if not isinstance(input, str):
            raise PraxoError(RUNTIME_INVALID_INPUT, "input must be a str")
        check_text(input, "input")
        if isinstance(buffer, bool) or not isinstance(buffer, int) or buffer < 1:
            raise PraxoError(EVENTS_INVALID_SUBSCRIPTION, "buffer must be an int >= 1")
        run_id = new_run_id()
        stream = RunStream(self._kernel, self.id, run_id, buffer)
        try:
            stream._attach(self._submit(run_id, input, deadline, None))
        except BaseException:
            stream._end()
            raise
        return stream

    def submit(self, input: str, deadline: float | None = None) -> str:
        """Queue a run of ``input`` and return its id at once; poll with :meth:`result`.

        A durable agent's run is in the store before this returns (on the runtime's own loop
        use :meth:`asubmit`), so it is resumed after a crash or a restart of the process.

        Raises:
            PraxoError: ``RUNTIME_INVALID_INPUT``; ``RUNTIME_BLOCKING_CALL`` for a durable
                agent on the runtime's loop thread. Refusals (``SESSION_BUSY``...) are the
                run's outcome, given by :meth:`result`.
        """
        return _submit.submit(self, self._kernel, input, deadline)

    async def asubmit(self, input: str, deadline: float | None = None) -> str:
        """:meth:`submit`, awaited (safe on the runtime's own loop)."""
        return await _submit.asubmit(self, self._kernel, input, deadline)

    async def aresult(self, run_id: str, timeout: float | None = 5.0) -> RunResult:
        """:meth:`result`, awaited (safe on the runtime's own loop)."""
        return await _submit.aresult(self, self._kernel, run_id, timeout)

    def schedule(
        self,
        input: str,
        *,
        after: float | timedelta | None = None,
        at: datetime | None = None,
        every: float | timedelta | None = None,
        cron: str | None = None,
        tz: str | None = None,
        key: str | None = None,
        catch_up: str = "once",
    ) -> Schedule:
        """Run ``input`` in this session later, or again and again; see docs/how-to/schedules.md.

        Args:
            input: The message each fire submits as a run (durable if the agent is).
            after: Seconds (or a timedelta) from now: one fire.
            at: An aware datetime: one fire.
            every: Seconds (or a timedelta) > 0: a fire each period, the first one from now.
            cron: A five-field cron expression, read in ``tz`` (an IANA zone; UTC if None).
            key: One schedule per key and session: the same key returns the one stored.
            catch_up: Fires missed while no runtime ran: ``"once"``, ``"all"`` or ``"skip"``.

        Raises:
            PraxoError: ``SCHEDULE_INVALID`` for bad arguments (give exactly one of ``after``,
                ``at``, ``every``, ``cron``); ``RUNTIME_BLOCKING_CALL`` on the runtime's loop
                thread (use :meth:`aschedule`); ``STORE_FAILED``.
        """
        when = {"after": after, "at": at, "every": every, "cron": cron, "tz": tz}
        return _sched_front.schedule(self, input, key=key, catch_up=catch_up, **when)

    async def aschedule(
        self,
        input: str,
        *,
        after: float | timedelta | None = None,
        at: datetime | None = None,
        every: float | timedelta | None = None,
        cron: str | None = None,
        tz: str | None = None,
        key: str | None = None,
        catch_up: str = "once",
    ) -> Schedule:
        """:meth:`schedule`, awaited (safe on the runtime's own loop)."""
        when = {"after": after, "at": at, "every": every, "cron": cron, "tz": tz}
        return await _sched_front.aschedule(self, input, key=key, catch_up=catch_up, **when)

    def schedules(self) -> list[Schedule]:
        """Return this session's schedules, in id order (see :meth:`Runtime.schedules`)."""
        return _sched_front.schedules(self._runtime._schedules, self.id)

    async def aschedules(self) -> list[Schedule]:
        """:meth:`schedules`, awaited (safe on the runtime's own loop)."""
        return await _sched_front.aschedules(self._runtime._schedules, self.id)
