"""The replay rules every driver shares: run.resumed, seq, attempts, the tool in flight."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from praxo_actors import PraxoError
from praxo_actors.agent import (
    AgentOptions,
    ListJournal,
    Tool,
    arun_agent,
    new_agent_options,
    run_agent,
    tool_context,
)
from praxo_actors.agent._effects import CallModel
from praxo_actors.agent._interpret import LIVE
from praxo_actors.models import (
    Event,
    ModelError,
    Request,
    Response,
    ToolCall,
    message_assistant,
    session,
)

KEY = b"k" * 32


class PowerCut(BaseException):
    """Stands for the process dying in the middle of a call."""


class World:
    """A model that calls ``charge`` once, and a ``charge`` cut off its first ``cuts`` times."""

    def __init__(self, cuts: int = 1, delivery: str = "at_least_once") -> None:
        self.cuts = cuts
        self.delivery = delivery
        self.models: list[int] = []
        self.charges: list[tuple[str, int]] = []

    def model(self, request: Request) -> Response:
        self.models.append(request.step)
        if request.step == 1:
            return Response(message_assistant("", [ToolCall("charge", {}, id="c1")]))
        return Response(message_assistant(f"done {request.messages[-1].content}"))

    def charge(self, _args: dict[str, Any]) -> str:
        context = tool_context()
        assert context is not None
        self.charges.append((context.idempotency_key, context.attempt))
        if len(self.charges) <= self.cuts:
            raise PowerCut
        return f"charged on attempt {context.attempt}"

    def options(self, events: list[Event]) -> AgentOptions:
        tool = Tool("charge", "", {}, self.charge, delivery=self.delivery)  # type: ignore[arg-type]
        return new_agent_options(self.model, tools=[tool], sink=events.append)


def _run(world: World, events: list[Event], journal: ListJournal) -> Any:
    return run_agent(world.options(events), session("s"), "go", run_id="r", journal=journal)


def test_a_resumed_run_agent_emits_run_resumed_and_renumbers_what_follows() -> None:
    """run_agent resumed from its journal tells run.resumed where it goes live, with the seq
    after the events delivered before the cut; every later event moves one seq up."""
    world, journal = World(), ListJournal(KEY)
    events: list[Event] = []
    with pytest.raises(PowerCut):
        _run(world, events, journal)
    before = len(events)
    result = _run(world, events, journal)
    assert result.output == 'done "charged on attempt 2"'
    resumed = events[before]
    assert resumed.type == "run.resumed" and resumed.run_id == "r"
    assert resumed.data == {"replayed": 1, "resumes": 1}
    assert [e.seq for e in events] == list(range(len(events)))  # no seq lost or told twice
    assert [e.type for e in events].count("run.started") == 1


def test_attempts_are_counted_across_resumes_of_a_plain_journal() -> None:
    """Each resume is counted in the journal before anything runs again: a call cut off twice
    is made a third time as attempt 3, with the same idempotency key."""
    world, journal = World(cuts=2), ListJournal(KEY)
    events: list[Event] = []
    for _ in range(2):
        with pytest.raises(PowerCut):
            _run(world, events, journal)
    result = _run(world, events, journal)
    assert result.output == 'done "charged on attempt 3"'
    assert world.charges == [("r:1:0", 1), ("r:1:0", 2), ("r:1:0", 3)]
    assert world.models == [1, 2]
    resumed = [e.data for e in events if e.type == "run.resumed"]
    assert resumed == [{"replayed": 1, "resumes": 1}, {"replayed": 1, "resumes": 2}]
    assert sum('"resumed"' in entry for entry in journal.items) == 2


def test_an_at_most_once_tool_in_flight_is_interrupted_by_run_agent_as_by_a_session() -> None:
    """A journal ending in the started marker of an at_most_once tool resumes with the
    session's TOOL_INTERRUPTED result; the call is not made again; it is journaled."""
    world, journal = World(delivery="at_most_once"), ListJournal()
    events: list[Event] = []
    with pytest.raises(PowerCut):
        _run(world, events, journal)
    assert '"started"' in journal.items[-1]
    result = asyncio.run(
        arun_agent(world.options(events), session("s"), "go", run_id="r", journal=journal)
    )
    message = "the run was cut off while this call was in flight"
    assert result.output == (
        f'done {{"error":{{"code":"TOOL_INTERRUPTED","message":"{message}"}}}}'
    )
    assert len(world.charges) == 1
    assert '"TOOL_INTERRUPTED"' in journal.items[-2]  # journaled before the model went on


