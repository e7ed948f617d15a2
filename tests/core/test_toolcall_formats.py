"""Tests for the named tool-call formats: names, model ids, unknown names and family details."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from praxo_actors.core import (
    ToolCallError,
    parse_tool_call,
    parse_tool_calls,
    strip_tool_calls,
    tool_call_format_for,
    tool_call_formats,
)
from praxo_actors.core._json import try_parse_json
from praxo_actors.models import ToolCall

# How each template writes one string argument: right against its tags (no layout newline).
_UNLAID = {
    "glm45": "<tool_call>f\n<arg_key>v</arg_key>\n<arg_value>{}</arg_value>\n</tool_call>",
    "minimax_m2": '<minimax:tool_call>\n<invoke name="f">\n<parameter name="v">{}</parameter>\n'
    "</invoke>\n</minimax:tool_call>",
    "seed_oss": "<seed:tool_call>\n<function=f>\n<parameter=v>{}</parameter>\n</function>\n"
    "</seed:tool_call>",
}


def test_every_format_of_the_spec_is_listed() -> None:
    """tool_call_formats() lists the 26 format names, without the auto mode."""
    names = tool_call_formats()
    assert len(names) == len(set(names)) == 26
    assert {"hermes", "openai", "qwen3_coder", "functiongemma"} <= set(names)
    assert "auto" not in names


@pytest.mark.parametrize("entry", [parse_tool_calls, parse_tool_call, strip_tool_calls])
@pytest.mark.parametrize("name", ["hermes3", "HERMES", "", "qwen", 3])
def test_an_unknown_format_is_refused(entry: object, name: object) -> None:
    """Every entry point refuses an unknown format with TOOL_CALL_UNKNOWN_FORMAT."""
    with pytest.raises(ToolCallError) as info:
        entry("text", format=name)  # type: ignore[operator]
    assert info.value.code == "TOOL_CALL_UNKNOWN_FORMAT"


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_coder"),
        ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3_coder"),
        ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "qwen3_coder"),
        ("Qwen/Qwen3-8B", "hermes"),
        ("Qwen/Qwen2.5-7B-Instruct", "hermes"),
        ("Qwen/QwQ-32B", "hermes"),
        ("NousResearch/Hermes-3-Llama-3.1-8B", "hermes"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama3_json"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama3_json"),
        ("meta-llama/Llama-3.2-3B-Instruct", "llama3_json"),
        ("meta-llama/Llama-3.2-1B-Instruct", "llama3_json"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "pythonic"),
        ("Team-ACE/ToolACE-8B", "pythonic"),
        ("mistralai/Mistral-Small-3.2-24B-Instruct-2506", "mistral"),
        ("mistralai/Ministral-8B-Instruct-2410", "mistral"),
        ("mistralai/Devstral-Small-2507", "mistral"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral"),
        ("deepseek-ai/DeepSeek-V3-0324", "deepseek_v3"),
        ("deepseek-ai/DeepSeek-R1-0528", "deepseek_v3"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "deepseek_v3"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "deepseek_v3"),
        ("deepseek-ai/DeepSeek-V3.1", "deepseek_v31"),
        ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek_v31"),
        ("moonshotai/Kimi-K2-Instruct-0905", "kimi_k2"),
        ("moonshotai/Kimi-K2-Thinking", "kimi_k2"),
        ("zai-org/GLM-4.5-Air", "glm45"),
        ("zai-org/GLM-4.6", "glm45"),
        ("openai/gpt-oss-20b", "openai"),
        ("llm-jp/llm-jp-4.1-8b-thinking", "openai"),
        ("meetkai/functionary-medium-v3.1", "llama3_json"),
        ("meetkai/functionary-medium-v3.2", None),
        ("ibm-granite/granite-3.3-8b-instruct", "granite"),
        ("ibm-granite/granite-4.0-h-small", "hermes"),
        ("ibm-granite/granite-20b-functioncalling", "granite_20b_fc"),
        ("internlm/internlm2_5-7b-chat", "internlm"),
        ("ai21labs/AI21-Jamba-Mini-1.7", "jamba"),
        ("tencent/Hunyuan-A13B-Instruct", "hunyuan_a13b"),
        ("MiniMaxAI/MiniMax-M1-80k", "minimax"),
        ("MiniMaxAI/MiniMax-M2", "minimax_m2"),
        ("ByteDance-Seed/Seed-OSS-36B-Instruct", "seed_oss"),
        ("Salesforce/Llama-xLAM-2-8b-fc-r", "xlam"),
        ("microsoft/Phi-4-mini-instruct", "phi4_mini_json"),
        ("fireworks-ai/llama-3-firefunction-v2", "firefunction_v2"),
        ("CohereLabs/c4ai-command-r7b-12-2024", "command_r7b"),
        ("nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nemotron_v2"),
        ("LiquidAI/LFM2-1.2B", "lfm2"),
        ("swiss-ai/Apertus-8B-Instruct-2509", "apertus"),
        ("google/functiongemma-270m-it", "functiongemma"),
        ("google/gemma-3-27b-it", "pythonic"),
        ("QWEN/QWEN3-CODER-30B-A3B-INSTRUCT", "qwen3_coder"),
        ("/models/gguf/Qwen3-Coder-30B-A3B-Instruct-Q4_K_M.gguf", "qwen3_coder"),
        ("gpt2", None),
        ("my-org/my-model", None),
    ],
)
def test_model_ids_map_to_their_format(model_id: str, expected: str | None) -> None:
    """A Hugging Face id (any case, a path or a GGUF name) maps to its family's format."""
    assert tool_call_format_for(model_id) == expected
    if expected is not None:
        assert expected in tool_call_formats()


