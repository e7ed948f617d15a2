"""The dynamic supervisor: children added at run time, each restarted on its own."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

import msgspec
import pykka

from supervisors._base import PING, SupervisorBase, _Child, _ChildDown, _SharedDownTeller
from supervisors._clock import Clock
from supervisors._errors import CHILD_NOT_FOUND, INVALID_SPEC, MAX_CHILDREN, SupervisorError
from supervisors._monitor import unwatch
from supervisors._records import ChildCounts, ChildRecord
from supervisors._spec import ChildSpec, ChildType

__all__ = ["DynamicSupervisor"]


class _Temporary(msgspec.Struct, gc=False):
    """What the supervisor keeps of a running temporary child.

    Not tracked by the collector (``gc=False``; no cycle runs through it: only the
    supervisor's table refers to it, and it refers to nothing that refers back). One record of
    64 bytes, where a ref in one table and a 5-tuple in another took ~130.
    """

    ref: pykka.ActorRef[Any]
    id: str
    order: int  # the start order, shared with the other children's keys
    watch_key: int
    shutdown: float
    type: ChildType


class DynamicSupervisor(SupervisorBase):
    """A one_for_one supervisor whose children are started on demand (Elixir's).

    Children are told apart by their refs, not their ids (many children may share a spec).
    A temporary child is forgotten when it ends; a terminated child is always forgotten.
    A running temporary child keeps no record, spec or monitor callback of its own: one table
    entry (an untracked record) and one monitor callback shared by all of them (a temporary
    child is never restarted, so its spec is not needed once it runs), so 10,000 idle temporary
    children add no object for the garbage collector to walk. On stop, every child is asked to
    stop at once and each is waited for up to its own shutdown time, so many children stop in
    about the time of the slowest.
    """

    @classmethod
    def start(
        cls,
        max_children: int | None = None,
        max_restarts: int = 3,
        max_seconds: float = 5.0,
        clock: Clock | None = None,
        name: str | None = None,
    ) -> pykka.ActorRef[DynamicSupervisor]:
        """Start an empty dynamic supervisor.

        Args:
            max_children: The most children it holds at once (None: no limit).
            max_restarts: Restarts allowed within ``max_seconds``.
            max_seconds: The intensity window, in seconds.
            clock: Time source for the intensity window (``time.monotonic`` by default).
            name: A label for reports (defaults to the actor's URN).

        Raises:
            SupervisorError: ``SUPERVISOR_INVALID_SPEC`` for bad arguments.
        """
        return super().start(
            max_children=max_children,
            max_restarts=max_restarts,
            max_seconds=max_seconds,
            clock=clock,
            name=name,
        )

    def __init__(
        self,
        *,
        max_children: int | None,
        max_restarts: int,
        max_seconds: float,
        clock: Clock | None,
        name: str | None,
    ) -> None:
        if max_children is not None and (
            not isinstance(max_children, int) or isinstance(max_children, bool) or max_children < 0
        ):
            raise SupervisorError(
                INVALID_SPEC, f"max_children must be an int >= 0: {max_children!r}"
            )
        super().__init__(max_restarts=max_restarts, max_seconds=max_seconds, clock=clock, name=name)
        self._max_children = max_children
        self._children: dict[int, _Child] = {}
        # A child's current (or, while it restarts, last) ref, to find it by ref.
        self._by_urn: dict[str, int] = {}
        self._urn_of: dict[int, str] = {}
        self._next_key = 0
        # Running temporary children, by URN, in start order (see the class doc).
        self._temporaries: dict[str, _Temporary] = {}
        self._shared = _SharedDownTeller(self.actor_ref)

    def start_child(self, spec: ChildSpec) -> pykka.ActorRef[Any]:
        """Start a child under this supervisor.

        Raises:
            SupervisorError: ``SUPERVISOR_MAX_CHILDREN``, ``SUPERVISOR_INVALID_SPEC`` or
                ``SUPERVISOR_START_FAILED``.
        """
        child = self._new_child(spec, 0)
        ref = self._start_child(child)
        self._add(child)
        return ref

    def start_children(
        self,
        specs: list[ChildSpec],
        on_started: Callable[[list[pykka.ActorRef[Any] | SupervisorError]], object] | None = None,
    ) -> list[pykka.ActorRef[Any] | SupervisorError]:
        """Start many children at once; return (and pass to ``on_started``) one outcome each.

        Each outcome is the child's ref, or the ``SupervisorError`` that :meth:`start_child`
        would have raised for it. Every child is started before any is waited for, so a burst
        of N children costs one message to this supervisor and about one round trip, not N.
        ``on_started`` runs in the supervisor's thread (keep it short; an exception from it is
        reported and dropped).
        """
        outcomes: list[pykka.ActorRef[Any] | SupervisorError] = []
        launched: list[tuple[_Child, Any, pykka.Future[Any]] | None] = []
        starting = 0  # launched and not yet added: they count against max_children
        for spec in specs:
            try:
                child = self._new_child(spec, starting)
                started = self._launch(child)
            except SupervisorError as exc:
                outcomes.append(exc)
                launched.append(None)
                continue
            starting += 1
            outcomes.append(started[0])
            launched.append((child, started, started[0].ask(PING, block=False)))
        for i, item in enumerate(launched):
            if item is None:
                continue
            child, started, ping = item
            try:
                outcomes[i] = self._confirm(child, started, ping)
            except SupervisorError as exc:
                outcomes[i] = exc
                continue
            self._add(child)
        if on_started is not None:
            try:
                on_started(outcomes)
            except Exception as exc:
                self._report("error", "start_children_callback_failed", error=repr(exc))
        return outcomes

    def _new_child(self, spec: ChildSpec, starting: int) -> _Child:
        if not isinstance(spec, ChildSpec):
            raise SupervisorError(INVALID_SPEC, f"not a ChildSpec: {spec!r}")
        if spec.significant:
            raise SupervisorError(INVALID_SPEC, f"child {spec.id!r}: no auto_shutdown here")
        held = len(self._children) + len(self._temporaries) + starting
        if self._max_children is not None and held >= self._max_children:
            raise SupervisorError(MAX_CHILDREN, f"{self._max_children} children already")
        child = _Child(self._next_key, spec)
        self._next_key += 1
        return child

    def terminate_child(self, ref: pykka.ActorRef[Any]) -> None:
        """Stop a child (within its shutdown time) and forget it.

        Raises:
            SupervisorError: ``SUPERVISOR_CHILD_NOT_FOUND`` if ``ref`` is not a child here.
        """
        urn = getattr(ref, "actor_urn", None)
        if isinstance(urn, str) and urn in self._temporaries:
            temporary = self._temporaries.pop(urn)
            unwatch(temporary.ref, temporary.watch_key)
            self._stop_ref(temporary.id, temporary.shutdown, temporary.ref)
            return
        key = self._by_urn.get(urn) if isinstance(urn, str) else None
        child = self._children.get(key) if key is not None else None
        if child is None:
            raise SupervisorError(CHILD_NOT_FOUND, f"{ref} is not a child of {self._label}")
        self._remove(child)
        self._terminate(child)

    def which_children(self) -> list[ChildRecord]:
        """Return a record per child, in start order."""
        records = [(self._key(child), child.record()) for child in self._children.values()]
        for t in self._temporaries.values():
            records.append((t.order, ChildRecord(t.id, t.ref, "temporary", t.type)))
        records.sort(key=lambda item: item[0])
        return [record for _, record in records]

    def count_children(self) -> ChildCounts:
        """Return OTP's counts: specs, active (running) children, supervisors, workers."""
        counts = super().count_children()
        held = len(self._temporaries)
        active = sum(1 for t in self._temporaries.values() if t.ref.is_alive())
        supervisors = sum(1 for t in self._temporaries.values() if t.type == "supervisor")
        return ChildCounts(
            counts.specs + held,
            counts.active + active,
            counts.supervisors + supervisors,
            counts.workers + held - supervisors,
        )

    # -- SupervisorBase ----------------------------------------------------------------------

    def _on_child_down(self, message: _ChildDown) -> None:
        if message.key is not None:
            super()._on_child_down(message)
            return
        urn = message.ref.actor_urn
        temporary = self._temporaries.get(urn)
        if temporary is None or temporary.ref is not message.ref:
            return  # an exit the supervisor caused or already handled
        del self._temporaries[urn]
        self._report_down(temporary.id, "temporary", message.down)

    def _all_children(self) -> Iterable[_Child]:
        return self._children.values()

    def _find(self, key: Hashable) -> _Child | None:
        return self._children.get(key) if isinstance(key, int) else None

    def _forget(self, child: _Child) -> None:
        self._remove(child)

    def _terminate_all(self) -> None:
        ordered: list[tuple[int, _Child | tuple[str, float, pykka.ActorRef[Any]]]] = [
            (self._key(child), child) for child in self._children.values()
        ]
        temporaries, self._temporaries = self._temporaries, {}
        for t in temporaries.values():
            unwatch(t.ref, t.watch_key)
            ordered.append((t.order, (t.id, t.shutdown, t.ref)))
        ordered.sort(key=lambda item: item[0], reverse=True)
        self._stop_actors(child for _, child in ordered)

    def _restart(self, child: _Child) -> None:
        self._count_restart(child)
        try:
            self._start_child(child)
        except SupervisorError:
            self._restart_failed(child)
            return
        self._add(child)
        self._restarted(child)

    # -- helpers ----------------------------------------------------------------------------

    def _add(self, child: _Child) -> None:
        key = self._key(child)
        ref = child.ref
        if ref is None:
            return
        spec = child.spec
        if spec.restart == "temporary" and child.monitor is not None:
            # Hand the monitor to the shared callback; if its Down is on its way already, the
            # child's own callback tells it, and the child keeps its record until then.
            watch_key = child.monitor._rebind(self._shared)
            if watch_key is not None:
                urn = ref.actor_urn
                self._temporaries[urn] = _Temporary(
                    ref, spec.id, key, watch_key, spec.shutdown, spec.type
                )
                child.ref = child.monitor = None
                return
        self._children[key] = child
        old = self._urn_of.get(key)
        if old is not None:
            del self._by_urn[old]
        self._by_urn[ref.actor_urn] = key
        self._urn_of[key] = ref.actor_urn

    def _remove(self, child: _Child) -> None:
        key = self._key(child)
        self._children.pop(key, None)
        urn = self._urn_of.pop(key, None)
        if urn is not None:
            del self._by_urn[urn]

    @staticmethod
    def _key(child: _Child) -> int:
        key = child.key
        if not isinstance(key, int):
            raise TypeError(f"dynamic child keys are ints, got {key!r}")
        return key