def test_a_started_marker_of_another_tool_is_refused() -> None:
    """A started marker naming a tool the run does not call there is a changed agent."""
    world, journal = World(delivery="at_most_once"), ListJournal()
    with pytest.raises(PowerCut):
        _run(world, [], journal)
    journal.items[-1] = journal.items[-1].replace('"charge"', '"refund"')
    with pytest.raises(PraxoError) as info:
        _run(world, [], journal)
    assert info.value.code == "CHECKPOINT_INVALID"


def test_a_journal_holding_the_whole_run_still_tells_its_end() -> None:
    """Replayed from a journal that holds its last effect, a run makes no call and tells
    run.resumed then the events after the last entry, its run.completed among them."""
    world, journal = World(cuts=0), ListJournal()
    first: list[Event] = []
    done = _run(world, first, journal)
    events: list[Event] = []
    again = _run(world, events, journal)
    assert again.output == done.output and world.models == [1, 2]
    assert [e.type for e in events] == ["run.resumed", "model.responded", "run.completed"]
    assert [e.seq for e in events] == [first[-2].seq, first[-2].seq + 1, first[-1].seq + 1]


def test_a_run_failing_from_its_journal_tells_its_failure() -> None:
    """A journal whose last entry is a model's error fails the resumed run with that code,
    after run.resumed and a run.failed."""

    def model(_request: Request) -> ModelError:
        return ModelError("MODEL_DOWN", "down")

    journal = ListJournal()
    events: list[Event] = []
    options = new_agent_options(model, sink=events.append)
    with pytest.raises(PraxoError):
        run_agent(options, session("s"), "go", run_id="r", journal=journal)
    events.clear()
    with pytest.raises(PraxoError) as info:
        run_agent(options, session("s"), "go", run_id="r", journal=journal)
    assert info.value.code == "MODEL_DOWN"
    assert [e.type for e in events] == ["run.resumed", "run.failed"]


def test_a_sink_failing_on_run_resumed_raises_out_of_the_driver() -> None:
    """The sink's exception on run.resumed is the driver's to raise; the journal stays."""
    world, journal = World(), ListJournal()
    with pytest.raises(PowerCut):
        _run(world, [], journal)

    def sink(event: Event) -> None:
        if event.type == "run.resumed":
            raise ValueError("sink down")

    options = replace(world.options([]), sink=sink)
    with pytest.raises(ValueError, match="sink down"):
        run_agent(options, session("s"), "go", run_id="r", journal=journal)
    assert len(world.charges) == 1  # nothing was called again


def test_a_replay_that_is_not_a_resume_tells_nothing() -> None:
    """A run with no journal to replay is live from its first effect: no run.resumed."""
    from praxo_actors.agent._replay import Replay

    replay = Replay("s", "r", None)
    assert not replay.replaying and replay.resumes == 0
    event = Event("run.started", "r", "s", 0, 0, {})
    assert replay.emitted(event) is event
    assert replay.resumed_events() == []
    resumed = Replay("s", "r", None, [], resumes=1)
    effect = CallModel(lambda request: None, Request([], [], "r", "s", 1))
    assert resumed.emitted(event) is None  # held: the journal holds nothing more
    assert resumed.next_reply(effect) is LIVE
    told = resumed.resumed_events()
    assert [(e.type, e.seq) for e in told] == [("run.resumed", 1)]
    assert resumed.resumed_events() == []  # once


def test_a_resumed_approval_replayed_from_its_journal_keeps_its_seqs() -> None:
    """A run going on from an approval counts its events from the interrupted run's seq; cut
    off and replayed, its run.resumed takes the seq after the last one delivered."""
    from praxo_actors.agent import resume_agent
    from praxo_actors.middleware import require_approval

    world = World(cuts=0)
    cuts = [2]  # the model's step 2 is cut off once

    def model(request: Request) -> Response:
        if request.step in cuts:
            cuts.remove(request.step)
            raise PowerCut
        return world.model(request)

    events: list[Event] = []
    tool = Tool("charge", "", {}, world.charge)
    approval = require_approval(["charge"])
    options = new_agent_options(model, tools=[tool], sink=events.append, approval=approval)
    waiting = run_agent(options, session("s"), "go", run_id="r")
    assert waiting.status == "interrupted"
    journal = ListJournal()
    with pytest.raises(PowerCut):
        resume_agent(options, waiting.session, True, journal=journal)
    result = resume_agent(options, waiting.session, True, journal=journal)
    assert result.output == 'done "charged on attempt 1"' and len(world.charges) == 1
    assert [e.seq for e in events] == list(range(len(events)))
    resumed = [e.data for e in events if e.type == "run.resumed"]
    assert resumed[-1] == {"replayed": 1, "resumes": 1}  # the approval's came first
    assert len(resumed) == 2
