"""``@tool``: a :class:`~praxo_actors.agent.Tool` made from a plain function and its type hints.

The schema comes from the parameters' annotations through msgspec (one ``Struct`` type is built
per tool, once), so a call's arguments are converted by msgspec too, in C: the conversion and
the loop's schema check cost a few microseconds a call (``bench/tools.py``).
"""

from __future__ import annotations

import copy
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, overload

import msgspec

from praxo_actors.agent._context import ToolContext, tool_context
from praxo_actors.agent._docstring import describe
from praxo_actors.agent._interrupt import Interrupt
from praxo_actors.agent._tool import Tool, ToolError
from praxo_actors.core._schema import Validator, compile_validator
from praxo_actors.core._schema_types import conversion_errors, inline_root

__all__ = ["tool"]

Delivery = Literal["at_least_once", "at_most_once"]  # as Tool.delivery

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*")
_MAX_NAME = 64  # the limit common to model providers (and to the tool-call parser)
_MUTABLE = (list, dict, set, bytearray)
_INVALID = "TOOL_CALL_INVALID_ARGUMENTS"


@overload
def tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    delivery: Literal["at_least_once", "at_most_once"] = "at_least_once",
) -> Tool: ...


@overload
def tool(
    fn: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    delivery: Literal["at_least_once", "at_most_once"] = "at_least_once",
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    delivery: Literal["at_least_once", "at_most_once"] = "at_least_once",
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` from a function, sync or ``async``: ``@tool`` or ``@tool(name=...)``.

    The tool's name is the function's, its description the docstring's first paragraph, and
    its parameters' descriptions come from the docstring's ``Args:`` section. Its JSON Schema
    is built from the type hints by msgspec: ``str``, ``int``, ``float``, ``bool``,
    ``Literal``, ``Enum``, ``Optional``, ``list``, ``dict``, msgspec ``Struct``, dataclasses,
    ``TypedDict`` and ``Annotated[..., msgspec.Meta(...)]`` among them; a parameter with a
    default is optional, and arguments the function does not take are refused. A parameter
    annotated :class:`ToolContext` receives the call's context (None outside a run) and is
    not in the schema.

    A call's arguments are converted to the annotated types (a ``Struct`` parameter gets a
    ``Struct``); arguments that do not convert are the call's result
    ``ToolError("TOOL_CALL_INVALID_ARGUMENTS", "<path>: <message>")`` and the function is not
    called. A returned ``str`` goes to the model as that text; any other value as JSON
    (Structs, dataclasses and pydantic models as objects); a :class:`ToolError` or an
    :class:`~praxo_actors.agent.Interrupt` as itself. The function may raise
    :class:`~praxo_actors.agent.ToolRetry`.

    Args:
        fn: The function (given when used as ``@tool``).
        name: The tool's name instead of the function's.
        description: The description instead of the docstring's.
        delivery: As :class:`Tool`'s (for durable runs).

    Raises:
        TypeError: A parameter msgspec cannot describe, ``*args`` / ``**kwargs`` or a
            positional-only parameter, or an annotation that does not resolve.
        ValueError: A name that is not a tool name (``[A-Za-z_][A-Za-z0-9_-]*``, dotted
            parts allowed, at most 64 characters).
    """
    if fn is None:

        def decorate(fn: Callable[..., Any]) -> Tool:
            scope = _caller_locals()
            return _make(fn, name=name, description=description, delivery=delivery, scope=scope)

        return decorate
    scope = _caller_locals()
    return _make(fn, name=name, description=description, delivery=delivery, scope=scope)


def _caller_locals() -> dict[str, Any]:
    """The local names where the tool is made: a string annotation may name a local class."""
    frame = inspect.currentframe()
    caller = frame.f_back.f_back if frame is not None and frame.f_back is not None else None
    return dict(caller.f_locals) if caller is not None else {}


def _make(
    fn: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    delivery: Delivery,
    scope: dict[str, Any],
) -> Tool:
    if not callable(fn):
        raise TypeError(f"@tool takes a function, not {type(fn).__name__}")
    tool_name = getattr(fn, "__name__", None) if name is None else name
    if not isinstance(tool_name, str) or not _NAME.fullmatch(tool_name):
        raise ValueError(f"{tool_name!r} is not a tool name: give one with @tool(name=...)")
    if len(tool_name) > _MAX_NAME:
        raise ValueError(f"tool name {tool_name!r} is longer than {_MAX_NAME} characters")
    summary, documented = describe(inspect.getdoc(fn))
    if description is not None and not isinstance(description, str):
        raise TypeError("description must be a str or None")
    arguments, contexts = _arguments_type(fn, tool_name, scope)
    try:
        schema = inline_root(msgspec.json.schema(arguments))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"tool {tool_name!r}: msgspec cannot describe a parameter: {exc}") from None
    _describe_properties(schema, documented)
    handler = _handler(fn, arguments, contexts, compile_validator(schema))
    return Tool(
        tool_name,
        summary if description is None else description,
        schema,
        handler,
        delivery,
        text_results=True,
    )


def _arguments_type(
    fn: Callable[..., Any], tool_name: str, scope: dict[str, Any]
) -> tuple[type[Any], tuple[str, ...]]:
    """Return the Struct type of ``fn``'s arguments, and its parameters that take the context."""
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except NameError:
        try:  # a string annotation naming a class local to where the tool is made
            hints = typing.get_type_hints(target, localns=scope, include_extras=True)
        except Exception as exc:
            raise TypeError(f"tool {tool_name!r}: its annotations do not resolve: {exc}") from None
    except Exception as exc:
        raise TypeError(f"tool {tool_name!r}: its annotations do not resolve: {exc}") from None
    fields: list[tuple[Any, ...]] = []
    contexts: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise TypeError(
                f"tool {tool_name!r}: parameter {param.name!r} must be one a keyword can give"
            )
        annotation = hints.get(param.name, Any)
        if _is_context(annotation):
            contexts.append(param.name)
        elif param.default is param.empty:
            fields.append((param.name, annotation))
        elif isinstance(param.default, _MUTABLE) and param.default:
            factory = functools.partial(copy.deepcopy, param.default)
            fields.append((param.name, annotation, msgspec.field(default_factory=factory)))
        else:
            fields.append((param.name, annotation, param.default))
    try:
        arguments = msgspec.defstruct(
            tool_name, fields, kw_only=True, forbid_unknown_fields=True, module=_module(fn)
        )
    except (TypeError, ValueError) as exc:
        raise TypeError(f"tool {tool_name!r}: {exc}") from None
    return arguments, tuple(contexts)


def _module(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None)
    return module if isinstance(module, str) else __name__


def _is_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return members == [ToolContext]
    return False


def _describe_properties(schema: dict[str, Any], documented: dict[str, str]) -> None:
    """Give each property the docstring's description of it, unless its type gave one."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    for key, text in documented.items():
        sub = properties.get(key)
        if isinstance(sub, dict) and text and "description" not in sub:
            properties[key] = {"description": text, **sub}


def _handler(
    fn: Callable[..., Any], arguments: type[Any], contexts: tuple[str, ...], admits: Validator
) -> Callable[[dict[str, Any]], Any]:
    """Return the ``Tool`` handler: convert the arguments, call ``fn``, shape what it returns."""
    convert = msgspec.convert
    asdict = msgspec.structs.asdict

    def keywords(given: dict[str, Any]) -> dict[str, Any] | ToolError:
        try:
            kwargs = asdict(convert(given, arguments))
        except msgspec.ValidationError as exc:
            # msgspec refuses 2.0 for an int, which the schema's "integer" admits: arguments
            # the schema admits are converted laxly, which then changes nothing else.
            if admits(given):
                return ToolError(_INVALID, _conversion_text(exc))
            try:
                kwargs = asdict(convert(given, arguments, strict=False))
            except msgspec.ValidationError as lax:
                return ToolError(_INVALID, _conversion_text(lax))
        if contexts:
            context = tool_context()
            for key in contexts:
                kwargs[key] = context
        return kwargs

    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async def
    ):

        async def async_handler(given: dict[str, Any]) -> Any:
            kwargs = keywords(given)
            if type(kwargs) is ToolError:
                return kwargs
            return _result(await fn(**kwargs))  # type: ignore[arg-type]

        handler: Callable[[dict[str, Any]], Any] = async_handler
    else:

        def sync_handler(given: dict[str, Any]) -> Any:
            kwargs = keywords(given)
            if type(kwargs) is ToolError:
                return kwargs
            return _result(fn(**kwargs))  # type: ignore[arg-type]

        handler = sync_handler
    handler.__name__ = getattr(fn, "__name__", handler.__name__)
    handler.__qualname__ = getattr(fn, "__qualname__", handler.__qualname__)
    handler.__doc__ = getattr(fn, "__doc__", None)
    return handler


def _conversion_text(exc: msgspec.ValidationError) -> str:
    return "; ".join(f"{e.path or '/'}: {e.message}" for e in conversion_errors(exc))


def _result(value: Any) -> Any:
    """What the loop gets: text as text, a ToolError or Interrupt as itself, others as JSON."""
    if type(value) is str or isinstance(value, ToolError | Interrupt):
        return value
    return msgspec.to_builtins(value, order="deterministic", enc_hook=_encode)


def _encode(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)  # a pydantic model
    if callable(dump):
        return dump(mode="json")
    raise TypeError(f"a tool returned a {type(value).__name__}, which is not JSON")
