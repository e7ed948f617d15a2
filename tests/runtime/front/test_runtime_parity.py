"""Every driver of the agent loop gives the same events and result for the same scripted run."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT, error_code

from praxo_actors.agent import (
    AgentError,
    AgentOptions,
    ListJournal,
    Tool,
    aresume_agent,
    arun_agent,
    new_agent_options,
    resume_agent,
    run_agent,
    tool_context,
)
from praxo_actors.agent import _run as agent_run
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._log import JournalAppend, PendingRun, SessionLog
from praxo_actors.middleware import require_approval, structured_output
from praxo_actors.models import (
    Event,
    Request,
    Response,
    RunResult,
    ToolCall,
    message_assistant,
    session,
)
from praxo_actors.runtime import Runtime
from praxo_actors.testing import EventRecorder

Start = Callable[..., Runtime]
Shape = tuple[list[tuple[str, int, Any]], Any, list[Any]]


def _plain(request: Request) -> Response:
    return Response(message_assistant(f"hello {request.messages[-1].content}"))


def _tools_model(request: Request) -> Response:
    if request.step == 1:
        calls = [ToolCall("add", {"a": 1, "b": 2}, id="c1"), ToolCall("add", {"a": 3, "b": 4})]
        return Response(message_assistant("", calls), usage={"output_tokens": 3})
    results = [m.content for m in request.messages if m.role == "tool"]
    return Response(message_assistant(f"sums {results}"))


def _add(args: dict[str, Any]) -> int:
    return int(args["a"]) + int(args["b"])


def _attempted(args: dict[str, Any]) -> dict[str, int]:
    context = tool_context()
    assert context is not None
    return {"sum": _add(args), "attempt": context.attempt}


def plain() -> AgentOptions:
    return new_agent_options(_plain)


def tools() -> AgentOptions:
    return new_agent_options(_tools_model, tools=[Tool("add", "", {}, _add)])


def repaired() -> AgentOptions:
    def model(_request: Request) -> Response:
        return Response(message_assistant("not json"))

    def repairer(_text: str, _errors: list[Any]) -> str:
        return '{"name": "ada"}'

    schema = {"type": "object", "required": ["name"]}
    return new_agent_options(model, structured_output=structured_output(schema, 1, repairer))


def approving() -> AgentOptions:
    def model(request: Request) -> Response:
        if request.step == 1:
            return Response(message_assistant("", [ToolCall("send", {"to": "ada"}, id="c1")]))
        return Response(message_assistant(f"result: {request.messages[-1].content}"))

    send = Tool("send", "", {}, lambda args: f"sent to {args['to']}")
    return new_agent_options(model, tools=[send], approval=require_approval(["send"]))


def attempts() -> AgentOptions:
    """The tools agent whose tool says which attempt of its call it is."""
    return new_agent_options(_tools_model, tools=[Tool("add", "", {}, _attempted)])


def once() -> AgentOptions:
    """The attempts agent with an ``at_most_once`` tool: each call is marked before it runs."""
    tool = Tool("add", "", {}, _attempted, delivery="at_most_once")
    return new_agent_options(_tools_model, tools=[tool])


AGENTS = {
    "plain": plain,
    "tools": tools,
    "repaired": repaired,
    "approving": approving,
    "attempts": attempts,
    "once": once,
}


def _shape(events: list[Event], result: RunResult) -> Shape:
    """What two drivers must agree on: events (type, seq, data) and the result's content."""
    seen = [(e.type, e.seq, _scrubbed(e.data)) for e in events]
    messages = [
        (m.role, m.content, [c.name for c in m.tool_calls]) for m in result.session.messages
    ]
    return seen, (result.status, result.output, result.interrupt), messages


def _scrubbed(data: dict[str, Any]) -> dict[str, Any]:
    # Durations and wall times differ from run to run; everything else must not.
    return {k: v for k, v in data.items() if k not in {"duration_ms", "latency_ms", "time_ns"}}


def _standalone(name: str, driver: str, resume: bool) -> Shape:
    """Run agent ``name`` (then resume it, for an approval) on one of the four drivers."""
    events: list[Event] = []
    options = replace(AGENTS[name](), sink=events.append)
    journal = ListJournal() if driver.endswith("journaled") else None
    start = session("s")
    if driver.startswith("a"):
        result = asyncio.run(arun_agent(options, start, "ada", run_id="r", journal=journal))
        if resume:
            again = aresume_agent(options, result.session, True, journal=ListJournal())
            result = asyncio.run(again)
    else:
        result = run_agent(options, start, "ada", run_id="r", journal=journal)
        if resume:
            result = resume_agent(options, result.session, True, journal=ListJournal())
    return _shape(events, result)


def _on_session(rt: Runtime, name: str, resume: bool) -> Shape:
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="*")
    handle = rt.session("s", agent=name)
    result = handle.run("ada").get(timeout=TIMEOUT)
    if resume:
        recorder.wait_for("run.interrupted", TIMEOUT)
        result = handle.resume(True).get(timeout=TIMEOUT)
    recorder.wait_for("run.completed", TIMEOUT)
    return _shape(recorder.events, result)


