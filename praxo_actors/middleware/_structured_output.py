"""Structured output: validate the final text against a JSON Schema, with optional repair."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from praxo_actors._errors import AgentError, JSONError
from praxo_actors.core import SchemaError, extract_json, validate_schema

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
    """

    schema: Any
    max_repairs: int = 0
    repairer: Repairer | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.max_repairs, bool) or not isinstance(self.max_repairs, int):
            raise TypeError(f"max_repairs must be an int, got {self.max_repairs!r}")
        if self.max_repairs < 0:
            raise ValueError(f"max_repairs must not be negative, got {self.max_repairs}")
        if self.repairer is not None and not callable(self.repairer):
            raise TypeError("repairer must be callable or None")


def structured_output(
    schema: Any, max_repairs: int, repairer: Repairer | None = None
) -> StructuredOutput:
    """Return structured-output settings for the agent loop.

    Args:
        schema: A JSON Schema (the Core's subset), a dict or a bool.
        max_repairs: At most this many calls to ``repairer``.
        repairer: ``repairer(invalid_text, errors) -> str``; None makes no repairs.

    Raises:
        TypeError: ``max_repairs`` is not an int or ``repairer`` is not callable.
        ValueError: ``max_repairs`` is negative.
    """
    return StructuredOutput(schema, max_repairs, repairer)


def _check(schema: Any, text: str) -> tuple[Any, list[SchemaError]]:
    try:
        value = extract_json(text)
    except JSONError as exc:
        return None, [SchemaError(path="", keyword="json", message=exc.message)]
    return value, validate_schema(schema, value)


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
        value, errors = _check(so.schema, text)
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
