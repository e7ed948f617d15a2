"""What both supervisors share: starting, stopping and restarting children, and reports."""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, NoReturn

import msgspec
import pykka

from supervisors import _pykka_compat as compat
from supervisors._clock import Clock
from supervisors._errors import INVALID_SPEC, MAX_RESTARTS, START_FAILED, SupervisorError
from supervisors._log import get_logger
from supervisors._monitor import Down, Monitor, monitor
from supervisors._records import ChildCounts, ChildRecord, SupervisorStatistics
from supervisors._spec import ChildSpec, is_positive_seconds

__all__ = ["PING", "SupervisorBase"]

logger = get_logger("supervisors")

# A reply proves the child started; a dead child answers with ActorDeadError.
_PING = PING = compat.PING


@dataclass(frozen=True, slots=True)
class _ChildDown:
    """A child's monitor fired (told to the supervisor from the child's thread)."""

    key: Hashable  # None: a child whose record is shared (a DynamicSupervisor's temporaries)
    ref: pykka.ActorRef[Any]
    down: Down


@dataclass(frozen=True, slots=True)
class _RetryRestart:
    """Try a failed restart again (told by the supervisor to itself, behind queued calls)."""

    key: Hashable
    token: int


class _Child:
    """A supervisor's mutable record of one child; touched only in the supervisor's thread."""

    __slots__ = ("key", "monitor", "ref", "restarting", "spec", "token")

    def __init__(self, key: Hashable, spec: ChildSpec) -> None:
        self.key = key
        self.spec = spec
        self.ref: pykka.ActorRef[Any] | None = None
        self.monitor: Monitor | None = None
        self.restarting = False
        # Bumped on every change of state, so that a retry told earlier can be recognised
        # as stale when it arrives.
        self.token = 0

    def record(self) -> ChildRecord:
        spec = self.spec
        return ChildRecord(spec.id, self.ref, spec.restart, spec.type, self.restarting)


