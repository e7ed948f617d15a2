"""``Emit``: the effect that delivers one event of a run to its sink."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from praxo_actors.models import Event

__all__ = ["Emit"]


class Emit(msgspec.Struct, frozen=True):
    """Deliver ``event`` to ``sink``; reply ``None``.

    An exception raised by the sink, thrown back into the run, ends it without further events.
    """

    sink: Callable[[Event], Any]
    event: Event