def test_a_model_id_must_be_a_string() -> None:
    """A model id that is not a str is a programming error."""
    with pytest.raises(TypeError):
        tool_call_format_for(None)  # type: ignore[arg-type]


def test_format_none_is_the_default_set() -> None:
    """format=None reads what 0.1 read and nothing of a named family."""
    text = '<tool_call name="echo">{"text":"hi"}</tool_call>'
    assert parse_tool_calls(text, format=None) == parse_tool_calls(text)
    assert parse_tool_calls('[TOOL_CALLS]echo[ARGS]{"text": "hi"}') == []


def test_a_named_format_reads_only_its_own_markup() -> None:
    """Mistral's reader ignores Hermes tags, and Hermes's ignores [TOOL_CALLS]."""
    hermes = '<tool_call>{"name": "a", "arguments": {}}</tool_call>'
    mistral = '[TOOL_CALLS]b[ARGS]{"x": 1}'
    assert parse_tool_calls(hermes + mistral, format="mistral") == [ToolCall("b", {"x": 1})]
    assert parse_tool_calls(hermes + mistral, format="hermes") == [ToolCall("a", {})]


def test_a_non_string_text_is_malformed_in_every_format() -> None:
    """A text that is not a str is TOOL_CALL_MALFORMED for parse and TypeError for strip."""
    for fmt in (*tool_call_formats(), "auto"):
        with pytest.raises(ToolCallError) as info:
            parse_tool_calls(b"x", format=fmt)  # type: ignore[arg-type]
        assert info.value.code == "TOOL_CALL_MALFORMED"
        with pytest.raises(TypeError):
            strip_tool_calls(None, format=fmt)  # type: ignore[arg-type]


def test_the_first_error_in_text_order_is_raised() -> None:
    """With two broken sections, the first one's code is raised."""
    text = '<TOOLCALL>[{"name": "a b", "arguments": {}}]</TOOLCALL><TOOLCALL>[{]</TOOLCALL>'
    with pytest.raises(ToolCallError) as info:
        parse_tool_calls(text, format="nemotron_v2")
    assert info.value.code == "TOOL_CALL_INVALID_NAME"


def test_strip_leaves_malformed_markup_and_removes_valid_calls() -> None:
    """A broken section stays in the stripped text; a valid one goes."""
    text = 'ok <TOOLCALL>[{"name": "a", "arguments": {}}]</TOOLCALL> then <TOOLCALL>[{]</TOOLCALL>'
    assert strip_tool_calls(text, format="nemotron_v2") == "ok  then <TOOLCALL>[{]</TOOLCALL>"


