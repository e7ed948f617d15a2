"""A model wrapped (by a function, a bound ``acall``, ``retrying``, ``rate_limited``, a user's
own wrapper) is named on its spans after the innermost model: its name, provider and server."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterator
from typing import Any

import pytest
from _otel import Recorded

from praxo_actors.agent import Tool, arun_agent, fallback_model, new_agent_options, run_agent
from praxo_actors.models import (
    ModelError,
    Request,
    Response,
    ToolCall,
    message_assistant,
    session,
)
from praxo_actors.providers import rate_limited, retrying
from praxo_actors.testing import FunctionModel, ScriptedModel

SERVED = {
    "gen_ai.provider.name": "acme",
    "server.address": "llm.internal",
    "server.port": 8443,
}


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """Return in-memory providers, shut down after the test."""
    recorded = Recorded()
    yield recorded
    recorded.shutdown()


class Served:
    """A model object that names itself and its server, as the provider adapters do."""

    model = "served-7b"
    telemetry_attributes = SERVED

    def __call__(self, _request: Request) -> Response:
        return Response(message_assistant("ok"))

    async def acall(self, request: Request) -> Response:
        return self(request)


def chat_attributes(otel: Recorded) -> tuple[str, dict[str, Any]]:
    """Return the one chat span's name and attributes."""
    (chat,) = [s for s in otel.spans() if s.name.startswith("chat ")]
    return chat.name, dict(chat.attributes or {})


def assert_named_served(otel: Recorded) -> None:
    """The chat span names the served model, its provider and its server."""
    name, attributes = chat_attributes(otel)
    assert name == "chat served-7b"
    assert attributes["gen_ai.request.model"] == "served-7b"
    for key, value in SERVED.items():
        assert attributes[key] == value
    run = otel.span("invoke_agent").attributes or {}
    assert run["gen_ai.provider.name"] == "acme"


def test_a_function_made_with_functools_wraps_is_named_after_the_model_inside(
    otel: Recorded,
) -> None:
    """A user's function wrapper (``functools.wraps``) keeps the inner model's name, provider
    and server on the chat span, not ``chat <function>``."""
    served = Served()

    @functools.wraps(served)
    def with_prompt(request: Request) -> Any:
        return served(request)

    options = new_agent_options(with_prompt, tracer_provider=otel.tracer_provider)
    run_agent(options, session("s"), "go")
    assert_named_served(otel)


def test_an_async_wrapper_of_a_bound_acall_through_retrying_and_rate_limited(
    otel: Recorded,
) -> None:
    """retrying(rate_limited(an async user wrapper of ``model.acall``)): the chain is followed
    to the innermost model."""
    served = Served()

    @functools.wraps(served.acall)
    async def logged(request: Request) -> Any:
        return await served.acall(request)

    model = retrying(rate_limited(logged, requests_per_second=1000, max_concurrency=4))
    options = new_agent_options(model, tracer_provider=otel.tracer_provider)
    asyncio.run(arun_agent(options, session("s"), "go"))
    assert_named_served(otel)


def test_a_wrapper_object_holding_the_model_as_its_model_attribute(otel: Recorded) -> None:
    """A user's wrapper class holding the model as ``.model`` is looked through."""

    class Prompted:
        def __init__(self, model: Any) -> None:
            self.model = model

        def __call__(self, request: Request) -> Any:
            return self.model(request)

    options = new_agent_options(Prompted(Served()), tracer_provider=otel.tracer_provider)
    run_agent(options, session("s"), "go")
    assert_named_served(otel)


@pytest.mark.parametrize("kind", [ScriptedModel, FunctionModel])
def test_a_testing_models_acall_is_named_after_the_model(otel: Recorded, kind: Any) -> None:
    """``ScriptedModel.acall`` and ``FunctionModel.acall`` name their spans as the models
    themselves do when called synchronously, not ``chat acall``."""
    model = ScriptedModel(["ok"]) if kind is ScriptedModel else FunctionModel(lambda _r: "ok")
    options = new_agent_options(model.acall, tracer_provider=otel.tracer_provider)
    asyncio.run(arun_agent(options, session("s"), "go"))
    name, attributes = chat_attributes(otel)
    assert name == f"chat {kind.__name__}"
    assert attributes["gen_ai.request.model"] == kind.__name__


