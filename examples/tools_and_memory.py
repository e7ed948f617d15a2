"""An agent with a path-guarded file tool and a durable memory, driven by a scripted model.

The model reads a notes file inside the project root, remembers what it found in a SQLite
memory store, is refused a denied file and a path outside the root, and recalls the memory.
A scripted model stands in for an LLM so the example is deterministic; swap in any callable
``Request -> Response | ModelError`` to run it against a real model.

Run: ``python examples/tools_and_memory.py``
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from praxo_actors.agent import Tool, ToolError, new_agent_options, run_agent
from praxo_actors.core import PathPolicy, PathPolicyError
from praxo_actors.memory import SQLiteStore, memory_tools
from praxo_actors.models import RunResult, ToolCall, session
from praxo_actors.testing import ScriptedModel

NAMESPACE = ("projects", "demo")


def read_file_tool(policy: PathPolicy) -> Tool:
    """Return a tool reading UTF-8 text files that ``policy`` admits."""

    def read_file(args: dict[str, Any]) -> Any:
        requested: Any = args.get("path")  # unchecked: the policy refuses a non-str
        try:
            path = policy.check(requested)
        except PathPolicyError as exc:
            # Expected: the model asked for something it may not read. Tell it why.
            return ToolError(exc.code, exc.message)
        try:
            return {"path": path, "text": Path(path).read_text(encoding="utf-8")[:4096]}
        except OSError as exc:
            return ToolError("FILE_UNREADABLE", str(exc))

    return Tool(
        "read_file",
        "Read a text file of the project (a path relative to the project root).",
        {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        },
        read_file,
    )


def scripted_model() -> ScriptedModel:
    """Return the model's side of the conversation, one reply per step."""
    return ScriptedModel(
        [
            ToolCall("read_file", {"path": "notes.txt"}, id="c1"),
            ToolCall("remember", {"key": "deploy", "value": {"when": "Friday 10:00"}}, id="c2"),
            [
                ToolCall("read_file", {"path": ".env"}, id="c3"),
                ToolCall("read_file", {"path": "../../etc/passwd"}, id="c4"),
            ],
            ToolCall("recall", {"key": "deploy"}, id="c5"),
            "We deploy on Friday at 10:00. I have remembered that.",
        ]
    )


def run(workdir: Path) -> RunResult:
    """Set up a project under ``workdir``, run the agent once, and return its result."""
    root = workdir / "project"
    root.mkdir()
    (root / "notes.txt").write_text("Deploy on Friday at 10:00.\n", encoding="utf-8")
    (root / ".env").write_text("API_KEY=secret\n", encoding="utf-8")
    policy = PathPolicy([str(root)], deny=[".env*", "*.pem", ".git"])
    with SQLiteStore(workdir / "memory.sqlite3") as store:
        tools = [read_file_tool(policy), *memory_tools(store, NAMESPACE)]
        options = new_agent_options(scripted_model(), tools=tools)
        return run_agent(options, session("demo"), "When do we deploy? Remember it.")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        result = run(workdir)
        for message in result.session.messages:
            calls = ", ".join(f"{c.name}({json.dumps(c.arguments)})" for c in message.tool_calls)
            print(f"{message.role:>9}: {message.content or calls}")

        outcomes = [json.loads(str(m.content)) for m in result.session.messages if m.role == "tool"]
        assert outcomes[0]["text"] == "Deploy on Friday at 10:00.\n"
        assert outcomes[2]["error"]["code"] == "PATH_DENIED"
        assert outcomes[3]["error"]["code"] == "PATH_OUTSIDE_ROOTS"
        assert outcomes[4] == {"key": "deploy", "value": {"when": "Friday 10:00"}}

        # The memory outlives the run: a new store object on the same file still has it.
        with SQLiteStore(workdir / "memory.sqlite3") as store:
            item = store.get(NAMESPACE, "deploy")
            assert item is not None and item.value == {"when": "Friday 10:00"}
            print(f"   memory: {item.namespace} {item.key} = {item.value}")
        print(f"   output: {result.output} ({result.steps} steps, {result.tool_calls} tool calls)")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C: what main() started has stopped by now
        sys.exit(130)
