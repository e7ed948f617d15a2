"""A registry of unique names for running actors; an entry goes when its actor stops."""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any

import pykka

from supervisors._errors import NAME_TAKEN, NOT_RUNNING, SupervisorError
from supervisors._monitor import Down, Monitor, monitor

__all__ = ["Registry"]


class Registry:
    """Map unique names to running actors (Elixir's ``Registry`` with unique keys).

    Each registered actor is monitored: its entry is removed as soon as it stops, before
    Pykka's ``stop()`` returns to the caller. A registry is a plain thread-safe object, not
    an actor, so lookups never wait on a mailbox; make as many as you need (there is no
    global one).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Hashable, tuple[pykka.ActorRef[Any], Monitor | None]] = {}

    def register(self, name: Hashable, ref: pykka.ActorRef[Any]) -> pykka.ActorRef[Any]:
        """Register ``ref`` under ``name``.

        Returns:
            ``ref``, so a child spec can write ``start=lambda: registry.register(n, A.start())``
            (if the name is taken, that actor is left running: stop it, or check first).

        Raises:
            SupervisorError: ``SUPERVISOR_NAME_TAKEN`` if a running actor has the name;
                ``SUPERVISOR_NOT_RUNNING`` if ``ref``'s actor has stopped.
        """
        if not ref.is_alive():
            raise SupervisorError(NOT_RUNNING, f"{ref} is not running")
        with self._lock:
            entry = self._entries.get(name)
            if entry is not None and entry[0].is_alive():
                raise SupervisorError(NAME_TAKEN, f"{name!r} is registered to {entry[0]}")
            self._entries[name] = (ref, None)
        # Outside the lock: for an actor that has just stopped, the callback runs at once.
        entry_monitor = monitor(ref, _Dropper(self, name, ref))
        with self._lock:
            if self._entries.get(name) == (ref, None):
                self._entries[name] = (ref, entry_monitor)
            else:
                entry_monitor.cancel()
        return ref

    def unregister(self, name: Hashable) -> bool:
        """Remove ``name``; return whether it was registered."""
        with self._lock:
            entry = self._entries.pop(name, None)
        if entry is None:
            return False
        if entry[1] is not None:
            entry[1].cancel()
        return True

    def lookup(self, name: Hashable) -> pykka.ActorRef[Any] | None:
        """Return the running actor registered under ``name``, or None."""
        with self._lock:
            entry = self._entries.get(name)
        if entry is None or not entry[0].is_alive():
            return None
        return entry[0]

    def names(self) -> list[Hashable]:
        """Return the registered names whose actors are running, in registration order."""
        with self._lock:
            entries = list(self._entries.items())
        return [name for name, (ref, _) in entries if ref.is_alive()]

    def __len__(self) -> int:
        return len(self.names())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, Hashable) and self.lookup(name) is not None

    def _drop(self, name: Hashable, ref: pykka.ActorRef[Any]) -> None:
        with self._lock:
            entry = self._entries.get(name)
            if entry is not None and entry[0] is ref:
                del self._entries[name]


class _Dropper:
    """An entry's monitor callback: drop the entry when its actor stops (slotted, not a closure,
    since one lives as long as each registered actor)."""

    __slots__ = ("name", "ref", "registry")

    def __init__(self, registry: Registry, name: Hashable, ref: pykka.ActorRef[Any]) -> None:
        self.registry = registry
        self.name = name
        self.ref = ref

    def __call__(self, _down: Down) -> None:
        self.registry._drop(self.name, self.ref)