@pytest.mark.parametrize("durable", [False, True], ids=["session", "durable session"])
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_the_drivers_and_the_session_agree(runtime: Start, name: str, durable: bool) -> None:
    """run_agent, arun_agent, both journaled, and the session actor give the same run."""
    resume = name == "approving"
    reference = _standalone(name, "sync", resume)
    for driver in ("async", "journaled", "ajournaled"):
        assert _standalone(name, driver, resume) == reference, driver
    rt = runtime()
    rt.register_agent(name, AGENTS[name], durable=durable)
    assert _on_session(rt, name, resume) == reference
    assert reference[1][0] == "completed"


class _Counted:
    """The tools agent, counting the calls it makes."""

    def __init__(self) -> None:
        self.models: list[int] = []
        self.adds: list[dict[str, Any]] = []

    def model(self, request: Request) -> Response:
        self.models.append(request.step)
        return _tools_model(request)

    def add(self, args: dict[str, Any]) -> int:
        self.adds.append(args)
        return _add(args)

    def options(self, events: list[Event]) -> AgentOptions:
        tool = Tool("add", "", {}, self.add)
        return new_agent_options(self.model, tools=[tool], sink=events.append)


MARKER = '{"k":"resumed"}'  # the entry a resume writes first (unsigned)


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_both_journaled_drivers_replay_alike(cut: int) -> None:
    """A journal cut after ``cut`` entries is replayed alike by the sync and async drivers:
    the same result, the same events, and only the calls it does not hold are made."""
    whole = ListJournal()
    first: list[Event] = []
    done = run_agent(_Counted().options(first), session("s"), "go", run_id="r", journal=whole)
    shapes = []
    for driver in ("sync", "async"):
        counted, events = _Counted(), []
        journal = ListJournal()
        journal.items = whole.items[:cut]
        options = counted.options(events)
        if driver == "sync":
            result = run_agent(options, session("s"), "go", run_id="r", journal=journal)
        else:
            result = asyncio.run(
                arun_agent(options, session("s"), "go", run_id="r", journal=journal)
            )
        assert result.output == done.output
        # The replayed part kept, the resume counted, then the rest journaled.
        assert journal.items == [*whole.items[:cut], MARKER, *whole.items[cut:]]
        made = len(counted.models) + len(counted.adds)
        assert made == len(whole.items) - cut  # one call per entry it did not hold
        shapes.append(_shape(events, result))
    assert shapes[0] == shapes[1]
    assert shapes[0][1:] == _shape(first, done)[1:]
    assert [t for t, _, _ in shapes[0][0]].count("run.resumed") == 1


def _journal_of(name: str) -> list[str]:
    """The whole journal of agent ``name``'s run (up to its approval, for one that asks)."""
    journal = ListJournal()
    run_agent(AGENTS[name](), session("s"), "ada", run_id="r", journal=journal)
    return journal.items


def _replayed(name: str, driver: str, entries: list[str]) -> Shape:
    """Resume agent ``name``'s run from ``entries`` on a journaled driver."""
    events: list[Event] = []
    options = replace(AGENTS[name](), sink=events.append)
    journal = ListJournal()
    journal.items = list(entries)
    if driver == "async":
        run = arun_agent(options, session("s"), "ada", run_id="r", journal=journal)
        result = asyncio.run(run)
    else:
        result = run_agent(options, session("s"), "ada", run_id="r", journal=journal)
    return _shape(events, result)


def _resumed_on_session(runtime: Start, name: str, entries: list[str], end: str) -> Shape:
    """Resume agent ``name``'s run from ``entries`` in a durable session's store."""
    store = InMemoryStore()
    log = SessionLog(store)
    for n, entry in enumerate(entries, 1):  # as the session journals them
        log.write([], [JournalAppend("s", PendingRun("r", name, "ada", entries=n), entry)])
    try:
        rt = runtime(store=store)
        rt.register_agent(name, AGENTS[name], durable=True)
        recorder = EventRecorder()
        rt.events.subscribe(recorder, pattern="*")
        assert rt.resume_pending() == 1
        result = rt.session("s", agent=name).result("r", timeout=TIMEOUT)
        recorder.wait_for(end, TIMEOUT)
        return _shape(recorder.events, result)
    finally:
        rt.stop()
        store.close()


REPLAYS = [(name, cut) for name in sorted(AGENTS) for cut in range(1, len(_journal_of(name)) + 1)]


