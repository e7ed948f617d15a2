"""The compatibility module: the installed Pykka has every hook it names, and each helper works."""

from __future__ import annotations

import collections
import importlib.metadata
import inspect
import sys
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pykka
import pytest

from supervisors import _pykka_compat as compat

TIMEOUT = 5.0


@pytest.fixture
def counting() -> Iterator[pykka.ActorRef[Any]]:
    """Start a ``_CountingActor``; stop it after the test if it still runs."""
    ref = _CountingActor.start()
    yield ref
    if ref.is_alive():
        ref.stop(timeout=TIMEOUT)


def test_the_installed_pykka_is_the_tested_range() -> None:
    """Pykka is 4.5, the range pyproject pins and the module's docstring names."""
    # Pykka 4.5 has no __version__ attribute; the installed distribution knows its version.
    major, minor = (int(p) for p in importlib.metadata.version("pykka").split(".")[:2])
    assert (major, minor) == (4, 5)
    assert "Pykka 4.5" in (compat.__doc__ or "")


@pytest.mark.parametrize("name", sorted(compat.HOOKS))
def test_pykka_has_each_hook_with_its_parameters(name: str) -> None:
    """Each hook the module calls or replaces exists on ``pykka.Actor`` with these parameters."""
    params = compat.HOOKS[name]
    assert list(inspect.signature(getattr(pykka.Actor, name)).parameters) == list(params)
    if "self" not in params:
        assert isinstance(inspect.getattr_static(pykka.Actor, name), staticmethod)


class _Inbox:
    """A plain FIFO mailbox; its ``get`` raises ``IndexError`` when empty (ending a loop)."""

    def __init__(self) -> None:
        self.queue: collections.deque[Any] = collections.deque()

    def put(self, envelope: Any, /) -> None:
        self.queue.append(envelope)

    def get(self) -> Any:
        return self.queue.popleft()

    def empty(self) -> bool:
        return not self.queue


_HELD: list[pykka.Actor] = []
"""Actors started by hand: no thread holds them, and a ref holds its actor only weakly."""


def _no_start(actor: pykka.Actor) -> None:
    """Start no loop (the test runs it by hand); keep the actor alive until the test ends."""
    _HELD.append(actor)


@pytest.fixture(autouse=True)
def _release_held() -> Iterator[None]:
    """Unregister and drop the actors a test started by hand."""
    yield
    for actor in _HELD:
        pykka.ActorRegistry.unregister(actor.actor_ref)
    _HELD.clear()


