"""One boundary around user code: what any of it raises fails its run only, and every value
it returns either travels or fails its run with a code; the runtime serves on."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from _runtime_helpers import TIMEOUT, echo_agent

from praxo_actors import AgentError, PraxoError
from praxo_actors.agent import AgentOptions, Tool, new_agent_options
from praxo_actors.memory import InMemoryStore
from praxo_actors.middleware import Approval, structured_output
from praxo_actors.models import Request, Response, Session, ToolCall, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._session._guard import enter, fenced, text_of
from praxo_actors.testing import EventRecorder

Start = Callable[..., Runtime]


class Hostile(BaseException):
    """A BaseException of the user's own."""


def _raise(error: type[BaseException]) -> None:
    if error is pytest.fail.Exception:
        pytest.fail("from user code", pytrace=False)
    if error is pytest.skip.Exception:
        pytest.skip("from user code")
    if error is SystemExit:
        sys.exit(3)
    raise error("from user code")


BASE_EXCEPTIONS = [
    KeyboardInterrupt,
    SystemExit,
    GeneratorExit,
    Hostile,
    pytest.fail.Exception,
    pytest.skip.Exception,
]


def _json_model(request: Request) -> Response:
    return Response(message_assistant('{"x": 1}'))


def _factory_of(place: str, error: type[BaseException]) -> Callable[[], AgentOptions]:
    """An agent whose user code at ``place`` raises ``error``."""

    def raising(*_args: Any) -> Any:
        _raise(error)

    if place == "factory":
        return raising
    if place == "instructions":
        return lambda: new_agent_options(_json_model, instructions=raising)
    if place == "output_type":

        class Out(msgspec.Struct):
            x: int

            def __post_init__(self) -> None:
                _raise(error)

        return lambda: new_agent_options(_json_model, structured_output=structured_output(Out))
    if place == "approval":

        class Names(frozenset[str]):
            def __contains__(self, name: object) -> bool:
                _raise(error)
                return False

        def model(request: Request) -> Response:
            return Response(message_assistant("", [ToolCall("t", {}, id="c")]))

        tool = Tool("t", "a tool", {"type": "object"}, lambda _args: "ok")
        approval = Approval(Names({"t"}))
        return lambda: new_agent_options(model, tools=[tool], approval=approval)
    raise AssertionError(place)


@pytest.mark.parametrize("place", ["factory", "instructions", "output_type", "approval"])
@pytest.mark.parametrize("error", BASE_EXCEPTIONS, ids=lambda e: e.__name__)
def test_a_base_exception_from_user_code_fails_its_run_only(
    runtime: Start, place: str, error: type[BaseException]
) -> None:
    """A BaseException raised by an agent factory, instructions, a structured-output type or
    an approval check reaches the run's caller as itself; every session is served after it."""
    rt = runtime(agents={"default": echo_agent, "bad": _factory_of(place, error)})
    assert rt.session("other").run("before").get(timeout=TIMEOUT).output == "before"
    for _ in range(2):  # and again: nothing of the runtime was lost the first time
        with pytest.raises(error):
            rt.session("victim", agent="bad").run("x").get(timeout=TIMEOUT)
    assert rt.session("other").run("after").get(timeout=TIMEOUT).output == "after"
    assert rt.session("new").run("fresh").get(timeout=TIMEOUT).output == "fresh"
    assert rt.session("victim").run("well").get(timeout=TIMEOUT).output == "well"
    stats = rt.statistics()
    assert stats.runs_pending == 0
    assert stats.crashes == 0


