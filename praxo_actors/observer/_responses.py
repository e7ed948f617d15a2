"""The observer's JSON answers: a value, or a PraxoError as ``{"error": {"code", "message"}}``."""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.responses import JSONResponse, Response

from praxo_actors._errors import PraxoError

__all__ = ["error_response", "json_response"]

_STATUS = {
    "RUNTIME_STOPPED": 503,
    "RUNTIME_TIMEOUT": 504,
    "OBSERVER_UNKNOWN_RUN": 404,
    "SCHEDULE_NOT_FOUND": 404,
    "SESSION_NOT_INTERRUPTED": 409,
    "RUNTIME_UNKNOWN_AGENT": 409,
}
_encoder = msgspec.json.Encoder()


def json_response(value: Any) -> Response:
    """Answer ``value`` (anything msgspec encodes) as JSON."""
    return Response(_encoder.encode(value), media_type="application/json")


def error_response(exc: PraxoError) -> Response:
    """Answer ``exc``: 503 for a stopped runtime, 504 for a timeout, 404 for an unknown run, 409
    for an action the session is not in a state for, 400 for bad input."""
    status = _STATUS.get(exc.code, 400 if "INVALID" in exc.code else 500)
    return JSONResponse({"error": {"code": exc.code, "message": exc.message}}, status_code=status)
