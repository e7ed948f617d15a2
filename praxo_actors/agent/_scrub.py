"""What telemetry may write: error text PII-redacted, every string cut to the options' size.

Error messages and codes reach spans (status, ``error.type``, ``exception`` events) and metric
attributes whether or not content is captured, so they are always redacted here. Every string
value — names, ids, content, messages — is cut to ``AgentOptions.max_attribute_bytes`` of
UTF-8 (16 KiB by default) at a character boundary, after redaction, so that a cut never leaves
half an address that the rules would no longer see.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from typing import Any

from praxo_actors._errors import PraxoError
from praxo_actors.agent._report import _Carried
from praxo_actors.core import redact_pii

__all__ = ["cut", "cut_attributes", "error_text", "exception_attributes", "failure_message"]


def cut(text: str, limit: int | None) -> str:
    """Return ``text`` cut to at most ``limit`` UTF-8 bytes, at a character boundary."""
    # No character takes more than 4 bytes, so most strings need no encoding to be measured.
    if limit is None or len(text) * 4 <= limit:
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def cut_attributes(attributes: Mapping[str, Any], limit: int | None) -> dict[str, Any]:
    """Return ``attributes`` with every string value (and string in a sequence value) cut."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if isinstance(value, str):
            value = cut(value, limit)
        elif isinstance(value, tuple | list):
            value = tuple(cut(v, limit) if isinstance(v, str) else v for v in value)
        out[key] = value
    return out


def error_text(text: str, limit: int | None) -> str:
    """Return an error's message or code as telemetry records it: redacted, then cut."""
    return cut(redact_pii(text), limit)


def failure_message(exc: BaseException) -> str:
    """Return what a span's status says of an exception: a ``PraxoError``'s message, else the
    exception's type name (its text is the callback's and may hold anything)."""
    if isinstance(exc, _Carried):
        exc = exc.exc
    return exc.message if isinstance(exc, PraxoError) else type(exc).__name__


def exception_attributes(exc: BaseException, content: bool, limit: int | None) -> dict[str, Any]:
    """Return the attributes of the ``exception`` event recording ``exc``.

    ``exception.type`` always; ``exception.message`` for a ``PraxoError`` (its message is
    meant for people, like the status) and, with ``content``, for any other exception, with
    its ``exception.stacktrace``. Each is redacted and cut.
    """
    if isinstance(exc, _Carried):
        exc = exc.exc
    kind = type(exc)
    name = kind.__qualname__
    if kind.__module__ != "builtins":
        name = f"{kind.__module__}.{name}"
    attributes: dict[str, Any] = {"exception.type": cut(name, limit)}
    if isinstance(exc, PraxoError):
        attributes["exception.message"] = error_text(exc.message, limit)
    elif content:
        attributes["exception.message"] = error_text(_rendered(str, exc), limit)
    if content:
        stack = _rendered(lambda e: "".join(traceback.format_exception(e)), exc)
        attributes["exception.stacktrace"] = error_text(stack, limit)
    return attributes


def _rendered(render: Callable[[BaseException], str], exc: BaseException) -> str:
    try:
        return render(exc)
    except Exception:  # a callback's exception whose __str__ fails must not fail its run
        return type(exc).__name__
