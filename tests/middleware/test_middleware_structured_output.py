"""structured_output and apply_structured: validation, repairs, and their failure modes."""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import say

from praxo_actors.agent import AgentError, new_agent_options, run_agent
from praxo_actors.middleware import StructuredOutput, apply_structured, structured_output
from praxo_actors.models import message_assistant, session

SCHEMA = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}


class Repairs:
    """A repairer that returns its replies in order and records what it was given."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, list[Any]]] = []

    def __call__(self, text: str, errors: list[Any]) -> Any:
        self.calls.append((text, errors))
        return self.replies.pop(0)


def test_valid_output_is_parsed_into_structured(scripted: Any) -> None:
    """Valid final text sets structured to the parsed value and keeps the text as output."""
    text = 'Here: ```json\n{"name": "Ada"}\n```'
    options = new_agent_options(scripted(say(text)), structured_output=structured_output(SCHEMA, 0))
    result = run_agent(options, session("s"), "x")
    assert result.structured == {"name": "Ada"}
    assert result.output == text


def test_invalid_without_repairs_fails(scripted: Any, events: Any) -> None:
    """Invalid text with no repairs allowed fails with AGENT_STRUCTURED_OUTPUT and no completion."""
    options = new_agent_options(
        scripted(say('{"age": 3}')), structured_output=structured_output(SCHEMA, 0), sink=events
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_STRUCTURED_OUTPUT"
    assert "run.completed" not in events.types()
    assert events[-1].type == "run.failed"
    assert events[-1].data["code"] == "AGENT_STRUCTURED_OUTPUT"


def test_repairer_fixes_output(scripted: Any) -> None:
    """A repairer's replacement becomes the validated output."""
    repairer = Repairs('{"name": "Ada"}')
    options = new_agent_options(
        scripted(say('{"age": 3}')), structured_output=structured_output(SCHEMA, 2, repairer)
    )
    result = run_agent(options, session("s"), "x")
    assert result.output == '{"name": "Ada"}' and result.structured == {"name": "Ada"}
    assert len(repairer.calls) == 1
    text, errors = repairer.calls[0]
    assert text == '{"age": 3}'
    assert [(e.path, e.keyword) for e in errors] == [("", "required")]
    assert result.session.messages[-1] == message_assistant('{"age": 3}')


def test_at_most_max_repairs_attempts(scripted: Any) -> None:
    """The repairer is called at most max_repairs times before the run fails."""
    repairer = Repairs("still bad", "[1]", '{"name": 1}', '{"name": "late"}')
    options = new_agent_options(
        scripted(say("bad")), structured_output=structured_output(SCHEMA, 3, repairer)
    )
    with pytest.raises(AgentError) as info:
        run_agent(options, session("s"), "x")
    assert info.value.code == "AGENT_STRUCTURED_OUTPUT"
    assert [text for text, _ in repairer.calls] == ["bad", "still bad", "[1]"]


def test_no_json_gives_one_json_error() -> None:
    """Text without JSON reaches the repairer with one error whose keyword is json."""
    repairer = Repairs('{"name": "x"}')
    text, value = apply_structured(structured_output(SCHEMA, 1, repairer), "no json at all")
    assert (text, value) == ('{"name": "x"}', {"name": "x"})
    [(_, errors)] = repairer.calls
    assert len(errors) == 1 and errors[0].keyword == "json" and errors[0].path == ""


@pytest.mark.parametrize("bad", ["", None, 42, b'{"name": "x"}'])
def test_empty_or_non_str_repair_fails_at_once(bad: Any) -> None:
    """An empty or non-str repair fails with AGENT_STRUCTURED_OUTPUT without further attempts."""
    repairer = Repairs(bad, '{"name": "x"}')
    with pytest.raises(AgentError) as info:
        apply_structured(structured_output(SCHEMA, 5, repairer), "bad")
    assert info.value.code == "AGENT_STRUCTURED_OUTPUT"
    assert len(repairer.calls) == 1


def test_repairer_exception_propagates_from_apply_structured() -> None:
    """apply_structured lets the repairer's exception through unchanged."""
    boom = ValueError("repairer broke")

    def repairer(text: str, errors: list[Any]) -> str:
        raise boom

    with pytest.raises(ValueError) as info:
        apply_structured(structured_output(SCHEMA, 1, repairer), "bad")
    assert info.value is boom


def test_repairer_exception_in_run_emits_structured_output_failure(
    scripted: Any, events: Any
) -> None:
    """In a run, a repairer exception emits run.failed with AGENT_STRUCTURED_OUTPUT, then raises."""
    boom = RuntimeError("repairer broke")

    def repairer(text: str, errors: list[Any]) -> str:
        raise boom

    options = new_agent_options(
        scripted(say("bad")),
        structured_output=structured_output(SCHEMA, 1, repairer),
        sink=events,
    )
    with pytest.raises(RuntimeError) as info:
        run_agent(options, session("s"), "x")
    assert info.value is boom
    assert events[-1].type == "run.failed"
    assert events[-1].data["code"] == "AGENT_STRUCTURED_OUTPUT"
    assert "run.completed" not in events.types()


def test_apply_structured_valid_text_skips_repairer() -> None:
    """Valid text is returned with its value and the repairer is not called."""
    repairer = Repairs()
    assert apply_structured(structured_output(SCHEMA, 3, repairer), '{"name": "A"}') == (
        '{"name": "A"}',
        {"name": "A"},
    )
    assert repairer.calls == []


def test_apply_structured_without_repairer_fails_on_invalid() -> None:
    """Without a repairer, invalid text fails even with repairs allowed."""
    with pytest.raises(AgentError) as info:
        apply_structured(structured_output(SCHEMA, 3), "{}")
    assert info.value.code == "AGENT_STRUCTURED_OUTPUT" and info.value.run_id is None


def test_apply_structured_refuses_async_repairer() -> None:
    """An async repairer given to the synchronous apply_structured raises TypeError."""

    async def repairer(text: str, errors: list[Any]) -> str:
        return '{"name": "x"}'

    with pytest.raises(TypeError):
        apply_structured(structured_output(SCHEMA, 1, repairer), "bad")


def test_structured_output_validates_settings() -> None:
    """Negative or non-int max_repairs and a non-callable repairer are refused."""
    with pytest.raises(ValueError):
        structured_output(SCHEMA, -1)
    with pytest.raises(TypeError):
        structured_output(SCHEMA, 1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        structured_output(SCHEMA, 1, "fix it")  # type: ignore[arg-type]
    assert structured_output(SCHEMA, 2) == StructuredOutput(SCHEMA, 2, None)


def test_boolean_schema_true_accepts_any_json(scripted: Any) -> None:
    """The schema true accepts any JSON the text holds."""
    options = new_agent_options(
        scripted(say("[1, 2]")), structured_output=structured_output(True, 0)
    )
    assert run_agent(options, session("s"), "x").structured == [1, 2]
