"""What a provider model tells telemetry of itself, after the GenAI semantic conventions.

``OpenAIModel.telemetry_attributes`` and ``AnthropicModel.telemetry_attributes`` are built
here: ``gen_ai.provider.name``, ``server.address`` and ``server.port`` of the client's base
URL, and the ``gen_ai.request.*`` attribute of each request parameter the model was given
(``temperature=0.2`` → ``gen_ai.request.temperature``), read from ``extra_body`` too, which
sends what the installed SDK takes no parameter for. The agent loop puts them on each
``chat`` span of the model. What the server says of each answer (its id, model and finish
reason) travels in the ``Response`` itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = ["model_attributes", "text_or_none"]

# Request parameter -> (attribute, its type). Both APIs' spellings are here.
_REQUEST: dict[str, tuple[str, type]] = {
    "temperature": ("gen_ai.request.temperature", float),
    "top_p": ("gen_ai.request.top_p", float),
    "top_k": ("gen_ai.request.top_k", float),
    "frequency_penalty": ("gen_ai.request.frequency_penalty", float),
    "presence_penalty": ("gen_ai.request.presence_penalty", float),
    "max_tokens": ("gen_ai.request.max_tokens", int),
    "max_completion_tokens": ("gen_ai.request.max_tokens", int),
    "seed": ("gen_ai.request.seed", int),
    "n": ("gen_ai.request.choice.count", int),
    "stop": ("gen_ai.request.stop_sequences", tuple),
    "stop_sequences": ("gen_ai.request.stop_sequences", tuple),
}
_PORTS = {"https": 443, "http": 80}


def model_attributes(provider: str, base_url: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """Return the attributes of a provider model's ``chat`` spans.

    Args:
        provider: ``gen_ai.provider.name`` (``"openai"``, ``"anthropic"``).
        base_url: The SDK client's base URL (any object whose ``str`` is the URL), or None.
        params: The parameters sent with every request.
    """
    out: dict[str, Any] = {"gen_ai.provider.name": provider}
    out.update(_server(base_url))
    extra = params.get("extra_body")
    # The SDKs merge extra_body over the body: its value is the one the server gets.
    sent = {**params, **extra} if isinstance(extra, Mapping) else params
    for name, value in sent.items():
        known = _REQUEST.get(name)
        if known is None or isinstance(value, bool):
            continue
        key, kind = known
        if kind is tuple:
            stops = [value] if isinstance(value, str) else value
            if isinstance(stops, list | tuple) and all(isinstance(s, str) for s in stops):
                out[key] = tuple(stops)
        elif kind is float and isinstance(value, int | float):
            out[key] = float(value)
        elif kind is int and isinstance(value, int) and not (name == "n" and value == 1):
            out[key] = value
    output_type = _output_type(sent.get("response_format"))
    if output_type is not None:
        out["gen_ai.output.type"] = output_type
    return out


def text_or_none(value: Any) -> str | None:
    """Return ``value`` if it is a non-empty string (what a server said of its answer), else
    None: a ``Response`` field takes nothing else."""
    return value if isinstance(value, str) and value else None


def _server(base_url: Any) -> dict[str, Any]:
    if base_url is None:
        return {}
    try:
        parts = urlsplit(str(base_url))
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is no number: say nothing rather than something wrong
        return {}
    if not host:
        return {}
    port = port if port is not None else _PORTS.get(parts.scheme)
    return (
        {"server.address": host} if port is None else {"server.address": host, "server.port": port}
    )


def _output_type(response_format: Any) -> str | None:
    """Return ``gen_ai.output.type`` of an OpenAI ``response_format`` (``json`` or ``text``)."""
    kind = response_format.get("type") if isinstance(response_format, Mapping) else None
    if kind in ("json_object", "json_schema"):
        return "json"
    return "text" if kind == "text" else None
