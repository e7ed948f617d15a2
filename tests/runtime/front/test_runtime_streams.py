"""A run's own stream (``handle.astream``) and submit-then-poll (``submit``, ``result``)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors import AgentError, PraxoError
from praxo_actors.agent import AgentOptions, model_context, new_agent_options
from praxo_actors.models import ModelError, Request, Response, message_assistant
from praxo_actors.runtime import RunStream, Runtime

Start = Callable[..., Runtime]


def chatty(deltas: int) -> Callable[[], AgentOptions]:
    """Options whose model streams ``deltas`` pieces of text, then answers ``"done"``."""

    async def model(request: Request) -> Response:
        context = model_context()
        assert context is not None
        for i in range(deltas):
            context.delta(f"t{i} ")
        return Response(message_assistant("done"))

    return lambda: new_agent_options(model)


class Hang:
    """An async model that waits until released (or cancelled), signalling that it entered."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.cancelled = threading.Event()
        self.calls = 0

    async def __call__(self, request: Request) -> Response:
        self.calls += 1
        self.entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("released")


def test_a_stream_holds_its_runs_events_deltas_included_and_ends(runtime: Start) -> None:
    """The stream gives its run's events in order (deltas too), ends after run.completed,
    and its result is the run's; another session's run is not in it."""
    rt = runtime(agents={"default": chatty(3)})

    async def main() -> tuple[RunStream, list[str], str]:
        other = rt.session("other").arun("x")
        stream = rt.session("s").astream("hi")
        types = [event.type async for event in stream]
        result = await stream.result()
        await other
        return stream, types, result.output

    stream, types, output = asyncio.run(main())
    assert types == [
        "run.started",
        "model.requested",
        "model.delta",
        "model.delta",
        "model.delta",
        "model.responded",
        "run.completed",
    ]
    assert output == "done" and stream.dropped == 0
    assert stream.run_id.startswith("run_")


def test_a_failed_runs_stream_ends_with_run_failed_and_result_raises(runtime: Start) -> None:
    """A model error ends the stream with run.failed; result() raises the run's code."""

    def broken() -> AgentOptions:
        return new_agent_options(lambda _r: ModelError("MODEL_DOWN", "down"))

    rt = runtime(agents={"default": broken})

    async def main() -> tuple[list[str], str]:
        stream = rt.session("s").astream("hi")
        types = [event.type async for event in stream]
        with pytest.raises(AgentError) as info:
            await stream.result()
        return types, info.value.code

    types, code = asyncio.run(main())
    assert types[-1] == "run.failed" and code == "MODEL_DOWN"


def test_a_refused_runs_stream_ends_without_events(runtime: Start) -> None:
    """A run refused at admission has no events: its stream still ends, and result raises."""
    hang = Hang()
    rt = runtime(agents={"default": lambda: new_agent_options(hang)}, on_busy="reject")

    async def main() -> tuple[list[str], str]:
        first = rt.session("s").run("a")
        assert await asyncio.to_thread(hang.entered.wait, TIMEOUT)
        stream = rt.session("s").astream("b")
        async with asyncio.timeout(TIMEOUT):
            types = [event.type async for event in stream]
        with pytest.raises(PraxoError) as info:
            await stream.result()
        first.cancel()
        return types, info.value.code

    types, code = asyncio.run(main())
    assert types == [] and code == "SESSION_BUSY"


def test_a_reader_that_falls_behind_loses_the_newest_events_not_the_end(runtime: Start) -> None:
    """Unread, the stream keeps ``buffer`` events and the terminal one; the rest are counted."""
    rt = runtime(agents={"default": chatty(50)})

    async def main() -> tuple[list[str], int, str]:
        stream = rt.session("s").astream("hi", buffer=4)
        result = await stream.result()  # the run ends though nobody reads
        # Events reach the stream from the bus, after the result: read once the last is in.
        async with asyncio.timeout(30):
            while not stream._terminal:
                await asyncio.sleep(0)
        types = [event.type async for event in stream]
        return types, stream.dropped, result.output

    types, dropped, output = asyncio.run(main())
    assert output == "done"
    assert types == [
        "run.started",
        "model.requested",
        "model.delta",
        "model.delta",
        "run.completed",
    ]
    assert dropped == 50 - 2 + 1  # 48 deltas and model.responded


def test_cancelling_the_reader_cancels_the_run(runtime: Start) -> None:
    """The task iterating the stream is cancelled: the run fails AGENT_CANCELLED at once."""
    hang = Hang()
    rt = runtime(agents={"default": lambda: new_agent_options(hang)})

    async def main() -> str:
        stream = rt.session("s").astream("hi")
        seen = asyncio.Event()

        async def read() -> None:
            async for event in stream:
                if event.type == "model.requested":
                    seen.set()

        task = asyncio.create_task(read())
        async with asyncio.timeout(TIMEOUT):
            await seen.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(AgentError) as info:
            async with asyncio.timeout(TIMEOUT):
                await stream.result()
        return info.value.code

    assert asyncio.run(main()) == "AGENT_CANCELLED"
    assert hang.cancelled.wait(TIMEOUT)


