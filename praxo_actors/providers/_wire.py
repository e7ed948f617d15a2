"""What both providers share: importing the SDK, checking settings, pairing tool results with
their calls, decoding a call's arguments, and reading calls from text (the named formats).
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
from collections.abc import Iterable
from typing import Any

from praxo_actors._errors import JSONError, ToolCallError
from praxo_actors.codes import (
    TOOL_CALL_INVALID_ARGUMENTS,
    TOOL_CALL_INVALID_JSON,
    TOOL_CALL_INVALID_NAME,
    TOOL_CALL_UNKNOWN_FORMAT,
)
from praxo_actors.models import Block, ImageBlock, Message, ModelError, ToolCall
from praxo_actors.providers._errors import MODEL_BAD_RESPONSE

__all__ = [
    "BODY_ERRORS",
    "SHAPE_ERRORS",
    "BadRequest",
    "CallIds",
    "bad_body",
    "bad_shape",
    "check_format",
    "check_params",
    "check_settings",
    "decode_arguments",
    "import_sdk",
    "pair_calls",
    "text_calls",
    "text_of",
    "typed",
]


SHAPE_ERRORS = (AttributeError, TypeError, ValueError, KeyError, IndexError)
"""What reading an answer of the wrong shape raises: the SDKs do not validate what they get."""


BODY_ERRORS = (json.JSONDecodeError, UnicodeDecodeError)
"""What the SDKs raise for a body or stream event that is not JSON (or not UTF-8)."""


def bad_body(provider: str, exc: Exception) -> ModelError:
    """Return ``MODEL_BAD_RESPONSE`` for an answer that is not JSON."""
    return ModelError(MODEL_BAD_RESPONSE, f"{provider}: the answer is not JSON: {exc}")


def bad_shape(provider: str, exc: Exception) -> ModelError:
    """Return ``MODEL_BAD_RESPONSE`` for an answer whose shape could not be read."""
    return ModelError(
        MODEL_BAD_RESPONSE, f"{provider}: the answer has an unexpected shape: {exc!r}"
    )


def typed(value: Any, kinds: type | tuple[type, ...], what: str) -> Any:
    """Return ``value`` if it is one of ``kinds`` (a bool is no number here).

    The SDKs build answers without validating them, so a field of the wrong type reaches us
    as it was sent; reading it with this check makes it ``MODEL_BAD_RESPONSE``.

    Raises:
        TypeError: ``value`` is of another type (``what`` names the field).
    """
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in _kinds(kinds)):
        return value
    names = " or ".join("null" if k is type(None) else k.__name__ for k in _kinds(kinds))
    raise TypeError(f"{what} must be {names}, not {type(value).__name__}")


def _kinds(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


class BadRequest(Exception):
    """A request the provider's API cannot express; the model returns ``MODEL_BAD_REQUEST``."""


def import_sdk(name: str, factory: str) -> Any:
    """Import the SDK ``name``; without it, say which extra installs it.

    Raises:
        ImportError: The SDK is not installed (``.name`` is the package).
    """
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise ImportError(
            f"{factory}() needs the {name!r} package, which the {name!r} extra installs: "
            f"pip install 'praxo-actors[{name}]'",
            name=name,
        ) from exc


def check_settings(
    factory: str,
    model: object,
    timeout: object,
    stream: object,
    params: dict[str, Any],
    reserved: Iterable[str],
) -> None:
    """Refuse settings of the wrong type or value, and parameters the model sets itself.

    Raises:
        TypeError: ``model`` not a str, ``stream`` not a bool, ``timeout`` not a number, or a
            reserved parameter.
        ValueError: An empty ``model``, or a ``timeout`` that is not positive and finite.
    """
    if not isinstance(model, str):
        raise TypeError(f"{factory}: model must be a str, not {type(model).__name__}")
    if not model:
        raise ValueError(f"{factory}: model must not be empty")
    if not isinstance(stream, bool):
        raise TypeError(f"{factory}: stream must be a bool")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise TypeError(f"{factory}: timeout must be a number of seconds or None")
        if not (math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"{factory}: timeout must be positive and finite, got {timeout!r}")
    taken = sorted(set(params) & set(reserved))
    if taken:
        raise TypeError(f"{factory}: {', '.join(taken)} come from the request, not from parameters")


