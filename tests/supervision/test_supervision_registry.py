"""Registry: unique names, entries that disappear when their actor stops."""

from __future__ import annotations

from typing import Any

import pykka
import pytest
from _supervision_helpers import Worker, call, crash, crash_child, stop

from supervisors import ChildSpec, Registry, Supervisor, SupervisorError


def test_register_and_lookup() -> None:
    """A registered actor is found by its name; an unknown name finds nothing."""
    registry = Registry()
    ref = Worker.start()
    assert registry.register("a", ref) is ref
    assert registry.lookup("a") is ref
    assert registry.lookup("b") is None
    assert registry.names() == ["a"]
    assert "a" in registry and "b" not in registry
    assert len(registry) == 1


def test_names_are_unique() -> None:
    """A name held by a running actor cannot be taken by another."""
    registry = Registry()
    registry.register("a", Worker.start())
    other = Worker.start()
    with pytest.raises(SupervisorError) as taken:
        registry.register("a", other)
    assert taken.value.code == "SUPERVISOR_NAME_TAKEN"


@pytest.mark.parametrize("how", ["stop", "crash"])
def test_entry_disappears_when_the_actor_stops(how: str) -> None:
    """The entry is gone once the actor has stopped or crashed, and the name is free again."""
    registry = Registry()
    ref = Worker.start()
    registry.register("a", ref)
    if how == "stop":
        stop(ref)
    else:
        crash(ref)
    assert registry.lookup("a") is None
    assert registry.names() == []
    replacement = Worker.start()
    registry.register("a", replacement)
    assert registry.lookup("a") is replacement


def test_unregister() -> None:
    """unregister frees the name and reports whether it was taken."""
    registry = Registry()
    ref = Worker.start()
    registry.register("a", ref)
    assert registry.unregister("a") is True
    assert registry.unregister("a") is False
    assert registry.lookup("a") is None
    assert ref.is_alive()


def test_dead_actor_cannot_register() -> None:
    """Registering an actor that has stopped raises SUPERVISOR_NOT_RUNNING."""
    registry = Registry()
    ref = Worker.start()
    stop(ref)
    with pytest.raises(SupervisorError) as dead:
        registry.register("a", ref)
    assert dead.value.code == "SUPERVISOR_NOT_RUNNING"
    assert registry.names() == []


def test_supervised_child_keeps_its_name_across_restarts() -> None:
    """A child that registers itself at start is found under its name after each restart."""
    registry = Registry()

    def start() -> pykka.ActorRef[Any]:
        return registry.register("session-1", Worker.start())

    sup = Supervisor.start([ChildSpec("session-1", start)])
    first = registry.lookup("session-1")
    assert first is not None
    crash_child(sup, first)
    second = registry.lookup("session-1")
    assert second is not None and second is not first
    assert call(sup, "which_children")[0].ref is second


def test_a_name_taken_again_is_not_dropped_by_the_old_actor() -> None:
    """After unregister and a new register, only the new actor's stop removes the name."""
    registry = Registry()
    old, new = Worker.start("old"), Worker.start("new")
    registry.register("a", old)
    assert registry.unregister("a") and not registry.unregister("a")
    registry.register("a", new)
    stop(old)
    assert registry.lookup("a") is new and registry.names() == ["a"]
    stop(new)
    assert registry.lookup("a") is None and registry.names() == []


def test_the_same_actor_registered_again_is_dropped_once_when_it_stops() -> None:
    """An actor unregistered and registered again under another name leaves no stale entry."""
    registry = Registry()
    ref = Worker.start()
    registry.register("a", ref)
    registry.unregister("a")
    registry.register("b", ref)
    assert registry.names() == ["b"]
    stop(ref)
    assert registry.names() == [] and registry.lookup("b") is None
    assert not registry.unregister("b")
