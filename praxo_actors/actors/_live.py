"""The actors of a scheduler that have not stopped: a list threaded through their mailboxes.

A set of mailboxes cost each live actor a hash-table slot (16 bytes at a load of at most 60%,
so 27-107 bytes by where the table is in its growth); two slots on the mailbox cost 16 bytes
and no table. A scheduler only adds, removes, counts and, when it shuts down, walks them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LiveActors"]


class LiveActors:
    """A doubly linked list of mailboxes (their ``_live_prev`` / ``_live_next`` slots).

    Every call is made under the scheduler's lock; a mailbox is in at most one list.
    """

    __slots__ = ("_count", "_head")

    def __init__(self) -> None:
        self._head: Any = None
        self._count = 0

    def add(self, inbox: Any) -> None:
        """Add ``inbox``, which is in no list."""
        head = self._head
        inbox._live_prev = None
        inbox._live_next = head
        if head is not None:
            head._live_prev = inbox
        self._head = inbox
        self._count += 1

    def discard(self, inbox: Any) -> None:
        """Remove ``inbox`` if it is here (else a no-op: a second call, or one never added)."""
        prev = inbox._live_prev
        if prev is None and self._head is not inbox:
            return
        after = inbox._live_next
        if prev is None:
            self._head = after
        else:
            prev._live_next = after
        if after is not None:
            after._live_prev = prev
        inbox._live_prev = inbox._live_next = None
        self._count -= 1

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._head is not None

    def __iter__(self) -> Any:
        """The mailboxes, newest first (copy them under the lock before acting on them)."""
        inbox = self._head
        while inbox is not None:
            yield inbox
            inbox = inbox._live_next
