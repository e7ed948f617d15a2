"""The deadline timers of one session's runs, queued or in flight."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import pykka

from praxo_actors.runtime._protocol import RunDeadline, encode

if TYPE_CHECKING:
    from praxo_actors.runtime._kernel._host import SessionHost

__all__ = ["Deadlines", "tell_deadline"]


class Deadlines:
    """Arm and disarm a session's deadline timers (owned by its session actor).

    A timer that fires tells the session :class:`~praxo_actors.runtime._protocol.RunDeadline`;
    the session decides what it means (a queued run dropped, a callback in flight cut off).
    """

    __slots__ = ("host", "ref", "timers")

    def __init__(self, host: SessionHost, ref: pykka.ActorRef[Any]) -> None:
        self.host = host
        self.ref = ref
        self.timers: dict[str, Any] = {}  # run id -> timer

    def arm(self, run_id: str, deadline_ns: int) -> None:
        """Tell the session ``RunDeadline(run_id)`` once the clock reaches ``deadline_ns``."""
        host = self.host
        delay = max(0.0, (deadline_ns - host.clock.monotonic_ns()) / 1e9)
        self.timers[run_id] = host.call_later(delay, tell_deadline, host, self.ref, run_id)

    def disarm(self, run_id: str) -> bool:
        """Cancel the timer of ``run_id`` (if any); return whether no timer is left."""
        timer = self.timers.pop(run_id, None)
        if timer is not None:
            timer.cancel()
        return not self.timers

    def cancel(self) -> None:
        """Cancel every timer (the session is going away)."""
        timers, self.timers = self.timers, {}
        for timer in timers.values():
            timer.cancel()


def tell_deadline(host: SessionHost, ref: pykka.ActorRef[Any], run_id: str) -> None:
    """A deadline timer fired (on the loop): tell the session, and let it act in this step."""
    with contextlib.suppress(pykka.ActorDeadError):
        ref.tell(encode(RunDeadline(run_id)))
    host.run_now()
