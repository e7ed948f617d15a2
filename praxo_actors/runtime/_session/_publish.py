"""Hand a session's run events to the event bus (and count them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
import pykka

from praxo_actors.models import Event
from praxo_actors.runtime._protocol import Publish, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["publish", "publish_delta"]


def publish(
    host: SessionHost,
    bus: pykka.ActorRef[Any] | None,
    events: list[Event],
    parent: str | None = None,
) -> None:
    """Publish a run's queued events to ``bus`` (the session's, handed over at its start), in
    order; ``parent``: the calling session of an agent tool's child run, which its events name."""
    if parent is not None:
        events = [_tagged(event, parent) for event in events]
    host.post(host.router.count_events, len(events))
    if host.has_subscribers():
        _tell(bus, encode(Publish(events=events)))


def publish_delta(
    host: SessionHost, bus: pykka.ActorRef[Any] | None, event: Event, parent: str | None = None
) -> None:
    """Deliver a model's ``model.delta`` at once (from the thread the model runs on; it reads
    nothing of the kernel's: the bus ref is the session's, the parent, if any, comes from the
    run's ``StartRun``)."""
    host.post(host.router.count_events, 1)
    if parent is not None:
        event = _tagged(event, parent)
    _tell(bus, encode(Publish(events=[event])))


def _tell(bus: pykka.ActorRef[Any] | None, message: bytes) -> None:
    if bus is None:
        raise pykka.ActorDeadError("the event bus has not started")
    bus.tell(message)


def _tagged(event: Event, parent: str) -> Event:
    """``event`` with ``data["parent_session"]``: its run is an agent tool's child run."""
    return msgspec.structs.replace(event, data={**event.data, "parent_session": parent})
