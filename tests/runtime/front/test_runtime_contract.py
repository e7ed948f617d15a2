"""Every blocking method has a coroutine twin, ``resume`` never blocks, and the router's state
is read only on the runtime's loop."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, echo_agent, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.cluster import ClusterSession
from praxo_actors.middleware import require_approval
from praxo_actors.models import Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import AgentSession, AwaitableRun, Runtime, SessionHandle

Start = Callable[..., Runtime]


def _model(request: Request) -> Response:
    if request.step == 1:
        return Response(message_assistant("", [ToolCall("send", {"to": "ada"}, id="c1")]))
    return Response(message_assistant(f"result: {request.messages[-1].content}"))


def approving() -> AgentOptions:
    """An agent whose ``send`` tool waits for a person's approval."""
    tool = Tool("send", "", {}, lambda args: f"sent to {args['to']}")
    return new_agent_options(_model, tools=[tool], approval=require_approval(["send"]))


TWINS = {
    Runtime: {
        "inspect": "ainspect",
        "sessions": "asessions",
        "resume_pending": "aresume_pending",
        "statistics": "astatistics",
        "stop": "astop",
        "start": "astart",
    },
    SessionHandle: {
        "run": "arun",
        "resume": "aresume",
        "history": "ahistory",
        "passivate": "apassivate",
        "stop": "astop",
    },
}


@pytest.mark.parametrize("cls", list(TWINS))
def test_every_blocking_method_has_a_coroutine_twin(cls: type) -> None:
    """Each method that waits on the loop has an ``a``-named coroutine twin."""
    for blocking, twin in TWINS[cls].items():
        assert callable(getattr(cls, blocking))
        assert inspect.iscoroutinefunction(getattr(cls, twin)), f"{cls.__name__}.{twin}"


def test_resume_on_the_runtimes_loop_returns_a_future_at_once() -> None:
    """On the runtime's own loop ``resume`` gives a future (no RUNTIME_BLOCKING_CALL)."""

    async def main() -> tuple[str, str, str]:
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", approving)
            handle = rt.session("s")
            stopped = await handle.arun("mail ada")
            future = handle.resume(True)
            done = await future
            again = handle.resume(True)
            with pytest.raises(PraxoError) as info:
                await again
            return done.run_id == stopped.run_id == future.run_id, done.status, info.value.code

    same, status, code = asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    assert (same, status, code) == (True, "completed", "SESSION_NOT_INTERRUPTED")


def test_a_run_after_a_resume_waits_behind_it(runtime: Start) -> None:
    """A run given right after a resume reaches the session after it, seeing its messages."""
    rt = runtime(agents={"default": approving})
    handle = rt.session("s")
    stopped = handle.run("mail ada").get(timeout=TIMEOUT)
    resumed = handle.resume(True)
    after = handle.run("mail ada again")
    assert resumed.get(timeout=TIMEOUT).run_id == stopped.run_id
    second = after.get(timeout=TIMEOUT)
    assert second.status == "interrupted"  # it asked again, after the first completed
    assert [m.content for m in second.session.messages if m.role == "user"] == [
        "mail ada",
        "mail ada again",
    ]


def test_a_resume_of_a_passivated_session_finds_its_run(runtime: Start) -> None:
    """A resume of a session only in the store finds its interrupted run there."""
    rt = runtime(agents={"default": approving})
    handle = rt.session("s")
    stopped = handle.run("mail ada").get(timeout=TIMEOUT)
    assert handle.passivate(timeout=TIMEOUT) and not handle.live
    done = handle.resume(True).get(timeout=TIMEOUT)
    assert done.run_id == stopped.run_id and done.output == 'result: "sent to ada"'