@pytest.mark.parametrize("place", ["factory", "instructions", "output_type"])
def test_a_base_exception_on_scheduler_threads_fails_its_run_only(
    runtime: Start, place: str
) -> None:
    """Sessions on scheduler threads: the same boundary, the same outcome."""
    agents = {"default": echo_agent, "bad": _factory_of(place, SystemExit)}
    rt = runtime(agents=agents, scheduler_threads=2)
    with pytest.raises(SystemExit):
        rt.session("victim", agent="bad").run("x").get(timeout=TIMEOUT)
    futures = [rt.session(f"s{i}").run(f"m{i}") for i in range(5)]
    assert [f.get(timeout=TIMEOUT).output for f in futures] == [f"m{i}" for i in range(5)]
    assert rt.statistics().crashes == 0


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit, GeneratorExit])
def test_a_base_exception_from_user_code_fails_an_awaited_run(
    runtime: Start, error: type[BaseException]
) -> None:
    """Awaited, the run raises the same BaseException in the caller's task."""
    rt = runtime(agents={"default": echo_agent, "bad": _factory_of("instructions", error)})

    async def main() -> None:
        with pytest.raises(error):
            await rt.session("victim", agent="bad").arun("x")
        assert (await rt.session("other").arun("ok")).output == "ok"

    asyncio.run(main())


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit])
def test_a_base_exception_when_a_durable_run_resumes_fails_that_run_only(
    runtime: Start, error: type[BaseException]
) -> None:
    """A durable run resumed after its session crashed, whose factory then raises SystemExit:
    that run fails with it, and the runtime serves every session after it."""
    entered = threading.Event()
    calls = {"n": 0}

    async def model(request: Request) -> Response:
        entered.set()
        await asyncio.sleep(TIMEOUT)  # cut off here by the crash
        return Response(message_assistant("late"))

    def factory() -> AgentOptions:
        calls["n"] += 1
        if calls["n"] > 1:  # the session restarted: its own options are built again
            _raise(error)
        return new_agent_options(model)

    rt = runtime(store=InMemoryStore())
    rt.register_agent("default", factory, durable=True, per_session=True)
    rt.register_agent("echo", echo_agent)
    handle = rt.session("s")
    future = handle.run("x")
    assert entered.wait(TIMEOUT)
    handle.crash_for_testing()
    with pytest.raises(error):
        future.get(timeout=TIMEOUT)
    assert calls["n"] == 2
    assert rt.session("t", agent="echo").run("ok").get(timeout=TIMEOUT).output == "ok"
    assert rt.session("s", agent="echo").run("ok").get(timeout=TIMEOUT).output == "ok"
    assert rt.statistics().runs_pending == 0