class SupervisorBase(pykka.ThreadingActor):
    """The machinery of a supervisor actor; see ``Supervisor`` and ``DynamicSupervisor``.

    A supervisor runs on a thread of its own: it blocks while a child starts or stops, as an
    OTP supervisor does, and its children may be of any Pykka actor kind.
    """

    def __init__(
        self, *, max_restarts: int, max_seconds: float, clock: Clock | None, name: str | None
    ) -> None:
        if not isinstance(max_restarts, int) or isinstance(max_restarts, bool) or max_restarts < 0:
            raise SupervisorError(
                INVALID_SPEC, f"max_restarts must be an int >= 0: {max_restarts!r}"
            )
        if not is_positive_seconds(max_seconds):
            raise SupervisorError(INVALID_SPEC, f"max_seconds must be positive: {max_seconds!r}")
        if clock is not None and not callable(clock):
            raise SupervisorError(INVALID_SPEC, f"clock must be callable: {clock!r}")
        if name is not None and not isinstance(name, str):
            raise SupervisorError(INVALID_SPEC, f"name must be a str: {name!r}")
        super().__init__()
        self._max_restarts = max_restarts
        self._max_seconds = float(max_seconds)
        self._clock: Clock = clock if clock is not None else time.monotonic
        # The newest max_restarts + 1 restart times are all the window check needs.
        self._restart_times: deque[float] = deque(maxlen=max_restarts + 1)
        self._label = name if name is not None else str(self.actor_ref)
        self._logger = logger.bind(supervisor=self._label)
        self._restarts = 0
        self._failed_restarts = 0
        self._abandoned = 0

    # -- the public API shared by both kinds -----------------------------------------------

    def which_children(self) -> list[ChildRecord]:
        """Return a record per child, in start order."""
        return [child.record() for child in self._all_children()]

    def count_children(self) -> ChildCounts:
        """Return OTP's counts: specs, active (running) children, supervisors, workers."""
        children = list(self._all_children())
        supervisors = sum(1 for child in children if child.spec.type == "supervisor")
        active = sum(1 for child in children if child.ref is not None and child.ref.is_alive())
        return ChildCounts(len(children), active, supervisors, len(children) - supervisors)

    def statistics(self) -> SupervisorStatistics:
        """Return this supervisor's counters (restarts, active children, ...)."""
        counts = self.count_children()
        return SupervisorStatistics(
            restarts=self._restarts,
            failed_restarts=self._failed_restarts,
            active=counts.active,
            specs=counts.specs,
            abandoned=self._abandoned,
        )

    # -- what each kind defines -----------------------------------------------------------------

    def _all_children(self) -> Iterable[_Child]:
        raise NotImplementedError

    def _find(self, key: Hashable) -> _Child | None:
        raise NotImplementedError

    def _restart(self, child: _Child) -> None:
        """Restart after ``child`` ended, by this supervisor's strategy (intensity counted)."""
        raise NotImplementedError

    def _forget(self, child: _Child) -> None:
        """Drop a child that ended and is not restarted (its spec too, if temporary)."""
        raise NotImplementedError

    def _terminate_all(self) -> None:
        raise NotImplementedError

    # -- Pykka hooks ------------------------------------------------------------------------

    def on_receive(self, message: Any) -> Any:
        """Handle the supervisor's internal messages."""
        match message:
            case _ChildDown():
                self._on_child_down(message)
            case _RetryRestart():
                self._on_retry(message)
            case _:
                self._report("warning", "unexpected_message", message=repr(message))
        return None

    def on_stop(self) -> None:
        """Stop every child (in the supervisor's thread, within each child's shutdown time)."""
        self._terminate_all()

    def on_failure(self, *_exc_info: object) -> None:
        """Stop every child when the supervisor itself crashes."""
        self._terminate_all()

    # -- children ------------------------------------------------------------------------

    def _start_child(self, child: _Child) -> pykka.ActorRef[Any]:
        """Start ``child`` and wait for it to answer; raise ``SUPERVISOR_START_FAILED`` if not."""
        launched = self._launch(child)
        return self._confirm(child, launched, launched[0].ask(_PING, block=False))

    def _launch(self, child: _Child) -> tuple[pykka.ActorRef[Any], Monitor, list[Down]]:
        """Call ``child``'s start function and monitor the actor it returns (not waited for)."""
        spec = child.spec
        try:
            ref = spec.start()
        except Exception as exc:
            self._start_failed(child, exc)
            raise SupervisorError(START_FAILED, f"child {spec.id!r}: start raised {exc!r}") from exc
        if not isinstance(ref, pykka.ActorRef):
            self._start_failed(child, None, returned=repr(ref))
            raise SupervisorError(START_FAILED, f"child {spec.id!r}: start returned {ref!r}")
        downs: list[Down] = []
        return ref, monitor(ref, self._down_teller(child.key, ref, downs)), downs

    def _confirm(
        self,
        child: _Child,
        launched: tuple[pykka.ActorRef[Any], Monitor, list[Down]],
        ping: pykka.Future[Any],
    ) -> pykka.ActorRef[Any]:
        """Wait for a launched child's answer to ``ping``; then it counts as started."""
        ref, child_monitor, downs = launched
        spec = child.spec
        try:
            ping.get(timeout=spec.start_timeout)
        except Exception as exc:
            child_monitor.cancel()
            if ref.is_alive():  # it did not answer in time, or would not answer at all
                self._stop_actor(spec, ref)
            cause = downs[0].exception if downs and downs[0].exception is not None else exc
            self._start_failed(child, cause)
            raise SupervisorError(
                START_FAILED, f"child {spec.id!r} did not start: {cause!r}"
            ) from cause
        child.ref = ref
        child.monitor = child_monitor
        child.restarting = False
        child.token += 1
        self._report("debug", "child_started", spec.id, ref=str(ref))
        return ref

    def _down_teller(
        self, key: Hashable, ref: pykka.ActorRef[Any], downs: list[Down]
    ) -> Callable[[Down], None]:
        return _DownTeller(self.actor_ref, key, ref, downs)

    def _terminate(self, child: _Child) -> None:
        """Stop ``child`` if it runs (within its shutdown time) and cancel a pending restart."""
        ref = child.ref
        child.ref = None
        child.restarting = False
        child.token += 1
        if child.monitor is not None:
            child.monitor.cancel()
            child.monitor = None
        if ref is not None:
            self._stop_actor(child.spec, ref)

    def _stop_actor(self, spec: ChildSpec, ref: pykka.ActorRef[Any]) -> bool:
        """Stop ``ref`` and wait up to ``spec.shutdown``; past that, abandon and report it."""
        return self._stop_ref(spec.id, spec.shutdown, ref)

    def _stop_ref(self, child_id: str, shutdown: float, ref: pykka.ActorRef[Any]) -> bool:
        try:
            ref.stop(block=False).get(timeout=shutdown)
        except pykka.Timeout:
            self._abandon(child_id, shutdown, ref)
            return False
        return True

    def _stop_actors(
        self, children: Iterable[_Child | tuple[str, float, pykka.ActorRef[Any]]]
    ) -> None:
        """Stop ``children`` all at once, each within its own shutdown time from now.

        A child is a record, or (id, shutdown, ref) for one whose monitor is already cancelled.
        """
        started = time.monotonic()
        pending: list[tuple[str, float, pykka.ActorRef[Any], pykka.Future[bool]]] = []
        for child in children:
            if isinstance(child, tuple):
                child_id, shutdown, ref = child
                pending.append((child_id, shutdown, ref, ref.stop(block=False)))
                continue
            running = child.ref
            if child.monitor is not None:
                child.monitor.cancel()
            child.ref, child.monitor, child.restarting = None, None, False
            child.token += 1
            if running is not None:
                spec = child.spec
                pending.append((spec.id, spec.shutdown, running, running.stop(block=False)))
        for child_id, shutdown, ref, future in pending:
            remaining = started + shutdown - time.monotonic()
            try:
                future.get(timeout=max(remaining, 0.0))
            except pykka.Timeout:
                self._abandon(child_id, shutdown, ref)

    def _abandon(self, child_id: str, shutdown: float, ref: pykka.ActorRef[Any]) -> None:
        # A thread cannot be killed: the child keeps its stop message and may yet stop.
        self._abandoned += 1
        self._report("error", "child_abandoned", child_id, ref=str(ref), shutdown=shutdown)

    # -- exits and restarts ----------------------------------------------------------------

    def _on_child_down(self, message: _ChildDown) -> None:
        child = self._find(message.key)
        if child is None or child.ref is not message.ref:
            return  # an exit the supervisor caused or already handled
        child.ref = None
        child.monitor = None
        spec = child.spec
        crashed = self._report_down(spec.id, spec.restart, message.down)
        if spec.restart == "permanent" or (spec.restart == "transient" and crashed):
            self._restart(child)
        else:
            self._forget(child)

    def _report_down(self, child_id: str, restart: str, down: Down) -> bool:
        """Report a child's end; return whether it crashed."""
        if down.reason != "normal":
            error = repr(down.exception) if down.exception is not None else down.reason
            self._report("error", "child_crashed", child_id, restart=restart, error=error)
            return True
        self._report("info", "child_exited", child_id, restart=restart)
        return False

    def _on_retry(self, message: _RetryRestart) -> None:
        child = self._find(message.key)
        if child is not None and child.restarting and child.token == message.token:
            self._restart(child)

    def _count_restart(self, child: _Child) -> None:
        """Count a restart against the intensity; past the limit, escalate."""
        now = self._clock()
        threshold = now - self._max_seconds
        times = self._restart_times
        # As OTP: a restart exactly max_seconds ago still counts.
        while times and times[0] < threshold:
            times.popleft()
        times.append(now)
        self._restarts += 1
        if len(times) > self._max_restarts:
            self._escalate(child)

    def _escalate(self, child: _Child) -> NoReturn:
        self._report(
            "error",
            "max_restart_intensity_reached",
            child.spec.id,
            max_restarts=self._max_restarts,
            max_seconds=self._max_seconds,
        )
        self._terminate_all()
        # Raised from a tell handler (a child's exit or a retry), so Pykka stops this actor
        # abnormally: its own supervisor sees a crash. Never a BaseException: Pykka would
        # then stop every actor in the process.
        raise SupervisorError(
            MAX_RESTARTS,
            f"{self._label}: more than {self._max_restarts} restarts in {self._max_seconds:g} s",
        )

    def _restart_failed(self, child: _Child) -> None:
        """Schedule another attempt without blocking the mailbox (OTP's try_again_restart)."""
        self._failed_restarts += 1
        child.restarting = True
        child.token += 1
        self.actor_ref.tell(_RetryRestart(child.key, child.token))

    def _restarted(self, child: _Child) -> None:
        self._report("info", "child_restarted", child.spec.id, ref=str(child.ref))

    # -- reports -----------------------------------------------------------------------

    def _start_failed(self, child: _Child, error: BaseException | None, **fields: Any) -> None:
        self._report("error", "child_start_failed", child.spec.id, error=repr(error), **fields)

    def _report(self, level: str, event: str, child_id: str | None = None, **fields: Any) -> None:
        if child_id is not None:
            fields["child_id"] = child_id
        getattr(self._logger, level)(event, **fields)


