"""The supervisor: a static list of children, restarted by strategy within an intensity."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import pykka

from supervisors import _pykka_compat as compat
from supervisors._base import SupervisorBase, _Child
from supervisors._clock import Clock
from supervisors._errors import (
    CHILD_EXISTS,
    CHILD_NOT_FOUND,
    CHILD_RESTARTING,
    CHILD_RUNNING,
    INVALID_SPEC,
    START_FAILED,
    SupervisorError,
)
from supervisors._spec import ChildSpec

__all__ = ["AutoShutdown", "Strategy", "Supervisor"]

Strategy = Literal["one_for_one", "one_for_all", "rest_for_one"]
AutoShutdown = Literal["never", "any_significant", "all_significant"]

_STRATEGIES: frozenset[str] = frozenset(get_args(Strategy))
_AUTO_SHUTDOWNS: frozenset[str] = frozenset(get_args(AutoShutdown))


@dataclass(frozen=True, slots=True)
class _StartChildren:
    """Start the initial children (asked once by ``Supervisor.start``)."""


class Supervisor(SupervisorBase):
    """An OTP supervisor for Pykka actors.

    Start one with ``Supervisor.start(children, ...)``; it returns the supervisor's
    ``ActorRef`` and its API is reached through ``ref.proxy()`` (each call returns a future).
    Children start in order; a failed start stops the started ones in reverse order and
    fails the whole start. On stop, children stop in reverse start order, each within its
    ``shutdown`` time. A child that ends is restarted according to its restart type and the
    strategy; more than ``max_restarts`` restarts within ``max_seconds`` make the supervisor
    stop its children and exit abnormally, so its own supervisor sees a crash.
    """

    @classmethod
    def start(
        cls,
        children: Sequence[ChildSpec] = (),
        strategy: Strategy = "one_for_one",
        max_restarts: int = 3,
        max_seconds: float = 5.0,
        auto_shutdown: AutoShutdown = "never",
        clock: Clock | None = None,
        name: str | None = None,
    ) -> pykka.ActorRef[Supervisor]:
        """Start a supervisor and its children; return once every child has started.

        Args:
            children: Child specs, started in this order.
            strategy: ``"one_for_one"``, ``"one_for_all"`` or ``"rest_for_one"``.
            max_restarts: Restarts allowed within ``max_seconds`` (Elixir's default of 3 in
                5 s; OTP's own is 1 in 5).
            max_seconds: The intensity window, in seconds.
            auto_shutdown: ``"never"``, ``"any_significant"`` or ``"all_significant"``: stop
                the supervisor normally when significant children have ended.
            clock: Time source for the intensity window (``time.monotonic`` by default).
            name: A label for reports (defaults to the actor's URN).

        Returns:
            The supervisor's ``ActorRef``.

        Raises:
            SupervisorError: ``SUPERVISOR_INVALID_SPEC`` for bad arguments (nothing is
                started), or ``SUPERVISOR_START_FAILED`` if a child did not start (the ones
                started before it are stopped again, in reverse order).
        """
        ref = super().start(
            children=children,
            strategy=strategy,
            max_restarts=max_restarts,
            max_seconds=max_seconds,
            auto_shutdown=auto_shutdown,
            clock=clock,
            name=name,
        )
        try:
            # Bounded by the children: each start waits at most its own start_timeout.
            ref.ask(_StartChildren())
        except pykka.ActorDeadError as exc:
            raise SupervisorError(START_FAILED, f"{ref} stopped while starting") from exc
        return ref

    def __init__(
        self,
        *,
        children: Sequence[ChildSpec],
        strategy: Strategy,
        max_restarts: int,
        max_seconds: float,
        auto_shutdown: AutoShutdown,
        clock: Clock | None,
        name: str | None,
    ) -> None:
        if strategy not in _STRATEGIES:
            raise SupervisorError(INVALID_SPEC, f"invalid strategy {strategy!r}")
        if auto_shutdown not in _AUTO_SHUTDOWNS:
            raise SupervisorError(INVALID_SPEC, f"invalid auto_shutdown {auto_shutdown!r}")
        specs = list(children)
        ids: set[str] = set()
        for spec in specs:
            self._check_spec(spec, auto_shutdown)
            if spec.id in ids:
                raise SupervisorError(INVALID_SPEC, f"duplicate child id {spec.id!r}")
            ids.add(spec.id)
        super().__init__(max_restarts=max_restarts, max_seconds=max_seconds, clock=clock, name=name)
        self._strategy = strategy
        self._auto_shutdown = auto_shutdown
        self._initial = specs
        self._children: dict[str, _Child] = {}

    # -- the admin API (OTP's, with error codes instead of error tuples) ----------------------

    def start_child(self, spec: ChildSpec) -> pykka.ActorRef[Any]:
        """Add a child spec and start it, after the existing children.

        Raises:
            SupervisorError: ``SUPERVISOR_CHILD_EXISTS`` if the id is present (running or
                not), ``SUPERVISOR_INVALID_SPEC`` or ``SUPERVISOR_START_FAILED`` (the spec
                is then not kept).
        """
        self._check_spec(spec, self._auto_shutdown)
        existing = self._children.get(spec.id)
        if existing is not None:
            state = "already started" if existing.ref is not None else "already present"
            raise SupervisorError(CHILD_EXISTS, f"child {spec.id!r} is {state}")
        child = _Child(spec.id, spec)
        ref = self._start_child(child)
        self._children[spec.id] = child
        return ref

    def terminate_child(self, id: str) -> None:
        """Stop a child (within its shutdown time) and keep its spec, unless temporary.

        Terminating a child that is not running succeeds; a pending restart is cancelled.

        Raises:
            SupervisorError: ``SUPERVISOR_CHILD_NOT_FOUND``.
        """
        child = self._get(id)
        self._terminate(child)
        if child.spec.restart == "temporary":
            del self._children[id]

    def restart_child(self, id: str) -> pykka.ActorRef[Any]:
        """Start a child whose spec is kept but which is not running.

        Raises:
            SupervisorError: ``SUPERVISOR_CHILD_NOT_FOUND``, ``SUPERVISOR_CHILD_RUNNING``,
                ``SUPERVISOR_CHILD_RESTARTING`` or ``SUPERVISOR_START_FAILED``.
        """
        child = self._get(id)
        self._check_stopped(child)
        return self._start_child(child)

    def delete_child(self, id: str) -> None:
        """Forget the spec of a child that is not running.

        Raises:
            SupervisorError: ``SUPERVISOR_CHILD_NOT_FOUND``, ``SUPERVISOR_CHILD_RUNNING`` or
                ``SUPERVISOR_CHILD_RESTARTING``.
        """
        child = self._get(id)
        self._check_stopped(child)
        del self._children[id]

    # -- Pykka hooks ----------------------------------------------------------------------

    def on_receive(self, message: Any) -> Any:
        """Start the initial children when asked to, else handle internal messages."""
        if isinstance(message, _StartChildren):
            self._start_initial()
            return None
        return super().on_receive(message)

    # -- SupervisorBase -------------------------------------------------------------------

    def _all_children(self) -> Iterable[_Child]:
        return self._children.values()

    def _find(self, key: Hashable) -> _Child | None:
        return self._children.get(key) if isinstance(key, str) else None

    def _forget(self, child: _Child) -> None:
        if child.spec.restart == "temporary":
            self._children.pop(child.spec.id, None)
        self._auto_shut_down(child)

    def _terminate_all(self) -> None:
        for child in reversed(list(self._children.values())):
            self._terminate(child)

    def _restart(self, child: _Child) -> None:
        self._count_restart(child)
        children = list(self._children.values())
        if self._strategy == "one_for_one":
            group = [child]
        elif self._strategy == "one_for_all":
            group = children
        else:
            group = children[children.index(child) :]
        # The others stop in reverse start order; temporary ones are not started again.
        for other in reversed(group):
            if other is child:
                continue
            self._terminate(other)
            if other.spec.restart == "temporary":
                del self._children[other.spec.id]
        for member in group:
            if member.spec.id not in self._children:
                continue
            try:
                self._start_child(member)
            except SupervisorError:
                # Those after it stay stopped; the retry restarts from it by the strategy.
                self._restart_failed(member)
                return
            self._restarted(member)

    # -- helpers ----------------------------------------------------------------------------

    def _start_initial(self) -> None:
        started: list[_Child] = []
        for spec in self._initial:
            child = _Child(spec.id, spec)
            try:
                self._start_child(child)
            except SupervisorError:
                for done in reversed(started):
                    self._terminate(done)
                self._children.clear()
                compat.stop_now(self)  # the caller gets the error; the supervisor does not live on
                raise
            self._children[spec.id] = child
            started.append(child)
        self._initial = []

    def _auto_shut_down(self, child: _Child) -> None:
        if self._auto_shutdown == "never" or not child.spec.significant:
            return
        if self._auto_shutdown == "all_significant" and any(
            other.spec.significant and (other.ref is not None or other.restarting)
            for other in self._children.values()
        ):
            return
        self._report("info", "auto_shutdown", child.spec.id, auto_shutdown=self._auto_shutdown)
        compat.stop_now(self)  # a normal exit: on_stop stops the remaining children

    def _get(self, id: str) -> _Child:
        child = self._children.get(id) if isinstance(id, str) else None
        if child is None:
            raise SupervisorError(CHILD_NOT_FOUND, f"no child {id!r}")
        return child

    @staticmethod
    def _check_stopped(child: _Child) -> None:
        if child.restarting:
            raise SupervisorError(CHILD_RESTARTING, f"child {child.spec.id!r} is restarting")
        if child.ref is not None:
            raise SupervisorError(CHILD_RUNNING, f"child {child.spec.id!r} is running")

    @staticmethod
    def _check_spec(spec: object, auto_shutdown: str) -> None:
        if not isinstance(spec, ChildSpec):
            raise SupervisorError(INVALID_SPEC, f"not a ChildSpec: {spec!r}")
        if spec.significant and auto_shutdown == "never":
            raise SupervisorError(
                INVALID_SPEC,
                f"child {spec.id!r} is significant but auto_shutdown is 'never'",
            )