def _deep(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _cyclic() -> Any:
    value: list[Any] = []
    value.append(value)
    return value


def _unencodable_model(where: str, kind: str) -> Callable[[Request], Response]:
    def model(request: Request) -> Response:
        value = _deep(5000) if kind == "deep" else _cyclic()
        if where == "arguments":
            return Response(message_assistant("", [ToolCall("t", {"a": value}, id="c")]))
        return Response(message_assistant("x"), usage={"a": value})

    return model


@pytest.mark.parametrize("durable", [False, True])
@pytest.mark.parametrize("kind", ["deep", "cyclic"])
@pytest.mark.parametrize("where", ["arguments", "usage"])
@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_model_answer_that_cannot_be_encoded_is_model_bad_response(
    runtime: Start, where: str, kind: str, flavour: str, durable: bool
) -> None:
    """A model answer nested 5,000 deep, or cyclic, fails its run with MODEL_BAD_RESPONSE; the
    session's next run is served."""
    model = _unencodable_model(where, kind)

    async def amodel(request: Request) -> Response:
        return model(request)

    tool = Tool("t", "a tool", {"type": "object"}, lambda _args: "ok")
    chosen = amodel if flavour == "async" else model
    rt = runtime()
    rt.register_agent("bad", lambda: new_agent_options(chosen, tools=[tool]), durable=durable)
    rt.register_agent("default", echo_agent)
    rt.events.subscribe(lambda _event: None, pattern="*")  # events are built and published
    with pytest.raises(AgentError) as info:
        rt.session("s", agent="bad").run("x").get(timeout=TIMEOUT)
    assert info.value.code == "MODEL_BAD_RESPONSE"
    assert rt.session("s").run("next").get(timeout=TIMEOUT).output == "next"
    assert rt.statistics().runs_pending == 0


@pytest.mark.parametrize("depth", [600, 990])
def test_a_model_answer_nested_deeper_than_json_is_model_bad_response(
    runtime: Start, depth: int
) -> None:
    """Arguments nested deeper than JSON's 512 levels, which may encode on the model's thread
    yet not decode on the session's, fail the run with MODEL_BAD_RESPONSE; no session crashes."""

    def model(request: Request) -> Response:
        return Response(message_assistant("", [ToolCall("t", {"a": _deep(depth)}, id="c")]))

    tool = Tool("t", "a tool", {"type": "object"}, lambda _args: "ok")
    rt = runtime(agents={"default": echo_agent})
    rt.register_agent("bad", lambda: new_agent_options(model, tools=[tool]), durable=True)
    with pytest.raises(AgentError) as info:
        rt.session("s", agent="bad").run("x").get(timeout=TIMEOUT)
    assert info.value.code == "MODEL_BAD_RESPONSE"
    assert rt.session("s").run("next").get(timeout=TIMEOUT).output == "next"
    assert rt.statistics().crashes == 0


@pytest.mark.parametrize("durable", [False, True])
@pytest.mark.parametrize("kind", ["deep", "cyclic"])
@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_tool_result_that_cannot_be_encoded_fails_with_a_type_error(
    runtime: Start, kind: str, flavour: str, durable: bool
) -> None:
    """A tool result nested 5,000 deep, or cyclic, fails its run with TypeError; the session's
    next run is served."""

    def handler(_args: dict[str, Any]) -> Any:
        return _deep(5000) if kind == "deep" else _cyclic()

    async def ahandler(args: dict[str, Any]) -> Any:
        return handler(args)

    def model(request: Request) -> Response:
        if request.messages[-1].role == "tool":
            return Response(message_assistant("done"))
        return Response(message_assistant("", [ToolCall("t", {}, id="c")]))

    tool = Tool("t", "a tool", {"type": "object"}, ahandler if flavour == "async" else handler)
    rt = runtime()
    rt.register_agent("bad", lambda: new_agent_options(model, tools=[tool]), durable=durable)
    rt.register_agent("default", echo_agent)
    with pytest.raises(TypeError, match="not JSON"):
        rt.session("s", agent="bad").run("x").get(timeout=TIMEOUT)
    assert rt.session("s").run("next").get(timeout=TIMEOUT).output == "next"
    assert rt.statistics().runs_pending == 0


def test_an_exception_whose_text_raises_still_fails_its_run(runtime: Start) -> None:
    """A callback's exception whose ``str`` raises reaches the caller unchanged."""

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise SystemExit("no text")

    raised: list[BaseException] = []

    def model(request: Request) -> Response:
        raised.append(Unprintable())
        raise raised[-1]

    rt = runtime(agents={"default": echo_agent, "bad": lambda: new_agent_options(model)})
    with pytest.raises(Unprintable) as info:
        rt.session("s", agent="bad").run("x").get(timeout=TIMEOUT)
    assert info.value is raised[0]
    assert rt.session("s").run("ok").get(timeout=TIMEOUT).output == "ok"
    assert rt.statistics().runs_pending == 0


def test_the_session_of_a_failed_run_keeps_its_history(runtime: Start) -> None:
    """A run failed at the boundary commits nothing: the session is as it was."""
    rt = runtime(agents={"default": echo_agent, "bad": _factory_of("instructions", SystemExit)})
    rt.session("s").run("kept").get(timeout=TIMEOUT)
    with pytest.raises(SystemExit):
        rt.session("s", agent="bad").run("x").get(timeout=TIMEOUT)
    assert [m.content for m in rt.session("s").history()] == ["kept", "kept"]
    assert isinstance(rt.session("s").history(), list)
    assert Session("s").id == "s"


@pytest.mark.parametrize("place", ["instructions", "output_type", "approval"])
def test_a_run_ended_by_a_base_exception_publishes_run_failed(runtime: Start, place: str) -> None:
    """Subscribers see the run end: its events close with run.failed, numbered on from the
    last, with the exception's type in its message."""
    rt = runtime(agents={"bad": _factory_of(place, KeyboardInterrupt)})
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="*")
    with pytest.raises(KeyboardInterrupt):
        rt.session("s", agent="bad").run("x").get(timeout=TIMEOUT)
    failed = recorder.wait_for("run.failed", TIMEOUT)
    assert failed.data["code"] == "AGENT_CALLBACK_EXCEPTION"
    assert failed.data["message"].startswith("KeyboardInterrupt")
    types = recorder.types()
    assert types[0] == "run.started" and types[-1] == "run.failed"
    assert types.count("run.failed") == 1
    assert [e.seq for e in recorder.events] == list(range(len(types)))


