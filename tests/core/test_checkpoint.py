"""Tests for ``dump_checkpoint`` and ``load_checkpoint``."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import pytest

from praxo_actors.core import (
    DEFAULT_CHECKPOINT_TYPES,
    CheckpointError,
    dump_checkpoint,
    load_checkpoint,
)
from praxo_actors.models import (
    ImageBlock,
    Message,
    Session,
    TextBlock,
    ToolCall,
    message_assistant,
    message_system,
    message_tool,
    message_user,
)

KEY = b"test-key"


def full_session() -> Session:
    """Return a session holding every message shape."""
    return Session(
        id="s-1",
        messages=[
            message_system("be brief"),
            message_user("hi"),
            Message(role="user", content=[TextBlock("look"), ImageBlock("https://x/a.png")]),
            Message(role="user", content=[ImageBlock("https://x/b.png", "image/png")]),
            message_assistant("", [ToolCall("echo", {"text": "hi", "n": [1, 2.5]}, id="c1")]),
            message_assistant("two", [ToolCall("a", {}), ToolCall("b", {"type": "x"}, id="c3")]),
            message_tool("c1", "echo", '{"text":"hi"}'),
            message_tool(None, "a", "done"),
            Message(role="assistant", content=""),
        ],
        metadata={"user": "ada", "n": 1, "f": -0.5, "ok": False, "none": None, "l": [{"a": []}]},
    )


def load_error(data: Any, **kwargs: Any) -> str:
    """Return the code of the CheckpointError that loading ``data`` raises."""
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(data, **kwargs)
    return info.value.code


def holding(*messages: Any) -> dict[str, Any]:
    """Return a session object holding the given message objects."""
    return {"type": "session", "id": "s", "messages": list(messages)}


def document(session: dict[str, Any], **extra: Any) -> bytes:
    """Return checkpoint bytes around a session object."""
    return json.dumps(
        {"format": "praxo.checkpoint", "version": 1, "session": session, **extra}
    ).encode()


def test_round_trip_is_exact() -> None:
    """Every message shape comes back equal after dump and load."""
    session = full_session()
    assert load_checkpoint(dump_checkpoint(session)) == session


def test_round_trip_with_key() -> None:
    """A signed checkpoint loads with the same key."""
    session = full_session()
    assert load_checkpoint(dump_checkpoint(session, key=KEY), key=KEY) == session


def test_dump_writes_the_documented_shape() -> None:
    """The checkpoint is a tagged JSON document with format and version."""
    data = dump_checkpoint(Session(id="s", messages=[message_user("hi")]))
    assert json.loads(data) == {
        "format": "praxo.checkpoint",
        "version": 1,
        "session": {
            "type": "session",
            "id": "s",
            "messages": [
                {
                    "type": "message",
                    "role": "user",
                    "content": "hi",
                    "tool_calls": [],
                    "tool_call_id": None,
                    "name": None,
                }
            ],
            "metadata": {},
        },
    }


def test_dump_is_canonical() -> None:
    """The output is compact JSON with sorted keys, so equal sessions give equal bytes."""
    a = Session(id="s", metadata={"b": 1, "a": 2})
    b = Session(id="s", metadata={"a": 2, "b": 1})
    assert dump_checkpoint(a) == dump_checkpoint(b)
    assert dump_checkpoint(a).startswith(b'{"format":"praxo.checkpoint","session":{"id":"s"')


def test_signature_is_hmac_of_the_unsigned_canonical_document() -> None:
    """The signature is the hex HMAC-SHA256 of the document without its signature."""
    signed = json.loads(dump_checkpoint(full_session(), key=KEY))
    signature = signed.pop("signature")
    canonical = json.dumps(signed, sort_keys=True, separators=(",", ":")).encode()
    assert signature == hmac.new(KEY, canonical, hashlib.sha256).hexdigest()
    assert dump_checkpoint(full_session()) == canonical


def test_metadata_keys_filters_metadata() -> None:
    """Only allowlisted metadata keys are written; None keeps every key."""
    session = Session(id="s", metadata={"user": "ada", "token": "secret"})
    assert load_checkpoint(dump_checkpoint(session, ["user", "absent"])).metadata == {"user": "ada"}
    assert b"secret" not in dump_checkpoint(session, metadata_keys=("user",))
    assert load_checkpoint(dump_checkpoint(session, None)).metadata == session.metadata


def test_dump_does_not_mutate_the_session() -> None:
    """Filtering metadata leaves the session as it was."""
    session = Session(id="s", metadata={"user": "ada", "token": "secret"})
    dump_checkpoint(session, metadata_keys=["user"], key=KEY)
    assert session.metadata == {"user": "ada", "token": "secret"}


@pytest.mark.parametrize(
    "metadata",
    [
        {"s": {1, 2}},
        {"f": float("nan")},
        {"f": float("inf")},
        {"k": {1: "non-str key"}},
        {"t": (1, 2)},
        {"o": object()},
        {"b": b"bytes"},
        {"s": "\ud800"},
    ],
)
def test_dump_refuses_non_json_metadata(metadata: dict[str, Any]) -> None:
    """A metadata value that is not JSON cannot be written."""
    with pytest.raises(CheckpointError) as info:
        dump_checkpoint(Session(id="s", metadata=metadata))
    assert info.value.code == "CHECKPOINT_INVALID"


def test_dump_refuses_malformed_structs() -> None:
    """Fields of the wrong type, which msgspec does not check at construction, are refused."""
    bad_role = Session(id="s", messages=[Message(role="admin", content="x")])  # type: ignore[arg-type]
    bad_args = Session(id="s", messages=[message_assistant("", [ToolCall("e", {"x": {1}})])])
    for session in (bad_role, bad_args, Session(id=5)):  # type: ignore[arg-type]
        with pytest.raises(CheckpointError) as info:
            dump_checkpoint(session)
        assert info.value.code == "CHECKPOINT_INVALID"


def test_dump_refuses_deep_nesting_with_a_code() -> None:
    """Metadata nested beyond the recursion limit gives CHECKPOINT_INVALID, not RecursionError."""
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(CheckpointError) as info:
        dump_checkpoint(Session(id="s", metadata={"d": deep}))
    assert info.value.code == "CHECKPOINT_INVALID"


def test_dump_refuses_a_value_that_writes_out_exponentially() -> None:
    """Metadata or arguments sharing one list at sixty levels (2**60 values written out) are
    refused with a code at once; a container shared a few times is written out each time."""
    value: Any = [0]
    for _ in range(60):
        value = [value, value]
    call = ToolCall(id="c", name="t", arguments={"v": value})
    for session in (
        Session(id="s", metadata={"v": value}),
        Session(id="s", messages=[Message(role="assistant", content="", tool_calls=[call])]),
    ):
        with pytest.raises(CheckpointError) as info:
            dump_checkpoint(session)
        assert info.value.code == "CHECKPOINT_INVALID"
    shared = {"a": [1, 2]}
    session = Session(id="s", metadata={"x": shared, "y": [shared, shared]})
    assert load_checkpoint(dump_checkpoint(session)).metadata == {
        "x": {"a": [1, 2]},
        "y": [{"a": [1, 2]}, {"a": [1, 2]}],
    }


def test_dump_argument_errors() -> None:
    """Programming errors raise TypeError or ValueError."""
    with pytest.raises(TypeError):
        dump_checkpoint({"id": "s"})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        dump_checkpoint(Session(id="s"), key="text")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        dump_checkpoint(Session(id="s"), key=b"")
    with pytest.raises(TypeError):
        dump_checkpoint(Session(id="s"), metadata_keys="user")


def test_load_accepts_bytes_str_bytearray_and_memoryview() -> None:
    """The checkpoint may be given as UTF-8 bytes of any buffer kind or as a str."""
    session = full_session()
    data = dump_checkpoint(session)
    for form in (data, data.decode(), bytearray(data), memoryview(data)):
        assert load_checkpoint(form) == session


@pytest.mark.parametrize(
    "data",
    [b"", b"not json", b"\xff\xfe", b"[]", b'"x"', b"{} {}", "\ud800", b"[" * 100_000, 42, None],
)
def test_load_invalid(data: Any) -> None:
    """Input that is not one UTF-8 JSON object is CHECKPOINT_INVALID."""
    assert load_error(data) == "CHECKPOINT_INVALID"


@pytest.mark.parametrize(
    "header",
    [
        {},
        {"format": "other", "version": 1},
        {"format": "praxo.checkpoint", "version": 2},
        {"format": "praxo.checkpoint", "version": "1"},
        {"format": "praxo.checkpoint", "version": 1.0},
        {"format": "praxo.checkpoint", "version": True},
        {"format": "praxo.checkpoint"},
    ],
)
def test_load_unknown_format_or_version(header: dict[str, Any]) -> None:
    """A missing or unknown format or version is CHECKPOINT_VERSION."""
    data = json.dumps({**header, "session": {"type": "session", "id": "s"}}).encode()
    assert load_error(data) == "CHECKPOINT_VERSION"


@pytest.mark.parametrize(
    ("session", "allowed"),
    [
        ({"type": "pickle", "id": "s"}, DEFAULT_CHECKPOINT_TYPES),
        ({"type": "session", "id": "s"}, frozenset({"message"})),
        ({"type": "session", "id": "s"}, frozenset()),
        (
            {"type": "session", "id": "s", "messages": [{"type": "message", "role": "user"}]},
            {"session"},
        ),
        (
            {"type": "session", "id": "s", "messages": [{"type": "os.system"}]},
            DEFAULT_CHECKPOINT_TYPES,
        ),
    ],
)
def test_load_type_not_allowed(session: dict[str, Any], allowed: Any) -> None:
    """A tag outside the allowlist, including the root's and an unknown one, is refused."""
    assert load_error(document(session), allowed_types=allowed) == "CHECKPOINT_TYPE_NOT_ALLOWED"


