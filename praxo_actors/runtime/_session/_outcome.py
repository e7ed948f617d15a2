"""Turn a callback's outcome into an :class:`EffectDone` message, and back.

A callback (model, tool, repairer, summariser) returns a value or raises. The session gets that
outcome inside its message. A value is msgpack-encoded with the message, once: the session gets
a copy. An exception is
the one thing that rides along as an object, in the same message, beside the encoded
:class:`Raised` notice (its type and text): the contract has a callback's own exception reach the
run's caller *unchanged* — the same object — never as a code or a copy. The callback's side
keeps no reference to it, so nothing is shared.

A value that is not JSON by the Core's rules (a set, NaN, an object of yours) is not encoded
either: it rides along unchanged, so that the agent loop answers it exactly as ``run_agent``
does. A ``KeyboardInterrupt`` or ``SystemExit`` from a callback travels the same way: the
session fails the run with it (it reaches the run's caller) and never raises it itself, which
would stop every actor.

A value that cannot be encoded at all — nested beyond what msgspec's encoder and decoder reach
(5,000 deep), or cyclic; for a model's answer, tool-call arguments or usage nested deeper than
JSON's 512 — fails its run with a code: a model's answer is
``ModelError("MODEL_BAD_RESPONSE")``, as a provider's malformed answer is (a fallback model is
tried next); any other callback's value fails the run with ``TypeError``. Building the message
never raises: whatever goes wrong becomes the callback's outcome, so no run is left pending.
"""

from __future__ import annotations

from typing import Any

import msgspec

from praxo_actors._errors import AgentError, JSONError, ProtocolError
from praxo_actors.agent._tool import ToolError
from praxo_actors.codes import AGENT_CALLBACK_EXCEPTION, MODEL_BAD_RESPONSE
from praxo_actors.core._json import MAX_DEPTH
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
)
from praxo_actors.runtime._session._guard import text_of

__all__ = ["effect_done", "unpack"]

Message = bytes | tuple[bytes, Any]
"""What a session receives for a callback's outcome: encoded bytes, plus the object if any."""


def effect_done(run_id: str, token: int, ok: bool, value: Any) -> Message:
    """Build the message for outcome ``(ok, value)`` of call ``token`` of run ``run_id``.

    Never raises (it runs on the thread the callback ran on, where nobody would hear of it).
    """
    if not ok:
        return _raised(run_id, token, value)
    try:
        return _returned(run_id, token, value)
    except BaseException as exc:  # as the session's guard (see ``enter``): nothing escapes
        return _raised(run_id, token, exc)


def _returned(run_id: str, token: int, value: Any) -> Message:
    kind = type(value)
    outcome: Outcome
    if kind is Response and type(value.message) is ModelMessage:
        if (value.usage or value.message.tool_calls) and _too_deep(value):  # text: no walk
            return _unencodable(run_id, token, True)
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
        return encode(EffectDone(run_id, token, outcome))  # as _pack, inline
    except RecursionError:  # nested beyond the encoder's reach, or cyclic: not JSON at all
        return _unencodable(run_id, token, kind is Response)
    except (TypeError, ValueError, OverflowError):  # e.g. a usage dict holding an object
        return _pack(run_id, token, ReturnedObject(kind.__name__)), value


def _too_deep(response: Response) -> bool:
    """Whether a tool call's arguments or the usage of ``response`` nest deeper than JSON's
    :data:`MAX_DEPTH` (a cycle does too).

    Such an answer might still encode on the callback's thread, yet fail to decode on the
    session's deeper stack (its message could then not even be read): refused here instead.
    """
    usage = response.usage
    calls = response.message.tool_calls
    if not calls and not usage:
        return False  # the common answer: text only
    roots: list[Any] = [call.arguments for call in calls]
    if usage:
        roots.append(usage)
    budget = _WALK_BUDGET  # a wide value is walked this far, then left to the encoder
    stack = [(root, 1) for root in roots if type(root) in _CONTAINERS]
    while stack and budget:
        budget -= 1
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = item.values() if type(item) is dict else item
        stack.extend((child, depth + 1) for child in children if type(child) in _CONTAINERS)
    return False


_CONTAINERS = frozenset({dict, list, tuple})
_WALK_BUDGET = 100_000


def unpack(outcome: Outcome | msgspec.Raw, carried: Any, model: bool = False) -> tuple[bool, Any]:
    """Return ``(ok, value_or_exception)`` from an outcome and the object it carried.

    An outcome still encoded (its message did not decode whole: see
    :func:`~praxo_actors.runtime._protocol.decode_effect`) is decoded here, to say what is
    wrong with it. ``model``: the outcome is a model call's (a value too deep to decode is
    then the model's ``MODEL_BAD_RESPONSE``).
    """
    if type(outcome) is msgspec.Raw:
        try:
            outcome = decode_outcome(outcome)
        except ProtocolError as exc:  # a value of the wrong shape, e.g. a Struct field's type
            return False, TypeError(f"a callback returned a malformed value: {exc.message}")
        except RecursionError:  # encoded on a shallow stack, too deep for the session's
            if model:
                return True, _BAD_RESPONSE
            return False, TypeError(_TOO_DEEP)
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
                return False, AgentError(AGENT_CALLBACK_EXCEPTION, text)
            return False, carried


def _pack(run_id: str, token: int, outcome: Outcome) -> bytes:
    return encode(EffectDone(run_id, token, outcome))


_TOO_DEEP = "a callback returned a value that is not JSON: nested too deep, or cyclic"
_BAD_RESPONSE = ModelError(
    MODEL_BAD_RESPONSE, "the model's answer cannot be encoded: nested too deep, or cyclic"
)


def _unencodable(run_id: str, token: int, model: bool) -> Message:
    if model:
        return _pack(run_id, token, ReturnedModelError(_BAD_RESPONSE))
    return _raised(run_id, token, TypeError(_TOO_DEEP))


def _raised(run_id: str, token: int, exc: BaseException) -> Message:
    return _pack(run_id, token, Raised(text_of(exc))), exc
