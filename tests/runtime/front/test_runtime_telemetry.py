"""OpenTelemetry for runs the runtime hosts, and the runtime's own metrics."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _otel import Recorded, points
from _runtime_helpers import TIMEOUT, echo_agent, error_code

from praxo_actors import PraxoError
from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.models import ModelError, ToolCall
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EchoModel, ScriptedModel
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """Return in-memory providers, shut down after the test."""
    recorded = Recorded()
    yield recorded
    recorded.shutdown()


def test_hosted_runs_are_traced_under_the_agent_name(runtime: Start, otel: Recorded) -> None:
    """A hosted run is an invoke_agent span named after its registered agent and session."""
    rt = runtime(agents={"echo": echo_agent}, tracer_provider=otel.tracer_provider)
    result = rt.session("s-7", agent="echo").run("hello").get(timeout=TIMEOUT)
    eventually(lambda: len(otel.spans()) == 2)
    chat, run = otel.spans()
    assert (chat.name, run.name) == ("chat EchoModel", "invoke_agent echo")
    assert run.attributes is not None
    assert run.attributes["gen_ai.conversation.id"] == "s-7"
    assert run.attributes["praxo.run.id"] == result.run_id
    assert chat.parent is not None and chat.parent.span_id == run.context.span_id


def test_an_agent_keeps_its_own_provider_and_name(runtime: Start, otel: Recorded) -> None:
    """Options with their own provider and name are not overridden by the runtime's."""
    own = Recorded()
    try:
        rt = runtime(
            agents={
                "echo": lambda: new_agent_options(
                    EchoModel(), name="mine", tracer_provider=own.tracer_provider
                )
            },
            tracer_provider=otel.tracer_provider,
        )
        rt.session("s", agent="echo").run("hi").get(timeout=TIMEOUT)
        eventually(lambda: len(own.spans()) == 2)
        assert own.names() == ["chat EchoModel", "invoke_agent mine"]
        assert otel.spans() == []
    finally:
        own.shutdown()


def test_a_tool_span_covers_the_callback_on_the_io_pool(runtime: Start, otel: Recorded) -> None:
    """A sync tool runs on the I/O pool; its span is open until its result is back."""
    gate, entered = threading.Event(), threading.Event()

    def hold(_arguments: dict[str, Any]) -> str:
        entered.set()
        gate.wait(TIMEOUT)
        return "held"

    def agent() -> Any:
        model = ScriptedModel([ToolCall("hold", {}, id="h1"), "done"])
        return new_agent_options(model, tools=[Tool("hold", "", {}, hold)])

    rt = runtime(agents={"worker": agent}, tracer_provider=otel.tracer_provider)
    future = rt.session("s", agent="worker").run("go")
    assert entered.wait(TIMEOUT)
    assert otel.names() == ["chat ScriptedModel"]  # the tool's span has not ended
    gate.set()
    future.get(timeout=TIMEOUT)
    eventually(lambda: len(otel.spans()) == 4)
    tool = otel.span("execute_tool hold")
    assert tool.attributes is not None and tool.attributes["gen_ai.tool.call.id"] == "h1"
    assert tool.parent is not None
    assert tool.parent.span_id == otel.span("invoke_agent worker").context.span_id


