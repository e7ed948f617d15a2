"""A run's result between a session host and the cluster's client: msgpack, typed output kept.

The result crosses as msgpack, its structured output as its JSON value (a pydantic model as
its ``model_dump(mode="json")``, which msgpack could not write). Typed output (a Struct, a
dataclass, a pydantic model) rides beside it pickled, as Ray pickles every argument, so that
the client gets the same type back; when that type cannot be pickled or not be loaded in the
client, the client gets the JSON value.
"""

from __future__ import annotations

import pickle
from typing import Any

import msgspec

from praxo_actors.core._schema_types import json_value
from praxo_actors.models import RunResult

__all__ = ["pack_result", "typed_output"]

_JSON = (type(None), bool, int, float, str, list, dict)


def pack_result(result: RunResult) -> tuple[str, bytes, bytes | None]:
    """Return the reply carrying ``result``: ``("ok", msgpack, pickled typed output or None)``.

    Raises:
        TypeError: Structured output that cannot be written as JSON.
    """
    structured = result.structured
    typed = None
    if not isinstance(structured, _JSON):
        try:
            typed = pickle.dumps(structured)
        except Exception:  # any object's own pickling error: send its JSON only
            typed = None
        result = msgspec.structs.replace(result, structured=json_value(structured))
    return ("ok", msgspec.msgpack.encode(result), typed)


def typed_output(result: RunResult, reply: tuple[Any, ...]) -> RunResult:
    """Return ``result`` with the typed output its reply carries, if it loads here."""
    typed = reply[2] if len(reply) > 2 else None
    if not isinstance(typed, bytes):
        return result
    try:
        value = pickle.loads(typed)  # written by this cluster's own host
    except Exception:  # e.g. its type's module is not importable here
        return result
    return msgspec.structs.replace(result, structured=value)
