"""``format="auto"``: pick the format of a text by the first unambiguous marker it carries.

Markers are special tokens and dedicated tags (``[TOOL_CALLS]``, ``<|tool_call_start|>``,
``<minimax:tool_call>``…), looked for outside reasoning. The first one in the text decides the
format, and the whole text is read in that format. ``<tool_call>`` is shared, so what follows it
decides: ``<function=`` is Qwen3-Coder, ``[`` Granite, a bare name GLM, JSON Hermes (or the
default set when the text also has the default set's other markup). Llama 3's end-of-turn
tokens (``<|eot_id|>``, ``<|eom_id|>``) mark its output too, so a JSON call written before one
is Llama's. A text that is one JSON document, or has no marker, is read by the default set;
nothing else is guessed.
"""

from __future__ import annotations

import re

from praxo_actors._errors import ToolCallError
from praxo_actors.core._call_values import _canonical
from praxo_actors.core._formats._scan import _CLOSES, _REASONING_PATTERN, REASONING, skip_spaces

__all__ = ["choose_format"]

_MARKERS: tuple[tuple[str, str], ...] = (
    (r"<\|python_tag\|>", "llama3_json"),
    (r"<function=[^>\n]*>\s*\{", "llama3_json"),
    (r"<\|eot_id\|>|<\|eom_id\|>", "llama3_json"),  # Llama 3's end of turn, after its JSON call
    (r"<\|python_start\|>", "pythonic"),
    (r"\[TOOL_CALLS\]", "mistral"),
    (re.escape("<｜tool▁calls▁begin｜>"), "deepseek"),
    (r"<\|tool_calls_section_begin\|>", "kimi_k2"),
    (r"<tool_call>", "tool_call"),
    (r"<\|channel\|>|<\|start\|>", "openai"),
    (r"<\|tool_call\|>", "granite"),
    (r"<function_call>", "granite_20b_fc"),
    (r"<\|action_start\|>\s*<\|plugin\|>", "internlm"),
    (r"<tool_calls>", "jamba"),
    (r"<minimax:tool_call>", "minimax_m2"),
    (r"<seed:tool_call>", "seed_oss"),
    (r"functools\[", "phi4_mini_json"),
    (r"<\|START_ACTION\|>", "command_r7b"),
    (r"<TOOLCALL>", "nemotron_v2"),
    (r"<\|tool_call_start\|>", "lfm2"),
    (r"<\|tools_prefix\|>", "apertus"),
    (r"<start_function_call>", "functiongemma"),
)
_EVENTS = re.compile(
    _REASONING_PATTERN + "".join(f"|(?P<m{i}>{marker})" for i, (marker, _) in enumerate(_MARKERS))
)
_DEEPSEEK_V3 = re.compile(
    re.escape("<｜tool▁call▁begin｜>") + r"\s*function\s*" + re.escape("<｜tool▁sep｜>")
)
# The default set's own markup besides the Hermes form: XML-style attributes, dotted tags, lines.
_DEFAULT_MARKUP = re.compile(r"<tool_call\s+[A-Za-z_]|<tool\.|^[^\S\n]*tool\.", re.MULTILINE)
_NAME_START = re.compile(r"[A-Za-z_]")


def choose_format(text: str) -> str | None:
    """Return the format ``text`` is written in, or None for the default set."""
    try:
        if _canonical(text) is not None:
            return None
    except ToolCallError:
        return None  # a canonical document with a broken call: the default set reports it
    pos = 0
    while (match := _EVENTS.search(text, pos)) is not None:
        token = match.group()
        close = REASONING.get(token)
        if close is not None:
            end = text.find(close, match.end())
            if end < 0:
                return None
            pos = end + len(close)
            continue
        if token in _CLOSES:
            pos = match.end()
            continue
        kind = _MARKERS[int(match.lastgroup[1:])][1]  # type: ignore[index]
        if kind == "deepseek":
            after = skip_spaces(text, match.end())
            return "deepseek_v3" if _DEEPSEEK_V3.match(text, after) else "deepseek_v31"
        if kind == "tool_call":
            return _tool_call_kind(text, match.end())
        return kind
    return None


def _tool_call_kind(text: str, pos: int) -> str | None:
    pos = skip_spaces(text, pos)
    if text.startswith("<function=", pos):
        return "qwen3_coder"
    if text.startswith("[", pos):
        return "granite"
    if text.startswith(("{", "`"), pos):
        return None if _DEFAULT_MARKUP.search(text) else "hermes"
    if _NAME_START.match(text, pos):
        return "glm45"
    return None