def test_a_hosted_call_refused_for_its_arguments_has_a_failed_span(
    runtime: Start, otel: Recorded
) -> None:
    """Under the session actor too, a refused call gets its execute_tool span."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    ran: list[Any] = []

    def agent() -> Any:
        model = ScriptedModel([ToolCall("count", {"n": "x"}, id="k1"), "done"])
        return new_agent_options(model, tools=[Tool("count", "", schema, ran.append)])

    rt = runtime(agents={"worker": agent}, tracer_provider=otel.tracer_provider)
    assert rt.session("s", agent="worker").run("go").get(timeout=TIMEOUT).output == "done"
    eventually(lambda: len(otel.spans()) == 4)
    tool = otel.span("execute_tool count")
    assert ran == [] and tool.attributes is not None
    assert tool.attributes["error.type"] == "TOOL_CALL_INVALID_ARGUMENTS"
    assert tool.attributes["gen_ai.tool.call.id"] == "k1"
    assert tool.parent is not None
    assert tool.parent.span_id == otel.span("invoke_agent worker").context.span_id


def test_a_crashed_run_ends_its_spans(runtime: Start, otel: Recorded) -> None:
    """A run abandoned by a session crash still ends its spans, marked as errors."""
    entered = threading.Event()
    gate = threading.Event()

    def hold(_arguments: dict[str, Any]) -> str:
        entered.set()
        gate.wait(TIMEOUT)
        return "late"

    def agent() -> Any:
        model = ScriptedModel([ToolCall("hold", {}), "never"])
        return new_agent_options(model, tools=[Tool("hold", "", {}, hold)])

    rt = runtime(agents={"worker": agent}, tracer_provider=otel.tracer_provider)
    handle = rt.session("s", agent="worker")
    future = handle.run("go")
    assert entered.wait(TIMEOUT)
    handle.crash_for_testing()
    assert error_code(future) == "SESSION_CRASHED"
    gate.set()
    eventually(lambda: len(otel.spans()) == 3)
    for name in ("execute_tool hold", "invoke_agent worker"):
        assert (otel.span(name).attributes or {})["error.type"] == "_OTHER"


def test_the_runtime_reports_its_statistics_as_metrics(runtime: Start, otel: Recorded) -> None:
    """Live sessions, activations, passivations, runs and run durations are metrics."""
    rt = runtime(agents={"echo": echo_agent}, meter_provider=otel.meter_provider)
    for i in range(3):
        rt.session(f"s{i}", agent="echo").run("hi").get(timeout=TIMEOUT)
    assert rt.session("s0", agent="echo").passivate()
    stats = rt.statistics()
    metrics = otel.metrics()

    def value(name: str, **attributes: Any) -> Any:
        (point,) = points(metrics, name, **attributes)
        return point.value

    assert value("praxo.runtime.sessions.live") == stats.live_sessions == 2
    assert value("praxo.runtime.activations") == stats.activations == 3
    assert value("praxo.runtime.passivations") == stats.passivations == 1
    assert value("praxo.runtime.crashes") == 0
    assert value("praxo.runtime.runs.pending") == 0
    assert value("praxo.runtime.runs", praxo__run__outcome="completed") == 3
    assert value("praxo.runtime.runs", praxo__run__outcome="failed") == 0
    (runs,) = points(
        metrics, "gen_ai.client.operation.duration", gen_ai__operation__name="invoke_agent"
    )
    assert runs.count == 3 and runs.attributes["gen_ai.agent.name"] == "echo"


def test_runtimes_sharing_a_meter_provider_are_told_apart(runtime: Start, otel: Recorded) -> None:
    """Two runtimes on one meter provider are observed each under its own runtime id."""
    first = runtime(agents={"echo": echo_agent}, meter_provider=otel.meter_provider)
    second = runtime(agents={"echo": echo_agent}, meter_provider=otel.meter_provider)
    first.session("a", agent="echo").run("hi").get(timeout=TIMEOUT)
    for sid in ("b", "c"):
        second.session(sid, agent="echo").run("hi").get(timeout=TIMEOUT)
    live = points(otel.metrics(), "praxo.runtime.sessions.live")
    assert sorted(p.value for p in live) == [1, 2]
    assert len({p.attributes["praxo.runtime.id"] for p in live}) == 2
    second.stop()
    live = points(otel.metrics(), "praxo.runtime.sessions.live")
    assert [p.value for p in live] == [1]  # a stopped runtime is no longer observed


def test_runtime_open_takes_the_providers(otel: Recorded) -> None:
    """``Runtime.open`` (and ``astart``) pass the providers through the runtime's config."""

    async def main() -> None:
        async with Runtime.open(
            tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
        ) as rt:
            rt.register_agent("echo", echo_agent)
            await rt.session("s", agent="echo").run("hi")
            stats = rt.statistics()  # on the runtime's own loop: answered in place
            assert stats.runs_completed == 1

    asyncio.run(main())
    eventually(lambda: "invoke_agent echo" in otel.names())
    assert points(otel.metrics(), "praxo.runtime.activations") == []  # stopped: not observed


@pytest.mark.parametrize("field", ["tracer_provider", "meter_provider"])
def test_a_bad_provider_is_an_invalid_config(runtime: Start, field: str) -> None:
    """A provider that is not an OpenTelemetry provider is RUNTIME_INVALID_CONFIG."""
    with pytest.raises(PraxoError) as info:
        runtime(**{field: "not a provider"})
    assert info.value.code == "RUNTIME_INVALID_CONFIG"
    assert field in info.value.message


EMAIL = "ada@example.com"
MARK = "[REDACTED_EMAIL]"


def hosted_script(mode: str, *replies: Any) -> Callable[[], Any]:
    """Return a factory of models giving ``replies`` in order, sync or ``async def``."""

    def factory() -> Any:
        model = ScriptedModel(list(replies))
        if mode == "sync":
            return model

        async def answer(request: Any) -> Any:
            await asyncio.sleep(0)
            return model(request)

        return answer

    return factory


