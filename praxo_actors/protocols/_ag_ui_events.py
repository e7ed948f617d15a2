"""One run's events, as AG-UI events: a pure translation, one praxo event at a time.

The praxo events of a run (see docs/how-to/agent.md) map to AG-UI's: ``model.requested`` opens a
step (closed by the next one or the run's end); ``model.delta`` streams text, which
``model.responded`` closes (or gives whole, when the model streamed none); ``tool.started``
is a call (start, arguments, end; a call waiting for approval is one too) and
``tool.completed`` its result, when the call was opened in this run (a frontend tool's result
came from the client); ``run.completed``/``run.interrupted`` end the run with RUN_FINISHED and
``run.failed`` with RUN_ERROR carrying the run's code. Ids are the client's ``threadId`` and
``runId``; a message's id is the run's and the step's, a call's the call's own.

The events are the JSON objects of AG-UI's wire format (camelCase keys, an optional field left
out when it has no value), as ``ag_ui.core``'s models dump them: built as dicts, they cost a
tenth of the models' construction and validation, once per event of every run.
"""

from __future__ import annotations

import json
import json.encoder
from typing import Any

from praxo_actors.models import Event

__all__ = ["FRONTEND_TOOL", "AgUiEvent", "Translation"]

AgUiEvent = dict[str, Any]
"""One AG-UI event, as its JSON object."""

FRONTEND_TOOL = "ag_ui.frontend_tool"
"""The key of the interrupt payload a client's own tool leaves: ``{"name", "call_id"}``."""

# json.dumps(value) with its defaults, its C encoder made once instead of on every call (tool
# arguments and results come from JSON: there is no cycle to check for).
_make = getattr(json.encoder, "c_make_encoder", None)
_chunks = None if _make is None else _make(
    None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None,
    ": ", ", ", False, False, True,
)  # fmt: skip


def _dumps(value: Any) -> str:
    """Return ``json.dumps(value)``."""
    if _chunks is None:  # a Python without the json module's C part
        return json.dumps(value)
    return "".join(_chunks(value, 0))


_APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "arguments": {"type": "object"}},
}


class Translation:
    """The AG-UI events of one run of a thread, made from its praxo events in order."""

    def __init__(self, thread_id: str, run_id: str) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self._step: str | None = None
        self._message: str | None = None
        self._started: set[str] = set()  # tool call ids opened in this run
        self._parent: str | None = None  # the text message of the step, if it had one
        self.ended = False

    def start(self) -> list[AgUiEvent]:
        """Return the run's first event."""
        return [{"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id}]

    def feed(self, event: Event) -> list[AgUiEvent]:
        """Return the AG-UI events that ``event`` makes (none for most)."""
        data = event.data
        kind = event.type
        if kind == "model.delta":
            return self._text(event, str(data.get("text") or ""))
        if kind == "model.requested":
            out = self._close_step()
            self._parent = None
            self._step = f"step {data.get('step', 0)}"
            out.append({"type": "STEP_STARTED", "stepName": self._step})
            return out
        if kind == "model.responded":
            return self._responded(event, data)
        if kind == "tool.started":
            name = str(data.get("name", ""))
            return self._open_call(self._call_id(data), name, data.get("arguments"))
        if kind == "tool.completed":
            call_id = self._call_id(data)
            if call_id not in self._started:
                return []  # a call this run did not open: the client answered it itself
            output = data.get("output")
            content = output if isinstance(output, str) else _dumps(output)
            return [
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": f"{call_id}.result",
                    "toolCallId": call_id,
                    "content": content,
                }
            ]
        if kind == "run.completed":
            return self._finish({"type": "success"})
        if kind == "run.interrupted":
            return self._interrupted(event, data)
        if kind == "run.failed":
            return self.fail(str(data.get("code") or "AGENT_FAILED"), str(data.get("message", "")))
        return []

    def fail(self, code: str, message: str) -> list[AgUiEvent]:
        """Return the events that end the run as failed with ``code``."""
        out = self._close_all()
        out.append({"type": "RUN_ERROR", "message": message or code, "code": code})
        self.ended = True
        return out

    def _text(self, event: Event, text: str) -> list[AgUiEvent]:
        out: list[AgUiEvent] = []
        if self._message is None:
            self._message = f"{self.run_id}.{event.data.get('step', 0)}"
            out.append(
                {"type": "TEXT_MESSAGE_START", "messageId": self._message, "role": "assistant"}
            )
        if text:
            out.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": self._message, "delta": text})
        return out

    def _responded(self, event: Event, data: dict[str, Any]) -> list[AgUiEvent]:
        out: list[AgUiEvent] = []
        content = data.get("content")
        if self._message is None and isinstance(content, str) and content:
            out.extend(self._text(event, content))
        self._parent = self._message
        out.extend(self._close_message())
        return out

    def _call_id(self, data: dict[str, Any]) -> str:
        call_id = data.get("id") or data.get("call_id")
        if isinstance(call_id, str) and call_id:
            return call_id
        return f"{self.run_id}.{data.get('step', 0)}.{data.get('name') or data.get('tool')}"

    def _open_call(self, call_id: str, name: str, arguments: Any) -> list[AgUiEvent]:
        if call_id in self._started:
            return []
        self._started.add(call_id)
        start: AgUiEvent = {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name}
        if self._parent is not None:
            start["parentMessageId"] = self._parent
        return [
            start,
            {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": _dumps(arguments or {})},
            {"type": "TOOL_CALL_END", "toolCallId": call_id},
        ]

    def _interrupted(self, event: Event, data: dict[str, Any]) -> list[AgUiEvent]:
        payload = data.get("payload")
        if isinstance(payload, dict) and isinstance(payload.get(FRONTEND_TOOL), dict):
            call_id = payload[FRONTEND_TOOL].get("call_id")
            outcome: AgUiEvent = {"type": "success"}
            if isinstance(call_id, str) and call_id in self._started:
                outcome["pendingToolCallIds"] = [call_id]
            return self._finish(outcome)
        approval = payload.get("approval") if isinstance(payload, dict) else None
        if data.get("kind") == "approval" and isinstance(approval, dict):
            call_id = self._call_id(approval)
            name = str(approval.get("tool", ""))
            opened = self._open_call(call_id, name, approval.get("arguments"))
            interrupt: AgUiEvent = {
                "id": f"{event.run_id}.approval",
                "reason": "approval",
                "message": f"approve the call of {approval.get('tool')!s}?",
                "toolCallId": call_id,
                "responseSchema": _APPROVAL_SCHEMA,
                "metadata": {"praxo": payload},
            }
            return opened + self._finish({"type": "interrupt", "interrupts": [interrupt]})
        interrupt = {
            "id": f"{event.run_id}.input",
            "reason": "input_required",
            "metadata": {"praxo": payload},
        }
        return self._finish({"type": "interrupt", "interrupts": [interrupt]})

    def _finish(self, outcome: AgUiEvent) -> list[AgUiEvent]:
        out = self._close_all()
        out.append(
            {
                "type": "RUN_FINISHED",
                "threadId": self.thread_id,
                "runId": self.run_id,
                "outcome": outcome,
            }
        )
        self.ended = True
        return out

    def _close_message(self) -> list[AgUiEvent]:
        if self._message is None:
            return []
        message, self._message = self._message, None
        return [{"type": "TEXT_MESSAGE_END", "messageId": message}]

    def _close_step(self) -> list[AgUiEvent]:
        out = self._close_message()
        if self._step is not None:
            out.append({"type": "STEP_FINISHED", "stepName": self._step})
            self._step = None
        return out

    def _close_all(self) -> list[AgUiEvent]:
        return self._close_step()