def test_a_closing_token_inside_a_json_string_does_not_end_the_call() -> None:
    """The first end token outside JSON strings ends a body, in every JSON-bodied format."""
    text = '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "say", "parameters": '
    text += '{"text": "<|END_ACTION|>"}}]<|END_ACTION|>'
    assert parse_tool_calls(text, format="command_r7b") == [
        ToolCall("say", {"text": "<|END_ACTION|>"}, "0")
    ]


def test_the_formats_load_on_first_use() -> None:
    """Importing the Core loads no format reader; the first named parse does."""
    code = (
        "import sys, praxo_actors.core as c\n"
        "before = 'praxo_actors.core._formats._registry' in sys.modules\n"
        "c.parse_tool_calls('x', format='hermes')\n"
        "print(before, 'praxo_actors.core._formats._registry' in sys.modules, 'ast' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split()[:2] == ["False", "True"], out.stderr


def test_a_bare_pythonic_list_must_begin_a_line() -> None:
    """A call list that begins a line is read; one inside a line of prose is prose."""
    assert parse_tool_calls("Calling:\n  [f(x=1)]", format="pythonic") == [ToolCall("f", {"x": 1})]
    assert parse_tool_calls("In prose, [f(x=1)] is an example.", format="pythonic") == []


def test_auto_on_marker_free_text_guesses_nothing_beyond_the_default_set() -> None:
    """Bare Llama JSON, a bare pythonic list and xLAM-like prose JSON are not guessed by auto."""
    for text in (
        'a {"name": "f", "parameters": {}}; {"name": "g", "parameters": {}}',
        "[f(x=1)]",
        'Result: [{"name": "f", "arguments": {}}] and more',
    ):
        assert parse_tool_calls(text, format="auto") == parse_tool_calls(text) == []


@given(
    fmt=st.sampled_from(sorted(_UNLAID)),
    core=st.text(alphabet="ab \t\n\"'\\é{}[]", min_size=1, max_size=12),
    lead=st.sampled_from(["", "\n", "\n\n"]),
    trail=st.sampled_from(["", "\n", "\n\n"]),
)
def test_a_value_s_own_edge_newlines_are_kept_where_no_layout_surrounds_it(
    fmt: str, core: str, lead: str, trail: str
) -> None:
    """A string written against its tags keeps its leading or trailing newlines as they are."""
    value = lead + core.strip() + trail
    found, _ = try_parse_json(value)
    if not core.strip() or found or value.strip()[:1] in "{[":
        return  # a JSON document or a literal is read as a value, not a string
    if fmt == "seed_oss" and lead and trail:
        value = value[1:-1]  # a newline at both ends is Qwen-style layout there
    text = _UNLAID[fmt].format(lead + core.strip() + trail)
    assert parse_tool_calls(text, format=fmt) == [ToolCall("f", {"v": value})]
    assert parse_tool_calls(text, format="auto") == [ToolCall("f", {"v": value})]


@pytest.mark.parametrize(
    ("written", "value"),
    [("True", True), ("False", False), ("None", None), ("[1, 'a', None]", [1, "a", None])],
)
@pytest.mark.parametrize("fmt", ["qwen3_coder", "seed_oss"])
def test_python_spellings_are_values_where_the_template_writes_them(
    fmt: str, written: str, value: object
) -> None:
    """Qwen3-Coder and Seed-OSS read True, False, None and literals as their templates wrote."""
    tag = "tool_call" if fmt == "qwen3_coder" else "seed:tool_call"
    text = f"<{tag}>\n<function=f>\n<parameter=v>\n{written}\n</parameter>\n</function>\n</{tag}>"
    assert parse_tool_calls(text, format=fmt) == [ToolCall("f", {"v": value})]
    glm = f"<tool_call>f<arg_key>v</arg_key><arg_value>{written}</arg_value></tool_call>"
    assert parse_tool_calls(glm, format="glm45") == [ToolCall("f", {"v": written})]