def hosted_tool(mode: str, name: str, function: Callable[[Any], Any]) -> Tool:
    """Return a tool running ``function``, sync or ``async def``."""
    if mode == "sync":
        return Tool(name, "", {}, function)

    async def handler(arguments: Any) -> Any:
        await asyncio.sleep(0)
        return function(arguments)

    return Tool(name, "", {}, handler)


def recorded_text(otel: Recorded) -> str:
    """Return the spans' attributes, statuses and events, and the metrics' attributes."""
    parts: list[Any] = [
        [
            dict(s.attributes or {}),
            s.status.description,
            [dict(e.attributes or {}) for e in s.events],
        ]
        for s in otel.spans()
    ]
    parts.append([dict(p.attributes) for points in otel.metrics().values() for p in points])
    return json.dumps(parts)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_hosted_runs_redact_keys_and_cut_values(runtime: Start, otel: Recorded, mode: str) -> None:
    """A hosted run with capture_content redacts dict keys and cuts values to the options' size."""
    echo = hosted_tool(mode, "echo", lambda _a: {EMAIL: "seen"})

    def agent() -> Any:
        model = hosted_script(mode, ToolCall("echo", {EMAIL: "x"}, id="c1"), "y" * 5_000)()
        return new_agent_options(
            model, tools=[echo], capture_content=True, max_attribute_bytes=1_000
        )

    rt = runtime(agents={"mail": agent}, tracer_provider=otel.tracer_provider)
    rt.session("s", agent="mail").run("go").get(timeout=TIMEOUT)
    otel.wait_span("invoke_agent mail")
    assert EMAIL not in recorded_text(otel)
    tool = otel.span("execute_tool echo").attributes or {}
    assert json.loads(str(tool["gen_ai.tool.call.arguments"])) == {MARK: "x"}
    assert json.loads(str(tool["gen_ai.tool.call.result"])) == {MARK: "seen"}
    output = str((otel.span("invoke_agent mail").attributes or {})["gen_ai.output.messages"])
    assert len(output) == 1_000 and output.startswith(
        '[{"finish_reason":"stop","parts":[{"content":"yyy'
    )


@pytest.mark.parametrize("capture", [False, True])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_hosted_runs_redact_error_messages(
    runtime: Start, otel: Recorded, mode: str, capture: bool
) -> None:
    """A ModelError's and a tool's PraxoError's messages reach hosted runs' spans redacted."""

    def mail(_arguments: Any) -> Any:
        raise PraxoError("MAIL_FAILED", f"cannot mail {EMAIL}")

    def refused() -> Any:
        model = hosted_script(mode, ModelError("MODEL_REFUSED", f"not for {EMAIL}"))()
        return new_agent_options(model, capture_content=capture)

    def mailer() -> Any:
        model = hosted_script(mode, ToolCall("mail", {}, id="c1"))()
        tools = [hosted_tool(mode, "mail", mail)]
        return new_agent_options(model, tools=tools, capture_content=capture)

    rt = runtime(
        agents={"refused": refused, "mailer": mailer},
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
    )
    assert error_code(rt.session("a", agent="refused").run("hi")) == "MODEL_REFUSED"
    assert error_code(rt.session("b", agent="mailer").run("go")) == "MAIL_FAILED"
    otel.wait_for(lambda spans: len([s for s in spans if s.name.startswith("invoke")]) == 2)
    assert EMAIL not in recorded_text(otel)
    for name in ("chat", "invoke_agent refused"):
        span = next(s for s in otel.spans() if s.name.startswith(name))
        assert span.status.description == f"not for {MARK}"
    for name in ("execute_tool mail", "invoke_agent mailer"):
        span = otel.span(name)
        assert span.status.description == f"cannot mail {MARK}"
        (event,) = span.events
        assert (event.attributes or {})["exception.message"] == f"cannot mail {MARK}"


def test_hosted_runs_name_their_provider(runtime: Start, otel: Recorded) -> None:
    """A hosted agent's provider_name is on its chat and run spans and every metric point; the
    chat's output message has its finish_reason."""

    def agent() -> Any:
        return new_agent_options(EchoModel(), provider_name="acme", capture_content=True)

    rt = runtime(
        agents={"echo": agent},
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
    )
    rt.session("s", agent="echo").run("hi").get(timeout=TIMEOUT)
    chat = otel.wait_span("chat EchoModel")
    run = otel.wait_span("invoke_agent echo")
    for span in (chat, run):
        assert (span.attributes or {})["gen_ai.provider.name"] == "acme"
    (output,) = json.loads(str((chat.attributes or {})["gen_ai.output.messages"]))
    assert output["finish_reason"] == "stop"
    durations = points(otel.metrics(), "gen_ai.client.operation.duration")
    assert len(durations) == 2
    assert all(p.attributes["gen_ai.provider.name"] == "acme" for p in durations)
