"""gpt-oss's harmony format (``openai``): calls are messages addressed to ``functions.NAME``.

A completion is a run of messages, each ``[<|start|>ROLE][ to=RECIPIENT]<|channel|>CHANNEL
[ to=RECIPIENT][ <|constrain|>json]<|message|>BODY`` closed by ``<|end|>``, ``<|call|>`` or
``<|return|>``. A completion that follows the generation prompt (``<|start|>assistant``)
begins with the rest of that header: `` to=RECIPIENT<|channel|>…``. A message whose recipient
is ``functions.NAME`` is a call of ``NAME`` whose body is the JSON arguments (empty means
``{}``); its end is the first closing token outside JSON strings, or the end of the text, since
``<|call|>`` is a stop token a server may drop. Every other message (the analysis channel's
reasoning, the final answer, built-in tools such as ``browser.search``) is passed over whole,
so nothing inside it is read as a call.
"""

from __future__ import annotations

import re

from praxo_actors.core._formats._scan import (
    Format,
    Section,
    Text,
    arguments_body,
    attempt,
    call,
    closer_pattern,
    find_outside_strings,
)

__all__ = ["FORMATS"]

_MESSAGE = "<|message|>"
_RECIPIENT = re.compile(r"to=([^\s<]+)")
_ENDS = ("<|end|>", "<|call|>", "<|return|>")
_BODY_END = closer_pattern(*_ENDS)
_PLAIN_END = re.compile("|".join(re.escape(end) for end in (*_ENDS, "<|start|>")))


def _read(source: Text, match: re.Match[str]) -> tuple[Section | None, int]:
    text, start = source.text, match.start()
    header_end = source.find(_MESSAGE, match.end())
    if header_end < 0:
        return None, len(text)  # no message follows: nothing more to read
    if _PLAIN_END.search(text, match.end(), header_end) is not None:
        return None, match.end()  # a header without a message
    body_start = header_end + len(_MESSAGE)
    # From the marker on: a completion's leading recipient is part of its marker.
    recipient = _RECIPIENT.search(text, match.start(), header_end)
    if recipient is None or not recipient.group(1).startswith("functions."):
        plain_end = _PLAIN_END.search(text, body_start)
        return None, len(text) if plain_end is None else plain_end.start()
    name = recipient.group(1).removeprefix("functions.")
    found = find_outside_strings(text, body_start, _BODY_END)
    end = len(text) if found is None else found.end()
    body = text[body_start : len(text) if found is None else found.start()]
    return attempt(start, end, lambda: [call(name, arguments_body(body))]), end


# The header of the message the generation prompt began: the text's own start.
_CONTINUED = r"\A\s*(?:assistant\s*)?to="

FORMATS = (Format.build("openai", rf"<\|start\|>|<\|channel\|>|{_CONTINUED}", _read),)
