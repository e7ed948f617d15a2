"""Property tests: checkpoints fail only with their codes and round-trip; redaction is stable."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from praxo_actors.core import CheckpointError, dump_checkpoint, load_checkpoint, redact_pii
from praxo_actors.models import ImageBlock, Message, Session, TextBlock, ToolCall

CHECKPOINT_CODES = {
    "CHECKPOINT_INVALID",
    "CHECKPOINT_VERSION",
    "CHECKPOINT_TYPE_NOT_ALLOWED",
    "CHECKPOINT_SIGNATURE",
}
KEY = b"fuzz-key"
FUZZ = settings(max_examples=2000, deadline=None, database=None)

# Kept small: drawing the examples, not checkpointing them, dominates the run time.
text = st.text(max_size=6)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=5,
)
json_objects = st.dictionaries(text, json_values, max_size=2)
optional_text = st.none() | text
blocks = st.lists(
    st.builds(TextBlock, text) | st.builds(ImageBlock, text, optional_text), max_size=2
)
messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=st.text(max_size=12) | blocks,
    tool_calls=st.lists(st.builds(ToolCall, text, json_objects, optional_text), max_size=1),
    tool_call_id=optional_text,
    name=optional_text,
)
sessions = st.builds(Session, text, st.lists(messages, max_size=2), json_objects)


def load_or_code(data: Any, **kwargs: Any) -> Session | str:
    """Load ``data``, returning the session or the error code; any other exception escapes."""
    try:
        return load_checkpoint(data, **kwargs)
    except CheckpointError as exc:
        assert exc.code in CHECKPOINT_CODES
        return exc.code


@FUZZ
@given(st.binary(max_size=200), st.booleans())
def test_load_arbitrary_bytes(data: bytes, keyed: bool) -> None:
    """Arbitrary bytes either load or raise CheckpointError with a listed code."""
    result = load_or_code(data, key=KEY if keyed else None)
    assert isinstance(result, Session | str)


@FUZZ
@given(sessions, st.booleans(), st.data())
def test_load_byte_mutations(session: Session, keyed: bool, data: st.DataObject) -> None:
    """A valid checkpoint with bytes flipped, cut or inserted fails only with a listed code."""
    raw = bytearray(dump_checkpoint(session, key=KEY if keyed else None))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "flip":
            raw[at] ^= data.draw(st.integers(1, 255))
        elif action == "cut":
            del raw[at : at + data.draw(st.integers(1, 8))]
        else:
            raw[at:at] = data.draw(st.sampled_from([b"{", b"}", b"[", b'"', b",", b"\\", b"\xff"]))
        if not raw:
            break
    result = load_or_code(bytes(raw), key=KEY if keyed else None)
    if keyed and isinstance(result, Session):
        assert result == session


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Return the path of every member of a JSON document."""
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for name, child in node.items():
            found += _paths(child, (*prefix, name))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found += _paths(child, (*prefix, index))
    return found


@FUZZ
@given(sessions, st.booleans(), st.data())
def test_load_structural_mutations(session: Session, keyed: bool, data: st.DataObject) -> None:
    """Replacing or deleting any member of a valid document fails only with a listed code."""
    key = KEY if keyed else None
    doc = json.loads(dump_checkpoint(session, key=key))
    path = data.draw(st.sampled_from(_paths(doc)))
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if data.draw(st.booleans()):
        parent[path[-1]] = data.draw(
            json_values | st.sampled_from(["pickle", "message", "session", "text", "tool_call"])
        )
    else:
        del parent[path[-1]]
    result = load_or_code(json.dumps(doc), key=key)
    if keyed:
        assert result == "CHECKPOINT_SIGNATURE" or result == session


@FUZZ
@given(sessions, st.booleans())
def test_round_trip(session: Session, keyed: bool) -> None:
    """dump then load gives back an equal session, signed or not."""
    key = KEY if keyed else None
    assert load_checkpoint(dump_checkpoint(session, key=key), key=key) == session


# Whole numbers and addresses as well as their pieces, so that matches land right next to each
# other, to digits, "+1" and parentheses: there a rule's view of the character before a match
# decides whether a second pass finds more.
PII_PIECES = [
    *("555-123-4567", "(555) 123-4567", "(555)1234567", "+1 555 123 4567", "+15551234567"),
    *("5551234567", "123-45-6789", "4111 1111 1111 1111", "4111111111111111", "a@b.io", "x@c.io"),
]
PII_FRAGMENTS = [
    *("4111", "1111", "555", "123", "4567", "45", "6789", "0", "9", "+1", "1", "(", ")", "+"),
    *(" ", "-", ".", "@", "a", "x.io", "ab", "_", "%", "[", "]", "\n", "REDACTED_PHONE"),
]
pii_parts = st.sampled_from(PII_PIECES) | st.sampled_from(PII_FRAGMENTS)
fragments = st.lists(pii_parts, max_size=30).map("".join)


@FUZZ
@given(st.text(max_size=300) | fragments)
def test_redaction_is_idempotent(text: str) -> None:
    """redact_pii never raises on text and a second pass changes nothing."""
    once = redact_pii(text)
    assert isinstance(once, str)
    assert redact_pii(once) == once