def test_enter_returns_every_outcome_as_a_value() -> None:
    """The boundary returns a value, an Exception and a BaseException alike, raising none."""
    assert enter(lambda a, b: a + b, 1, 2) == (True, 3)
    for error in (ValueError("v"), KeyboardInterrupt(), SystemExit(3), GeneratorExit()):

        def raising(error: BaseException = error) -> None:
            raise error

        assert enter(raising) == (False, error)


def test_fenced_turns_a_base_exception_into_a_crash_of_one_session() -> None:
    """A BaseException that reached a session handler becomes SESSION_CRASHED, caused by it;
    an Exception stays itself."""
    stop = SystemExit(3)
    crash = fenced(stop)
    assert isinstance(crash, PraxoError) and crash.code == "SESSION_CRASHED"
    assert crash.__cause__ is stop
    error = ValueError("v")
    assert fenced(error) is error


def test_text_of_survives_an_exception_whose_text_raises() -> None:
    """The text of an exception whose __str__ raises names its type."""

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise KeyboardInterrupt

    assert text_of(ValueError("v")) == "ValueError: v"
    assert text_of(Unprintable()).startswith("Unprintable: ")


@pytest.mark.parametrize("place", ["factory", "instructions", "output_type"])
def test_a_base_exception_on_the_callers_loop_reaches_the_awaiting_task(place: str) -> None:
    """Runtime.open: the session runs on the caller's loop, yet the SystemExit is raised only
    in the task that awaits the run; the loop and the runtime serve on."""

    async def main() -> None:
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as rt:
            rt.register_agent("default", echo_agent)
            rt.register_agent("bad", _factory_of(place, SystemExit))
            with pytest.raises(SystemExit):
                await rt.session("victim", agent="bad").arun("x")
            assert (await rt.session("other").arun("ok")).output == "ok"
            assert (await rt.session("victim").arun("well")).output == "well"
            assert rt.statistics().crashes == 0

    asyncio.run(main())


def test_a_base_exception_past_the_guard_crashes_one_session_only(
    runtime: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last line: a BaseException that still reaches a session handler (here, forced in
    reading a callback's outcome) crashes that session alone; the runtime serves on."""
    from praxo_actors.runtime._session import _session

    real = _session.unpack

    def unpack(data: Any, carried: Any, *more: Any) -> tuple[bool, Any]:
        if carried == "explode":
            raise KeyboardInterrupt("past the guard")
        return real(data, carried, *more)

    monkeypatch.setattr(_session, "unpack", unpack)

    def model(request: Request) -> Response:
        return Response(message_assistant("x", [ToolCall("t", {}, id="c")]))

    class Explode:  # not JSON: rides beside the message, where the forced failure finds it
        def __eq__(self, other: object) -> bool:
            return other == "explode"

        __hash__ = object.__hash__

    tool = Tool("t", "a tool", {"type": "object"}, lambda _args: Explode())
    rt = runtime(agents={"default": echo_agent})
    rt.register_agent("bad", lambda: new_agent_options(model, tools=[tool]))
    with pytest.raises(AgentError) as info:
        rt.session("s", agent="bad").run("x").get(timeout=TIMEOUT)
    assert info.value.code == "SESSION_CRASHED"
    assert rt.session("other").run("ok").get(timeout=TIMEOUT).output == "ok"
    assert rt.session("s").run("again").get(timeout=TIMEOUT).output == "again"
    assert rt.statistics().crashes == 1
