"""Validate JSON values against the JSON Schema subset the Core supports (draft 2020-12 keywords).

Keywords: ``$ref`` (local JSON Pointers such as ``#/$defs/...`` and ``#/definitions/...``),
``type``, ``enum``, ``const``, ``minLength``, ``maxLength``, ``pattern``, ``minimum``, ``maximum``,
``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf``, ``required``, ``properties``,
``additionalProperties``, ``minItems``, ``maxItems``, ``uniqueItems``, ``items``, ``allOf``,
``anyOf``, ``oneOf``, ``not``, and boolean schemas. Other keywords are ignored (``$defs``,
``title``, ...).

Choices where the standard leaves room, fixed here so every port behaves alike:

- Equality (``enum``, ``const``, ``uniqueItems``) is JSON equality: ``1 == 1.0``, ``true != 1``, and
  containers compare member by member.
- ``multipleOf`` is exact over the decimal numbers the values are written as (a float counts as its
  shortest ``repr``), so ``0.3`` is a multiple of ``0.1``; huge numbers never overflow.
- ``items`` is one schema for every item (2020-12); the array (tuple) form of older drafts is a
  malformed keyword.
- A ``false`` schema fails with keyword ``"false"`` at the value it meets, except
  ``additionalProperties: false``, which reports one error per extra property (sorted by key) at the
  object; a schema ``additionalProperties`` reports its own errors at each extra property.
- ``required`` reports one error per missing property, at the object. ``anyOf``, ``oneOf`` and
  ``not`` report one error each, at the value.
- A broken schema fails closed: wherever validation reaches it, a schema that is neither an object
  nor a boolean gives keyword ``"schema"``; a keyword with a malformed value (a negative
  ``minLength``, a ``type`` that names no type, an empty ``anyOf``, a ``pattern`` Python's ``re``
  cannot compile, ...) gives that keyword; a ``$ref`` that cannot be resolved, or that loops back to
  itself without descending into the value, gives ``"$ref"``. These errors are reported even from
  inside ``anyOf``, ``oneOf`` and ``not``. Values or schemas nested beyond Python's recursion limit
  give a single ``"schema"`` error at the root.
- ``$ref`` is a JSON Pointer fragment (``#``, ``#/$defs/Item``, ``#/definitions/a~1b``, with
  ``~0``/``~1`` and percent escapes) into the schema given to :func:`validate_schema`, and its
  sibling keywords apply too (2020-12). ``$id`` and anchors are not supported, so remote and
  plain-name references do not resolve.
- ``pattern`` is Python :mod:`re` syntax, searched anywhere in the string (ECMA-262-only syntax
  such as ``\\p{L}`` does not compile, so it is a schema fault). It is matched in time linear in
  the string by an automaton built from re's own parse (:mod:`praxo_actors.core._regex`), never
  by re's backtracking, which a hostile string can keep busy for ever (``^(a+)+$``) or for
  seconds (``\\d+$`` on 20,000 digits). So what no finite automaton can run is a schema fault
  with keyword ``pattern`` (message "unsupported pattern"): backreferences, lookaround,
  conditional groups, atomic groups and possessive repeats; so is a pattern over 10,000
  characters or 10,000 automaton states. Matching shares a budget of 1,000,000 automaton steps
  per validation; a string whose match would need more (a pattern whose DFA explodes, such as
  ``a[ab]{20}c``) gets a ``pattern`` fault at that string: validation fails closed.
- A ``$ref`` evaluated again at the same place in the value (``anyOf`` over ``$ref`` chains) is
  replayed from a per-validation memo, so validation time stays polynomial in the sizes of the
  schema and the value.
- Errors are ordered by location in the value (the root first, array items by index, object
  members by name in code-point order); at one location, validation errors come in evaluation
  order (the keyword order listed above, depth-first through ``$ref`` and the applicators), then
  schema faults. Exact duplicates are dropped.
- Compiled schemas are cached by content, so validating many values against one schema is cheap,
  and a schema mutated between calls is validated as it now is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import msgspec

from praxo_actors.core._schema_compile import Check, Compiler, Raw, Run, segments

__all__ = ["SchemaError", "Validator", "compile_validator", "validate_schema"]


class SchemaError(msgspec.Struct, frozen=True):
    """One validation failure.

    Attributes:
        path: JSON Pointer to the failing part of the value (``""`` is the value itself).
        keyword: The schema keyword that failed, e.g. ``"type"`` or ``"required"``.
        message: Human-readable explanation; not stable, not for programs.
    """

    path: str
    keyword: str
    message: str


# Compiled schemas are cached by their msgpack encoding, never by id(): a caller may mutate a
# schema between calls, and the encoding (unlike JSON's) keeps 1 and 1.0, NaN and null apart.
# Compiling from the decoded copy means no compiled closure aliases the caller's objects.
_CACHE_SIZE = 256
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode


Validator = Callable[[Any], list[SchemaError]]
"""Validates one JSON value against the schema it was compiled from (see compile_validator)."""


def validate_schema(schema: Any, value: Any) -> list[SchemaError]:
    """Validate a JSON value against a schema of the supported subset.

    Args:
        schema: A JSON Schema (an object or a boolean).
        value: A JSON value (``None``, bool, int, float, str, list, or dict with str keys).

    Returns:
        The errors in a deterministic order; an empty list means the value is valid.
    """
    return _validate(_compiled_or_none(schema), value)


def compile_validator(schema: Any) -> Validator:
    """Compile ``schema`` once and return a function validating values against it.

    The function gives what :func:`validate_schema` gives, for the schema as it is now: a
    later change to ``schema`` calls for a new validator. A call skips the cache lookup (an
    encoding of the schema) that every :func:`validate_schema` call makes.
    """
    compiled = _compiled_or_none(schema)

    def validate(value: Any) -> list[SchemaError]:
        return _validate(compiled, value)

    return validate


# A compiled schema, and whether its checks use the Run of a validation.
_Compiled = tuple[Check, bool]
# Shared by validations whose checks never touch their Run: it stays empty.
_UNUSED_RUN = Run()


def _validate(compiled: _Compiled | None, value: Any) -> list[SchemaError]:
    """Run a compiled schema (None: too deep to compile) over ``value``."""
    if compiled is None:
        return [_TOO_DEEP]
    check, stateful = compiled
    errs: list[Raw] = []
    run = Run() if stateful else _UNUSED_RUN
    try:
        check(value, None, errs, run)
    except RecursionError:
        return [_TOO_DEEP]
    if run.broken:
        errs.extend(run.broken)
    return _finish(errs) if errs else []


_TOO_DEEP = SchemaError("", "schema", "the schema or the value is nested too deeply")


def _compiled_or_none(schema: Any) -> _Compiled | None:
    try:
        return _compiled(schema)
    except RecursionError:  # nested beyond the interpreter's limit: reported by _validate
        return None


def _compiled(schema: Any) -> _Compiled:
    if isinstance(schema, dict) and schema:
        try:
            key = _encode(schema)
        except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
            pass  # not encodable (huge ints, non-JSON objects): compile this once, uncached
        else:
            return _compiled_from(key)
    return _compile(schema)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _compiled_from(key: bytes) -> _Compiled:
    return _compile(_decode(key))


def _compile(schema: Any) -> _Compiled:
    compiler = Compiler(schema)
    check = compiler.compile(schema)
    return check, compiler.stateful


def _finish(raw: list[Raw]) -> list[SchemaError]:
    """Order raw errors by value location (a stable sort), drop duplicates, render pointers."""
    rows: list[tuple[list[str | int], str, str, str]] = []
    for where, keyword, message in raw:
        segs = segments(where)
        rows.append((segs, "".join(map(_token, segs)), keyword, message))
    try:
        # Indexes sort as numbers, names as strings: one position of one value holds only one
        # kind, unless a dict has non-str keys (not JSON), which the fallback orders by kind.
        rows.sort(key=_first)
    except TypeError:
        rows.sort(key=_tagged)
    out: list[SchemaError] = []
    seen: set[tuple[str, str, str]] = set()
    for _, path, keyword, message in rows:
        if (path, keyword, message) not in seen:
            seen.add((path, keyword, message))
            out.append(SchemaError(path, keyword, message))
    return out


def _token(segment: str | int) -> str:
    text = str(segment)
    if "~" in text or "/" in text:
        text = text.replace("~", "~0").replace("/", "~1")
    return "/" + text


def _first(row: tuple[list[str | int], str, str, str]) -> list[str | int]:
    return row[0]


def _tagged(row: tuple[list[str | int], str, str, str]) -> list[tuple[int, str | int]]:
    return [(0, s) if type(s) is int else (1, str(s)) for s in row[0]]
