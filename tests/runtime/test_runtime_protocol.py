"""The protocol: frozen tagged messages cross as bytes, and anything unknown is refused by code."""

from __future__ import annotations

import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pykka
import pytest
from _runtime_helpers import TIMEOUT, contents, echo_agent

from praxo_actors import PraxoError
from praxo_actors._errors import ProtocolError
from praxo_actors.agent import ToolError, new_agent_options
from praxo_actors.memory._inbox import Accept, AcceptedRun
from praxo_actors.memory._log import Commit, JournalAppend, PendingRun, StoredSession
from praxo_actors.models import (
    Event,
    ModelError,
    Request,
    Response,
    message_assistant,
    message_user,
)
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._protocol import (
    AcceptRun,
    CancelRun,
    CommitRun,
    Crash,
    EffectDone,
    FindRun,
    FlushCheckpoints,
    GetHistory,
    GetInfo,
    History,
    Info,
    Journaled,
    JournalEffect,
    LoadPending,
    LoadResults,
    LoadSessions,
    Pending,
    Publish,
    Raised,
    Restore,
    Results,
    Returned,
    ReturnedModelError,
    ReturnedObject,
    ReturnedResponse,
    ReturnedToolError,
    RunDeadline,
    RunFound,
    RuntimeMessage,
    Sessions,
    StartRun,
    StopRuns,
    decode,
    decode_outcome,
    encode,
    encode_outcome,
)
from praxo_actors.testing._eventually import eventually

Start = Callable[..., Runtime]

SAMPLES = [
    StartRun("run-1", "default", "hello", deadline_ns=123),
    StartRun("run-2", "default", ""),
    CancelRun("run-1"),
    CancelRun("run-1", hard=True),
    RunDeadline("run-1"),
    StopRuns("AGENT_CANCELLED"),
    EffectDone("run-1", 7, Returned({"rows": [1]})),
    Restore(StoredSession('{"format":"praxo.checkpoint"}', 0, ["{}"], 1), min_version=1),
    Restore(None),
    Journaled("run-1", 2),
    GetHistory(),
    GetInfo(),
    Info(restored=True, agent="a", queued_runs=1, running_run_id="r", messages=4),
    History([message_user("hi"), message_assistant("hello")]),
    Crash("boom"),
    Publish([Event("run.started", "run-1", "s1", 0, 42, {"input": "hi"})]),
    CommitRun(Commit("s1", expected=3, run_id="run-1", record="{}", result="{}")),
    JournalEffect(JournalAppend("s1", PendingRun("run-1", "default", "hi", entries=1), "{}")),
    AcceptRun(Accept("s1", AcceptedRun("run-2", "default", "hi", 1))),
    FlushCheckpoints(),
    LoadSessions(["s1", "s2"]),
    Sessions([StoredSession(None, 0, [], 0, pending=PendingRun("r", "a", "x")), None]),
    LoadResults("s1"),
    LoadPending(),
    Pending(["s1"], [PendingRun("r", "a", "x", entries=2, resumes=1)]),
    Results(["{}"]),
    FindRun("run-1"),
    RunFound("s1"),
    RunFound(None),
]


OUTCOMES = [
    ReturnedResponse(Response(message_assistant("hi"), {"tokens": 3})),
    ReturnedModelError(ModelError("MODEL_DOWN", "down")),
    ReturnedToolError(ToolError("NOPE", "no")),
    Returned({"rows": [1, 2.5, None, "x"]}),
    ReturnedObject("set"),
    Raised("ValueError: bad"),
]


@pytest.mark.parametrize("outcome", OUTCOMES, ids=lambda o: type(o).__name__)
def test_every_outcome_round_trips_through_bytes(outcome: Any) -> None:
    """A callback's outcome encodes to bytes and decodes to an equal outcome."""
    assert decode_outcome(encode_outcome(outcome)) == outcome


def test_a_malformed_outcome_is_refused_by_code() -> None:
    """An outcome of the wrong shape (a Response without a message) is PROTOCOL_INVALID_MESSAGE."""
    with pytest.raises(ProtocolError) as info:
        decode_outcome(encode_outcome(ReturnedResponse(Response(message=None))))  # type: ignore[arg-type]
    assert info.value.code == "PROTOCOL_INVALID_MESSAGE"


def test_samples_cover_the_whole_union() -> None:
    """The samples hold one message of every type in the union (so each is tested below)."""
    assert {type(m) for m in SAMPLES} == set(typing.get_args(RuntimeMessage))


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
def test_every_message_round_trips_through_bytes(message: Any) -> None:
    """Encoding gives bytes, and decoding them gives an equal message."""
    data = encode(message)
    assert isinstance(data, bytes)
    assert decode(data) == message


def test_tags_are_unique_strings() -> None:
    """Every message type has its own string tag in the ``t`` field."""
    tags = [t.__struct_config__.tag for t in typing.get_args(RuntimeMessage)]
    assert all(isinstance(tag, str) and tag for tag in tags)
    assert len(set(tags)) == len(tags)
    assert msgspec.msgpack.decode(encode(CancelRun("r")))["t"] == "cancel_run"


def test_decoding_makes_a_copy() -> None:
    """A decoded message shares no object with the one encoded (copy isolation)."""
    original = History([message_user("hi")])
    copy = decode(encode(original))
    assert isinstance(copy, History)
    assert copy == original
    assert copy.messages is not original.messages
    assert copy.messages[0] is not original.messages[0]


