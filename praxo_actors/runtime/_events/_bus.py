"""The event bus actor: it receives published events and hands them to the router."""

from __future__ import annotations

from typing import Any

import pykka

from praxo_actors._errors import ProtocolError
from praxo_actors.codes import PROTOCOL_INVALID_MESSAGE
from praxo_actors.runtime._events._router import EventRouter
from praxo_actors.runtime._protocol import Publish, decode

__all__ = ["EventBus"]


class EventBus(pykka.ThreadingActor):
    """The actor that receives published events and hands them to the router.

    It owns no state of its own: the router (and its subscription table) outlives it, so a
    restarted bus routes to the same subscriptions.
    """

    use_daemon_thread = True  # never keeps a process alive: the runtime stops at exit

    def __init__(self, router: EventRouter) -> None:
        super().__init__()
        self.router = router

    def on_receive(self, message: Any) -> Any:
        """Route a :class:`Publish` message (encoded bytes)."""
        decoded = decode(message)
        if not isinstance(decoded, Publish):
            raise ProtocolError(PROTOCOL_INVALID_MESSAGE, f"event bus got {type(decoded).__name__}")
        self.router.route(decoded.events)
        return None
