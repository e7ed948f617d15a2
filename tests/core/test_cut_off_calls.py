"""A reply cut off while writing a call is malformed, not the calls before it (no partial list).

A small model told to stop at ``max_tokens`` ends its JSON calls, one per line, mid-object:
``{"name": "add", …}\\n{"name``. Reading the first call and skipping the cut one would run part
of what the model asked, silently.
"""

from __future__ import annotations

import pytest

from praxo_actors import ToolCallError
from praxo_actors.core import parse_tool_calls, strip_tool_calls

CALL = '{"name": "add", "arguments": {"a": 1, "b": 2}}'


@pytest.mark.parametrize("fmt", ["llama3_json", "xlam"])
@pytest.mark.parametrize("cut", ['{"', '{"na', '{"name', '{"name" ', '[{"name'])
def test_a_call_cut_before_its_name_is_invalid_json(fmt: str, cut: str) -> None:
    """The first call is not returned alone: the reply is TOOL_CALL_INVALID_JSON."""
    text = f"{CALL}\n{cut}"
    with pytest.raises(ToolCallError) as caught:
        parse_tool_calls(text, format=fmt)
    assert caught.value.code == "TOOL_CALL_INVALID_JSON"
    assert strip_tool_calls(text, format=fmt) == cut.strip()  # malformed markup stays


@pytest.mark.parametrize("fmt", ["llama3_json", "xlam"])
@pytest.mark.parametrize("tail", ["", '\n{"n": 5}', '\nUse {"city" and so on.', "\n{not json"])
def test_prose_or_a_whole_object_after_a_call_is_no_cut_call(fmt: str, tail: str) -> None:
    """Braces that are prose, or an object that is an answer, leave the call as it is."""
    [call] = parse_tool_calls(CALL + tail, format=fmt)
    assert (call.name, call.arguments) == ("add", {"a": 1, "b": 2})
