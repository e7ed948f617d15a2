"""``handle.aresult``: a pending run is awaited on the caller's loop, its wait bounded."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _runtime_helpers import TIMEOUT

from praxo_actors import AgentError, PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.models import ModelError, Request, Response, message_assistant
from praxo_actors.runtime import Runtime
from praxo_actors.runtime._front import _submit


def test_a_pending_runs_result_is_awaited_without_a_worker_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``aresult`` of a submitted run still going waits for it on the loop (no thread hop); a
    short timeout ends only the wait (``RUNTIME_TIMEOUT``), and the run goes on to its end."""
    release: asyncio.Event | None = None

    async def model(_request: Request) -> Response:
        assert release is not None
        await release.wait()
        return Response(message_assistant("done"))

    def no_thread(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("a pending run's result went through a worker thread")

    async def main() -> None:
        nonlocal release
        release = asyncio.Event()
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as runtime:
            runtime.register_agent("default", lambda: new_agent_options(model))
            handle = runtime.session("s")
            run_id = await handle.asubmit("hi")
            monkeypatch.setattr(_submit.asyncio, "to_thread", no_thread)
            with pytest.raises(PraxoError) as info:
                await handle.aresult(run_id, timeout=0)
            assert info.value.code == "RUNTIME_TIMEOUT"

            async def let_go() -> None:
                assert release is not None
                release.set()

            # Tasks start in order: the wait is suspended on the run before the run is let go.
            result, _ = await asyncio.wait_for(
                asyncio.gather(handle.aresult(run_id, timeout=TIMEOUT), let_go()), TIMEOUT
            )
            assert result.run_id == run_id and result.output == "done"
            monkeypatch.undo()
            # Settled and no longer pending: another handle finds it among the session's kept
            # results.
            assert (await runtime.session("s").aresult(run_id, timeout=TIMEOUT)).output == "done"

    asyncio.run(main())


@pytest.mark.parametrize("durable", [False, True])
def test_a_completed_run_is_answered_by_the_handle_that_submitted_it(
    monkeypatch: pytest.MonkeyPatch, durable: bool
) -> None:
    """A run that completed before ``aresult`` is asked is answered by the handle that
    submitted it, with no worker thread and no store read; a failed one is the store's to tell
    (its code), and any other handle finds the completed one in the store."""

    async def model(request: Request) -> Response | ModelError:
        if request.messages[-1].content == "fail":
            return ModelError("MODEL_UNAVAILABLE", "down")
        return Response(message_assistant("done"))

    def no_thread(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("a completed run's result went through a worker thread")

    async def main() -> None:
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as runtime:
            runtime.register_agent("default", lambda: new_agent_options(model), durable=durable)
            handle = runtime.session("s")
            run_id = await handle.asubmit("hi")
            other = await runtime.session("s").aresult(run_id, timeout=TIMEOUT)  # settled now
            with monkeypatch.context() as patch:
                patch.setattr(_submit.asyncio, "to_thread", no_thread)
                result = await handle.aresult(run_id, timeout=0)
            assert result.run_id == run_id and result.output == "done" == other.output
            assert [m.content for m in result.session.messages] == ["hi", "done"]
            # Handed out once: asked again, it is found in the store.
            assert (await handle.aresult(run_id, timeout=TIMEOUT)).output == "done"

            failing = await handle.asubmit("fail")
            with pytest.raises(AgentError) as first:
                await runtime.session("s").aresult(failing, timeout=TIMEOUT)
            with pytest.raises(AgentError) as info:
                await handle.aresult(failing, timeout=TIMEOUT)
            assert info.value.code == first.value.code == "MODEL_UNAVAILABLE"

    asyncio.run(main())


def test_aresult_refuses_bad_arguments_with_a_code() -> None:
    """A run id that is not a non-empty str, or a negative timeout: ``RUNTIME_INVALID_INPUT``."""

    async def main() -> None:
        async with Runtime.open(idle_timeout=None, timeout=TIMEOUT) as runtime:
            runtime.register_agent("default", lambda: new_agent_options(_echo))
            handle = runtime.session("s")
            for run_id, timeout in (("", 1.0), (3, 1.0), ("r", -1.0), ("r", True)):
                with pytest.raises(PraxoError) as info:
                    await handle.aresult(run_id, timeout=timeout)  # type: ignore[arg-type]
                assert info.value.code == "RUNTIME_INVALID_INPUT"

    asyncio.run(main())


async def _echo(_request: Request) -> Response:
    return Response(message_assistant("ok"))
