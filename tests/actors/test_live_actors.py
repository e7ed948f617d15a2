"""A scheduler's live actors: a list threaded through the mailboxes, not a set."""

from __future__ import annotations

from praxo_actors.actors._live import LiveActors
from praxo_actors.actors._mn import _Inbox


def test_add_discard_count_and_walk_in_any_order() -> None:
    live = LiveActors()
    inboxes = [_Inbox() for _ in range(5)]
    for inbox in inboxes:
        live.add(inbox)
    assert len(live) == 5 and live
    live.discard(inboxes[2])  # the middle
    live.discard(inboxes[4])  # the head (newest)
    live.discard(inboxes[0])  # the tail (oldest)
    assert list(live) == [inboxes[3], inboxes[1]] and len(live) == 2
    live.discard(inboxes[3])
    live.discard(inboxes[1])
    assert not live and len(live) == 0 and list(live) == []


def test_discard_is_idempotent_and_ignores_a_mailbox_never_added() -> None:
    live = LiveActors()
    a, b, never = _Inbox(), _Inbox(), _Inbox()
    live.add(a)
    live.add(b)
    live.discard(a)
    live.discard(a)  # an actor killed at shutdown after it finished
    live.discard(never)  # an actor whose start was refused
    assert list(live) == [b] and len(live) == 1
    live.add(a)  # a mailbox can join again once out
    assert list(live) == [a, b] and len(live) == 2
