"""Map a Hugging Face model id to the tool-call format its chat template teaches."""

from __future__ import annotations

import re

__all__ = ["tool_call_format_for"]

# First match wins: fine-tunes named after their base (Hermes-3-Llama-3.1, Llama-xLAM-2,
# llama-3-firefunction-v2, Llama-3.3-Nemotron, DeepSeek-R1-Distill-Qwen) come before the base
# family. Each family maps to what its own chat template writes (tests/core/template_corpus.json
# holds the templates' output), not to what a server may be configured to expect.
_RULES: tuple[tuple[str, str], ...] = (
    (r"functiongemma", "functiongemma"),
    (r"gpt-oss", "openai"),
    (r"hermes", "hermes"),
    (r"functionary-.*v3\.1", "llama3_json"),  # <function=NAME>{…}</function>
    (r"llm-jp-4", "openai"),  # harmony, as gpt-oss
    (r"deepseek-r1-distill-qwen", "deepseek_v3"),  # DeepSeek markup, not Qwen's
    (r"xlam", "xlam"),
    (r"firefunction", "firefunction_v2"),
    (r"toolace", "pythonic"),
    (r"granite-20b-functioncalling", "granite_20b_fc"),
    (r"granite-4", "hermes"),
    (r"granite-3", "granite"),
    (r"nemotron-3-nano|nemotron-nano-3", "qwen3_coder"),
    (r"nemotron-nano-\d+b-v2|nemotron-h-|llama-3\.[13]-nemotron", "nemotron_v2"),
    (r"qwen3-coder|qwen3\.5", "qwen3_coder"),
    (r"step-3\.5", "qwen3_coder"),
    (r"qwen|qwq|mimo-|bielik|reka-", "hermes"),
    (r"llama-4", "pythonic"),
    (r"llama-3", "llama3_json"),  # 3.2 too: its template writes {"name", "parameters"}
    (r"mistral|ministral|mixtral|devstral|magistral|codestral|pixtral", "mistral"),
    (r"deepseek-v3\.1", "deepseek_v31"),
    (r"deepseek-v3(?!\.)|deepseek-r1", "deepseek_v3"),
    (r"kimi-k2", "kimi_k2"),
    (r"glm-4\.[567]|spark-x|laguna|(?:^|/)ling-\d", "glm45"),
    (r"internlm", "internlm"),
    (r"jamba|apriel", "jamba"),
    (r"hunyuan-a13b", "hunyuan_a13b"),
    (r"minimax-m2", "minimax_m2"),
    (r"minimax", "minimax"),
    (r"seed-oss", "seed_oss"),
    (r"phi-4-mini", "phi4_mini_json"),
    (r"command-r7b|command-a", "command_r7b"),
    (r"lfm2", "lfm2"),
    (r"apertus", "apertus"),
    (r"gemma-3", "pythonic"),
)
_COMPILED = tuple((re.compile(pattern), name) for pattern, name in _RULES)


def tool_call_format_for(model_id: str) -> str | None:
    """Return the tool-call format of a model, by its Hugging Face id (any case), or None.

    ``"Qwen/Qwen3-Coder-30B-A3B-Instruct"`` gives ``"qwen3_coder"``,
    ``"mistralai/Mistral-Small-3.2-24B-Instruct-2506"`` gives ``"mistral"``. A local path or
    a GGUF file name works too: only the name matters. An unknown family gives None.

    Raises:
        TypeError: ``model_id`` is not a ``str``.
    """
    if not isinstance(model_id, str):
        raise TypeError(f"model_id must be a str, got {type(model_id).__name__}")
    key = model_id.lower().replace("_", "-")
    for pattern, name in _COMPILED:
        if pattern.search(key):
            return name
    return None
