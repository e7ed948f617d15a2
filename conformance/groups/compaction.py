"""Compaction group: ``estimate_tokens`` and ``compact_messages``.

Messages are JSON in the shape of the data model (``{"role", "content", "tool_calls",
"tool_call_id", "name"}``, optional fields may be left out). Each case has an ``op``:

- ``estimate``: ``message`` → ``expect`` (an integer).
- ``compact``: ``messages``, ``max_tokens``, ``keep_last`` (default 6) and, optionally, ``summary``:
  the value a summariser returns (any JSON value; without it the default summary is used) →
  ``expect`` ``{"messages": [...], "removed": n}`` or an ``error`` code. ``summarizer_input``, when
  present, lists the messages the summariser must have received; a summariser is called once when
  messages are removed and never otherwise.
"""

from __future__ import annotations

from typing import Any

import msgspec

from conformance._runner import CaseFailure, expect_outcome
from praxo_actors.core import compact_messages, estimate_tokens
from praxo_actors.models import Message


def run_case(case: dict[str, Any]) -> None:
    """Run one compaction case; raise on mismatch."""
    if case["op"] == "estimate":
        message = msgspec.convert(case["message"], Message)
        expect_outcome(case, lambda: estimate_tokens(message))
        return
    messages = _messages(case["messages"])
    seen: list[list[Message]] = []
    summarizer = None
    if "summary" in case:

        def summarizer(middle: list[Message]) -> Any:
            seen.append(list(middle))
            return case["summary"]

    if "expect" in case:
        expect = case["expect"]
        case = {
            **case,
            "expect": {
                "messages": _neutral(_messages(expect["messages"])),
                "removed": expect["removed"],
            },
        }
    expect_outcome(
        case,
        lambda: compact_messages(
            messages, case["max_tokens"], case.get("keep_last", 6), summarizer
        ),
        lambda result: {"messages": _neutral(result[0]), "removed": result[1]},
    )
    if "summary" in case and "expect" in case:
        calls = 1 if case["expect"]["removed"] else 0
        if len(seen) != calls:
            raise CaseFailure(f"summariser called {len(seen)} times, expected {calls}")
    if "summarizer_input" in case:
        want = _neutral(_messages(case["summarizer_input"]))
        got = [_neutral(middle) for middle in seen]
        if got != [want]:
            raise CaseFailure(f"summariser received {got!r}, expected one call with {want!r}")


def _messages(values: list[dict[str, Any]]) -> list[Message]:
    return msgspec.convert(values, list[Message])


def _neutral(messages: list[Message]) -> Any:
    return msgspec.to_builtins(messages)
