"""The objects the garbage collector tracks per idle live session and per run in flight.

Counts, not times: after ``gc.collect()`` they are the same on every run of the same code, so
a change that makes a session or a run hold more for the collector fails here. 400 sessions:
SQLite keeps a weak reference to each recent cursor (up to ~200, pruned in batches), which
must not pass for a cost of each session.
"""

from __future__ import annotations

import pytest

from praxo_actors.testing._tracked import count_tracked

IDLE_LIMIT = 6  # an idle live session that ran once (two messages, held encoded)
# A run in flight, beyond a bare asyncio task awaiting the same model and beyond its idle
# session, the conversation it decodes included (6 objects for two messages: the session, its
# list, each message and its tool-call list), which the idle session held encoded.
RUN_LIMIT = 20

# What a run in flight holds no more of: the agent run beside the session's run (one object),
# a callback's outcome sender beside its task's coroutine, a dict of the session's pending
# runs in the kernel's table (its ids only: untracked).
NOT_IN_FLIGHT = (
    "praxo_actors.agent._run.AgentRun",
    "praxo_actors.runtime._session._calls._Deliver",
    "builtins.dict",
)


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
def test_tracked_objects_per_idle_session_and_per_run_in_flight(store_kind: str) -> None:
    """An idle live session holds <= 6 tracked objects; a run in flight adds <= 20."""
    counts = count_tracked(store_kind, n=400)
    assert counts.idle <= IDLE_LIMIT, counts.idle_types
    assert counts.run_overhead <= RUN_LIMIT, counts.in_flight_types
    for name in NOT_IN_FLIGHT:
        assert counts.in_flight_types.get(name, 0.0) < 0.5, (name, counts.in_flight_types)
    # The floor is what an asyncio task awaiting an Event costs: a few objects, never zero.
    assert 4 <= counts.bare_task <= 12, counts.bare_task
