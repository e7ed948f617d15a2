"""One thread owns the kernel: its state is reached only on the runtime's loop."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from _runtime_helpers import TIMEOUT

from praxo_actors import PraxoError
from praxo_actors.actors import _checks
from praxo_actors.agent import AgentOptions, new_agent_options
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime, agent_tool

Start = Callable[..., Runtime]


def answering(text: str) -> Callable[[], AgentOptions]:
    """An agent that answers ``text`` to anything."""
    return lambda: new_agent_options(lambda _request: Response(message_assistant(text)))


def asking(agent: str) -> Callable[[], AgentOptions]:
    """An agent that asks agent ``agent`` through an agent tool, then answers what it heard."""

    def model(request: Request) -> Response:
        last = request.messages[-1]
        if last.role == "tool":
            return Response(message_assistant(f"heard {last.content}"))
        return Response(message_assistant("", [ToolCall(agent, {"input": "hi"}, id="c1")]))

    return lambda: new_agent_options(model, tools=[agent_tool(agent)])


def test_a_kernel_method_called_off_its_loop_is_refused_and_reported(runtime: Start) -> None:
    """With the debug checks on, a kernel entry from the caller's thread raises and is kept."""
    rt = runtime()
    with pytest.raises(AssertionError, match=r"Kernel\.is_live"):
        rt._kernel.is_live("s")
    broken = _checks.take_violations()
    assert len(broken) == 1 and "not its loop's" in broken[0]
    assert rt._kernel.call(rt._kernel.is_live, "s", timeout=TIMEOUT) is False


def test_the_agent_registry_is_written_only_on_the_loop(runtime: Start) -> None:
    """A registration goes through the loop; a write from another thread is refused."""
    rt = runtime()
    with pytest.raises(AssertionError, match=r"Agents\.register"):
        rt._kernel.agents.register("direct", answering("no"))
    assert len(_checks.take_violations()) == 1
    assert "direct" not in rt._kernel.agents
    registered = threading.Thread(target=rt.register_agent, args=("a", answering("from a")))
    registered.start()
    registered.join(TIMEOUT)
    assert rt.session("s", "a").run("x").get(timeout=TIMEOUT).output == "from a"


def test_a_coroutine_on_the_runtimes_loop_registers_agents() -> None:
    """``register_agent`` on the runtime's own loop registers at once."""

    async def main() -> str:
        async with Runtime.open(timeout=TIMEOUT, idle_timeout=None) as rt:
            rt.register_agent("a", answering("on the loop"))
            return (await rt.session("s", "a").arun("x")).output

    assert asyncio.run(main()) == "on the loop"


def test_a_registration_replaced_is_seen_whole(runtime: Start) -> None:
    """Replacing an agent publishes its factory and its flags together."""
    rt = runtime()
    rt.register_agent("a", answering("one"), durable=False)
    first = rt._kernel.agents.view()
    rt.register_agent("a", answering("two"), durable=True)
    second = rt._kernel.agents.view()
    assert "a" not in first.durable and "a" in second.durable
    assert first.factories["a"] is not second.factories["a"]
    assert rt.session("s", "a").run("x").get(timeout=TIMEOUT).output == "two"


def test_an_agent_tool_runs_its_child_on_the_runtime_of_its_own_run(runtime: Start) -> None:
    """Two runtimes with the same agents: each parent's child runs on its parent's runtime."""
    first = runtime(agents={"child": answering("first"), "parent": asking("child")})
    second = runtime(agents={"child": answering("second"), "parent": asking("child")})
    a = first.session("p", "parent").run("go")
    b = second.session("p", "parent").run("go")
    assert a.get(timeout=TIMEOUT).output == "heard first"
    assert b.get(timeout=TIMEOUT).output == "heard second"


def test_the_debug_checks_are_off_by_default(tmp_path: Path) -> None:
    """Without ``PRAXO_DEBUG_CHECKS`` nothing is checked and no kernel method is wrapped."""
    env = {k: v for k, v in os.environ.items() if k != "PRAXO_DEBUG_CHECKS"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    code = (
        "import json\n"
        "from praxo_actors.actors import _checks\n"
        "from praxo_actors.runtime._kernel._kernel import Kernel\n"
        "print(json.dumps([_checks.enabled(), hasattr(Kernel.is_live, '__wrapped__')]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=tmp_path,
    )
    assert json.loads(out.stdout) == [False, False]


def test_a_stream_whose_runtime_stops_mid_run_ends(runtime: Start) -> None:
    """A run's stream asks the loop for the bus as it ends: after a stop it ends all the same,
    and its result raises ``RUNTIME_STOPPED``."""
    entered = threading.Event()

    async def hang(_request: Request) -> Response:
        entered.set()
        await asyncio.Event().wait()
        raise AssertionError("never released")

    rt = runtime(agents={"default": lambda: new_agent_options(hang)})

    async def main() -> tuple[list[str], str]:
        stream = rt.session("s").astream("x")
        assert await asyncio.to_thread(entered.wait, TIMEOUT)
        await asyncio.to_thread(rt.stop)
        async with asyncio.timeout(TIMEOUT):
            types = [event.type async for event in stream]
            with pytest.raises(PraxoError) as info:
                await stream.result()
        return types, info.value.code

    types, code = asyncio.run(main())
    assert "run.completed" not in types and code == "RUNTIME_STOPPED"