def test_messages_are_frozen() -> None:
    """A message cannot be changed after it is made."""
    message = StartRun("run-1", "default", "hi")
    with pytest.raises(AttributeError):
        message.input = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(
    "data",
    [
        msgspec.msgpack.encode({"t": "launch_missiles"}),
        msgspec.msgpack.encode({"run_id": "r"}),
        msgspec.msgpack.encode({"t": "start_run", "run_id": 1}),
        msgspec.msgpack.encode({"t": "cancel_run"}),
        msgspec.msgpack.encode([1, 2, 3]),
        b"\xc1",
        b"",
    ],
    ids=["unknown-tag", "no-tag", "bad-field", "missing-field", "not-a-map", "garbage", "empty"],
)
def test_bad_bytes_are_refused_with_a_code(data: bytes) -> None:
    """Unknown tags, bad shapes and garbage raise ProtocolError PROTOCOL_INVALID_MESSAGE."""
    with pytest.raises(ProtocolError) as info:
        decode(data)
    assert info.value.code == "PROTOCOL_INVALID_MESSAGE"
    assert isinstance(info.value, PraxoError)


@pytest.mark.parametrize("value", [StartRun("r", "a", "i"), "start_run", None, 7])
def test_values_that_are_not_bytes_are_refused(value: Any) -> None:
    """An unencoded message or any other non-bytes value is refused: PROTOCOL_INVALID_MESSAGE."""
    with pytest.raises(ProtocolError) as info:
        decode(value)
    assert info.value.code == "PROTOCOL_INVALID_MESSAGE"


def _only(class_name: str) -> pykka.ActorRef[Any]:
    refs = pykka.ActorRegistry.get_by_class_name(class_name)
    assert len(refs) == 1
    return refs[0]


def test_actors_refuse_bad_messages_and_live_on(runtime: Start) -> None:
    """Session, store and bus actors answer a bad ask with PROTOCOL_INVALID_MESSAGE and go on."""
    rt = runtime(agents={"default": echo_agent})
    handle = rt.session("s1")
    handle.run("a").get(timeout=TIMEOUT)
    session_ref = rt.registry.lookup("s1")
    assert session_ref is not None
    actors = [session_ref, rt._store_ref, _only("EventBus")]
    bad_messages = [
        msgspec.msgpack.encode({"t": "launch_missiles"}),
        StartRun("r", "default", "not encoded"),
        encode(History([])),  # a known message that none of these actors handles
    ]
    for ref in actors:
        for bad in bad_messages:
            with pytest.raises(PraxoError) as info:
                ref.ask(bad, timeout=TIMEOUT)
            assert info.value.code == "PROTOCOL_INVALID_MESSAGE"
        assert ref.is_alive()
    assert handle.run("b").get(timeout=TIMEOUT).output == "b"
    assert contents(handle.history()) == ["a", "a", "b", "b"]
    assert rt.statistics().crashes == 0


def test_runtime_recovers_when_the_bus_crashes(runtime: Start, tmp_path: Path) -> None:
    """A bad message told to the bus crashes it; the tree restarts and sessions keep their data."""
    rt = runtime(agents={"default": echo_agent}, store=tmp_path / "runtime.sqlite3")
    handle = rt.session("s1")
    handle.run("a").get(timeout=TIMEOUT)
    root = rt.root.proxy()

    def children() -> dict[str, Any]:
        return {c.id: c.ref for c in root.which_children().get(timeout=TIMEOUT)}

    before = children()
    before["events"].tell(b"\xc1")  # a crash in a tell stops the actor
    # rest_for_one: the bus, the store and the sessions supervisor all restart.
    eventually(
        lambda: all(
            ref is not None and ref.is_alive() and ref != before[name]
            for name, ref in children().items()
        )
    )
    assert not handle.live
    assert handle.run("b").get(timeout=TIMEOUT).output == "b"
    assert contents(handle.history()) == ["a", "a", "b", "b"]


def test_an_effect_done_carries_its_outcome_encoded_once() -> None:
    """A callback's outcome is encoded with its EffectDone, in one pass, and decoded with it:
    the decoded message holds the outcome itself, not bytes to decode again."""
    from praxo_actors.runtime._session._outcome import effect_done

    answer = Response(message_assistant("hi"), {"tokens": 3})
    message = effect_done("run-1", 7, True, answer)
    assert isinstance(message, bytes)
    decoded = decode(message)
    assert decoded == EffectDone("run-1", 7, ReturnedResponse(answer))
    assert isinstance(decoded, EffectDone) and decoded.outcome.response == answer


def test_an_outcome_that_does_not_decode_fails_its_run_and_the_session_lives_on(
    runtime: Start,
) -> None:
    """A model's answer of the wrong shape (``usage`` not a dict) encodes, but its EffectDone
    does not decode: the run fails with TypeError, the session goes on with the next run."""
    answers = iter([Response(message_assistant("bad"), usage="not a dict"), None])  # type: ignore[arg-type]

    async def model(request: Request) -> Response:
        answer = next(answers)
        return answer or Response(message_assistant(f"{request.messages[-1].content}!"))

    rt = runtime(agents={"default": lambda: new_agent_options(model)})
    handle = rt.session("s")
    with pytest.raises(TypeError, match="malformed value"):
        handle.run("first").get(timeout=TIMEOUT)
    assert handle.run("second").get(timeout=TIMEOUT).output == "second!"
    assert rt.statistics().crashes == 0