def test_each_fallback_attempt_is_named_after_its_own_inner_model(otel: Recorded) -> None:
    """Wrapped children of a fallback_model are each named after the model they wrap."""
    served = Served()

    @functools.wraps(served)
    def backup(request: Request) -> Any:
        return served(request)

    def down(_request: Request) -> ModelError:
        return ModelError("MODEL_UNAVAILABLE", "down")

    options = new_agent_options(fallback_model(down, backup), tracer_provider=otel.tracer_provider)
    run_agent(options, session("s"), "go")
    assert otel.names() == ["chat down", "chat served-7b", "invoke_agent"]
    attributes = otel.span("chat served-7b").attributes or {}
    assert attributes["server.address"] == "llm.internal"


def test_a_cycle_of_wrappers_ends_and_a_failing_attribute_does_not_fail_the_run(
    otel: Recorded,
) -> None:
    """Wrappers that point at each other end the search; one whose attribute raises is
    named as it is; the run goes on either way."""

    class Loop:
        def __init__(self) -> None:
            self.model: Any = None

        def __call__(self, _request: Request) -> Response:
            return Response(message_assistant("ok"))

    first, second = Loop(), Loop()
    first.model, second.model = second, first

    class Broken:
        @property
        def __wrapped__(self) -> Any:
            raise RuntimeError("broken")

        def __call__(self, _request: Request) -> Response:
            return Response(message_assistant("ok"))

    for model in (first, Broken()):
        options = new_agent_options(model, tracer_provider=otel.tracer_provider)
        assert run_agent(options, session("s"), "go").output == "ok"
    assert otel.names() == ["chat Loop", "invoke_agent", "chat Broken", "invoke_agent"]


def test_every_attribute_is_named_in_the_semantic_conventions_registry(otel: Recorded) -> None:
    """Every attribute of a traced run with a wrapped model, a tool and content (but the
    project's own ``praxo.*``) is one the OpenTelemetry semantic conventions' registry names,
    or OpenInference's input and output on the run's span; the tool span names its
    conversation."""
    from opentelemetry.semconv._incubating.attributes import (
        error_attributes,
        gen_ai_attributes,
        server_attributes,
    )

    registry = {
        value
        for module in (error_attributes, gen_ai_attributes, server_attributes)
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, str)
    }
    served = Served()
    calls = iter([ToolCall("add", {"a": 1}, id="c1"), "done"])

    @functools.wraps(served)
    def scripted(request: Request) -> Any:
        served(request)
        reply = next(calls)
        return (
            Response(message_assistant("", [reply]))
            if isinstance(reply, ToolCall)
            else (Response(message_assistant(reply), usage={"input_tokens": 3, "output_tokens": 1}))
        )

    add = Tool("add", "Add.", {"type": "object"}, lambda arguments: arguments["a"] + 1)
    options = new_agent_options(
        scripted,
        tools=[add],
        name="calc",
        capture_content=True,
        tracer_provider=otel.tracer_provider,
    )
    run_agent(options, session("s-9"), "go")
    # OpenInference's (spec/semantic_conventions.md), which Phoenix lists traces by.
    openinference = {"input.value", "input.mime_type", "output.value", "output.mime_type"}
    keys = {key for span in otel.spans() for key in span.attributes or {}}
    run_keys = set(otel.span("invoke_agent calc").attributes or {})
    assert openinference <= run_keys
    assert {key for key in keys - openinference if not key.startswith("praxo.")} <= registry
    for span in otel.spans():
        if span.name != "invoke_agent calc":
            assert not openinference & set(span.attributes or {})
    assert {"gen_ai.input.messages", "gen_ai.output.messages", "server.address"} <= keys
    tool = otel.span("execute_tool add").attributes or {}
    assert tool["gen_ai.conversation.id"] == "s-9"
