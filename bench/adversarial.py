"""Time every Core entry point on hostile and random inputs against the one-second bound.

Run ``python bench/adversarial.py`` (``--list`` names the cases, ``--only NAME`` runs some). Each
case runs in a child process with a timeout (``--timeout``, default 20 s), so that an input that
never returns is reported as a timeout rather than hanging the run. It prints one line per case:
the time, the outcome (the value's kind, or the error code), and ``ok``, ``OVER`` the bound
(``--bound``, default 1 s: every Core entry point on any input under 1 MB, on a 2-core machine) or
``NO CODE`` for an exception that is not a ``PraxoError``; the exit status is 1 when any case is
not ``ok``.

The cases are the denial-of-service inputs of issue 16 (ReDoS patterns, ``$ref`` fan-out, linear
scans that were quadratic, nesting past the recursion limit) and, for each entry point, 1 MB of
random text or a 1 MB random value, and the unit tests' own hostile inputs
(``tests/core/_hostile.py``, cases ``*_unit_NN``). Unit tests only check what these inputs end
with; the timing lives here, where a slow machine cannot fail the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _machine import cpu_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from praxo_actors import core
from praxo_actors.models import Message, Session, ToolCall

MB = 1_000_000
SEED = 16


def _rng() -> random.Random:
    return random.Random(SEED)


def _random_text(size: int = MB) -> str:
    """Return printable ASCII with newlines, brackets and quotes: what model output is made of."""
    alphabet = "abcdefghijklmnopqrstuvwxyz ABCXYZ 0123456789 .,:;!?-_@+()[]{}<>\"'/\\\n\t"
    return "".join(_rng().choices(alphabet, k=size))


def _random_unicode(size: int = MB) -> str:
    """Return code points from the whole range, lone surrogates excluded."""
    rng = _rng()
    points = [rng.randrange(0x20, 0x10FFFF) for _ in range(size)]
    return "".join(chr(p) for p in points if not 0xD800 <= p <= 0xDFFF)


# Pieces of the markup the parsers look for; joined at random they make the densest hostile text.
_FRAGMENTS = [
    "<tool_call>", "</tool_call>", '<tool_call name="a">', "<tool.a>", "</tool.a>", "<tool.a/>",
    "<think>", "</think>", "tool.a ", "tool.a", "\n", " ", "{", "}", "[", "]", '"', "\\", ":",
    ",", "```", "```json\n", '"name"', '"arguments"', "{}", "[]", "1", "a", "@", "1234", "-",
]  # fmt: skip


def _fragments(size: int = MB) -> str:
    rng = _rng()
    parts: list[str] = []
    length = 0
    while length < size:
        part = rng.choice(_FRAGMENTS)
        parts.append(part)
        length += len(part)
    return "".join(parts)[:size]


def _nested_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _nested_dict(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def _random_json(size: int = MB) -> Any:
    """Return a random JSON value whose encoding is about ``size`` bytes."""
    rng = _rng()
    items: list[Any] = []
    length = 0
    while length < size:
        item = rng.choice(
            [
                rng.randrange(-(10**9), 10**9),
                rng.random(),
                "".join(rng.choices("abc xyz@.-0123456789", k=rng.randrange(1, 40))),
                None,
                True,
                {"k": "v", "n": [1, 2, 3]},
            ]
        )
        items.append(item)
        length += len(json.dumps(item)) + 1
    return {"items": items, "meta": {"size": size}}


def _fan_out_schema(levels: int = 24) -> dict[str, Any]:
    defs: dict[str, Any] = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def _messages_with_arguments(arguments: dict[str, Any]) -> list[Message]:
    filler = [Message(role="user", content="hello " * 50) for _ in range(10)]
    call = ToolCall(name="t", arguments=arguments)
    return [*filler, Message(role="assistant", tool_calls=[call]), *filler]


def _policy(resolve: bool = False) -> core.PathPolicy:
    return core.PathPolicy(["/srv/app"], deny=[".git", "*.pem", ".env*"], resolve_symlinks=resolve)


# name -> (entry point, a function building its argument tuple); building is not timed.
Case = tuple[Callable[..., Any], Callable[[], tuple[Any, ...]]]

CASES: dict[str, Case] = {
    # -- issue 16, finding 4: ReDoS ---------------------------------------------------------------
    "schema_redos_nested_plus": (
        core.validate_schema,
        lambda: ({"type": "string", "pattern": "^(a+)+$"}, "a" * 40 + "!"),
    ),
    "schema_redos_alternation": (
        core.validate_schema,
        lambda: ({"type": "string", "pattern": "^(a|aa)+$"}, "a" * 40 + "!"),
    ),
    "schema_redos_words": (
        core.validate_schema,
        lambda: ({"type": "string", "pattern": r"^(\w+\s?)*$"}, "a" * 40 + "!"),
    ),
    "schema_redos_nested_plus_1mb": (
        core.validate_schema,
        lambda: ({"type": "string", "pattern": "^(a+)+$"}, "a" * MB + "!"),
    ),
    "schema_pattern_digits_end_1mb": (
        core.validate_schema,
        lambda: ({"type": "string", "pattern": r"\d+$"}, "1" * MB + "x"),
    ),
    "schema_pattern_dfa_blowup_1mb": (
        core.validate_schema,
        lambda: (
            {"type": "string", "pattern": "a[ab]{20}c"},
            "".join(_rng().choices("ab", k=MB)),
        ),
    ),
    "schema_pattern_random_unicode_1mb": (
        core.validate_schema,
        lambda: ({"type": "string", "pattern": r"^[\w.-]+@[\w-]+\.\w{2,}$"}, _random_unicode()),
    ),
    # -- finding 5: $ref fan-out -------------------------------------------------------------------
    "schema_ref_fan_out_24": (core.validate_schema, lambda: (_fan_out_schema(24), 1)),
    "schema_ref_fan_out_400": (core.validate_schema, lambda: (_fan_out_schema(400), 1)),
    # Two branches descending into the same items through the root again, 200 levels deep.
    "schema_ref_branches_deep_value": (
        core.validate_schema,
        lambda: (
            {"allOf": [{"items": {"$ref": "#"}}, {"items": {"$ref": "#"}}], "type": "string"},
            _nested_list(200),
        ),
    ),
    "schema_ref_one_of_deep_value": (
        core.validate_schema,
        lambda: (
            {"oneOf": [{"items": {"$ref": "#"}}, {"items": {"$ref": "#"}}, {"type": "string"}]},
            _nested_list(200),
        ),
    ),
    "schema_random_json_1mb": (
        core.validate_schema,
        lambda: (
            {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {
                            "anyOf": [
                                {"type": "integer"},
                                {"type": "string", "pattern": "^[a-z@.]+$"},
                                {"type": "object", "required": ["k"]},
                            ]
                        },
                    }
                },
            },
            _random_json(),
        ),
    ),
    # -- finding 10: linear scans ------------------------------------------------------------------
    "strip_tool_calls_open_lines": (core.strip_tool_calls, lambda: ("tool.a {\n" * 111_111,)),
    "strip_tool_calls_bare_lines": (core.strip_tool_calls, lambda: ("tool.a\n" * 142_857,)),
    "parse_tool_calls_bare_lines": (core.parse_tool_calls, lambda: ("tool.a\n" * 142_857,)),
    "strip_tool_calls_fragments_1mb": (core.strip_tool_calls, lambda: (_fragments(),)),
    "parse_tool_calls_fragments_1mb": (core.parse_tool_calls, lambda: (_fragments(),)),
    "strip_tool_calls_random_1mb": (core.strip_tool_calls, lambda: (_random_text(),)),
    "parse_tool_calls_random_1mb": (core.parse_tool_calls, lambda: (_random_text(),)),
    "extract_json_braced_junk": (core.extract_json, lambda: ("{x}" * 333_333,)),
    "extract_json_open_brackets": (core.extract_json, lambda: ("[" * MB,)),
    "extract_json_failing_spans": (core.extract_json, lambda: ("[-]" * 333_333,)),
    "extract_json_openers_in_strings": (core.extract_json, lambda: ('["{"' * 250_000,)),
    "extract_json_fragments_1mb": (core.extract_json, lambda: (_fragments(),)),
    "extract_json_random_1mb": (core.extract_json, lambda: (_random_text(),)),
    "parse_json_random_1mb": (core.parse_json, lambda: (_random_text(),)),
    "parse_json_open_brackets": (core.parse_json, lambda: ("[" * MB,)),
    "parse_json_document_1mb": (core.parse_json, lambda: (json.dumps(_random_json()),)),
    "encode_json_value_1mb": (core.encode_json, lambda: (_random_json(),)),
    "redact_pii_digit_groups": (core.redact_pii, lambda: ("1234 " * 200_000,)),
    "redact_pii_hyphen_groups": (core.redact_pii, lambda: ("1234-" * 200_000,)),
    "redact_pii_local_parts": (core.redact_pii, lambda: ("a@" * 500_000,)),
    "redact_pii_domain_labels": (core.redact_pii, lambda: ("a@" + "b." * 499_999,)),
    "redact_pii_phones": (core.redact_pii, lambda: ("555-123-4567 " * 76_923,)),
    "redact_pii_random_1mb": (core.redact_pii, lambda: (_random_text(),)),
    "redact_pii_random_unicode_1mb": (core.redact_pii, lambda: (_random_unicode(),)),
    "redact_value_json_1mb": (core.redact_value, lambda: (_random_json(),)),
    "path_check_long_1mb": (_policy().check, lambda: ("a/" * 500_000,)),
    "path_check_dotdot_1mb": (_policy().check, lambda: ("../" * 333_333,)),
    "path_check_random_1mb": (_policy().check, lambda: (_random_text(),)),
    "path_check_resolved_1mb": (_policy(resolve=True).check, lambda: ("a/" * 500_000,)),
    "load_checkpoint_random_1mb": (
        core.load_checkpoint,
        lambda: (_random_text().encode(),),
    ),
    "load_checkpoint_open_brackets": (core.load_checkpoint, lambda: (b"[" * MB,)),
    "load_checkpoint_session_1mb": (
        core.load_checkpoint,
        lambda: (
            core.dump_checkpoint(
                Session(
                    id="s",
                    messages=[Message(role="user", content="hello " * 16)] * 10_000,
                )
            ),
        ),
    ),
    "compact_messages_1mb": (
        core.compact_messages,
        lambda: ([Message(role="user", content="word " * 20)] * 10_000, 1_000),
    ),
    # -- finding 11: nesting past the recursion limit ----------------------------------------------
    "redact_value_deep_list": (core.redact_value, lambda: (_nested_list(100_000),)),
    "compact_messages_deep_arguments": (
        core.compact_messages,
        lambda: (_messages_with_arguments(_nested_dict(100_000)), 100),
    ),
}


# The unit tests' hostile inputs (tests/core/_hostile.py), which the tests check only for what
# they end with: their times against the bound are taken here.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "core"))
from _hostile import JSON_TEXTS, PII_TEXTS, TOOL_CALL_TEXTS  # noqa: E402


def _parse_and_strip(text: str) -> str:
    """What the tool-call unit test does with a hostile text: parse it, then strip it."""
    with contextlib.suppress(core.ToolCallError):
        core.parse_tool_calls(text)
    return core.strip_tool_calls(text)


for _i, (_text, _) in enumerate(PII_TEXTS):
    CASES[f"redact_pii_unit_{_i:02d}"] = (core.redact_pii, lambda t=_text: (t,))
for _i, _text in enumerate(JSON_TEXTS):
    CASES[f"extract_json_unit_{_i:02d}"] = (core.extract_json, lambda t=_text: (t,))
for _i, _text in enumerate(TOOL_CALL_TEXTS):
    CASES[f"parse_and_strip_tool_calls_unit_{_i:02d}"] = (_parse_and_strip, lambda t=_text: (t,))


def _outcome(result: Any) -> str:
    if isinstance(result, list | tuple):
        return f"{type(result).__name__} of {len(result)}"
    return type(result).__name__


def run_case(name: str) -> tuple[float, str]:
    """Run one case in this process; return its time and outcome."""
    entry, build = CASES[name]
    args = build()
    start = time.perf_counter()
    try:
        result = entry(*args)
    except core.PraxoError as exc:
        outcome = exc.code
    except Exception as exc:  # the bug this benchmark exists to catch: say which
        outcome = f"{type(exc).__name__} (no code)"
    else:
        outcome = _outcome(result)
    return time.perf_counter() - start, outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--only", nargs="*", default=None, help="run only these cases")
    parser.add_argument("--bound", type=float, default=1.0, help="seconds allowed per case")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before giving up")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # the child's side
    args = parser.parse_args(argv)
    if args.case:
        seconds, outcome = run_case(args.case)
        print(json.dumps([seconds, outcome]))
        return 0
    if args.list:
        print("\n".join(CASES))
        return 0
    names = args.only or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"no such case: {', '.join(unknown)}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# {cpu_model()}, Python {platform.python_version()}, load average {load}")
    print(f"# each case in a child process; bound {args.bound:g} s, timeout {args.timeout:g} s")
    over = 0
    width = max(map(len, names))
    for name in names:
        try:
            child = subprocess.run(
                [sys.executable, __file__, "--case", name],
                capture_output=True,
                text=True,
                timeout=args.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            over += 1
            print(f"{name:<{width}}  > {args.timeout:6.1f} s  {'timed out':<26}OVER")
            continue
        if child.returncode != 0:
            over += 1
            error = (child.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{name:<{width}}  crashed: {error}  OVER")
            continue
        seconds, outcome = json.loads(child.stdout.strip().splitlines()[-1])
        # An exception without a code breaks the other promise: every failure has a code.
        verdict = "NO CODE" if "(no code)" in outcome else "ok" if seconds <= args.bound else "OVER"
        over += verdict != "ok"
        print(f"{name:<{width}}  {seconds:8.3f} s  {outcome:<26}{verdict}")
    print(f"{len(names) - over} within the bound, {over} over or without a code")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
