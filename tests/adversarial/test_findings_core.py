"""Issue 16's Core findings, each on an input small enough to be fast: a code, never a hang."""

from __future__ import annotations

import random
from typing import Any

import pytest

from praxo_actors.core import (
    JSONError,
    PathPolicy,
    PathPolicyError,
    compact_messages,
    estimate_tokens,
    extract_json,
    redact_pii,
    redact_value,
    strip_tool_calls,
    validate_schema,
)
from praxo_actors.core import _json as json_module
from praxo_actors.core import _pii as pii_module
from praxo_actors.core import _toolcalls as toolcalls_module
from praxo_actors.models import Message, ToolCall

# On 0.1 the ReDoS and fan-out inputs ran for minutes or for ever: a bound on the test's time
# turns that into a failure rather than a hang of the suite. They take milliseconds now.
pytestmark = pytest.mark.timeout(30)


# -- finding 4: ReDoS -----------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["^(a+)+$", "^(a|aa)+$", r"^(\w+\s?)*$"])
def test_catastrophic_patterns_are_answered(pattern: str) -> None:
    """A backtracking-bomb pattern gets its verdict on the classic bomb string."""
    errors = validate_schema({"type": "string", "pattern": pattern}, "a" * 40 + "!")
    assert [(e.path, e.keyword) for e in errors] == [("", "pattern")]
    assert "does not match" in errors[0].message
    assert validate_schema({"type": "string", "pattern": pattern}, "a" * 40) == []


def test_quadratic_search_pattern_is_answered() -> None:
    """An unanchored pattern that backtracks quadratically under re.search is answered."""
    errors = validate_schema({"pattern": r"\d+$"}, "1" * 50_000 + "x")
    assert [e.keyword for e in errors] == ["pattern"]


@pytest.mark.parametrize("pattern", ["(a)\\1", "^(?=a)", "(?>a+)b", "a++"])
def test_non_regular_patterns_are_schema_faults(pattern: str) -> None:
    """A pattern beyond a finite automaton fails closed with keyword pattern, for any value."""
    for value in ("a", "b", ""):
        errors = validate_schema({"pattern": pattern}, value)
        assert [(e.path, e.keyword) for e in errors] == [("", "pattern")]
        assert "unsupported pattern" in errors[0].message


def test_exploding_pattern_fails_closed_at_the_string() -> None:
    """A string whose match would exhaust the validation's budget gets a pattern fault."""
    value = "".join(random.Random(16).choices("ab", k=100_000))
    errors = validate_schema({"properties": {"x": {"pattern": "a[ab]{20}c"}}}, {"x": value})
    assert [(e.path, e.keyword) for e in errors] == [("/x", "pattern")]
    assert "needs more work" in errors[0].message


# -- finding 5: $ref fan-out ----------------------------------------------------------------------


def _fan_out(levels: int) -> dict[str, Any]:
    defs: dict[str, Any] = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def test_ref_fan_out_is_linear() -> None:
    """Two $refs per level over 24 levels are evaluated once per level, not 2**24 times."""
    errors = validate_schema(_fan_out(24), 1)
    assert [(e.path, e.keyword) for e in errors] == [("", "anyOf")]
    assert validate_schema(_fan_out(24), "s") == []


def test_ref_memo_keeps_paths_apart() -> None:
    """One value object at two places gets each place's errors, not the first one's."""
    item = {"a": "x"}
    schema = {"$defs": {"i": {"properties": {"a": {"type": "integer"}}}}}
    schema["items"] = {"$ref": "#/$defs/i"}
    errors = validate_schema(schema, [item, item])
    assert [(e.path, e.keyword) for e in errors] == [("/0/a", "type"), ("/1/a", "type")]


# -- finding 9: a lone surrogate in a path --------------------------------------------------------


@pytest.mark.parametrize("resolve", [True, False])
def test_lone_surrogate_path_is_path_invalid(resolve: bool, tmp_path: Any) -> None:
    """A path no file-system encoding can hold is PATH_INVALID, not UnicodeEncodeError."""
    policy = PathPolicy([str(tmp_path)], resolve_symlinks=resolve)
    with pytest.raises(PathPolicyError) as info:
        policy.check("\ud800")
    assert info.value.code == "PATH_INVALID"
    with pytest.raises(PathPolicyError) as info:
        policy.check("x", base="/\udfff")
    assert info.value.code == "PATH_INVALID"


