"""One MCPTools shared by every session of a runtime: concurrent calls, and a call across loops."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from _mcp_models import session_echo_model, tool_text
from conftest import TIMEOUT

from praxo_actors.agent import new_agent_options
from praxo_actors.mcp import MCPTools
from praxo_actors.runtime import Runtime

Open = Callable[..., MCPTools]
SESSIONS = 24


def test_many_sessions_share_one_client(open_tools: Open) -> None:
    """Concurrent runs of many sessions call one client; each gets its own answer back."""

    async def main() -> None:
        async with open_tools() as mcp, Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent(
                "default", lambda: new_agent_options(session_echo_model(), tools=mcp.tools)
            )
            results = await asyncio.gather(
                *(rt.session(f"s{i}").arun(f"say s{i}") for i in range(SESSIONS))
            )
        for i, result in enumerate(results):
            assert result.output == f"server said: s{i}"
            (tool_message,) = [m for m in result.session.messages if m.role == "tool"]
            assert tool_text(tool_message.content) == f"s{i}"

    asyncio.run(main())


def test_a_runtime_on_its_own_loop_calls_the_client_on_another(open_tools: Open) -> None:
    """Runtime.start's loop thread sends the call to the loop the client was opened on."""

    async def main() -> None:
        async with open_tools() as mcp:
            rt = Runtime.start(idle_timeout=None, timeout=TIMEOUT)
            try:
                rt.register_agent(
                    "default", lambda: new_agent_options(session_echo_model(), tools=mcp.tools)
                )
                futures = [rt.session(f"t{i}").run(f"say t{i}") for i in range(4)]
                results = [await asyncio.to_thread(f.get, timeout=TIMEOUT) for f in futures]
            finally:
                await asyncio.to_thread(rt.stop)
        assert [r.output for r in results] == [f"server said: t{i}" for i in range(4)]

    asyncio.run(main())
