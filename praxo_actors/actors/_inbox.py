"""Peek at an actor's mailbox from its own handler, for any actor kind."""

from __future__ import annotations

from typing import Any

import pykka

__all__ = ["inbox_empty"]


def inbox_empty(actor: pykka.Actor) -> bool:
    """Return whether no message waits in ``actor``'s mailbox.

    Call it from the actor's own handler: only then is the answer more than a hint (a message
    may arrive right after, but none leaves the mailbox meanwhile). Both Pykka's queue and the
    M:N mailbox answer ``empty()``; an actor that batches work (the store's group commit) ends
    its batch when this is True, instead of telling itself a message to end it.
    """
    inbox: Any = actor.actor_inbox
    return bool(inbox.empty())
