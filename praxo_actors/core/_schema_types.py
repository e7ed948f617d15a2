"""JSON Schemas from Python types, and JSON values converted to those types.

A type is anything msgspec describes (``str``, ``int``, ``float``, ``bool``, ``Literal``,
``Enum``, ``Optional``, ``list``, ``dict``, msgspec ``Struct``, dataclasses, ``TypedDict``,
``Annotated[..., msgspec.Meta(...)]``), or a pydantic model when pydantic is installed (found by
its methods: pydantic is never imported here). Every schema made here stays inside the subset
:func:`~praxo_actors.core.validate_schema` checks: local ``#/$defs/...`` references only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from praxo_actors.core._schema import SchemaError

__all__ = [
    "conversion_errors",
    "is_pydantic_model",
    "json_value",
    "type_converter",
    "type_schema",
]

CONVERT = "convert"
"""The keyword of an error a type's own conversion gave (the schema was met)."""


def is_pydantic_model(tp: Any) -> bool:
    """Tell whether ``tp`` is a pydantic (v2) model class."""
    return (
        isinstance(tp, type)
        and callable(getattr(tp, "model_json_schema", None))
        and callable(getattr(tp, "model_validate", None))
    )


def type_schema(tp: Any) -> dict[str, Any]:
    """Return the JSON Schema of ``tp``, its root written out (not a ``$ref``).

    Raises:
        TypeError: msgspec cannot describe ``tp`` (nor is it a pydantic model).
    """
    if is_pydantic_model(tp):
        schema: dict[str, Any] = tp.model_json_schema()
        return schema
    schema = msgspec.json.schema(tp)
    return inline_root(schema)


def inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace a root that is only a ``$ref`` into ``$defs`` by the definition it names.

    msgspec writes a Struct's schema as ``{"$ref": "#/$defs/Name", "$defs": {...}}``; providers
    want the object itself at the root. Other references keep pointing into ``$defs`` (where
    the root's definition stays too if it refers to itself).
    """
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    if not (isinstance(ref, str) and ref.startswith("#/$defs/") and isinstance(defs, dict)):
        return schema
    defs = dict(defs)
    name = ref[len("#/$defs/") :]
    root = dict(defs[name])
    # A recursive type refers to itself: then its definition stays for those references.
    if msgspec.json.encode(schema).count(msgspec.json.encode(ref)) == 1:
        del defs[name]
    root.pop("title", None)
    if defs:
        root["$defs"] = defs
    return root


def type_converter(tp: Any) -> Callable[[Any], Any]:
    """Return a function that turns a JSON value that met ``tp``'s schema into a ``tp``.

    It raises ``msgspec.ValidationError`` (or pydantic's ``ValidationError``, a ``ValueError``)
    when the value does not fit; :func:`conversion_errors` turns either into schema errors.
    msgspec converts laxly, so that a whole float such as ``2.0`` becomes an ``int`` as the
    subset's ``integer`` admits it; on a value the schema admitted, nothing else is lax.
    """
    if is_pydantic_model(tp):
        validate: Callable[[Any], Any] = tp.model_validate
        return validate
    convert = msgspec.convert

    def to_type(value: Any) -> Any:
        return convert(value, tp, strict=False)

    return to_type


def json_value(value: Any) -> Any:
    """Return ``value`` as a JSON value: the reverse of :func:`type_converter`.

    Structs and dataclasses become objects (msgspec's rules), a pydantic model its
    ``model_dump(mode="json")``.

    Raises:
        TypeError: A value neither msgspec nor pydantic can write as JSON.
    """
    return msgspec.to_builtins(value, enc_hook=_dump_model)


def _dump_model(value: Any) -> Any:
    if is_pydantic_model(type(value)):
        return value.model_dump(mode="json")
    raise TypeError(f"cannot write a {type(value).__name__} as JSON")


_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[(\.\.\.)\]")


def conversion_errors(exc: Exception) -> list[SchemaError]:
    """Return the errors a failed conversion reports, located by JSON Pointer."""
    errors = getattr(exc, "errors", None)
    if callable(errors):  # pydantic: one entry per error, each with its location
        found = []
        for entry in errors():
            where = "".join("/" + _escape(str(part)) for part in entry.get("loc", ()))
            found.append(SchemaError(where, CONVERT, str(entry.get("msg", ""))))
        if found:
            return found
    text = str(exc)
    message, at, path = text.rpartition(" - at `")
    if not at or not path.startswith("$"):
        return [SchemaError("", CONVERT, text)]
    return [SchemaError(_pointer(path.rstrip("`")), CONVERT, message)]


def _pointer(path: str) -> str:
    """Turn msgspec's ``$.a[0].b`` into ``/a/0/b`` (a dict key msgspec leaves out is ``*``)."""
    out = []
    for name, index, unknown in _STEP.findall(path[1:]):
        out.append("/" + ("*" if unknown else index or _escape(name)))
    return "".join(out)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")