def test_resume_refuses_a_bad_timeout(runtime: Start) -> None:
    """A resume's lookup timeout must be a positive number."""
    rt = runtime(agents={"default": approving})
    for bad in (0, -1.0, float("nan"), True):
        with pytest.raises(PraxoError) as info:
            rt.session("s").resume(True, timeout=bad)
        assert info.value.code == "RUNTIME_INVALID_INPUT"
    assert error_code(rt.session("s").resume(True, timeout=TIMEOUT)) == "SESSION_NOT_INTERRUPTED"


def test_the_coroutine_twins_work_on_the_runtimes_loop() -> None:
    """apassivate, astop, astatistics and aresume_pending work on the runtime's own loop."""

    async def main() -> list[Any]:
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", echo_agent)
            handle = rt.session("s")
            await handle.arun("hi")
            passivated = await handle.apassivate(TIMEOUT)
            again = await handle.apassivate(TIMEOUT)  # not live any more
            await handle.arun("hi again")
            stopped = await handle.astop(TIMEOUT)
            stats = await rt.astatistics()
            pending = await rt.aresume_pending()
            return [passivated, again, stopped, handle.live, stats.runs_completed, pending]

    assert asyncio.run(asyncio.wait_for(main(), TIMEOUT)) == [True, False, True, False, 2, 0]


def test_the_coroutine_twins_work_from_another_loop(runtime: Start) -> None:
    """The twins await a runtime that runs its own loop thread without blocking the caller's."""
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s")

    async def main() -> list[Any]:
        await handle.arun("hi")
        stats = await rt.astatistics()
        info = await rt.ainspect("s")
        return [stats.runs_completed, info.state, await handle.apassivate(TIMEOUT)]

    assert asyncio.run(asyncio.wait_for(main(), TIMEOUT)) == [1, "live", True]


class _Watched(dict[str, Any]):
    """The router's live sessions, noting the thread of every read."""

    def __init__(self, live: dict[str, Any]) -> None:
        super().__init__(live)
        self.readers: set[int] = set()

    def __contains__(self, key: object) -> bool:
        self.readers.add(threading.get_ident())
        return super().__contains__(key)

    def __iter__(self) -> Any:
        self.readers.add(threading.get_ident())
        return super().__iter__()


def test_live_and_sessions_read_the_kernel_on_its_loop(runtime: Start) -> None:
    """``handle.live``, ``inspect`` and ``sessions`` from a thread ask the loop to read it."""
    rt = runtime(agents={"default": echo_agent})
    rt.session("s").run("hi").get(timeout=TIMEOUT)
    rt.session("t").run("hi").get(timeout=TIMEOUT)
    assert rt.session("t").passivate(timeout=TIMEOUT)
    watched = _Watched(rt._kernel.table.live)
    loop_thread = rt._host.loop_thread_id

    def swap() -> None:
        rt._kernel.table.live = watched

    rt._call(swap, timeout=TIMEOUT)
    assert rt.session("s").live and not rt.session("t").live
    assert [i.id for i in rt.sessions()] == ["s", "t"]
    assert rt.inspect("s").state == "live"
    assert watched.readers == {loop_thread}


def test_both_sessions_satisfy_the_agent_session_protocol(runtime: Start) -> None:
    """A runtime's handle, its futures and a cluster's session are ``AgentSession``s."""
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s")
    assert isinstance(handle, AgentSession)
    future = handle.run("hi")
    assert isinstance(future, AwaitableRun)
    assert future.get(timeout=TIMEOUT).output == "hi"
    cluster_session = ClusterSession(None, "s", "default")  # type: ignore[arg-type]
    assert isinstance(cluster_session, AgentSession)
    assert not isinstance(object(), AgentSession)
    protocol = {n for n in dir(AgentSession) if not n.startswith("_")}
    assert {"run", "arun", "resume", "aresume", "result", "history", "ahistory"} <= protocol
    for cls in (SessionHandle, ClusterSession):
        for name in protocol - {"id", "agent"}:
            method = getattr(cls, name)
            assert inspect.iscoroutinefunction(method) == name.startswith("a"), (cls, name)