@compat.actor_hooks(inbox=_Inbox, future=pykka.ThreadingFuture, start=_no_start)
class _ByHand(pykka.Actor):
    """An actor kind whose loop the test drives on its own thread."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def on_start(self) -> None:
        self.events.append("start")

    def on_receive(self, message: Any) -> Any:
        if message == "boom":
            raise ValueError("boom")
        return message * 2

    def on_stop(self) -> None:
        self.events.append("stop")


def test_actor_hooks_make_a_concrete_actor_kind() -> None:
    """The decorated class is no longer abstract and uses the given mailbox and futures."""
    assert not inspect.isabstract(_ByHand)
    actor = _ByHand()
    assert isinstance(actor.actor_inbox, _Inbox)
    assert isinstance(actor.actor_ref.ask(1, block=False), pykka.ThreadingFuture)


def test_the_loop_parts_run_pykkas_lifecycle() -> None:
    """Setup runs on_start, the loop answers asks, teardown answers what is left."""
    ref = _ByHand.start()
    actor = compat.actor_of(ref)
    assert isinstance(actor, _ByHand)
    compat.loop_setup(actor)
    assert actor.events == ["start"]
    answer = ref.ask(21, block=False)
    with pytest.raises(IndexError):  # the mailbox's own signal ends the loop
        compat.loop_running(actor)
    assert answer.get(timeout=TIMEOUT) == 42
    assert compat.receive(actor, 5) == 10
    stop = ref.stop(block=False)
    late = ref.ask(1, block=False)
    compat.loop_running(actor)  # handles the stop, then returns: the actor is stopped
    compat.loop_teardown(actor)
    assert stop.get(timeout=TIMEOUT) is True
    with pytest.raises(pykka.ActorDeadError):
        late.get(timeout=TIMEOUT)
    assert actor.events == ["start", "stop"]
    assert compat.registry_list().count(ref) == 0


def test_answer_dead_answers_asks_and_stops_and_ignores_tells() -> None:
    """An ask gets ActorDeadError, a stop is answered as done, a tell needs nothing."""
    ref = _ByHand.start()
    actor = compat.actor_of(ref)
    assert actor is not None
    assert ref in compat.registry_list()
    ask, stop = ref.ask(1, block=False), ref.stop(block=False)
    ref.tell(2)
    inbox: Any = actor.actor_inbox
    while inbox.queue:
        compat.answer_dead(inbox.get())
    with pytest.raises(pykka.ActorDeadError):
        ask.get(timeout=TIMEOUT)
    assert stop.get(timeout=TIMEOUT) is True
    compat.stop_now(actor)


def test_init_actor_sets_what_pykkas_init_sets() -> None:
    """URN, mailbox, stop event and a ref that shares them."""
    actor = _ByHand.__new__(_ByHand)
    inbox, stopped = _Inbox(), threading.Event()
    compat.init_actor(actor, inbox, stopped)
    assert actor.actor_inbox is inbox and actor.actor_stopped is stopped
    assert actor.actor_ref.actor_inbox is inbox and actor.actor_ref.actor_stopped is stopped
    assert actor.actor_urn.startswith("urn:uuid:")


def test_wrapped_exits_run_before_the_originals_and_unwrap_cleanly() -> None:
    """The wrappers see each exit; call_* reach the class's own methods; unwrap restores them."""
    actor = _ByHand()
    seen: list[str] = []

    def stop() -> None:
        seen.append("stop")
        compat.call_stop(actor, originals[0])

    def fail(*exc_info: Any) -> None:
        seen.append("fail")
        compat.call_handle_failure(actor, originals[1], *exc_info)

    originals = compat.wrap_exits(actor, stop, fail)
    assert originals == (None, None)
    compat.report_failure(actor, ValueError, ValueError("x"), None)
    assert actor.actor_stopped.is_set()
    compat.stop_now(actor)
    assert seen == ["fail", "stop"]
    assert actor.events == ["stop"]
    compat.unwrap_exits(actor, stop, fail)
    # Wrapping again finds no wrapper of the instance's own to keep: the unwrap was complete.
    assert compat.wrap_exits(actor, stop, fail) == (None, None)
    compat.unwrap_exits(actor, stop, fail)


def test_raised_by_handler_tells_a_handler_exception_from_others() -> None:
    """An exception out of a message handler is recognised by its traceback; others are not."""
    actor = _ByHand()
    with pytest.raises(ValueError) as raised:
        compat.receive(actor, "boom")
    assert compat.raised_by_handler(raised.value)
    try:
        raise ValueError("elsewhere")
    except ValueError:
        assert not compat.raised_by_handler(sys.exc_info()[1])  # type: ignore[arg-type]


class _Counting(compat.ReceiveHooks):
    """Counts what goes through the two renamed hooks."""

    received = 0
    failed = 0

    def _supervisors_receive(self, message: Any) -> Any:
        _Counting.received += 1
        return super()._supervisors_receive(message)

    def _supervisors_fail(self, *exc_info: Any) -> None:
        _Counting.failed += 1
        super()._supervisors_fail(*exc_info)


class _CountingActor(_Counting, pykka.ThreadingActor):
    """Echoes, crashes on ``"crash"``, and answers ``"seen"`` with what its handler saw."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def on_receive(self, message: Any) -> Any:
        if message == "seen":
            return list(self.seen)
        self.seen.append(message)
        if message == "crash":
            raise ValueError("crash")
        return message


def test_receive_hooks_route_pykkas_hooks_and_keep_their_behaviour(
    counting: pykka.ActorRef[Any],
) -> None:
    """Messages and failures go through the renamed hooks, and Pykka behaves as before."""
    received, failed = _Counting.received, _Counting.failed
    assert counting.ask("hi", timeout=TIMEOUT) == "hi"
    counting.tell("crash")
    assert counting.actor_stopped.wait(TIMEOUT)
    assert _Counting.received == received + 2
    assert _Counting.failed == failed + 1


def test_ping_is_answered_by_pykka_after_on_start(counting: pykka.ActorRef[Any]) -> None:
    """PING's reply is the actor's URN, without a user handler running."""
    received = _Counting.received
    assert counting.ask(compat.PING, timeout=TIMEOUT) == counting.actor_urn
    assert _Counting.received == received + 1  # through Pykka's own receive hook
    assert counting.ask("seen", timeout=TIMEOUT) == []  # not through on_receive


def test_the_loop_frame_names_threading_actors_loop() -> None:
    """LOOP_FRAME is the function a ThreadingActor's thread runs."""
    assert callable(getattr(pykka.ThreadingActor, compat.LOOP_FRAME))


