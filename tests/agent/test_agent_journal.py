"""Durable direct runs: run_agent / arun_agent with a journal resume without repeating effects."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from praxo_actors import PraxoError
from praxo_actors.agent import (
    ListJournal,
    StoreJournal,
    Tool,
    arun_agent,
    new_agent_options,
    run_agent,
)
from praxo_actors.memory import SQLiteStore
from praxo_actors.models import Request, Response, ToolCall, message_assistant, session


class PowerCut(BaseException):
    """Stands for the process dying in the middle of a call."""


class World:
    def __init__(self, delivery: str = "at_least_once") -> None:
        self.model_steps: list[int] = []
        self.sent = 0
        self.charged = 0
        self.cut = True
        self.delivery = delivery

    def model(self, request: Request) -> Response:
        self.model_steps.append(request.step)
        if request.step == 1:
            calls = [ToolCall("send", {}), ToolCall("charge", {})]
            return Response(message_assistant("", calls))
        return Response(message_assistant(f"done {request.messages[-1].content}"))

    def send(self, _args: dict[str, Any]) -> str:
        self.sent += 1
        return "sent"

    def charge(self, _args: dict[str, Any]) -> str:
        self.charged += 1
        if self.cut:
            self.cut = False
            raise PowerCut
        return "charged"

    def options(self) -> Any:
        tools = [
            Tool("send", "", {}, self.send),
            Tool("charge", "", {}, self.charge, delivery=self.delivery),  # type: ignore[arg-type]
        ]
        return new_agent_options(self.model, tools=tools)


def test_a_journaled_run_resumes_where_it_was_cut() -> None:
    world = World()
    journal = ListJournal()
    with pytest.raises(PowerCut):
        run_agent(world.options(), session("s"), "go", run_id="r1", journal=journal)
    assert len(journal.items) == 2  # the model's response and send's result
    result = run_agent(world.options(), session("s"), "go", run_id="r1", journal=journal)
    assert result.output == 'done "charged"'
    assert world.model_steps == [1, 2]
    assert world.sent == 1 and world.charged == 2
    # Replaying a finished journal performs nothing at all.
    again = run_agent(world.options(), session("s"), "go", run_id="r1", journal=journal)
    assert again.output == result.output and world.model_steps == [1, 2]


def test_an_at_most_once_call_cut_off_is_not_made_again() -> None:
    world = World(delivery="at_most_once")
    journal = ListJournal()
    with pytest.raises(PowerCut):
        run_agent(world.options(), session("s"), "go", run_id="r1", journal=journal)
    result = run_agent(world.options(), session("s"), "go", run_id="r1", journal=journal)
    assert "TOOL_INTERRUPTED" in result.output
    assert world.charged == 1 and world.sent == 1


def test_an_async_run_journals_in_a_sqlite_store(tmp_path: Path) -> None:
    world = World()
    key = b"k" * 32

    async def cut_then_resume() -> str:
        with SQLiteStore(tmp_path / "j.sqlite3") as store:
            journal = StoreJournal(store, "r9", key=key)
            with pytest.raises(PowerCut):
                await arun_agent(world.options(), session("s"), "go", run_id="r9", journal=journal)
        with SQLiteStore(tmp_path / "j.sqlite3") as store:  # as after a restart
            journal = StoreJournal(store, "r9", key=key)
            result = await arun_agent(
                world.options(), session("s"), "go", run_id="r9", journal=journal
            )
            journal.clear()
            assert journal.entries() == []
            return result.output

    assert asyncio.run(cut_then_resume()) == 'done "charged"'
    assert world.model_steps == [1, 2] and world.sent == 1


def test_a_forged_entry_is_refused(tmp_path: Path) -> None:
    world = World()
    journal = ListJournal(key=b"k" * 32)
    with pytest.raises(PowerCut):
        run_agent(world.options(), session("s"), "go", run_id="r1", journal=journal)
    journal.items[1] = journal.items[1].replace('"sent"', '"forged"')
    with pytest.raises(PraxoError) as info:
        run_agent(world.options(), session("s"), "go", run_id="r1", journal=journal)
    assert info.value.code == "CHECKPOINT_SIGNATURE"


def test_a_journal_of_another_agent_is_refused() -> None:
    world = World()
    journal = ListJournal()
    with pytest.raises(PowerCut):
        run_agent(world.options(), session("s"), "go", run_id="r1", journal=journal)
    other = new_agent_options(world.model, tools=[Tool("mail", "", {}, world.send)])
    journal.items[0] = journal.items[0].replace('"send"', '"mail"')
    with pytest.raises(PraxoError) as info:
        run_agent(other, session("s"), "go", run_id="r1", journal=journal)
    assert info.value.code == "CHECKPOINT_INVALID"
