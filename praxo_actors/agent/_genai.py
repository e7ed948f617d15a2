"""What the GenAI conventions ask of a ``chat`` span beyond the call: who serves the model
(``gen_ai.provider.name``, ``server.*``, the request parameters) and what the server said of
its answer (``gen_ai.response.*``, each output message's ``finish_reason``).

A model names its own attributes with a ``telemetry_attributes`` mapping (``openai_model`` and
``anthropic_model`` do: provider, server address and port, request parameters); a wrapper
is looked through to the innermost model: ``retrying`` and ``rate_limited`` hold it as
``.model``, a function made with ``functools.wraps`` as ``__wrapped__``, and a bound method
such as ``ScriptedModel.acall`` stands for its object. A model
without one — a bare callback — gets ``gen_ai.provider.name`` from
``AgentOptions.provider_name``. The answer's part comes from the ``Response``'s
``finish_reason``, ``id`` and ``model``, which any model may set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from praxo_actors.agent._options import AgentOptions
from praxo_actors.models import Response

__all__ = [
    "MEASURED",
    "PROVIDER",
    "finish_reason",
    "model_attributes",
    "model_name",
    "provider_of",
    "response_attributes",
]

PROVIDER = "gen_ai.provider.name"
# The attributes of a chat span that its metric points carry too; the others (request
# parameters, ids) would split the histograms into a series per value.
MEASURED = frozenset(
    {
        "gen_ai.operation.name",
        PROVIDER,
        "gen_ai.request.model",
        "gen_ai.response.model",
        "server.address",
        "server.port",
    }
)
# The providers' own stop reasons, as the output-message schema names them.
_FINISH = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
    "tool_use": "tool_call",
    "content_filter": "content_filter",
    "refusal": "content_filter",
}
_DEPTH = 16  # wrappers looked through at most (a cycle of references ends here)


def _inner(model: Any) -> Any:
    """Return the model ``model`` wraps, or None when it wraps none.

    A wrapper names what it calls as ``__wrapped__`` (``functools.wraps`` sets it) or as a
    callable ``model`` attribute (``retrying``, ``rate_limited``); a bound method (``acall``)
    stands for its object when that object is itself a model (callable).
    """
    try:
        wrapped = getattr(model, "__wrapped__", None)
        if wrapped is not None and callable(wrapped):
            return wrapped
        inner = getattr(model, "model", None)
        if inner is not None and not isinstance(inner, str) and callable(inner):
            return inner
        owner = getattr(model, "__self__", None)
        if owner is not None and getattr(model, "__func__", None) is not None and callable(owner):
            return owner
    except Exception:  # a property of user code that fails: the chain ends here
        return None
    return None


def _leaf(model: Any) -> Any:
    """Return the innermost model of a chain of wrappers (see :func:`_inner`)."""
    for _ in range(_DEPTH):
        inner = _inner(model)
        if inner is None or inner is model:
            break
        model = inner
    return model


def model_name(model: Any) -> str:
    """Return the name a model goes by: a provider's model id, else the callable's name."""
    leaf = _leaf(model)
    try:
        inner = getattr(leaf, "model", None)
        if isinstance(inner, str) and inner:
            return inner
        name = getattr(leaf, "__name__", None)
    except Exception:  # a property of user code that fails: the type names it
        name = None
    return name if isinstance(name, str) else type(leaf).__name__


def model_attributes(model: Any) -> dict[str, Any]:
    """Return the valid entries of the model's ``telemetry_attributes`` (none: ``{}``).

    A mapping that cannot be read, and entries whose key is not a string or whose value is not
    an attribute value (str, bool, int, float, or a list or tuple of str), are left out: they
    must not fail the run. So is ``error.type``: only a failure sets it.
    """
    try:
        given = getattr(_leaf(model), "telemetry_attributes", None)
        if not isinstance(given, Mapping):
            return {}
        items = list(given.items())
    except Exception:  # a property of user code that fails: no attributes, the run goes on
        return {}
    out: dict[str, Any] = {}
    for key, value in items:
        if not isinstance(key, str) or key == "error.type":
            continue
        if isinstance(value, str | bool | int | float):
            out[key] = value
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            out[key] = tuple(value)
    return out


def provider_of(options: AgentOptions) -> str | None:
    """Return the provider of a run: the options' ``provider_name``, else the one every model
    the options may call names (None when they name none, or different ones)."""
    if options.provider_name is not None:
        return options.provider_name
    named = {model_attributes(model).get(PROVIDER) for model in options._attempts}
    if len(named) == 1:
        (provider,) = named
        if isinstance(provider, str):
            return provider
    return None


def finish_reason(response: Response) -> str:
    """Return why the answer ended, as the output-message schema says it.

    The server's own reason when the response carries one (``"tool_calls"`` and
    ``"tool_use"`` become ``"tool_call"``, ``"end_turn"`` ``"stop"``…; one the schema does not
    know is kept as it is); else ``"tool_call"`` when the answer calls tools, ``"stop"`` if not.
    """
    given = response.finish_reason
    if isinstance(given, str) and given:
        return _FINISH.get(given, given)
    message = getattr(response, "message", None)
    return "tool_call" if getattr(message, "tool_calls", None) else "stop"


def response_attributes(response: Response) -> dict[str, Any]:
    """Return the ``gen_ai.response.*`` attributes of what the response says of itself."""
    out: dict[str, Any] = {}
    if isinstance(response.id, str) and response.id:
        out["gen_ai.response.id"] = response.id
    if isinstance(response.model, str) and response.model:
        out["gen_ai.response.model"] = response.model
    if isinstance(response.finish_reason, str) and response.finish_reason:
        out["gen_ai.response.finish_reasons"] = (response.finish_reason,)
    return out
