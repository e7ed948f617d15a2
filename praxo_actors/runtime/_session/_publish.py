"""Hand a session's run events to the event bus (and count them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from praxo_actors.models import Event
from praxo_actors.runtime._protocol import Publish, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["publish", "publish_delta"]


def publish(host: SessionHost, events: list[Event]) -> None:
    """Publish a run's queued events, in order."""
    if host.router.parents:  # a child run of an agent tool: say whose it is
        events = [_tagged(host, event) for event in events]
    host.post(host.router.count_events, len(events))
    if host.has_subscribers():
        host.bus_ref.tell(encode(Publish(events=events)))


def publish_delta(host: SessionHost, event: Event) -> None:
    """Deliver a model's ``model.delta`` at once (from the thread the model runs on)."""
    host.post(host.router.count_events, 1)
    if host.router.parents:
        event = _tagged(host, event)
    host.bus_ref.tell(encode(Publish(events=[event])))


def _tagged(host: SessionHost, event: Event) -> Event:
    """``event`` with ``data["parent_session"]`` when its run is an agent tool's child run."""
    parent = host.router.parents.get(event.run_id)
    if parent is None:
        return event
    return msgspec.structs.replace(event, data={**event.data, "parent_session": parent})
