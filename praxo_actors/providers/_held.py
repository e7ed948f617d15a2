"""Streamed text that may be a tool call, held back until the reply shows whether it is one.

A model offered tools that writes its calls as text (no native ``tool_calls``) would stream
the markup to a UI as assistant text. So, while tools are offered, text streams as
``model.delta`` events up to the first character that could open a call's markup (``<``,
``{`` or ``[``, or a line starting ``tool.``); from there it is held. When the reply is
complete, held text that is a call read from text (by the model's ``tool_call_format``, or the
loop's default set when it has none) is dropped; any other held text is sent as one delta.
The deltas of a reply without calls therefore still make up its whole text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from praxo_actors._errors import ToolCallError
from praxo_actors.models import Response

__all__ = ["HeldDeltas"]

# Where a call's markup may begin in any named format: a tag or special token, a JSON object or
# array, or a dotted line of the default set.
_OPENER = re.compile(r"[<{\[]|^[^\S\n]*tool\.", re.MULTILINE)


class HeldDeltas:
    """Pass streamed text on, holding back what may be a tool call (see the module).

    Args:
        send: Emits one delta (a ``ModelContext.delta``).
        active: Hold anything at all (False: every piece is sent at once).
    """

    __slots__ = ("_held", "_seen", "_send", "active")

    def __init__(self, send: Callable[[str], None], active: bool) -> None:
        self._send = send
        self.active = active
        self._seen = ""  # the text sent so far, while nothing is held
        self._held: list[str] | None = None

    def add(self, text: str) -> None:
        """Take the next piece of streamed text."""
        if not text:
            return
        if not self.active:
            self._send(text)
            return
        if self._held is not None:
            self._held.append(text)
            return
        # Look from a little before the piece: a line start or "tool." may span two pieces.
        start = max(0, len(self._seen) - 8)
        window = self._seen[start:] + text
        found = _OPENER.search(window)
        if found is None or found.start() + start >= len(self._seen) + len(text):
            self._seen += text
            self._send(text)
            return
        # The space before markup is held too: the prose the reply keeps is trimmed.
        cut = len(text[: max(0, found.start() + start - len(self._seen))].rstrip())
        if cut:
            self._send(text[:cut])
        self._seen += text[:cut]
        self._held = [text[cut:]]

    def finish(self, reply: Response | object) -> None:
        """Send what of the held text the complete ``reply`` keeps as its text.

        A reply whose calls were read from its text (by the adapter, or by the loop's default
        set) keeps the prose around the markup: what of it was not sent yet is sent now. Any
        other reply keeps its text whole: the held text is sent.
        """
        held, self._held = self._held, None
        if not held:
            return
        sent = self._seen
        raw = sent + "".join(held)
        final = _kept_text(reply, raw) if isinstance(reply, Response) else raw
        if final.startswith(sent) and len(final) > len(sent):
            self._send(final[len(sent) :])


def _kept_text(reply: Response, raw: str) -> str:
    """Return the text the reply keeps: the prose when its calls came from ``raw``."""
    from praxo_actors.core import parse_tool_calls, strip_tool_calls

    message = reply.message
    content = message.content
    text = content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)
    if message.tool_calls:
        return text  # the adapter's prose, or a native call's own text
    try:
        calls = parse_tool_calls(raw)  # as the loop reads it with no format named
    except ToolCallError:
        return raw
    return strip_tool_calls(raw) if calls else raw