def test_allowlist_covers_every_nested_tag() -> None:
    """Dropping any one tag from the allowlist refuses a checkpoint that uses it."""
    data = dump_checkpoint(full_session())
    for tag in DEFAULT_CHECKPOINT_TYPES:
        allowed = DEFAULT_CHECKPOINT_TYPES - {tag}
        assert load_error(data, allowed_types=allowed) == "CHECKPOINT_TYPE_NOT_ALLOWED", tag


def test_allowlist_may_be_any_collection() -> None:
    """A list or set of tags works like the default frozenset; a bare str is refused."""
    data = dump_checkpoint(Session(id="s", messages=[message_user("x")]))
    assert load_checkpoint(data, allowed_types=["session", "message"]).id == "s"
    with pytest.raises(TypeError):
        load_checkpoint(data, allowed_types="session")


@pytest.mark.parametrize(
    "session",
    [
        [],
        {"id": "s"},
        {"type": 1, "id": "s"},
        {"type": "session"},
        {"type": "session", "id": 1},
        {"type": "session", "id": "s", "metadata": []},
        {"type": "session", "id": "s", "messages": {}},
        {"type": "session", "id": "s", "extra": 1},
        {"type": "session", "id": "s", "messages": [{"type": "message", "role": "root"}]},
        {"type": "session", "id": "s", "messages": [{"type": "message", "role": ["user"]}]},
        {"type": "session", "id": "s", "messages": [{"type": "message"}]},
        {"type": "session", "id": "s", "messages": [{"type": "text", "text": "x"}]},
        {
            "type": "session",
            "id": "s",
            "messages": [{"type": "message", "role": "user", "content": 1}],
        },
        {
            "type": "session",
            "id": "s",
            "messages": [{"type": "message", "role": "user", "content": [{"type": "message"}]}],
        },
        {
            "type": "session",
            "id": "s",
            "messages": [{"type": "message", "role": "user", "content": [{"type": "image"}]}],
        },
        {
            "type": "session",
            "id": "s",
            "messages": [
                {
                    "type": "message",
                    "role": "user",
                    "tool_calls": [{"type": "tool_call", "name": "e"}],
                }
            ],
        },
        {
            "type": "session",
            "id": "s",
            "messages": [{"type": "message", "role": "user", "name": 3}],
        },
    ],
)
def test_load_wrong_shape(session: Any) -> None:
    """Missing tags, misplaced tags, unknown fields and wrong field types are CHECKPOINT_INVALID."""
    assert load_error(document(session)) == "CHECKPOINT_INVALID"