@pytest.mark.parametrize(("name", "cut"), REPLAYS, ids=[f"{n}-{c}" for n, c in REPLAYS])
def test_every_driver_replays_a_journal_alike(runtime: Start, name: str, cut: int) -> None:
    """The same journal, cut after ``cut`` entries, resumed by run_agent, arun_agent and a
    durable session gives the same events — ``run.resumed`` with its data and every ``seq``
    included — and the same result: an at_most_once tool in flight is TOOL_INTERRUPTED, a
    tool called again knows its attempt, a journal holding the run's end still tells it."""
    entries = _journal_of(name)[:cut]
    reference = _replayed(name, "sync", entries)
    assert _replayed(name, "async", entries) == reference
    types = [t for t, _, _ in reference[0]]
    assert types.count("run.resumed") == 1
    assert types[-1] in {"run.completed", "run.interrupted"}  # the end is told
    seqs = [seq for _, seq, _ in reference[0]]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # one seq after another
    assert _resumed_on_session(runtime, name, entries, types[-1]) == reference


def test_a_started_at_most_once_tool_is_interrupted_on_every_driver(runtime: Start) -> None:
    """A journal whose last entry marks an at_most_once tool as started resumes with
    TOOL_INTERRUPTED for that call, not a second call, on every driver."""
    entries = _journal_of("once")[:2]
    assert '"started"' in entries[-1]
    for shape in (
        _replayed("once", "sync", entries),
        _replayed("once", "async", entries),
        _resumed_on_session(runtime, "once", entries, "run.completed"),
    ):
        output = shape[1][1]
        assert "TOOL_INTERRUPTED" in output and "in flight" in output
        assert '{"attempt":1,"sum":7}' in output  # the next call was never made before
        resumed = [data for kind, _, data in shape[0] if kind == "run.resumed"]
        assert resumed == [{"replayed": 2, "resumes": 1}]


class _CutOff:
    """The tools agent whose second tool call is cut off the first time: on a session by a
    crash while it waits, on a journaled driver by the process dying (``PowerCut``)."""

    def __init__(self, delivery: str) -> None:
        self.entered = threading.Event()
        self.calls = 0
        self.delivery = delivery

    def _add(self, args: dict[str, Any]) -> dict[str, int]:
        self.calls += 1
        if self.calls == 2:
            raise PowerCut
        return _attempted(args)

    async def _wait(self, args: dict[str, Any]) -> dict[str, int]:
        self.calls += 1
        if self.calls == 2:
            self.entered.set()
            await asyncio.sleep(TIMEOUT)  # cut off here: the session crashes
        return _attempted(args)

    def options(self, waits: bool = True, sink: Any = None) -> AgentOptions:
        tool = Tool("add", "", {}, self._wait if waits else self._add, delivery=self.delivery)  # type: ignore[arg-type]
        return new_agent_options(_tools_model, tools=[tool], sink=sink)


class PowerCut(BaseException):
    """Stands for the process dying in the middle of a call."""


@pytest.mark.parametrize("delivery", ["at_least_once", "at_most_once"])
def test_a_resumed_durable_session_ends_as_the_drivers_do(runtime: Start, delivery: str) -> None:
    """A durable session run cut off mid-tool and resumed from its journal gives the events
    (``run.resumed`` included) and result of a journaled run_agent cut off at the same call
    and run again."""
    events: list[Event] = []
    plain = _CutOff(delivery)
    journal = ListJournal()
    with pytest.raises(PowerCut):
        run_agent(plain.options(False, events.append), session("s"), "ada", journal=journal)
    run_id = events[0].run_id
    options = plain.options(False, events.append)
    done = run_agent(options, session("s"), "ada", run_id=run_id, journal=journal)
    reference = _shape(events, done)
    cut = _CutOff(delivery)
    rt = runtime(store=InMemoryStore())
    rt.register_agent("default", cut.options, durable=True)
    recorder = EventRecorder()
    rt.events.subscribe(recorder, pattern="*")
    handle = rt.session("s")
    future = handle.run("ada")
    assert cut.entered.wait(TIMEOUT)
    handle.crash_for_testing()
    result = future.get(timeout=TIMEOUT)
    recorder.wait_for("run.completed", TIMEOUT)
    assert _shape(recorder.events, result) == reference
    assert [t for t, _, _ in reference[0]].count("run.resumed") == 1
    assert cut.calls == plain.calls == (3 if delivery == "at_least_once" else 2)


def test_every_driver_refuses_an_unknown_effect_alike(
    runtime: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run asking for what no driver performs fails with AGENT_UNKNOWN_EFFECT everywhere:
    the session actor too, in bounded time, and it goes on serving the session."""

    def machine(*_args: Any, **_kwargs: Any) -> Any:
        yield object()

    rt = runtime(agents={"default": plain})
    assert rt.session("s").run("warm").get(timeout=TIMEOUT).output == "hello warm"
    monkeypatch.setattr(agent_run, "machine", machine)
    assert error_code(rt.session("s").run("x")) == "AGENT_UNKNOWN_EFFECT"
    codes = []
    for driver in ("sync", "async", "journaled", "ajournaled"):
        with pytest.raises(AgentError) as info:
            _standalone("plain", driver, resume=False)
        codes.append(info.value.code)
    assert codes == ["AGENT_UNKNOWN_EFFECT"] * 4
    monkeypatch.undo()
    assert rt.session("s").run("again").get(timeout=TIMEOUT).output == "hello again"
