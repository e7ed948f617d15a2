"""The names of the tool-call formats, and the check every entry point makes on a name."""

from __future__ import annotations

from praxo_actors._errors import ToolCallError
from praxo_actors.codes import TOOL_CALL_UNKNOWN_FORMAT

__all__ = ["AUTO", "FORMAT_NAMES", "checked_format", "tool_call_formats"]

#: The formats' names, in a fixed order; vLLM's ``--tool-call-parser`` names where it has one.
FORMAT_NAMES = (
    "hermes",
    "llama3_json",
    "pythonic",
    "mistral",
    "deepseek_v3",
    "deepseek_v31",
    "kimi_k2",
    "qwen3_coder",
    "glm45",
    "openai",
    "granite",
    "granite_20b_fc",
    "internlm",
    "jamba",
    "hunyuan_a13b",
    "minimax",
    "minimax_m2",
    "seed_oss",
    "xlam",
    "phi4_mini_json",
    "firefunction_v2",
    "command_r7b",
    "nemotron_v2",
    "lfm2",
    "apertus",
    "functiongemma",
)

#: Reads every format with an unambiguous marker, and the default set (``format=None``).
AUTO = "auto"

_KNOWN = frozenset((*FORMAT_NAMES, AUTO))


def tool_call_formats() -> tuple[str, ...]:
    """Return the names of the named tool-call formats (``"auto"`` is a mode, not listed)."""
    return FORMAT_NAMES


def checked_format(name: object) -> str | None:
    """Return ``name`` if it names a format (or is None or ``"auto"``).

    Raises:
        ToolCallError: ``TOOL_CALL_UNKNOWN_FORMAT`` for any other value.
    """
    if name is None or (isinstance(name, str) and name in _KNOWN):
        return name
    raise ToolCallError(
        TOOL_CALL_UNKNOWN_FORMAT,
        f"unknown tool-call format {name!r}; see tool_call_formats() (or use 'auto')",
    )