def test_load_refuses_unknown_top_level_fields_and_missing_session() -> None:
    """Only format, version, session and signature may appear at the top level."""
    assert load_error(document({"type": "session", "id": "s"}, x=1)) == "CHECKPOINT_INVALID"
    data = json.dumps({"format": "praxo.checkpoint", "version": 1}).encode()
    assert load_error(data) == "CHECKPOINT_INVALID"


def test_plain_json_inside_metadata_and_arguments_is_not_revived() -> None:
    """Objects with a "type" key inside metadata and arguments stay plain dicts."""
    session = Session(
        id="s",
        messages=[message_assistant("", [ToolCall("e", {"type": "session"})])],
        metadata={"type": "pickle", "x": {"type": "message"}},
    )
    loaded = load_checkpoint(dump_checkpoint(session))
    assert loaded.metadata == {"type": "pickle", "x": {"type": "message"}}
    assert loaded.messages[0].tool_calls[0].arguments == {"type": "session"}


def test_optional_fields_take_their_defaults() -> None:
    """Struct fields with defaults may be left out of a hand-written checkpoint."""
    data = document(
        {"type": "session", "id": "s", "messages": [{"type": "message", "role": "user"}]}
    )
    assert load_checkpoint(data) == Session(id="s", messages=[Message(role="user")])


