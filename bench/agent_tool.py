"""Benchmark an agent called as a tool (not a test).

    python bench/agent_tool.py            # 2,000 runs per case (~10 s on 2 vCPUs)
    python bench/agent_tool.py --quick    # 200 runs per case

On live sessions, under ``Runtime.open`` with models that answer at once, one run after another:

- ``child run``: one run of the child agent alone (a one-step echo);
- ``parent, plain tool``: the caller's run, two model steps around an ``async`` tool that
  answers at once;
- ``parent, agent tool``: the same run whose tool is ``agent_tool`` of the child.

What the agent tool adds is (agent tool - plain tool); beyond the child's own run it costs
(agent tool - plain tool - child run). [that extra <= 1 child run, i.e. agent tool - plain
tool <= 2 child runs]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime, agent_tool


async def child_model(request: Request) -> Response:
    return Response(message_assistant(str(request.messages[-1].content)))


def parent_model(tool: str):  # type: ignore[no-untyped-def]
    async def model(request: Request) -> Response:
        last = request.messages[-1]
        if last.role == "tool":
            return Response(message_assistant(str(last.content)))
        return Response(message_assistant("", [ToolCall(tool, {"input": "x"}, id="c")]))

    return model


async def plain(_arguments: dict[str, object]) -> str:
    return "x"


async def per_run(runtime: Runtime, session: str, agent: str, n: int) -> float:
    """Seconds per run of ``agent`` on a live session, ``n`` runs one after another."""
    handle = runtime.session(session, agent)
    await handle.arun("warm")  # activated: the runs below are on a live session
    start = time.perf_counter()
    for _ in range(n):
        await handle.arun("x")
    return (time.perf_counter() - start) / n


async def main(n: int) -> None:
    async with Runtime.open(idle_timeout=None, max_live_sessions=10) as runtime:
        runtime.register_agent("child", lambda: new_agent_options(child_model))
        plain_tools = [Tool("plain", "", {"type": "object"}, plain)]
        runtime.register_agent(
            "plain", lambda: new_agent_options(parent_model("plain"), tools=plain_tools)
        )
        child_tools = [agent_tool("child", name="ask")]
        runtime.register_agent(
            "boss", lambda: new_agent_options(parent_model("ask"), tools=child_tools)
        )
        child = await per_run(runtime, "c", "child", n)
        plain_parent = await per_run(runtime, "p", "plain", n)
        boss = await per_run(runtime, "b", "boss", n)
    added = boss - plain_parent
    extra = added - child
    print(f"{'case':<24}{'µs/run':>10}")
    print(f"{'child run':<24}{child * 1e6:>10.0f}")
    print(f"{'parent, plain tool':<24}{plain_parent * 1e6:>10.0f}")
    print(f"{'parent, agent tool':<24}{boss * 1e6:>10.0f}")
    verdict = "ok" if extra <= child else "OVER"
    print(
        f"agent tool adds {added * 1e6:.0f} µs = child run + {extra * 1e6:.0f} µs "
        f"({extra / child:.2f} child runs) [target <= 1 child run: {verdict}]"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    asyncio.run(main(200 if args.quick else 2000))
