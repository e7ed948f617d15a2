"""Structured output: validate the final text against a JSON Schema (or a type's), with repair."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from praxo_actors._errors import AgentError, JSONError
from praxo_actors.core import SchemaError, extract_json
from praxo_actors.core._schema import Validator, compile_validator
from praxo_actors.core._schema_types import conversion_errors, type_converter, type_schema

__all__ = ["CallRepairer", "Repairer", "StructuredOutput", "apply_structured", "structured_output"]

Repairer = Callable[[str, list[SchemaError]], Any]
"""Turns invalid text and its errors into replacement text (``async def`` under ``arun_agent``)."""

STRUCTURED_OUTPUT = "AGENT_STRUCTURED_OUTPUT"


class CallRepairer(msgspec.Struct, frozen=True):
    """Call ``repairer(text, errors)`` for structured output; reply with the replacement text.

    An effect of the agent state machine (exported by :mod:`praxo_actors.agent`); it lives here
    so that middleware stays below the agent loop.
    """

    repairer: Repairer
    text: str
    errors: list[SchemaError]


@dataclass(frozen=True, slots=True)
class StructuredOutput:
    """A JSON Schema the final text must satisfy, and how many repairs to attempt.

    The final text goes through :func:`~praxo_actors.core.extract_json` and
    :func:`~praxo_actors.core.validate_schema`. While it is invalid and fewer than
    ``max_repairs`` repairs were made, ``repairer(text, errors)`` returns replacement text.
    Nothing is bound to a provider's own schema feature, and only the Core's schema subset is
    checked.

    With ``output_type`` (set by :func:`structured_output` given a type), ``schema`` is that
    type's and the value that meets it is converted to an instance of the type; a value the
    type refuses even so (a constraint beyond the subset, a pydantic validator) is invalid too,
    with errors of keyword ``"convert"``.
    """

    schema: Any
    max_repairs: int = 0
    repairer: Repairer | None = field(default=None, repr=False)
    output_type: Any = None
    _validate: Validator = field(init=False, repr=False, compare=False)
    _convert: Callable[[Any], Any] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.max_repairs, bool) or not isinstance(self.max_repairs, int):
            raise TypeError(f"max_repairs must be an int, got {self.max_repairs!r}")
        if self.max_repairs < 0:
            raise ValueError(f"max_repairs must not be negative, got {self.max_repairs}")
        if self.repairer is not None and not callable(self.repairer):
            raise TypeError("repairer must be callable or None")
        # Compiled once: a run validates against what the schema was when this was made.
        object.__setattr__(self, "_validate", compile_validator(self.schema))
        convert = None if self.output_type is None else type_converter(self.output_type)
        object.__setattr__(self, "_convert", convert)

    def __getstate__(self) -> tuple[Any, ...]:
        # The compiled check is closures: rebuilt from the schema, never pickled.
        return (self.schema, self.max_repairs, self.repairer, self.output_type)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(_PICKLED, state, strict=True):
            object.__setattr__(self, name, value)
        self.__post_init__()


_PICKLED = ("schema", "max_repairs", "repairer", "output_type")


def structured_output(
    schema_or_type: Any = None,
    max_repairs: int = 0,
    repairer: Repairer | None = None,
    *,
    schema: Any = None,
) -> StructuredOutput:
    """Return structured-output settings for the agent loop.

    Args:
        schema_or_type: A JSON Schema (the Core's subset: a dict or a bool), or a type —
            a msgspec ``Struct``, a dataclass, a ``TypedDict``, a pydantic model, or anything
            else msgspec can describe. For a type, the final answer is checked against its
            schema and ``RunResult.structured`` is an instance of it.
        max_repairs: At most this many calls to ``repairer``.
        repairer: ``repairer(invalid_text, errors) -> str``; None makes no repairs.
        schema: The 0.1 keyword for ``schema_or_type`` (``structured_output(schema=...)``).

    Raises:
        TypeError: ``max_repairs`` is not an int, ``repairer`` is not callable,
            ``schema_or_type`` is neither a schema nor a type msgspec or pydantic describes, or
            both ``schema_or_type`` and ``schema`` are given.
        ValueError: ``max_repairs`` is negative.
    """
    if schema is not None:
        if schema_or_type is not None:
            raise TypeError("structured_output takes schema_or_type or schema=, not both")
        schema_or_type = schema
    if isinstance(schema_or_type, dict | bool):
        return StructuredOutput(schema_or_type, max_repairs, repairer)
    if schema_or_type is None:
        raise TypeError("structured_output takes a JSON Schema or a type, not None")
    try:
        schema = type_schema(schema_or_type)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"structured_output takes a JSON Schema (a dict or a bool) or a type msgspec or "
            f"pydantic describes, not {schema_or_type!r:.80}: {exc}"
        ) from None
    return StructuredOutput(schema, max_repairs, repairer, output_type=schema_or_type)


def _check(so: StructuredOutput, text: str) -> tuple[Any, list[SchemaError]]:
    try:
        value = extract_json(text)
    except JSONError as exc:
        return None, [SchemaError(path="", keyword="json", message=exc.message)]
    errors = so._validate(value)
    if errors or so._convert is None:
        return value, errors
    try:
        return so._convert(value), []
    except (msgspec.ValidationError, ValueError) as exc:  # pydantic's is a ValueError
        return None, conversion_errors(exc)


def structured_steps(
    so: StructuredOutput, text: str
) -> Generator[CallRepairer, Any, tuple[str, Any]]:
    """Validate ``text``, yielding one :class:`CallRepairer` per repair; return (text, value).

    Raises:
        AgentError: ``AGENT_STRUCTURED_OUTPUT`` (no ``run_id``) when repairs are exhausted or a
            repair is empty or not a str.
    """
    repairs = 0
    while True:
        value, errors = _check(so, text)
        if not errors:
            return text, value
        if so.repairer is None or repairs >= so.max_repairs:
            first = errors[0]
            raise AgentError(
                STRUCTURED_OUTPUT,
                f"output invalid after {repairs} repair(s): "
                f"{first.keyword} at {first.path or '/'}: {first.message}",
            )
        repairs += 1
        replacement = yield CallRepairer(so.repairer, text, errors)
        if not isinstance(replacement, str) or replacement == "":
            raise AgentError(
                STRUCTURED_OUTPUT,
                f"repair {repairs} returned {type(replacement).__name__} "
                f"{replacement!r:.40}, not non-empty text",
            )
        text = replacement


def apply_structured(so: StructuredOutput, text: str) -> tuple[str, Any]:
    """Validate ``text`` against ``so`` on its own, calling the repairer directly.

    When no JSON is found, the repairer gets one error with keyword ``json``.

    Returns:
        The validated text and its parsed JSON value.

    Raises:
        AgentError: ``AGENT_STRUCTURED_OUTPUT`` when validation is exhausted or a repair is
            empty or not a str. An exception raised by the repairer propagates unchanged.
    """
    steps = structured_steps(so, text)
    try:
        effect = next(steps)
        while True:
            replacement = effect.repairer(effect.text, effect.errors)
            if inspect.iscoroutine(replacement):
                replacement.close()
                raise TypeError(
                    "apply_structured calls the repairer synchronously; got a coroutine"
                )
            effect = steps.send(replacement)
    except StopIteration as stop:
        result: tuple[str, Any] = stop.value
        return result
