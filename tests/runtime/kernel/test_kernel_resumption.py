"""Resumes as the kernel routes them, without a thread: the lookup of the run a resume goes
on with, what waits behind it, and futures for runs resumed from their journal."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable

import pytest
from _kernel_fakes import Rig, result

from praxo_actors import PraxoError
from praxo_actors.runtime._kernel._kernel import Kernel
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._protocol import StartRun

Build = Callable[..., Rig]
_resumes = itertools.count(1)


def code(future: RunFuture) -> str:
    """Return the code a settled future fails with."""
    assert future.done()
    with pytest.raises(PraxoError) as info:
        future.get(timeout=0)
    return info.value.code


class Lookup:
    """A lookup of a session's interrupted run that answers when the test says."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.answer: asyncio.Future[str | None] | None = None

    async def __call__(self, kernel: Kernel, session_id: str) -> str | None:
        self.asked.append(session_id)
        self.answer = asyncio.get_running_loop().create_future()
        return await self.answer


def resume(
    r: Rig, session_id: str, value: str = '"yes"', timeout: float | None = None
) -> RunFuture:
    """Ask for a resume as ``handle.resume`` does (on the loop); return its future."""
    future = RunFuture(f"resume-{next(_resumes)}", session_id, r.kernel.request_cancel)

    async def ask() -> None:
        r.kernel.resume(future, "echo", None, value, timeout)

    r.run(ask())
    return future


def test_a_resume_takes_the_id_of_the_run_it_goes_on_with(rig: Build) -> None:
    """The lookup's run id becomes the resume's; a run submitted meanwhile waits behind it
    and reaches the session after it."""
    lookup = Lookup()
    r = rig(lookup=lookup)
    future = resume(r, "s")
    assert lookup.asked == ["s"]
    later = r.submit("s", input="after")
    assert not r.kernel.is_live("s")  # held behind the lookup
    assert lookup.answer is not None
    lookup.answer.set_result("run-7")
    r.turn()
    assert future.run_id == "run-7"
    r.activate()
    starts = [m for m in r.sessions["s"].told if isinstance(m, StartRun)]
    assert [(m.run_id, m.resume) for m in starts] == [("run-7", '"yes"'), (later.run_id, None)]
    assert r.kernel.cancel(future.run_id) is True  # by its new id


def test_a_failed_lookup_refuses_the_resume_with_its_code(rig: Build) -> None:
    """A lookup that fails refuses the resume with the failure's code (a store's own error
    as STORE_FAILED); the session's other runs go on."""
    lookup = Lookup()
    r = rig(lookup=lookup)
    future = resume(r, "s")
    later = r.submit("s")
    assert lookup.answer is not None
    lookup.answer.set_exception(OSError("disk gone"))
    r.turn()
    assert code(future) == "STORE_FAILED"
    assert not later.done() and r.kernel.is_live("s")


def test_a_lookup_is_bounded_by_its_timeout(rig: Build) -> None:
    """A lookup that never answers refuses the resume RUNTIME_TIMEOUT."""
    lookup = Lookup()
    r = rig(lookup=lookup)
    future = resume(r, "s", timeout=0.01)

    async def settled() -> None:
        with contextlib.suppress(PraxoError):
            await asyncio.wait_for(future, 10)

    r.run(settled())
    assert code(future) == "RUNTIME_TIMEOUT"


def test_a_resume_waiting_for_its_lookup_can_be_cancelled(rig: Build) -> None:
    """A resume cancelled while its lookup runs fails AGENT_CANCELLED and is not admitted."""
    lookup = Lookup()
    r = rig(lookup=lookup)
    future = resume(r, "s")
    assert future.cancel() is True
    assert code(future) == "AGENT_CANCELLED"
    assert lookup.answer is not None
    lookup.answer.set_result("run-7")
    r.turn()
    assert not r.kernel.is_live("s") and r.statistics().runs_started == 0


def test_a_second_resume_of_a_running_run_is_refused(rig: Build) -> None:
    """Two resumes of one run: the second finds it running and fails SESSION_NOT_INTERRUPTED."""
    r = rig()
    first = r.submit("s", run_id="run-1", resume='"a"')
    second = r.submit("s", run_id="run-1", resume='"b"')
    assert code(second) == "SESSION_NOT_INTERRUPTED" and not first.done()


def test_a_resume_of_a_run_whose_interruption_is_being_stored_waits_for_it(
    rig: Build,
) -> None:
    """A resume that arrives while the run's interruption is on its way to the store waits,
    and is admitted once the store has written it."""
    r = rig()
    first = r.submit("s", run_id="run-1")
    r.activate()
    r.kernel.completed("run-1", result("run-1", status="interrupted"))
    again = RunFuture("run-1", "s", r.kernel.request_cancel)
    r.kernel.submit(again, "echo", "", None, '"go on"')
    assert not again.done()
    r.kernel.saved([("run-1", None)], [])
    assert first.get(timeout=0).status == "interrupted"
    told = r.sessions["s"].told[-1]
    assert isinstance(told, StartRun) and (told.run_id, told.resume) == ("run-1", '"go on"')
    assert not again.done() and r.kernel.known("run-1") is again


def test_a_run_resumed_from_its_journal_gets_a_future_its_watchers_receive(
    rig: Build,
) -> None:
    """A session resuming a journaled run gives it a future; a caller watching for that run
    (which woke the session) receives it, and its outcome settles it."""
    r = rig(durable=("keeper",))
    found: list[RunFuture | None] = []
    r.kernel.watch("s", "run-9", found.append)
    assert found == [] and r.kernel.is_live("s")  # woken to resume its journal
    r.activate()
    r.kernel.resumed("s", "run-9")
    assert len(found) == 1 and found[0] is not None and found[0].run_id == "run-9"
    r.kernel.completed("run-9", result("run-9"))
    r.kernel.saved([("run-9", None)], [])
    assert found[0].get(timeout=0).output == "ok"
    assert r.kernel.known("run-9") is found[0]


def test_a_watch_that_cannot_wake_its_session_gets_none(rig: Build) -> None:
    """A watcher of a run whose session cannot be activated is told None at once."""
    r = rig()
    r.kernel.begin_stop()
    found: list[RunFuture | None] = []
    r.kernel.watch("s", "run-9", found.append)
    assert found == [None]
