"""Hostile inputs of the Core's parsers and redactor: the unit tests check what each ends with,
``bench/adversarial.py`` times each against the Core's bound (a slow machine cannot fail a test).
"""

from __future__ import annotations

__all__ = ["JSON_TEXTS", "PII_TEXTS", "TOOL_CALL_TEXTS"]

#: 100 KB strings for ``redact_pii`` and how many e-mail addresses each holds (the others hold
#: no PII: they come back unchanged).
PII_TEXTS: list[tuple[str, int]] = [
    ("a" * 100_000, 0),
    ("a." * 50_000, 0),
    ("x@" + "a." * 50_000, 0),
    ("x@" + "1." * 50_000, 0),
    ("@a" * 50_000, 0),
    ("1 " * 50_000, 0),
    ("1-" * 50_000, 0),
    ("4111 " * 20_000, 0),
    ("+1 " * 33_000, 0),
    ("(555) " * 16_000, 0),
    ("555-123-" * 12_000, 0),
    ("9" * 100_000, 0),
    ("a@b.io-" * 14_000, 14_000),
    ("a@b.io" + "-x" * 50_000, 1),
    ("+1(555)" * 14_000, 0),
    ("0(" * 50_000, 0),
]

#: Text in which ``extract_json`` finds no JSON (``JSON_NOT_FOUND``).
JSON_TEXTS: list[str] = [
    '{"{' * 40_000,
    "{" * 100_000,
    '[" ' * 40_000,
    '{"\\' * 40_000,
    '{"a' + '\n{"' * 40_000,
    '"' * 100_000,
    "```" * 40_000,
]

#: Markup ``parse_tool_calls`` and ``strip_tool_calls`` take apart (or refuse with a code).
TOOL_CALL_TEXTS: list[str] = [
    '<tool_call>"' * 20_000,
    '<tool_call name="a">' * 10_000,
    "<tool.a>" * 20_000 + "</tool.b>",
    ("<tool_call" + " " * 1_000) * 200,
    'tool.x {"\n' * 20_000,
    "<think>" * 20_000,
    '<tool_call name="a">"' + '\\"' * 100_000,
    "tool." + "a" * 200_000,
    "<tool." + "a." * 100_000 + ">{}</tool.x>",
    '{"{' * 40_000,
    "<think></think>" * 20_000 + "x",
    "</think>" + "<think></think> " * 20_000 + "{",
]
