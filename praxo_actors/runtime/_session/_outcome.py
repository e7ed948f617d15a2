"""Turn a callback's outcome into an :class:`EffectDone` message, and back.

A callback (model, tool, repairer, summariser) returns a value or raises. The session gets that
outcome inside its message. A value is msgpack-encoded: the session gets a copy. An exception is
the one thing that rides along as an object, in the same message, beside the encoded
:class:`Raised` notice (its type and text): §2 has a callback's own exception reach the
run's caller *unchanged* — the same object — never as a code or a copy. The callback's side
keeps no reference to it, so nothing is shared.

A value that is not JSON by the Core's rules (a set, NaN, an object of yours) is not encoded
either: it rides along unchanged, so that the agent loop answers it exactly as ``run_agent``
does. A ``KeyboardInterrupt`` or ``SystemExit`` from a callback travels the same way: the
session fails the run with it (it reaches the run's caller) and never raises it itself, which
would stop every actor.
"""

from __future__ import annotations

from typing import Any

import msgspec

from praxo_actors._errors import AgentError, JSONError, ProtocolError
from praxo_actors.agent._tool import ToolError
from praxo_actors.core._json import _check_value as check_json
from praxo_actors.models import Message as ModelMessage
from praxo_actors.models import ModelError, Response
from praxo_actors.runtime._protocol import (
    EffectDone,
    Outcome,
    Raised,
    Returned,
    ReturnedModelError,
    ReturnedObject,
    ReturnedResponse,
    ReturnedToolError,
    decode_outcome,
    encode,
    encode_outcome,
)

__all__ = ["effect_done", "unpack"]

Message = bytes | tuple[bytes, Any]
"""What a session receives for a callback's outcome: encoded bytes, plus the object if any."""


def effect_done(run_id: str, token: int, ok: bool, value: Any) -> Message:
    """Build the message for outcome ``(ok, value)`` of call ``token`` of run ``run_id``."""
    if not ok:
        return _raised(run_id, token, value)
    kind = type(value)
    outcome: Outcome
    if kind is Response and type(value.message) is ModelMessage:
        outcome = ReturnedResponse(value)
    elif kind is ModelError:
        outcome = ReturnedModelError(value)
    elif kind is ToolError:
        outcome = ReturnedToolError(value)
    else:
        try:
            check_json(value)
        except JSONError:
            return _pack(run_id, token, ReturnedObject(kind.__name__)), value
        outcome = Returned(value)
    try:
        return _pack(run_id, token, outcome)
    except (TypeError, ValueError, OverflowError):  # e.g. a usage dict holding an object
        return _pack(run_id, token, ReturnedObject(kind.__name__)), value


def unpack(data: msgspec.Raw, carried: Any) -> tuple[bool, Any]:
    """Return ``(ok, value_or_exception)`` from an encoded outcome and the object it carried."""
    try:
        outcome = decode_outcome(data)
    except ProtocolError as exc:  # a value of the wrong shape, e.g. a Struct field's type
        return False, TypeError(f"a callback returned a malformed value: {exc.message}")
    match outcome:
        case ReturnedResponse(response=response):
            return True, response
        case ReturnedModelError(error=model_error):
            return True, model_error
        case ReturnedToolError(error=tool_error):
            return True, tool_error
        case Returned(value=value):
            return True, value
        case ReturnedObject():
            return True, carried
        case Raised(text=text):
            if not isinstance(carried, BaseException):  # it lost its exception: say what it was
                return False, AgentError("AGENT_CALLBACK_EXCEPTION", text)
            return False, carried


def _pack(run_id: str, token: int, outcome: Outcome) -> bytes:
    return encode(EffectDone(run_id, token, msgspec.Raw(encode_outcome(outcome))))


def _raised(run_id: str, token: int, exc: BaseException) -> Message:
    text = f"{type(exc).__name__}: {exc}"
    return _pack(run_id, token, Raised(text)), exc
