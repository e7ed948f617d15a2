"""The log version each recently stopped session had: restoring an older one is a rollback.

This is the one thing the runtime keeps for a session after its actor has stopped, so its cost
is what 1,000,000 sessions touched once leave behind. An entry is a 64-bit digest of the
session id (an id's length costs nothing) and the version, in one of two plain dicts: the
sessions stopped since the last turn-over, and those of the turn before. When the newer one
holds half the cap it becomes the older one and the older one goes, so there are never more
than ``kept`` entries, the last ``kept // 2`` sessions stopped are always among them, and the
holes that deleting leaves in a dict go with the older one at each turn-over (an
``OrderedDict`` evicting one entry per stop grew to ~250 bytes an entry). Measured with
``tracemalloc`` for caps of 1,000 to 200,000, 175-character ids and versions past 256: at
most 128 bytes an entry, 143 at the peak of a dict's resize.
"""

from __future__ import annotations

import hashlib
import os

__all__ = ["VERSIONS_KEPT", "StoppedVersions"]

VERSIONS_KEPT = 100_000
"""How many stopped sessions' versions a runtime keeps at most by default (~12 MB)."""


class StoppedVersions:
    """Remember the log versions of the sessions stopped last, at most ``kept`` of them.

    Owned by the router (its loop thread): no lock.
    """

    __slots__ = ("_key", "_limit", "_newer", "_older", "kept")

    def __init__(self, kept: int = VERSIONS_KEPT) -> None:
        self.kept = kept
        self._limit = max(1, kept // 2)
        self._newer: dict[int, int] = {}
        self._older: dict[int, int] = {}
        # Keyed per runtime: nobody can pick a session id whose digest is another session's
        # (a collision would make that session's honest log look rolled back).
        self._key = os.urandom(16)

    def __len__(self) -> int:
        return len(self._newer) + len(self._older)

    def _digest(self, session_id: str) -> int:
        raw = hashlib.blake2b(session_id.encode(), digest_size=8, key=self._key).digest()
        return int.from_bytes(raw, "little")

    def get(self, session_id: str) -> int:
        """Return the version the session had when it last stopped (0: none kept)."""
        if not self._newer and not self._older:
            return 0
        digest = self._digest(session_id)
        version = self._newer.get(digest)
        return self._older.get(digest, 0) if version is None else version

    def stopped(self, session_id: str, version: int) -> None:
        """Keep ``version`` (or the one kept, if newer) for a session that has just stopped."""
        if self.kept == 0:
            return
        digest = self._digest(session_id)
        kept = self._newer.get(digest)
        if kept is None:
            kept = self._older.pop(digest, 0)  # stopped again: it moves to the newer dict
            if version <= 0 and kept == 0:
                return  # it never committed: there is nothing to roll back
            if len(self._newer) >= self._limit:
                # With a cap of 1 the older dict stays empty, so that one entry is all.
                self._older = self._newer if self.kept > 1 else {}
                self._newer = {}
        self._newer[digest] = max(kept, version)
