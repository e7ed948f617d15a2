"""A registry of unique names for running actors; an entry goes when its actor stops."""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any

import msgspec
import pykka

from supervisors._errors import NAME_TAKEN, NOT_RUNNING, SupervisorError
from supervisors._monitor import Down, unwatch, watch_actor

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
        # One table of the entries' monitor callbacks, each holding its ref and monitor key:
        # the callback exists anyway, so an entry costs one table slot and no object of its own.
        self._entries: dict[Hashable, _Dropper] = {}

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
        dropper = _Dropper(self, name, ref)
        with self._lock:
            entry = self._entries.get(name)
            if entry is not None and entry.ref.is_alive():
                raise SupervisorError(NAME_TAKEN, f"{name!r} is registered to {entry.ref}")
            self._entries[name] = dropper
        # Outside the lock: for an actor that has just stopped, the callback runs at once.
        watch, key = watch_actor(ref, dropper)
        if watch is None:
            return ref
        with self._lock:
            if self._entries.get(name) is dropper:
                dropper.key = key
                return ref
        unwatch(ref, key)
        return ref

    def unregister(self, name: Hashable) -> bool:
        """Remove ``name``; return whether it was registered."""
        with self._lock:
            entry = self._entries.pop(name, None)
        if entry is None:
            return False
        if entry.key >= 0:
            unwatch(entry.ref, entry.key)
        return True

    def lookup(self, name: Hashable) -> pykka.ActorRef[Any] | None:
        """Return the running actor registered under ``name``, or None."""
        with self._lock:
            entry = self._entries.get(name)
        if entry is None or not entry.ref.is_alive():
            return None
        return entry.ref

    def names(self) -> list[Hashable]:
        """Return the registered names whose actors are running, in registration order."""
        with self._lock:
            entries = list(self._entries.items())
        return [name for name, entry in entries if entry.ref.is_alive()]

    def __len__(self) -> int:
        return len(self.names())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, Hashable) and self.lookup(name) is not None

    def _drop(self, name: Hashable, dropper: _Dropper) -> None:
        with self._lock:
            if self._entries.get(name) is dropper:
                del self._entries[name]


class _Dropper(msgspec.Struct, gc=False):
    """An entry: its actor, its monitor's key, and the callback that drops it when the actor stops.

    Not tracked by the collector (``gc=False``): one lives as long as each registered actor,
    and no cycle can run through it, since only the registry's table and the monitors'
    callback table refer to it.
    """

    registry: Registry
    name: Hashable
    ref: pykka.ActorRef[Any]
    key: int = -1  # the monitor's key, once it is set up

    def __call__(self, _down: Down) -> None:
        self.registry._drop(self.name, self)
