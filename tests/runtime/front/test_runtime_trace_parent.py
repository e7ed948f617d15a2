"""A run the runtime hosts, asked for inside a span, is that span's child; its invoke_agent
span carries the run's input and output with capture_content, and none without."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _otel import Recorded
from _runtime_helpers import TIMEOUT

from praxo_actors.agent import new_agent_options
from praxo_actors.agent._caller import KEPT, _parents, attached, capture, take, traceparent
from praxo_actors.runtime import Runtime, SessionHandle
from praxo_actors.testing import EchoModel

Start = Callable[..., Runtime]


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """Return in-memory providers, shut down after the test."""
    recorded = Recorded()
    yield recorded
    recorded.shutdown()


def by_run(handle: SessionHandle) -> str:
    return handle.run("hello").get(timeout=TIMEOUT).output


def by_arun(handle: SessionHandle) -> str:
    return asyncio.run(handle.arun("hello")).output


def by_submit(handle: SessionHandle) -> str:
    return handle.result(handle.submit("hello"), timeout=TIMEOUT).output


def by_astream(handle: SessionHandle) -> str:
    async def go() -> str:
        stream = handle.astream("hello")
        async for _event in stream:
            pass
        return (await stream.result()).output

    return asyncio.run(go())


WAYS = {"run": by_run, "arun": by_arun, "submit": by_submit, "astream": by_astream}


def echo(**options: Any) -> Callable[[], Any]:
    return lambda: new_agent_options(EchoModel(), **options)


@pytest.mark.parametrize("way", list(WAYS))
def test_a_run_asked_for_inside_a_span_is_its_child(
    runtime: Start, otel: Recorded, way: str
) -> None:
    """run, arun, submit and astream inside a span: the run's invoke_agent span is a child of
    that span, in its trace, and the run's chat span the run's child."""
    rt = runtime(agents={"echo": echo()}, tracer_provider=otel.tracer_provider)
    handle = rt.session("s", agent="echo")
    tracer = otel.tracer_provider.get_tracer("caller")
    with tracer.start_as_current_span("request") as caller:
        assert WAYS[way](handle) == "hello"
    run = otel.wait_span("invoke_agent echo")
    assert run.parent is not None
    assert run.parent.span_id == caller.get_span_context().span_id
    assert run.context.trace_id == caller.get_span_context().trace_id
    chat = otel.wait_span("chat EchoModel")
    assert chat.parent is not None and chat.parent.span_id == run.context.span_id
    assert chat.context.trace_id == caller.get_span_context().trace_id
    assert (run.attributes or {})["praxo.run.id"] not in _parents  # taken by the run


def test_a_run_asked_for_outside_any_span_is_a_root(runtime: Start, otel: Recorded) -> None:
    """Without a current span the run's span has no parent, and nothing is kept for it."""
    rt = runtime(agents={"echo": echo()}, tracer_provider=otel.tracer_provider)
    result = rt.session("s", agent="echo").run("hello").get(timeout=TIMEOUT)
    assert otel.wait_span("invoke_agent echo").parent is None
    assert result.run_id not in _parents


def test_contexts_of_runs_that_never_start_are_bounded(otel: Recorded) -> None:
    """A context captured for a run that never takes it is dropped, oldest first, past KEPT."""
    tracer = otel.tracer_provider.get_tracer("caller")
    try:
        with tracer.start_as_current_span("request"):
            for n in range(KEPT + 2):
                capture(f"r{n}")
        assert len(_parents) == KEPT
        assert take("r0") is None and take("r1") is None
        assert take(f"r{KEPT + 1}") is not None
    finally:
        _parents.clear()


@pytest.mark.parametrize("capture_content", [False, True])
def test_a_hosted_runs_span_carries_its_input_and_output_with_capture_content(
    runtime: Start, otel: Recorded, capture_content: bool
) -> None:
    """With capture_content the invoke_agent span holds the run's input and output messages
    (redacted and cut as all content is); without, neither."""
    email = "ada@example.com"
    options = echo(capture_content=capture_content, max_attribute_bytes=200)
    rt = runtime(agents={"echo": options}, tracer_provider=otel.tracer_provider)
    text = f"mail {email} " + "z" * 500
    rt.session("s", agent="echo").run(text).get(timeout=TIMEOUT)
    attributes = dict(otel.wait_span("invoke_agent echo").attributes or {})
    if not capture_content:
        assert "gen_ai.input.messages" not in attributes
        assert "gen_ai.output.messages" not in attributes
        return
    starts = {
        "gen_ai.input.messages": '[{"parts":[{"content":"mail [REDACTED_EMAIL] zzz',
        "gen_ai.output.messages": (
            '[{"finish_reason":"stop","parts":[{"content":"mail [REDACTED_EMAIL] zzz'
        ),
    }
    for key, start in starts.items():
        value = str(attributes[key])
        assert value.startswith(start) and len(value) == 200 and email not in value


def test_a_traceparent_carried_to_another_thread_makes_the_run_a_child(
    runtime: Start, otel: Recorded
) -> None:
    """A cluster's host makes the caller's traceparent current while it asks for the run:
    the run, asked for on another thread (here), is the caller's span's child."""
    rt = runtime(agents={"echo": echo()}, tracer_provider=otel.tracer_provider)
    handle = rt.session("s", agent="echo")
    assert traceparent() is None
    with otel.tracer_provider.get_tracer("caller").start_as_current_span("request") as caller:
        carried = traceparent()
    assert carried is not None
    ours = caller.get_span_context()
    assert carried.startswith(f"00-{ours.trace_id:032x}-{ours.span_id:016x}-")
    results: list[str] = []

    def host() -> None:
        with attached(carried):
            future = handle.run("hello")
        results.append(future.get(timeout=TIMEOUT).output)

    thread = threading.Thread(target=host)
    thread.start()
    thread.join(TIMEOUT)
    assert results == ["hello"]
    run = otel.wait_span("invoke_agent echo")
    assert run.parent is not None and run.parent.span_id == ours.span_id
    assert run.context.trace_id == ours.trace_id
    with attached(None):  # nothing carried: nothing changes
        assert traceparent() is None


def test_an_untraced_run_leaves_no_context_behind(runtime: Start, otel: Recorded) -> None:
    """A run asked for inside the caller's span, on a runtime that does not trace, drops the
    context it was given when it starts."""
    rt = runtime(agents={"echo": echo()})
    with otel.tracer_provider.get_tracer("caller").start_as_current_span("request"):
        result = rt.session("s", agent="echo").run("hello").get(timeout=TIMEOUT)
    assert result.output == "hello" and result.run_id not in _parents
    assert otel.names() == ["request"]
