"""A ``RunAgentInput``, read in one pass: msgspec for the shapes clients send, else pydantic.

``ag_ui.core.RunAgentInput``'s pydantic validation is a tenth of the CPU an AG-UI run adds
over ``astream``. The structs here are a strict subset of it — the same fields and types for
the messages a client sends as text (system, user, assistant with its tool calls, tool), its
tools, context and resume entries; unknown fields ignored, as the model allows them — so a
body they take (one nested too shallow to reach the model's depth limit) is one the model
takes, read to the same values. Anything else (content parts, other roles, fields by their
Python names, bad input) goes to the model, which decides and words the refusal.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec
import pydantic
from ag_ui.core import RunAgentInput

from praxo_actors.codes import PROTOCOL_BAD_JSON, PROTOCOL_INVALID_INPUT
from praxo_actors.protocols._http import Refused

__all__ = ["Given", "given"]


class _Base(msgspec.Struct, rename="camel", kw_only=True):
    pass


class _Function(_Base):
    name: str
    arguments: str


class _ToolCall(_Base):
    id: str
    function: _Function
    type: Literal["function"] = "function"
    encrypted_value: str | None = None
    metadata: dict[str, Any] | None = None


class _Message(_Base, tag_field="role"):
    id: str
    subagent_run_id: str | None = None
    encrypted_value: str | None = None
    metadata: dict[str, Any] | None = None


class _System(_Message, tag="system", kw_only=True):
    role: ClassVar[str] = "system"
    content: str
    name: str | None = None


class _User(_Message, tag="user", kw_only=True):
    role: ClassVar[str] = "user"
    content: str
    name: str | None = None


class _Assistant(_Message, tag="assistant", kw_only=True):
    role: ClassVar[str] = "assistant"
    content: str | None = None
    name: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _ToolResult(_Message, tag="tool", kw_only=True):
    role: ClassVar[str] = "tool"
    content: str
    tool_call_id: str
    error: str | None = None


class _Tool(_Base):
    name: str
    description: str
    parameters: Any = None
    metadata: dict[str, Any] | None = None


class _Context(_Base):
    description: str
    value: str


class _Resume(_Base):
    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None
    metadata: dict[str, Any] | None = None


class _Input(_Base):
    thread_id: str
    run_id: str
    messages: list[_System | _User | _Assistant | _ToolResult]
    protocol_version: str | None = None
    parent_run_id: str | None = None
    state: Any = None
    tools: list[_Tool] | None = None
    context: list[_Context] | None = None
    forwarded_props: Any = None
    resume: list[_Resume] | None = None


Given = _Input | RunAgentInput
"""A request's input: the fields ``ag_ui_app`` reads, by their Python names."""

_decode = msgspec.json.Decoder(_Input).decode
_OPENERS = 150
"""The most ``[``/``{`` bytes of a body read here: under pydantic's nesting limit (200 deep)."""


def given(body: bytes) -> Given:
    """Return the request's ``RunAgentInput``, parsed and validated in one pass.

    Raises:
        Refused: 400 ``PROTOCOL_BAD_JSON`` for a body that is not JSON (nested too deep
            included); 422 ``PROTOCOL_INVALID_INPUT`` for JSON that is not a RunAgentInput.
    """
    if body.count(b"[") + body.count(b"{") <= _OPENERS:  # nested no deeper than that
        try:
            return _decode(body)
        except msgspec.DecodeError:  # ValidationError included
            pass  # the model decides, and words why
    try:
        return RunAgentInput.model_validate_json(body)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            message = f"the body is not JSON: {first['msg']}"
            raise Refused(400, PROTOCOL_BAD_JSON, message) from None
        message = f"not a RunAgentInput: {first['msg']}"
        raise Refused(422, PROTOCOL_INVALID_INPUT, message) from None