def _taker(inbox: Any) -> Any:
    """Return a ``take`` for run_messages over ``inbox``'s queue: None once it is empty."""
    return lambda: inbox.get() if inbox.queue else None


def test_run_messages_answers_plain_and_pykka_messages_and_ends_the_turn_on_none() -> None:
    """Plain asks reach on_receive, PING and proxy calls Pykka's hook; None ends the turn."""
    ref = _ByHand.start()
    actor = compat.actor_of(ref)
    assert isinstance(actor, _ByHand)
    take = _taker(actor.actor_inbox)
    plain, ping = ref.ask(21, block=False), ref.ask(compat.PING, block=False)
    proxied = ref.proxy().on_receive(4)
    assert compat.run_messages(actor, take) is True  # the turn is over, the actor lives
    assert plain.get(timeout=TIMEOUT) == 42
    assert ping.get(timeout=TIMEOUT) == ref.actor_urn
    assert proxied.get(timeout=TIMEOUT) == 8
    stop = ref.stop(block=False)
    assert compat.run_messages(actor, take) is False  # the stop went through Pykka's hook
    assert stop.get(timeout=TIMEOUT) is True
    assert actor.events == ["stop"]


def test_run_messages_returns_ask_failures_and_reports_tell_failures() -> None:
    """An ask's exception goes to its asker; a tell's goes to the failure hooks, from a handler."""
    ref = _ByHand.start()
    actor = compat.actor_of(ref)
    assert isinstance(actor, _ByHand)
    failures: list[BaseException | None] = []
    handled: list[bool] = []

    def fail(exc_type: Any, exc_value: BaseException | None, tb: Any) -> None:
        failures.append(exc_value)
        handled.append(exc_value is not None and compat.raised_by_handler(exc_value))
        compat.call_handle_failure(actor, originals[1], exc_type, exc_value, tb)

    originals = compat.wrap_exits(actor, lambda: compat.call_stop(actor, None), fail)
    asked = ref.ask("boom", block=False)
    ref.tell("boom")
    assert compat.run_messages(actor, _taker(actor.actor_inbox)) is False
    with pytest.raises(ValueError, match="boom"):
        asked.get(timeout=TIMEOUT)
    assert [type(e) for e in failures] == [ValueError]
    assert handled == [True]  # the monitors wait for on_failure, as after Pykka's own loop
    assert actor.actor_stopped.is_set()


def test_run_messages_keeps_a_replaced_receive_hook() -> None:
    """A class that replaces Pykka's receive hook gets Pykka's loop, hook and all."""

    class Hooked(compat.ReceiveHooks, _ByHand):
        seen: ClassVar[list[Any]] = []

        def _supervisors_receive(self, message: Any) -> Any:
            self.seen.append(message)
            return super()._supervisors_receive(message)

    ref = Hooked.start()
    actor = compat.actor_of(ref)
    assert isinstance(actor, Hooked)
    answer = ref.ask(3, block=False)
    with pytest.raises(IndexError):  # Pykka's loop: the mailbox's own signal ends it
        compat.run_messages(actor, _taker(actor.actor_inbox))
    assert answer.get(timeout=TIMEOUT) == 6
    assert actor.seen == [3]
    compat.stop_now(actor)


def test_future_defaults_stand_in_for_pykkas_future_init() -> None:
    """A future class whose __init__ skips Pykka's still takes a get hook and answers get()."""

    @compat.future_defaults
    class Bare(pykka.Future[int]):
        def __init__(self) -> None:
            pass  # no pykka.Future.__init__: the class attributes stand in for it

    future = Bare()
    calls: list[float | None] = []

    def hook(timeout: float | None) -> int:
        calls.append(timeout)
        return 7

    future.set_get_hook(hook)
    assert future.get(timeout=TIMEOUT) == 7
    assert future.get(timeout=TIMEOUT) == 7
    assert calls == [TIMEOUT]  # the hook's result is kept per future, as Pykka keeps it
