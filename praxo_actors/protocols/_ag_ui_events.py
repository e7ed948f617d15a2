"""One run's events, as AG-UI events: a pure translation, one praxo event at a time.

The praxo events of a run (see docs/agent.md) map to AG-UI's: ``model.requested`` opens a
step (closed by the next one or the run's end); ``model.delta`` streams text, which
``model.responded`` closes (or gives whole, when the model streamed none); ``tool.started``
is a call (start, arguments, end; a call waiting for approval is one too) and
``tool.completed`` its result, when the call was opened in this run (a frontend tool's result
came from the client); ``run.completed``/``run.interrupted`` end the run with RUN_FINISHED and
``run.failed`` with RUN_ERROR carrying the run's code. Ids are the client's ``threadId`` and
``runId``; a message's id is the run's and the step's, a call's the call's own.
"""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from praxo_actors.models import Event

__all__ = ["FRONTEND_TOOL", "Translation"]

FRONTEND_TOOL = "ag_ui.frontend_tool"
"""The key of the interrupt payload a client's own tool leaves: ``{"name", "call_id"}``."""

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

    def start(self) -> list[BaseEvent]:
        """Return the run's first event."""
        return [RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)]

    def feed(self, event: Event) -> list[BaseEvent]:
        """Return the AG-UI events that ``event`` makes (none for most)."""
        data = event.data
        kind = event.type
        if kind == "model.delta":
            return self._text(event, str(data.get("text") or ""))
        if kind == "model.requested":
            out = self._close_step()
            self._parent = None
            self._step = f"step {data.get('step', 0)}"
            out.append(StepStartedEvent(step_name=self._step))
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
            content = output if isinstance(output, str) else json.dumps(output)
            return [
                ToolCallResultEvent(
                    message_id=f"{call_id}.result", tool_call_id=call_id, content=content
                )
            ]
        if kind == "run.completed":
            return self._finish(RunFinishedSuccessOutcome())
        if kind == "run.interrupted":
            return self._interrupted(event, data)
        if kind == "run.failed":
            return self.fail(str(data.get("code") or "AGENT_FAILED"), str(data.get("message", "")))
        return []

    def fail(self, code: str, message: str) -> list[BaseEvent]:
        """Return the events that end the run as failed with ``code``."""
        out = self._close_all()
        out.append(RunErrorEvent(message=message or code, code=code))
        self.ended = True
        return out

    def _text(self, event: Event, text: str) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        if self._message is None:
            self._message = f"{self.run_id}.{event.data.get('step', 0)}"
            out.append(TextMessageStartEvent(message_id=self._message, role="assistant"))
        if text:
            out.append(TextMessageContentEvent(message_id=self._message, delta=text))
        return out

    def _responded(self, event: Event, data: dict[str, Any]) -> list[BaseEvent]:
        out: list[BaseEvent] = []
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

    def _open_call(self, call_id: str, name: str, arguments: Any) -> list[BaseEvent]:
        if call_id in self._started:
            return []
        self._started.add(call_id)
        return [
            ToolCallStartEvent(
                tool_call_id=call_id, tool_call_name=name, parent_message_id=self._parent
            ),
            ToolCallArgsEvent(tool_call_id=call_id, delta=json.dumps(arguments or {})),
            ToolCallEndEvent(tool_call_id=call_id),
        ]

    def _interrupted(self, event: Event, data: dict[str, Any]) -> list[BaseEvent]:
        payload = data.get("payload")
        if isinstance(payload, dict) and isinstance(payload.get(FRONTEND_TOOL), dict):
            call_id = payload[FRONTEND_TOOL].get("call_id")
            pending = [call_id] if isinstance(call_id, str) and call_id in self._started else None
            return self._finish(RunFinishedSuccessOutcome(pending_tool_call_ids=pending))
        approval = payload.get("approval") if isinstance(payload, dict) else None
        if data.get("kind") == "approval" and isinstance(approval, dict):
            call_id = self._call_id(approval)
            name = str(approval.get("tool", ""))
            opened = self._open_call(call_id, name, approval.get("arguments"))
            interrupt = Interrupt(
                id=f"{event.run_id}.approval",
                reason="approval",
                message=f"approve the call of {approval.get('tool')!s}?",
                tool_call_id=call_id,
                response_schema=_APPROVAL_SCHEMA,
                metadata={"praxo": payload},
            )
            return opened + self._finish(RunFinishedInterruptOutcome(interrupts=[interrupt]))
        else:
            interrupt = Interrupt(
                id=f"{event.run_id}.input", reason="input_required", metadata={"praxo": payload}
            )
        return self._finish(RunFinishedInterruptOutcome(interrupts=[interrupt]))

    def _finish(self, outcome: Any) -> list[BaseEvent]:
        out = self._close_all()
        out.append(RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, outcome=outcome))
        self.ended = True
        return out

    def _close_message(self) -> list[BaseEvent]:
        if self._message is None:
            return []
        message, self._message = self._message, None
        return [TextMessageEndEvent(message_id=message)]

    def _close_step(self) -> list[BaseEvent]:
        out = self._close_message()
        if self._step is not None:
            out.append(StepFinishedEvent(step_name=self._step))
            self._step = None
        return out

    def _close_all(self) -> list[BaseEvent]:
        return self._close_step()
