"""The GenAI conventions in full for models that are plain callbacks: the provider's name,
each output message's finish_reason, and what a Response or a model object says of itself."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from _otel import Recorded, points

from praxo_actors.agent import (
    Tool,
    arun_agent,
    fallback_model,
    new_agent_options,
    run_agent,
)
from praxo_actors.models import (
    ModelError,
    Request,
    Response,
    ToolCall,
    message_assistant,
    session,
)
from praxo_actors.providers import rate_limited, retrying
from praxo_actors.testing import ScriptedModel

DURATION = "gen_ai.client.operation.duration"
TOKENS = "gen_ai.client.token.usage"


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """Return in-memory providers, shut down after the test."""
    recorded = Recorded()
    yield recorded
    recorded.shutdown()


def providers(otel: Recorded) -> dict[str, Any]:
    """Return both in-memory providers as option fields."""
    return {"tracer_provider": otel.tracer_provider, "meter_provider": otel.meter_provider}


def usage(text: str, **fields: Any) -> Response:
    """Return an answer with token usage and the given Response fields."""
    return Response(
        message_assistant(text), usage={"input_tokens": 5, "output_tokens": 2}, **fields
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_provider_name_is_on_chat_spans_and_both_histograms(otel: Recorded, mode: str) -> None:
    """``provider_name`` names the provider on chat and run spans and every metric point."""
    options = new_agent_options(
        ScriptedModel([usage("hi")]), name="a", provider_name="acme.ai", **providers(otel)
    )
    if mode == "sync":
        run_agent(options, session("s"), "go")
    else:
        asyncio.run(arun_agent(options, session("s"), "go"))
    for name in ("chat ScriptedModel", "invoke_agent a"):
        assert (otel.span(name).attributes or {})["gen_ai.provider.name"] == "acme.ai"
    metrics = otel.metrics()
    assert len(metrics[DURATION]) == 2 and len(metrics[TOKENS]) == 2
    for point in metrics[DURATION] + metrics[TOKENS]:
        assert point.attributes["gen_ai.provider.name"] == "acme.ai"


def test_without_a_provider_name_none_is_made_up(otel: Recorded) -> None:
    """A bare callback and no ``provider_name``: the attribute is left out, not guessed."""
    run_agent(new_agent_options(ScriptedModel(["hi"]), **providers(otel)), session("s"), "go")
    for span in otel.spans():
        assert "gen_ai.provider.name" not in (span.attributes or {})
    for point in otel.metrics()[DURATION]:
        assert "gen_ai.provider.name" not in point.attributes


def test_every_output_message_has_its_finish_reason(otel: Recorded) -> None:
    """Without a finish_reason from the model, an answer calling tools says ``tool_call`` and
    one that does not ``stop``; the run's output message says its last answer's."""
    add = Tool("add", "", {}, lambda a: a["a"] + a["b"])
    model = ScriptedModel([ToolCall("add", {"a": 1, "b": 2}, id="c"), "3"])
    options = new_agent_options(model, tools=[add], capture_content=True, **providers(otel))
    run_agent(options, session("s"), "go")
    first, _, second, run = otel.spans()
    reasons = [
        [m["finish_reason"] for m in json.loads(str((s.attributes or {})[key]))]
        for s, key in ((first, "gen_ai.output.messages"), (second, "gen_ai.output.messages"))
    ]
    assert reasons == [["tool_call"], ["stop"]]
    (output,) = json.loads(str((run.attributes or {})["gen_ai.output.messages"]))
    assert output["finish_reason"] == "stop"
    for span in (first, second, run):
        for message in json.loads(str((span.attributes or {}).get("gen_ai.input.messages"))):
            assert "finish_reason" not in message  # input messages carry none


def test_a_response_says_what_the_server_said_of_it(otel: Recorded) -> None:
    """A Response's finish_reason, id and model become gen_ai.response.*; the reason, in the
    schema's words, is the output message's and the run's."""
    answer = usage("cut sho", finish_reason="max_tokens", id="resp-7", model="m-2024")
    options = new_agent_options(ScriptedModel([answer]), capture_content=True, **providers(otel))
    run_agent(options, session("s"), "go")
    chat, run = otel.spans()
    attributes = chat.attributes or {}
    assert attributes["gen_ai.response.id"] == "resp-7"
    assert attributes["gen_ai.response.model"] == "m-2024"
    assert attributes["gen_ai.response.finish_reasons"] == ("max_tokens",)
    (output,) = json.loads(str(attributes["gen_ai.output.messages"]))
    assert output["finish_reason"] == "length"
    (output,) = json.loads(str((run.attributes or {})["gen_ai.output.messages"]))
    assert output["finish_reason"] == "length"
    (point,) = points(otel.metrics(), DURATION, gen_ai__operation__name="chat")
    assert point.attributes["gen_ai.response.model"] == "m-2024"
    assert "gen_ai.response.id" not in point.attributes  # one series per id: never a metric