def check_params(factory: str, method: Any, params: dict[str, Any]) -> None:
    """Refuse parameters the SDK's ``create`` does not take, now rather than at each call.

    Raises:
        TypeError: A parameter the installed SDK does not know (``extra_body`` sends any).
    """
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):
        return
    accepted = signature.parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
        return
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise TypeError(
            f"{factory}: the installed SDK takes no parameter {', '.join(unknown)} "
            "(extra_body={...} sends fields it does not know)"
        )


def text_of(content: str | list[Block], role: str) -> str:
    """Return a message's text; refuse a non-text block where the API takes text only.

    Raises:
        BadRequest: ``content`` holds an image.
    """
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, ImageBlock):
            raise BadRequest(f"a {role} message cannot carry an image")
        parts.append(block.text)
    return "".join(parts)


class CallIds:
    """The id each tool call goes out with, and the call each tool result answers.

    Both APIs need every call to carry an id and every result to name it. A call without an
    id (a model that sends none) goes out as ``call_<m>_<c>`` (message and call index); a
    result without an id answers the first unanswered call of its name (of any name, when it
    names none) in the assistant message before it. A history stored before calls read from
    text were stored as calls holds them as the assistant's text, followed by their results:
    those calls are read again from the text (any named format), and go out as calls with the
    prose as the text (``text_calls``). A tool message that answers no call (the loop's report
    of malformed markup) has nothing to pair with: ``answers`` is None and it goes out as a
    user message.
    """

    def __init__(self) -> None:
        self.calls: dict[int, list[str]] = {}
        self.answers: dict[int, str | None] = {}
        self.text_calls: dict[int, tuple[str, list[ToolCall]]] = {}

    def of(self, index: int, message: Message) -> tuple[str | list[Block], list[ToolCall]]:
        """Return the content and the calls the assistant message ``index`` goes out with."""
        read = self.text_calls.get(index)
        if read is None:
            return message.content, message.tool_calls
        return read


def pair_calls(messages: list[Message]) -> CallIds:
    """Return the wire ids of ``messages``' tool calls and results (see :class:`CallIds`)."""
    ids = CallIds()
    open_calls: list[tuple[str, str | None, bool]] = []  # (id, name, had its own id)
    for index, message in enumerate(messages):
        if message.role == "assistant":
            calls = message.tool_calls
            if not calls and _answered_blind(messages, index):
                read = _calls_in_text(message.content)
                if read is not None:
                    ids.text_calls[index] = read
                    calls = read[1]
            wire = [call.id or f"call_{index}_{n}" for n, call in enumerate(calls)]
            ids.calls[index] = wire
            open_calls = [
                (wire_id, call.name, call.id is not None)
                for wire_id, call in zip(wire, calls, strict=True)
            ]
        elif message.role == "tool":
            answer = message.tool_call_id
            if answer is None:
                answer = next(
                    (
                        i
                        for i, name, own in open_calls
                        if not own and (message.name is None or name == message.name)
                    ),
                    None,
                )
            ids.answers[index] = answer
            open_calls = [c for c in open_calls if c[0] != answer]
        else:
            open_calls = []
    return ids


def _answered_blind(messages: list[Message], index: int) -> bool:
    """Whether the message after ``index`` is a tool result that names no call."""
    after = messages[index + 1] if index + 1 < len(messages) else None
    return after is not None and after.role == "tool" and after.tool_call_id is None


