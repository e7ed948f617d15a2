"""Ids for tool calls read from a model's text, the same every time the run is replayed."""

from __future__ import annotations

import hashlib

import msgspec

from praxo_actors.models import ToolCall

__all__ = ["text_call_id", "with_call_ids"]


def text_call_id(run_id: str, step: int, index: int) -> str:
    """Return the id of the ``index``-th call read from the text of ``step`` of ``run_id``.

    ``call_`` and 24 hex digits of a hash of the three: unique in a session (run ids are),
    the same on replay, and in the alphabet every provider's API takes for ids.
    """
    digest = hashlib.sha256(f"{run_id}:{step}:{index}".encode()).hexdigest()
    return f"call_{digest[:24]}"


def with_call_ids(calls: list[ToolCall], run_id: str, step: int) -> list[ToolCall]:
    """Return ``calls`` with an id (:func:`text_call_id`) for each that has none."""
    if all(call.id is not None for call in calls):
        return calls
    return [
        call
        if call.id is not None
        else msgspec.structs.replace(call, id=text_call_id(run_id, step, index))
        for index, call in enumerate(calls)
    ]