def test_over_long_path_is_path_invalid_when_resolving(tmp_path: Any) -> None:
    """A path past PATH_MAX is PATH_INVALID when symlinks are resolved (realpath is quadratic)."""
    policy = PathPolicy([str(tmp_path)], resolve_symlinks=True)
    with pytest.raises(PathPolicyError) as info:
        policy.check("a/" * 5_000)
    assert info.value.code == "PATH_INVALID"
    assert PathPolicy([str(tmp_path)]).check("a/" * 5_000).startswith(str(tmp_path))


# -- finding 10: linear scans ---------------------------------------------------------------------


def test_strip_keeps_no_tracebacks_of_broken_lines() -> None:
    """The errors a scan keeps for broken markup hold no traceback (they pinned every frame)."""
    found = toolcalls_module._scan("tool.a {\n" * 50)
    assert len(found) == 50
    assert all(f.outcome.__traceback__ is None for f in found)
    assert all(f.outcome.__context__ is None for f in found)
    assert strip_tool_calls("tool.a {\n" * 50) == ("tool.a {\n" * 50).strip()


def test_extract_never_parses_spans_holding_non_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """Balanced spans with characters JSON forbids outside strings cost no parse attempt."""
    attempts: list[str] = []
    real = json_module.try_parse_json

    def counting(text: str) -> tuple[bool, Any]:
        attempts.append(text)
        return real(text)

    monkeypatch.setattr(json_module, "try_parse_json", counting)
    with pytest.raises(JSONError) as info:
        extract_json("{x}" * 1_000)
    assert info.value.code == "JSON_NOT_FOUND"
    assert attempts == ["{x}" * 1_000]  # the whole text, then no span: each holds an "x"
    assert extract_json("{x} [1, 2] {y}") == [1, 2]


def test_extract_scans_openers_inside_strings_once() -> None:
    """Openers inside strings share one scan instead of one each to the end of the text."""
    assert extract_json('["{"' * 2_000 + ' ok {"a": 1}') == {"a": 1}


def test_luhn_checks_of_one_run_share_prefix_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of many digit groups builds one table of Luhn sums, not one sum per candidate."""
    built: list[str] = []
    real = pii_module._LuhnSums

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, run: str) -> None:
            built.append(run)
            super().__init__(run)

    monkeypatch.setattr(pii_module, "_LuhnSums", Counting)
    text = "1234 " * 2_000 + "4111 1111 1111 1111"
    assert redact_pii(text).endswith("[REDACTED_CREDIT_CARD]")
    assert len(built) == 1


# -- finding 11: nesting past the recursion limit, non-JSON arguments -----------------------------


def _deep_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_redact_value_on_deep_nesting_is_json_invalid() -> None:
    """A list nested 100,000 deep is JSON_INVALID (the parser's 512 limit), not RecursionError."""
    with pytest.raises(JSONError) as info:
        redact_value(_deep_list(100_000))
    assert info.value.code == "JSON_INVALID"
    assert "512" in info.value.message
    assert redact_value(_deep_list(511)) == _deep_list(511)


def test_redact_value_on_a_cycle_is_json_invalid() -> None:
    """A list that holds itself is JSON_INVALID rather than endless recursion."""
    cycle: list[Any] = ["a@b.io"]
    cycle.append(cycle)
    with pytest.raises(JSONError) as info:
        redact_value(cycle)
    assert info.value.code == "JSON_INVALID"


def test_redact_value_on_shared_containers_is_linear() -> None:
    """A container met twice is redacted once: 60 levels of [x, x] are not 2**60 visits."""
    value: Any = ["555-123-4567"]
    for _ in range(60):
        value = [value, value]
    result = redact_value(value)
    assert result[0] is result[1]
    leaf = result
    while len(leaf) == 2:
        leaf = leaf[0]
    assert leaf == ["[REDACTED_PHONE]"]


def _conversation(arguments: dict[str, Any]) -> list[Message]:
    filler = [Message(role="user", content="hello " * 40) for _ in range(8)]
    call = Message(role="assistant", tool_calls=[ToolCall(name="t", arguments=arguments)])
    return [*filler, call, *filler]


def _deep_dict(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    "arguments",
    [_deep_dict(100_000), {"x": object()}, {"x": float("nan")}, {"x": {1, 2}}],
    ids=["deep", "object", "nan", "set"],
)
def test_compaction_of_non_json_arguments_is_json_invalid(arguments: dict[str, Any]) -> None:
    """Arguments that are not JSON give JSON_INVALID from compaction and token estimates."""
    with pytest.raises(JSONError) as info:
        compact_messages(_conversation(arguments), 100)
    assert info.value.code == "JSON_INVALID"
    with pytest.raises(JSONError):
        estimate_tokens(Message(role="assistant", tool_calls=[ToolCall("t", arguments)]))