def _calls_in_text(content: str | list[Block]) -> tuple[str, list[ToolCall]] | None:
    """Return the prose and the calls of an assistant's text, or None when it holds none."""
    from praxo_actors.core import parse_tool_calls, strip_tool_calls

    if isinstance(content, str):
        text = content
    else:
        text = "".join(b.text for b in content if not isinstance(b, ImageBlock))
    try:
        calls = parse_tool_calls(text, format="auto")
    except ToolCallError:
        return None  # malformed markup: its report answers no call
    if not calls:
        return None
    return strip_tool_calls(text, format="auto"), calls


def decode_arguments(name: str, call_id: str | None, arguments: Any, note: str = "") -> ToolCall:
    """Return the call the server sent, its arguments decoded from a JSON string.

    Raises:
        ToolCallError: ``TOOL_CALL_INVALID_NAME`` for an empty name, ``TOOL_CALL_INVALID_JSON``
            for arguments that are not JSON, ``TOOL_CALL_INVALID_ARGUMENTS`` for JSON that is
            not an object. Never a call with arguments the server did not send.
    """
    from praxo_actors.core import parse_json

    where = f"the server's call {name!r}" + (f" ({call_id})" if call_id else "")
    if not isinstance(name, str) or not name:
        raise ToolCallError(TOOL_CALL_INVALID_NAME, f"a server's tool call has no name{note}")
    if isinstance(arguments, str):
        if not arguments.strip():
            arguments = {}  # servers send "" for a call without arguments
        else:
            try:
                arguments = parse_json(arguments)
            except JSONError as exc:
                raise ToolCallError(
                    TOOL_CALL_INVALID_JSON,
                    f"{where} has arguments that are not JSON ({exc.message}){note}",
                ) from None
    elif arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolCallError(
            TOOL_CALL_INVALID_ARGUMENTS,
            f"{where} has arguments that are not an object: {type(arguments).__name__}{note}",
        )
    return ToolCall(name, arguments, call_id)


def check_format(tool_call_format: object) -> None:
    """Refuse a ``tool_call_format`` the Core cannot read.

    Raises:
        TypeError: Not a str or None.
        ToolCallError: ``TOOL_CALL_UNKNOWN_FORMAT``: a name the Core does not know.
    """
    if tool_call_format is None:
        return
    if not isinstance(tool_call_format, str):
        raise TypeError("tool_call_format must be a str or None")
    from praxo_actors.core import tool_call_formats

    if tool_call_format != "auto" and tool_call_format not in tool_call_formats():
        raise ToolCallError(TOOL_CALL_UNKNOWN_FORMAT, f"unknown format {tool_call_format!r}")


def text_calls(text: str, tool_call_format: str | None) -> tuple[str, list[ToolCall]] | ModelError:
    """Read the calls a server left in its text, in ``tool_call_format``; keep the prose.

    Returns the prose and the calls (none: the text unchanged), or the markup's error as a
    ``ModelError`` with its stable code: never a silently wrong call. Inside a run, each call
    without an id gets the one the loop gives a call it reads from text.
    """
    if tool_call_format is None or not text:
        return text, []
    from praxo_actors.core import parse_tool_calls, strip_tool_calls

    try:
        calls = parse_tool_calls(text, format=tool_call_format)
        if not calls:
            return text, []
        prose = strip_tool_calls(text, format=tool_call_format)
    except ToolCallError as exc:
        return ModelError(exc.code, f"tool-call markup ({tool_call_format}): {exc.message}")
    return prose, _with_ids(calls)


def _with_ids(calls: list[ToolCall]) -> list[ToolCall]:
    """Give calls read from text the ids the loop gives them (from the run, step and place)."""
    from praxo_actors.agent import model_context
    from praxo_actors.agent._callids import with_call_ids

    context = model_context()
    if context is None:  # called outside a run: the wire pairs calls without ids itself
        return calls
    return with_call_ids(calls, context.run_id, context.step)