def test_astream_checks_its_input(runtime: Start) -> None:
    """A non-str input or a bad buffer is refused with a code, before anything runs."""
    rt = runtime(agents={"default": echo_agent})

    async def main() -> list[str]:
        codes = []
        for kwargs in ({"input": 1}, {"input": "x", "buffer": 0}, {"input": "x", "deadline": -1}):
            with pytest.raises(PraxoError) as info:
                rt.session("s").astream(**kwargs)  # type: ignore[arg-type]
            codes.append(info.value.code)
        return codes

    assert asyncio.run(main()) == [
        "RUNTIME_INVALID_INPUT",
        "EVENTS_INVALID_SUBSCRIPTION",
        "RUNTIME_INVALID_INPUT",
    ]
    assert rt.statistics().subscriptions == 0


def test_submit_returns_the_run_id_and_result_polls_it(runtime: Start) -> None:
    """submit gives the id at once; result(timeout=0) says it is running, then gives it."""
    hang = Hang()
    rt = runtime(agents={"default": echo_agent, "hang": lambda: new_agent_options(hang)})
    handle = rt.session("s")
    run_id = handle.submit("hello")
    assert handle.result(run_id, timeout=TIMEOUT).output == "hello"
    assert handle.result(run_id, timeout=0).output == "hello"  # kept
    slow = rt.session("t", "hang")
    slow_id = slow.submit("x")
    assert hang.entered.wait(TIMEOUT)
    with pytest.raises(PraxoError) as info:
        slow.result(slow_id, timeout=0)
    assert info.value.code == "RUNTIME_TIMEOUT"
    with pytest.raises(PraxoError) as info:
        handle.result("run_unknown", timeout=0)
    assert info.value.code == "RUNTIME_UNKNOWN_RUN"
    slow.stop()


def test_a_submitted_run_refused_at_admission_is_polled_as_its_refusal(runtime: Start) -> None:
    """A submitted run refused with SESSION_BUSY is never stored; result still raises the
    refusal, not RUNTIME_UNKNOWN_RUN."""
    hang = Hang()
    rt = runtime(agents={"default": lambda: new_agent_options(hang)}, on_busy="reject")
    handle = rt.session("s")
    handle.submit("a")
    assert hang.entered.wait(TIMEOUT)
    refused_id = handle.submit("b")
    with pytest.raises(PraxoError) as info:
        handle.result(refused_id, timeout=TIMEOUT)
    assert info.value.code == "SESSION_BUSY"
    handle.stop()


def test_aresult_works_under_runtime_open(tmp_path: Path) -> None:
    """On the runtime's own loop, result() would block it: aresult gives the same answer."""

    async def main() -> tuple[str, str, str]:
        async with Runtime.open(tmp_path / "s.sqlite3", idle_timeout=None) as rt:
            rt.register_agent("default", echo_agent)
            rt.register_agent("durable", echo_agent, durable=True)
            handle = rt.session("s")
            run_id = handle.submit("one")
            with pytest.raises(PraxoError) as info:
                handle.result(run_id, timeout=0)
            durable = rt.session("d", "durable")
            with pytest.raises(PraxoError) as blocked:
                durable.submit("x")
            durable_id = await durable.asubmit("two")
            first = (await handle.aresult(run_id, timeout=TIMEOUT)).output
            second = (await durable.aresult(durable_id, timeout=TIMEOUT)).output
            return info.value.code + "/" + blocked.value.code, first, second

    codes, first, second = asyncio.run(main())
    assert codes == "RUNTIME_BLOCKING_CALL/RUNTIME_BLOCKING_CALL"
    assert (first, second) == ("one", "two")


def test_a_submitted_durable_run_is_journaled_before_its_id_is_returned(tmp_path: Path) -> None:
    """Cut off in its first model call, before any effect, the run resumes in the next process
    under the id submit gave (before, nothing was journaled until the first effect ended)."""
    path = tmp_path / "s.sqlite3"
    hang = Hang()
    rt = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT)
    try:
        rt.register_agent("default", lambda: new_agent_options(hang), durable=True)
        run_id = rt.session("s").submit("go")
        assert hang.entered.wait(TIMEOUT)
    finally:
        rt.stop()
    again = Runtime.start(path, idle_timeout=None, timeout=TIMEOUT, resume=True)
    try:
        again.register_agent("default", echo_agent, durable=True)
        assert again.session("s").result(run_id, timeout=TIMEOUT).output == "go"
    finally:
        again.stop()
    assert hang.calls == 1


def test_result_refuses_a_bad_timeout(runtime: Start) -> None:
    """A negative or non-number timeout is RUNTIME_INVALID_INPUT."""
    rt = runtime(agents={"default": echo_agent})
    for timeout in (-1, "1", True):
        with pytest.raises(PraxoError) as info:
            rt.session("s").result("run_x", timeout=timeout)  # type: ignore[arg-type]
        assert info.value.code == "RUNTIME_INVALID_INPUT"
