"""How a provider's failures become ``ModelError`` codes, and the retry-after a code carries.

Both SDKs raise one family of exceptions (``APIStatusError`` with the HTTP status,
``APIConnectionError``, ``APITimeoutError``); :func:`model_error` maps them, and the transport
errors a stream may raise while it is read, to the codes below. A rate limit's retry-after
travels in the message, as ``(retry after 2.5 s)`` at its end, so that it survives every
boundary a message crosses (events, checkpoints, an ``AgentError``); :func:`retry_after` reads
it back.
"""

from __future__ import annotations

import datetime
import email.utils
import re
import sys
import time
from typing import Any

from praxo_actors._errors import AgentError
from praxo_actors.models import ModelError

__all__ = [
    "MODEL_AUTH",
    "MODEL_BAD_REQUEST",
    "MODEL_BAD_RESPONSE",
    "MODEL_RATE_LIMITED",
    "MODEL_TIMEOUT",
    "MODEL_UNAVAILABLE",
    "model_error",
    "retry_after",
    "with_retry_after",
]

MODEL_RATE_LIMITED = "MODEL_RATE_LIMITED"
"""HTTP 429, or an API error of type ``rate_limit_error``; the message ends with the wait."""
MODEL_UNAVAILABLE = "MODEL_UNAVAILABLE"
"""HTTP 5xx (Anthropic's 529 "overloaded" too), a refused or dropped connection."""
MODEL_TIMEOUT = "MODEL_TIMEOUT"
"""No whole answer within the model's ``timeout`` (a deadline on the call, stream included), or
HTTP 408."""
MODEL_BAD_REQUEST = "MODEL_BAD_REQUEST"
"""HTTP 400, 404, 409, 413, 422 and other 4xx: the request itself is wrong (model name, shape)."""
MODEL_AUTH = "MODEL_AUTH"
"""HTTP 401 or 403, or no API key to send."""
MODEL_BAD_RESPONSE = "MODEL_BAD_RESPONSE"
"""A 2xx answer that holds no reply: a body or stream event that is not JSON (or not UTF-8), a
field missing or of the wrong type, no choices, a stream that ends before its last event."""

# The ``type`` of an error object in a response body (Anthropic sends them inside a stream).
_BY_ERROR_TYPE = {
    "rate_limit_error": MODEL_RATE_LIMITED,
    "overloaded_error": MODEL_UNAVAILABLE,
    "api_error": MODEL_UNAVAILABLE,
    "server_error": MODEL_UNAVAILABLE,
    "timeout_error": MODEL_TIMEOUT,
    "authentication_error": MODEL_AUTH,
    "permission_error": MODEL_AUTH,
    "invalid_request_error": MODEL_BAD_REQUEST,
    "not_found_error": MODEL_BAD_REQUEST,
    "request_too_large": MODEL_BAD_REQUEST,
}

# What :func:`with_retry_after` writes, and what earlier releases wrote (``%g``: ``1e+09``).
_RETRY_AFTER = re.compile(r"\(retry after (inf|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?) s\)\Z")
# RFC 9110 delay-seconds (1*DIGIT), and the fractions some servers send.
_DELAY_SECONDS = re.compile(r"\s*(\d+(?:\.\d+)?)\s*\Z")


def code_for_status(status: int) -> str:
    """Return the code of an HTTP error status."""
    if status == 429:
        return MODEL_RATE_LIMITED
    if status in (401, 403):
        return MODEL_AUTH
    if status == 408:
        return MODEL_TIMEOUT
    if status >= 500:
        return MODEL_UNAVAILABLE
    return MODEL_BAD_REQUEST