def test_key_requires_a_valid_signature() -> None:
    """With a key, a missing, wrong or foreign signature is CHECKPOINT_SIGNATURE."""
    session = full_session()
    assert load_error(dump_checkpoint(session), key=KEY) == "CHECKPOINT_SIGNATURE"
    assert load_error(dump_checkpoint(session, key=b"other"), key=KEY) == "CHECKPOINT_SIGNATURE"
    doc = json.loads(dump_checkpoint(session, key=KEY))
    for forged in ("0" * 64, doc["signature"].upper(), 1, None, "é"):
        data = json.dumps({**doc, "signature": forged}).encode()
        assert load_error(data, key=KEY) == "CHECKPOINT_SIGNATURE", forged


def test_tampering_is_detected() -> None:
    """Any change to a signed document fails verification."""
    doc = json.loads(dump_checkpoint(full_session(), key=KEY))
    doc["session"]["messages"][1]["content"] = "changed"
    assert load_error(json.dumps(doc).encode(), key=KEY) == "CHECKPOINT_SIGNATURE"


def test_signature_is_verified_before_anything_else() -> None:
    """A bad signature wins over a bad version or a disallowed tag."""
    data = json.dumps(
        {"format": "x", "version": 9, "session": {"type": "pickle"}, "signature": "00"}
    ).encode()
    assert load_error(data, key=KEY) == "CHECKPOINT_SIGNATURE"


def test_signed_document_is_still_checked() -> None:
    """A correctly signed document with a disallowed tag is refused after verification."""
    data = dump_checkpoint(full_session(), key=KEY)
    assert (
        load_error(data, key=KEY, allowed_types={"session", "message"})
        == "CHECKPOINT_TYPE_NOT_ALLOWED"
    )


def test_without_a_key_the_signature_is_ignored() -> None:
    """Loading without a key accepts a signed document without verifying it."""
    doc = json.loads(dump_checkpoint(full_session(), key=KEY))
    doc["signature"] = "garbage"
    assert load_checkpoint(json.dumps(doc).encode()) == full_session()


def test_load_argument_errors() -> None:
    """A key that is not bytes, or is empty, is a programming error."""
    data = dump_checkpoint(Session(id="s"))
    with pytest.raises(TypeError):
        load_checkpoint(data, key="text")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        load_checkpoint(data, key=bytearray(KEY))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        load_checkpoint(data, key=b"")
