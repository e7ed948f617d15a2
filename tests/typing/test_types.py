"""The public types say what they mean: mypy refuses a model returning str or a misspelt option."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mypy import api

GOOD = textwrap.dedent(
    """
    from praxo_actors.agent import new_agent_options
    from praxo_actors.memory import Store
    from praxo_actors.models import ModelError, Request, Response, message_assistant
    from praxo_actors.runtime import Runtime

    def model(request: Request) -> Response | ModelError:
        return Response(message_assistant("ok"))

    async def amodel(request: Request) -> Response:
        return Response(message_assistant("ok"))

    options = new_agent_options(model, max_steps=3)
    aoptions = new_agent_options(amodel)
    runtime = Runtime.start()
    store: Store = runtime.store
    runtime.stop()
    """
)

BAD = textwrap.dedent(
    """
    from praxo_actors.agent import new_agent_options
    from praxo_actors.models import Request

    def model(request: Request) -> str:
        return "not a response"

    options = new_agent_options(model)
    misspelt = new_agent_options(lambda r: r, max_step=3)
    """
)


def test_mypy_accepts_good_code_and_refuses_bad_code(tmp_path: Path) -> None:
    """Typed models and options check; a str-returning model and a misspelt field do not."""
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    args = ["--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy")]
    out, err, status = api.run([*args, str(tmp_path / "good.py")])
    assert status == 0, out + err
    out, _, status = api.run([*args, str(tmp_path / "bad.py")])
    assert status == 1
    assert 'Argument 1 to "new_agent_options" has incompatible type' in out
    assert 'Unexpected keyword argument "max_step"' in out


TOOLS = textwrap.dedent(
    """
    import msgspec

    from praxo_actors.agent import Tool, ToolContext, ToolRetry, new_agent_options, tool
    from praxo_actors.middleware import structured_output
    from praxo_actors.models import Request, Response, Session, message_assistant

    @tool
    def search(query: str, context: ToolContext | None = None) -> str:
        if not query:
            raise ToolRetry("give a query")
        return query

    @tool(name="fs.read", delivery="at_most_once")
    async def read(path: str) -> str:
        return path

    class Answer(msgspec.Struct):
        text: str

    def model(request: Request) -> Response:
        return Response(message_assistant("ok"))

    def instructions(session: Session) -> str:
        return session.id

    tools: list[Tool] = [search, read]
    options = new_agent_options(
        model,
        tools=tools,
        instructions=instructions,
        structured_output=structured_output(Answer),
        max_tool_retries=1,
        validate_tool_arguments=False,
    )
    """
)


def test_mypy_sees_tool_decorators_as_tools(tmp_path: Path) -> None:
    """``@tool`` and ``@tool(...)`` give a Tool; instructions, typed output and retries check."""
    (tmp_path / "tools.py").write_text(TOOLS)
    args = ["--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy")]
    out, err, status = api.run([*args, str(tmp_path / "tools.py")])
    assert status == 0, out + err


SESSIONS = textwrap.dedent(
    """
    from praxo_actors.cluster import ClusterRunFuture, ClusterSession
    from praxo_actors.models import RunResult
    from praxo_actors.runtime import (
        AgentSession,
        AwaitableRun,
        RunFuture,
        Runtime,
        RuntimeConfig,
        SessionHandle,
    )

    def sessions(handle: SessionHandle, cluster: ClusterSession) -> list[AgentSession]:
        one: AgentSession = handle
        many: AgentSession = cluster
        return [one, many]

    def futures(local: RunFuture, remote: ClusterRunFuture) -> list[AwaitableRun]:
        return [local, remote]

    async def anywhere(session: AgentSession) -> RunResult:
        session.run("hi").get(timeout=1.0)
        return await session.aresume(True)

    runtime = Runtime.start(config=RuntimeConfig(max_queue=3))
    also = Runtime.start(max_queue=3, on_busy="reject")
    """
)

NOT_SESSIONS = textwrap.dedent(
    """
    from praxo_actors.runtime import AgentSession, Runtime

    class Half:
        id = "s"
        agent = "default"

        def run(self, input: str, deadline: float | None = None) -> None: ...

    half: AgentSession = Half()
    misspelt = Runtime.start(max_queu=3)
    wrong = Runtime.start(on_busy="sometimes")
    """
)


def test_mypy_sees_both_sessions_as_agent_sessions(tmp_path: Path) -> None:
    """Both sessions check as ``AgentSession``; the start keywords are typed."""
    (tmp_path / "sessions.py").write_text(SESSIONS)
    (tmp_path / "not_sessions.py").write_text(NOT_SESSIONS)
    args = ["--strict", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy")]
    out, err, status = api.run([*args, str(tmp_path / "sessions.py")])
    assert status == 0, out + err
    out, _, status = api.run([*args, str(tmp_path / "not_sessions.py")])
    assert status == 1
    assert 'expression has type "Half", variable has type "AgentSession"' in out
    assert 'Unexpected keyword argument "max_queu"' in out
    assert 'Argument "on_busy" to "start" of "Runtime" has incompatible type' in out