def model_error(sdk: Any, exc: BaseException, provider: str) -> ModelError | None:
    """Return the ``ModelError`` for an exception a call raised, or None if it is not the SDK's.

    Args:
        sdk: The SDK's module (``openai`` or ``anthropic``), whose exception classes are used.
        exc: What the call raised.
        provider: The provider's name, for the message.
    """
    if isinstance(exc, sdk.APITimeoutError):
        return ModelError(MODEL_TIMEOUT, f"{provider}: no answer in time: {exc}")
    if isinstance(exc, sdk.APIConnectionError):
        return ModelError(MODEL_UNAVAILABLE, f"{provider}: connection failed: {_cause(exc)}")
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        if status >= 400:
            code = code_for_status(status)
            message = f"{provider}: HTTP {status}: {_api_message(exc)}"
        else:  # an error event inside a 200 stream: its body says what kind
            code = _BY_ERROR_TYPE.get(_error_type(exc.body) or "", MODEL_UNAVAILABLE)
            message = f"{provider}: error in the stream: {_api_message(exc)}"
        if code == MODEL_RATE_LIMITED:
            message = with_retry_after(message, _header_retry_after(exc.response.headers))
        return ModelError(code, message)
    if isinstance(exc, sdk.APIResponseValidationError):  # strict validation of an answer
        return ModelError(MODEL_BAD_RESPONSE, f"{provider}: {exc}")
    if isinstance(exc, sdk.APIError):  # an error object in an OpenAI stream
        code = _BY_ERROR_TYPE.get(_error_type(exc.body) or "", MODEL_UNAVAILABLE)
        return ModelError(code, f"{provider}: {exc}")
    transport = _transport_error(exc)
    if transport is not None:
        return ModelError(transport, f"{provider}: the connection failed mid-answer: {exc!r}")
    return None


def with_retry_after(message: str, seconds: float | None) -> str:
    """Return ``message`` ending with ``(retry after N s)`` when ``seconds`` is known.

    ``N`` is the shortest text that reads back as the same float (``7``, ``2.5``,
    ``1000000000``, ``1e+16``, ``inf``), so :func:`retry_after` returns what was written.
    """
    if seconds is None:
        return message
    text = repr(float(seconds))
    return f"{message} (retry after {text.removesuffix('.0')} s)"


def retry_after(error: ModelError | AgentError | str) -> float | None:
    """Return the seconds a rate-limited server asked to wait, or None when it said nothing.

    Reads every value the providers write: ``(retry after N s)`` at the end of the message,
    ``N`` in decimal or exponent form (``2.5``, ``1000000000``, ``1e+09``) or ``inf``.

    Args:
        error: A ``ModelError`` a provider returned, the ``AgentError`` of a run it failed
            (its message is the model's), or either's message.

    Raises:
        TypeError: ``error`` is none of those.
    """
    message = error if isinstance(error, str) else getattr(error, "message", None)
    if not isinstance(message, str):
        raise TypeError(
            f"expected a ModelError, an AgentError or a str, not {type(error).__name__}"
        )
    match = _RETRY_AFTER.search(message)
    return float(match.group(1)) if match else None


def _header_retry_after(headers: Any) -> float | None:
    """Read ``retry-after-ms``, or ``retry-after`` in seconds or as an HTTP date.

    An unreadable value counts as none; a number too big for a float is ``inf``.
    """
    value = headers.get("retry-after-ms")
    if value is not None:
        milliseconds = _delay_seconds(value)
        if milliseconds is not None:
            return milliseconds / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _delay_seconds(value)
    if seconds is not None:
        return seconds
    return _until(value)


def _delay_seconds(text: str) -> float | None:
    match = _DELAY_SECONDS.match(text)
    return float(match.group(1)) if match else None


def _until(text: str) -> float | None:
    """Return the seconds from now to an HTTP date (0 for one past), or None if unreadable."""
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, OverflowError, IndexError):
        return None
    if when.tzinfo is None:  # asctime and "-0000" dates: HTTP dates are always UTC
        when = when.replace(tzinfo=datetime.UTC)
    seconds = when.timestamp() - time.time()
    return round(seconds, 3) if seconds > 0 else 0.0  # never -0.0, which reads back as none


def _error_type(body: Any) -> str | None:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("type"), str):
            return str(error["type"])
    return None


def _api_message(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return str(exc)


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__
    return f"{exc} ({cause!r})" if cause is not None else str(exc)


def _transport_error(exc: BaseException) -> str | None:
    """Return the code of an HTTP client's transport error raised while a stream is read."""
    for name in ("httpx2", "httpx"):
        module = sys.modules.get(name)
        if module is None:
            continue
        if isinstance(exc, module.TimeoutException):
            return MODEL_TIMEOUT
        if isinstance(exc, module.TransportError):
            return MODEL_UNAVAILABLE
    return None
