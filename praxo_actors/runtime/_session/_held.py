"""How an idle session holds its conversation: a short one encoded, as one bytes object.

A live idle session's messages as objects cost ~590 bytes for a two-message conversation (the
session, its metadata dict, the list, each message and its ``tool_calls`` list, each text);
encoded with msgpack they are one bytes object of ~160. So a session that goes idle after a
commit keeps a short conversation encoded, and its next run decodes it (one to two
microseconds for a few messages, in C calls only: no Python call is added to a run). A longer
one keeps its objects: its bytes are mostly its texts then, which encoding would not shrink,
and encoding and decoding it on every run would cost more of the run. An idle session so held
also leaves seven objects fewer for the collector to walk (a run in flight has them again).

Only a session without metadata is held encoded: decoding gives back the messages as the
stored log does (a tuple in a tool call's arguments comes back a list, as it does when the
session is restored from its store), and metadata is left exactly as the run left it.
"""

from __future__ import annotations

import msgspec

from praxo_actors.models import Message, Session

__all__ = ["ENCODED_MESSAGES", "decode_messages", "encode_messages", "held_session"]

ENCODED_MESSAGES = 8
"""An idle session with at most this many messages (and no metadata) holds them encoded."""

encode_messages = msgspec.msgpack.Encoder().encode
decode_messages = msgspec.msgpack.Decoder(list[Message]).decode


def held_session(held: Session | bytes, session_id: str) -> Session:
    """The session an actor holds (``held``: its ``session``, or its messages encoded)."""
    if type(held) is bytes:
        return Session(session_id, decode_messages(held))
    assert isinstance(held, Session)
    return held
