"""A thread-per-actor Pykka actor whose replies asyncio can await without blocking its loop."""

from __future__ import annotations

import pykka

from praxo_actors.actors._futures import MNFuture
from supervisors import _pykka_compat as compat

__all__ = ["AwaitableThreadingActor"]


@compat.actor_hooks(future=MNFuture)
class AwaitableThreadingActor(pykka.ThreadingActor):
    """A ``pykka.ThreadingActor`` whose asks and proxy calls return :class:`MNFuture` s.

    For the few long-lived actors whose calls block (a store that waits on its disk): each keeps
    a thread of its own, as any ``ThreadingActor``, and every hook runs on it; its replies can be
    awaited without blocking an event loop, or taken as callbacks (``add_done_callback``)
    instead of a waiting thread.
    """
