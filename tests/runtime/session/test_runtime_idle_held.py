"""An idle session holds a short conversation encoded: what it gives back is what it held."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from _helpers import Scripted, response, say
from _runtime_helpers import TIMEOUT

from praxo_actors.agent import AgentOptions, new_agent_options, tool
from praxo_actors.models import ImageBlock, Message, Request, TextBlock, ToolCall
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._session._held import ENCODED_MESSAGES
from praxo_actors.runtime._session._session import SessionActor

Start = Callable[..., Runtime]


@tool
def note(a: int, nested: dict[str, Any]) -> str:
    return f"noted {a} {nested}"


def _held(session_id: str) -> object:
    """What the session's actor holds as its session (read by a test only)."""
    gc.collect()
    actors = [o for o in gc.get_objects() if type(o) is SessionActor and o.session_id == session_id]
    assert len(actors) == 1
    return actors[0].session


def test_the_next_run_sees_the_conversation_an_idle_session_held(runtime: Start) -> None:
    """Tool calls with nested arguments and content blocks come back equal after idling."""
    call = ToolCall("note", {"a": 1, "nested": {"b": [1, 2.5, None, "x"]}}, id="c1")
    blocks = Message(role="assistant", content=[TextBlock("done"), ImageBlock("u", "image/png")])
    model = Scripted((say("", call), response(blocks), say("again")))

    def agent() -> AgentOptions:
        return new_agent_options(model, tools=[note])

    rt = runtime(agents={"default": agent})
    handle = rt.session("s1")
    first = handle.run("go").get(timeout=TIMEOUT)
    assert len(first.session.messages) == 4
    assert type(_held("s1")) is bytes  # idle: held encoded
    assert handle.history() == first.session.messages
    second = handle.run("more").get(timeout=TIMEOUT)
    last: Request = model.requests[-1]
    assert last.messages[:4] == first.session.messages
    assert second.session.messages[:4] == first.session.messages
    assert second.output == "again"


def test_a_long_conversation_keeps_its_objects(runtime: Start) -> None:
    """Past ENCODED_MESSAGES messages, the idle session holds its messages as they are."""
    rt = runtime(agents={"default": lambda: new_agent_options(Scripted((say("ok"),) * 99))})
    handle = rt.session("s1")
    runs = ENCODED_MESSAGES // 2
    for _ in range(runs):
        handle.run("x").get(timeout=TIMEOUT)
    assert type(_held("s1")) is bytes
    result = handle.run("x").get(timeout=TIMEOUT)
    assert len(result.session.messages) == 2 * (runs + 1) > ENCODED_MESSAGES
    assert _held("s1") == result.session
    assert [m.content for m in handle.history()] == ["x", "ok"] * (runs + 1)