class _DownTeller:
    """A child's monitor callback: record the ``Down`` and tell the supervisor.

    A slotted object rather than a closure: one lives as long as each child (~150 bytes less).
    """

    __slots__ = ("downs", "key", "ref", "supervisor")

    def __init__(
        self,
        supervisor: pykka.ActorRef[Any],
        key: Hashable,
        ref: pykka.ActorRef[Any],
        downs: list[Down],
    ) -> None:
        self.supervisor = supervisor
        self.key = key
        self.ref = ref
        self.downs = downs

    def __call__(self, down: Down) -> None:
        self.downs.append(down)
        # A supervisor that has stopped has stopped its children too: nothing to tell.
        with contextlib.suppress(pykka.ActorDeadError):
            self.supervisor.tell(_ChildDown(self.key, self.ref, down))


class _SharedDownTeller(msgspec.Struct, gc=False):
    """The monitor callback of every child a supervisor keeps no record of its own for.

    One per supervisor, so such a child costs the collector no object of its own: the child is
    found again by its ref's URN. Not tracked by the collector (``gc=False``), so a child's
    watch keeps it in itself and stays untracked; no cycle runs through it: the supervisor's
    ref reaches its actor only through a weak reference (or a mailbox that lets it go).
    """

    supervisor: pykka.ActorRef[Any]

    def __call__(self, down: Down) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            self.supervisor.tell(_ChildDown(None, down.ref, down))