class Described:
    """A model object naming its own attributes, as the provider adapters do."""

    model = "described-1"

    def __init__(self, attributes: Any) -> None:
        self.telemetry_attributes = attributes

    def __call__(self, _request: Request) -> Response:
        return Response(message_assistant("ok"))


def test_a_model_object_names_its_own_attributes(otel: Recorded) -> None:
    """A model's ``telemetry_attributes`` go on its chat spans (the provider, server and
    measured ones on its metric points too), before ``provider_name``; wrappers are looked
    through; entries that are no attribute values, ``error.type`` and the operation's own are
    left out."""
    described = Described(
        {
            "gen_ai.provider.name": "acme",
            "server.address": "llm.internal",
            "server.port": 8443,
            "gen_ai.request.temperature": 0.5,
            "gen_ai.request.stop_sequences": ["END"],
            "bad.value": {"nested": 1},
            7: "bad key",
            "gen_ai.operation.name": "hijack",
            "error.type": "never",
        }
    )
    model = retrying(rate_limited(described, requests_per_second=1000, max_concurrency=4))
    options = new_agent_options(model, provider_name="other", **providers(otel))
    run_agent(options, session("s"), "go")
    chat = otel.span("chat described-1")
    assert dict(chat.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "described-1",
        "gen_ai.provider.name": "acme",
        "server.address": "llm.internal",
        "server.port": 8443,
        "gen_ai.request.temperature": 0.5,
        "gen_ai.request.stop_sequences": ("END",),
        "gen_ai.conversation.id": "s",
    }
    (point,) = points(otel.metrics(), DURATION, gen_ai__operation__name="chat")
    assert dict(point.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "described-1",
        "gen_ai.provider.name": "acme",
        "server.address": "llm.internal",
        "server.port": 8443,
    }
    run = otel.span("invoke_agent")
    assert (run.attributes or {})["gen_ai.provider.name"] == "other"  # the options say so


class Failing:
    """A model whose ``telemetry_attributes`` cannot be read."""

    @property
    def telemetry_attributes(self) -> Any:
        raise RuntimeError("broken")

    def __call__(self, _request: Request) -> Response:
        return Response(message_assistant("ok"))


def test_attributes_that_cannot_be_read_do_not_fail_the_run(otel: Recorded) -> None:
    """A model whose ``telemetry_attributes`` raises runs as one that has none."""
    options = new_agent_options(Failing(), provider_name="acme", **providers(otel))
    assert run_agent(options, session("s"), "go").output == "ok"
    assert (otel.span("chat Failing").attributes or {})["gen_ai.provider.name"] == "acme"


def test_a_run_names_its_provider_when_all_its_models_agree(otel: Recorded) -> None:
    """The run's span names the provider every fallback attempt names, and none when they
    differ; each attempt's chat span names its own."""

    def refuse(_request: Request) -> ModelError:
        return ModelError("MODEL_UNAVAILABLE")

    same = fallback_model(
        Described({"gen_ai.provider.name": "acme"}), Described({"gen_ai.provider.name": "acme"})
    )
    run_agent(new_agent_options(same, **providers(otel)), session("s"), "go")
    assert (otel.span("invoke_agent").attributes or {})["gen_ai.provider.name"] == "acme"
    otel.exporter.clear()
    mixed = fallback_model(refuse, Described({"gen_ai.provider.name": "acme"}))
    run_agent(new_agent_options(mixed, **providers(otel)), session("s"), "go")
    assert "gen_ai.provider.name" not in (otel.span("invoke_agent").attributes or {})
    assert "gen_ai.provider.name" not in (otel.span("chat refuse").attributes or {})
    assert (otel.span("chat described-1").attributes or {})["gen_ai.provider.name"] == "acme"
    failed = points(otel.metrics(), DURATION, error__type="MODEL_UNAVAILABLE")
    assert failed and all("gen_ai.provider.name" not in p.attributes for p in failed)


def test_a_bad_provider_name_is_refused() -> None:
    """``provider_name`` must be a non-empty str or None."""
    with pytest.raises(TypeError, match="provider_name"):
        new_agent_options(ScriptedModel([]), provider_name="")
    with pytest.raises(TypeError, match="provider_name"):
        new_agent_options(ScriptedModel([]), provider_name=5)  # type: ignore[arg-type]
