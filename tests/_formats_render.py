"""Render tool calls the way each model family's chat template writes them.

The tests and the conformance vectors use these to build model output from known calls, so a
parse can be checked against the calls that produced the text. ``render(fmt, calls)`` returns
the text and the calls a parser must read from it (ids included where the format writes one).
"""

from __future__ import annotations

import json
from typing import Any

from praxo_actors.core import parse_json
from praxo_actors.models import ToolCall

Call = tuple[str, dict[str, Any]]


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _raw(value: Any) -> str:
    """A raw tag value: a plain string as is; anything that could be misread as JSON, encoded."""
    if isinstance(value, str) and value and "<" not in value and value == value.strip():
        try:
            parse_json(value)
        except Exception:
            return value
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def _py(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    return repr(value)


def _gemma(value: Any) -> str:
    if isinstance(value, str):
        return f"<escape>{value}<escape>"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_gemma(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_gemma(v) for v in value) + "]"
    return json.dumps(value)


def _plain(calls: list[Call]) -> list[ToolCall]:
    return [ToolCall(name=name, arguments=args) for name, args in calls]


def render(fmt: str, calls: list[Call]) -> tuple[str, list[ToolCall]]:
    """Return model output holding ``calls`` in ``fmt``, and the calls it must parse to."""
    objects = [{"name": n, "arguments": a} for n, a in calls]
    expected = _plain(calls)
    if fmt == "hermes":
        return "".join(f"<tool_call>\n{_j(o)}\n</tool_call>\n" for o in objects), expected
    if fmt == "llama3_json":
        text = "; ".join(_j({"name": n, "parameters": a}) for n, a in calls)
        return text, expected
    if fmt in ("pythonic", "lfm2"):
        body = (
            "["
            + ", ".join(
                f"{n}({', '.join(f'{k}={_py(v)}' for k, v in a.items())})" for n, a in calls
            )
            + "]"
        )
        if fmt == "lfm2":
            return f"<|tool_call_start|>{body}<|tool_call_end|>", expected
        return f"<|python_start|>{body}<|python_end|>", expected
    if fmt == "mistral":
        ids = [f"c{i:08d}" for i in range(len(calls))]
        text = "".join(
            f"[TOOL_CALLS]{n}[CALL_ID]{i}[ARGS]{_j(a)}"
            for (n, a), i in zip(calls, ids, strict=True)
        )
        return text, [ToolCall(n, a, i) for (n, a), i in zip(calls, ids, strict=True)]
    if fmt in ("deepseek_v3", "deepseek_v31"):
        if fmt == "deepseek_v3":
            inner = "".join(
                f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{_j(a)}\n```<｜tool▁call▁end｜>"
                for n, a in calls
            )
        else:
            inner = "".join(
                f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{_j(a)}<｜tool▁call▁end｜>"
                for n, a in calls
            )
        return f"<｜tool▁calls▁begin｜>{inner}<｜tool▁calls▁end｜>", expected
    if fmt == "kimi_k2":
        ids = [f"functions.{n}:{i}" for i, (n, _) in enumerate(calls)]
        inner = "".join(
            f"<|tool_call_begin|>{i}<|tool_call_argument_begin|>{_j(a)}<|tool_call_end|>"
            for (_, a), i in zip(calls, ids, strict=True)
        )
        text = f"<|tool_calls_section_begin|>{inner}<|tool_calls_section_end|>"
        return text, [ToolCall(n, a, i) for (n, a), i in zip(calls, ids, strict=True)]
    if fmt in ("qwen3_coder", "seed_oss"):
        # Qwen3-Coder's template puts a newline on each side of a value; Seed-OSS's puts none.
        tag, pad = ("tool_call", "\n") if fmt == "qwen3_coder" else ("seed:tool_call", "")
        text = "".join(
            f"<{tag}>\n<function={n}>\n"
            + "".join(f"<parameter={k}>{pad}{_raw(v)}{pad}</parameter>\n" for k, v in a.items())
            + f"</function>\n</{tag}>\n"
            for n, a in calls
        )
        return text, expected
    if fmt == "glm45":
        text = "".join(
            f"<tool_call>{n}\n"
            + "".join(
                f"<arg_key>{k}</arg_key>\n<arg_value>{_raw(v)}</arg_value>\n" for k, v in a.items()
            )
            + "</tool_call>"
            for n, a in calls
        )
        return text, expected
    if fmt == "minimax_m2":
        invokes = "".join(
            f'<invoke name="{n}">\n'
            + "".join(f'<parameter name="{k}">{_raw(v)}</parameter>\n' for k, v in a.items())
            + "</invoke>\n"
            for n, a in calls
        )
        return f"<minimax:tool_call>\n{invokes}</minimax:tool_call>", expected
    if fmt == "openai":
        text = "<|channel|>analysis<|message|>Let me call the tools.<|end|>" + "".join(
            f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json"
            f"<|message|>{_j(a)}<|call|>"
            for n, a in calls
        )
        return text, expected
    if fmt == "granite":
        return f"<|tool_call|>{_j(objects)}", expected
    if fmt == "granite_20b_fc":
        return " ".join(f"<function_call> {_j(o)}" for o in objects), expected
    if fmt == "internlm":
        text = "".join(
            f"<|action_start|><|plugin|>\n{_j({'name': n, 'parameters': a})}<|action_end|>\n"
            for n, a in calls
        )
        return text, expected
    if fmt in ("jamba", "hunyuan_a13b"):
        return f"<tool_calls>{_j(objects)}</tool_calls>", expected
    if fmt == "minimax":
        return "<tool_calls>\n" + "".join(f"{_j(o)}\n" for o in objects) + "</tool_calls>", expected
    if fmt == "xlam":
        return _j(objects), expected
    if fmt in ("phi4_mini_json", "firefunction_v2"):
        return f"functools{_j(objects)}", expected
    if fmt == "command_r7b":
        actions = [
            {"tool_call_id": str(i), "tool_name": n, "parameters": a}
            for i, (n, a) in enumerate(calls)
        ]
        text = f"<|START_ACTION|>{_j(actions)}<|END_ACTION|>"
        return text, [ToolCall(n, a, str(i)) for i, (n, a) in enumerate(calls)]
    if fmt == "nemotron_v2":
        return f"<TOOLCALL>{_j(objects)}</TOOLCALL>", expected
    if fmt == "apertus":
        return f"<|tools_prefix|>{_j([{n: a} for n, a in calls])}<|tools_suffix|>", expected
    if fmt == "functiongemma":
        text = "".join(
            f"<start_function_call>call:{n}{_gemma(a)}<end_function_call>" for n, a in calls
        )
        return text, expected
    raise ValueError(fmt)
