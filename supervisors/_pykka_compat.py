"""Every use of Pykka's private hooks and internals, in one module.

Pykka's public API is enough to use actors, not to build a new kind of them or to learn how one
ended. Three things here need more: an actor kind that brings its own mailbox, futures and loop
(``praxo_actors.actors.MNActor`` and the thread-per-actor ``AwaitableThreadingActor``), monitors
that tell a normal stop from a crash (:mod:`supervisors._monitor`), and let-it-crash for ask
handlers (:mod:`supervisors._ask_crash`). They reach Pykka's private names only through this
module, and ``tests/test_pykka_private_names.py`` fails if any other module of the repository
spells one, so a new Pykka release is checked against this file alone.

Tested against Pykka 4.5.0; ``pyproject.toml`` pins ``pykka>=4.5,<4.6``, and
``tests/supervision/test_pykka_compat.py`` checks that the installed Pykka still has every hook in
:data:`HOOKS`, with the parameters listed there. Pykka's own test suite runs against ``MNActor``
(``scripts/pykka_suite.py``).

The lifecycle contract every actor kind keeps, and the thread that runs each part (Pykka 4.5):

- ``_create_actor_inbox()`` (static) makes the mailbox, in ``__init__``: the constructing thread.
- ``_create_future()`` (static) makes the future of each ask and proxy call: the asking thread.
- ``_start_actor_loop()`` starts the actor, from ``start()``: the starting thread.
- ``_actor_loop_setup()`` runs ``on_start``; ``_actor_loop_running()`` takes messages from the
  mailbox until ``actor_stopped`` is set; ``_actor_loop_teardown()`` answers what is left with
  ``ActorDeadError``: all three on the actor's own thread (for an M:N actor, the scheduler
  thread that runs its turn).
- ``_handle_receive(message)`` handles one message (Pykka's stop and proxy messages itself, the
  rest through ``on_receive``); an exception from a tell handler goes to
  ``_handle_failure(exc_type, exc_value, traceback)`` (log, unregister, set ``actor_stopped``)
  and then ``on_failure``; the stop message runs ``_stop()`` (unregister, set ``actor_stopped``,
  ``on_stop``). All on the actor's own thread.

So an actor ends through one of two methods, ``_stop()`` for a stop message and
``_handle_failure()`` for an exception in ``on_start``, a tell handler, ``on_stop`` or
``on_failure``. Wrapping those two on the *instance* (:func:`wrap_exits`) catches both paths for
any actor kind, costs no thread per actor, and tells a normal stop from a crash;
``actor_stopped`` alone cannot (it is set before ``on_stop`` runs and carries no reason).
"""

from __future__ import annotations

import abc
import logging
import operator
import sys
import uuid
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import pykka
from pykka._future import _Unset
from pykka.messages import ProxyCall, ProxyGetAttr, ProxySetAttr, _ActorStop

if TYPE_CHECKING:
    import threading

    from pykka._actor import ActorInbox as ActorInbox
    from pykka._envelope import Envelope as Envelope
    from pykka._future import GetHookFunc as GetHookFunc
    from pykka._types import OptExcInfo as OptExcInfo

__all__ = [
    "HOOKS",
    "LOOP_FRAME",
    "PING",
    "ExitHooks",
    "HeldRef",
    "ReceiveHooks",
    "actor_hooks",
    "actor_of",
    "answer_dead",
    "call_handle_failure",
    "call_stop",
    "future_defaults",
    "init_actor",
    "install_exit_watcher",
    "loop_ended",
    "loop_running",
    "loop_setup",
    "loop_teardown",
    "raised_by_handler",
    "receive",
    "registry_list",
    "report_failure",
    "run_messages",
    "start_loop",
    "stop_now",
    "stopped_outside_exits",
    "unwrap_exits",
    "wrap_exits",
]

A = TypeVar("A", bound=type[pykka.Actor])
F = TypeVar("F", bound=type[pykka.Future[Any]])

HOOKS: dict[str, tuple[str, ...]] = {
    "_create_actor_inbox": (),
    "_create_future": (),
    "_start_actor_loop": ("self",),
    "_actor_loop_setup": ("self",),
    "_actor_loop_running": ("self",),
    "_actor_loop_teardown": ("self",),
    "_handle_receive": ("self", "message"),
    "_handle_failure": ("self", "exception_type", "exception_value", "traceback"),
    "_stop": ("self",),
}
"""The methods of ``pykka.Actor`` this module calls or replaces, with their parameters."""

LOOP_FRAME = "_actor_loop"
"""The function that runs a ``ThreadingActor``'s loop: a profiler tells those threads by it."""

PING = ProxyGetAttr(attr_path=("actor_urn",))
"""A message Pykka answers itself (no user handler runs), and only after ``on_start`` returned.

So a reply proves that an actor has started; a dead actor answers ``ActorDeadError``.
"""

# -- building an actor kind ---------------------------------------------------------------------


def actor_hooks(
    *,
    inbox: Callable[[], ActorInbox] | None = None,
    future: Callable[[], pykka.Future[Any]] | None = None,
    start: Callable[[Any], None] | None = None,
) -> Callable[[A], A]:
    """Return a class decorator that gives an actor class its mailbox, futures and loop start.

    Args:
        inbox: Makes each actor's mailbox (called in the thread that constructs the actor).
        future: Makes the future of each ask (called in the asking thread).
        start: ``start(actor)`` starts a constructed actor's loop (the starting thread).
    """

    def decorate(cls: A) -> A:
        if inbox is not None:
            cls._create_actor_inbox = staticmethod(inbox)  # type: ignore[method-assign]
        if future is not None:
            cls._create_future = staticmethod(future)  # type: ignore[method-assign]
        if start is not None:
            cls._start_actor_loop = start  # type: ignore[method-assign,assignment]
        # Pykka declares the three abstract: the class was abstract when it was made.
        abc.update_abstractmethods(cls)
        return cls

    return decorate


# ``actor_stopped`` for an actor kind whose mailbox is its stop event, and its ref: read from
# the mailbox's field, so neither keeps a field for it (8 bytes each). A C getter, so reading
# it is no Python call.
STOP_EVENT_IS_INBOX: Any = property(operator.attrgetter("actor_inbox"))


class HeldRef(pykka.ActorRef[Any]):
    """A ref to an actor that its mailbox holds while it runs (``inbox._actor``, None once
    the actor is gone): a ``pykka.ActorRef`` without a weak reference of its own.

    Pykka's ref keeps a weak reference to its actor and its four fields in a ``__dict__``
    (~190 bytes with the weak reference, per actor); this one keeps them in slots (~90).
    The actor is reached through the mailbox, as Pykka reaches it through the weak
    reference: for as long as the actor runs. Compared and hashed by identity, as Pykka's.
    The mailbox is also the actor's stop event (``actor_stopped``).
    """

    __slots__ = ("actor_class", "actor_inbox", "actor_urn")
    actor_stopped = STOP_EVENT_IS_INBOX

    def __init__(self, actor: pykka.Actor) -> None:
        # No super().__init__(): it would make the weak reference this class exists to avoid.
        self.actor_class = actor.__class__
        self.actor_urn = actor.actor_urn
        self.actor_inbox = actor.actor_inbox

    def _actor_weakref(self) -> pykka.Actor | None:  # type: ignore[override]
        # What Pykka's proxies and actor_of() call to reach the actor.
        actor: pykka.Actor | None = getattr(self.actor_inbox, "_actor", None)
        return actor


def init_actor(
    actor: pykka.Actor, inbox: ActorInbox, stopped: threading.Event, *, held: bool = False
) -> None:
    """Set what ``pykka.Actor.__init__`` sets, with this mailbox and stop event.

    For an actor kind whose ``__init__`` does not call Pykka's (which would make a
    ``threading.Event`` only for it to be replaced). Runs in the constructing thread.
    ``held``: the mailbox holds the actor in its ``_actor`` attribute while the actor runs,
    and is its stop event; its ref is then a :class:`HeldRef`. A class whose
    ``actor_stopped`` is :data:`STOP_EVENT_IS_INBOX` is not given one.
    """
    actor.actor_urn = uuid.uuid4().urn
    actor.actor_inbox = inbox
    if getattr(type(actor), "actor_stopped", None) is not STOP_EVENT_IS_INBOX:
        actor.actor_stopped = stopped
    assert not held or stopped is inbox  # type: ignore[comparison-overlap]
    actor._actor_ref = HeldRef(actor) if held else pykka.ActorRef(actor)


_UNSET = _Unset()


def future_defaults(cls: F) -> F:
    """Give a future class, as class attributes, what ``pykka.Future.__init__`` sets.

    For a future kind whose ``__init__`` does not call Pykka's: its futures then set nothing
    of Pykka's until a get hook is set (the values are only read, or replaced per instance).
    """
    cls._get_hook = None  # type: ignore[misc]
    cls._get_hook_result = _UNSET  # type: ignore[misc]
    return cls


def start_loop(actor: pykka.Actor) -> None:
    """Start a constructed actor's loop without registering it (``start()`` registers first)."""
    actor._start_actor_loop()


def loop_setup(actor: pykka.Actor) -> None:
    """Run ``on_start`` as Pykka's loop does (a failure goes to the failure hook)."""
    actor._actor_loop_setup()


def loop_running(actor: pykka.Actor) -> None:
    """Run Pykka's message loop: it returns once ``actor_stopped`` is set.

    It takes each message with ``actor_inbox.get()``; an exception that the mailbox's ``get``
    raises ends the loop, outside Pykka's handler guards.
    """
    actor._actor_loop_running()


# Pykka's own messages, which its ``_handle_receive`` answers itself; every other message
# goes to ``on_receive``.
_PYKKA_MESSAGES = (_ActorStop, ProxyCall, ProxyGetAttr, ProxySetAttr)
_PYKKA_HANDLE_RECEIVE = pykka.Actor._handle_receive
# Where Pykka's loop logs an exception returned to an asker.
_pykka_logger = logging.getLogger("pykka")
# The frames a message handler runs under: Pykka's receive hook, and run_messages's own.
_HANDLER_FRAMES = frozenset({"_handle_receive", "_handle_plain"})


def run_messages(actor: pykka.Actor, take: Callable[[], Envelope[Any] | None]) -> bool:
    """Run Pykka's message loop on the messages ``take()`` returns, plain ones straight to
    ``on_receive``.

    What :func:`loop_running` does, with the same outcome for every message: Pykka's own
    messages (stop, proxy calls) still go through its receive hook. For the rest it skips the
    hook's four type tests and a method call per message, and the loop's attribute lookups per
    message. An actor whose class replaces the receive hook runs Pykka's loop itself, as
    :func:`loop_running`: its mailbox's ``get`` must end the turn by raising.

    Returns:
        True when ``take()`` returned None (the turn is over: no exception raised to end it),
        False once the actor has stopped.
    """
    # The class, not the instance: reading an actor's __dict__ would make it a dict object,
    # one more per actor for the collector.
    if type(actor)._handle_receive is not _PYKKA_HANDLE_RECEIVE:
        actor._actor_loop_running()
        return False
    stopped = actor.actor_stopped
    on_receive = actor.on_receive
    while not stopped.is_set():
        envelope = take()
        if envelope is None:
            return True
        message = envelope.message
        reply_to = envelope.reply_to
        try:
            if isinstance(message, _PYKKA_MESSAGES):
                response = actor._handle_receive(message)
            else:
                response = _handle_plain(on_receive, message)
            if reply_to is not None:
                reply_to.set(response)
        except Exception:
            # Pykka's loop, line for line (pykka/_actor.py, _actor_loop_running).
            if reply_to is not None:
                _pykka_logger.info(
                    f"Exception returned from {actor} to caller:", exc_info=sys.exc_info()
                )
                reply_to.set_exception()
            else:
                actor._handle_failure(*sys.exc_info())
                try:
                    actor.on_failure(*sys.exc_info())
                except Exception:
                    actor._handle_failure(*sys.exc_info())
        except BaseException:
            exception_value = sys.exc_info()[1]
            _pykka_logger.debug(f"{exception_value!r} in {actor}. Stopping all actors.")
            actor._stop()
            pykka.ActorRegistry.stop_all()
    return False


def _handle_plain(on_receive: Callable[[Any], Any], message: Any) -> Any:
    # A frame of its own, named in _HANDLER_FRAMES: raised_by_handler tells by it that an
    # exception came out of a message handler, as it tells by Pykka's _handle_receive.
    return on_receive(message)


def loop_teardown(actor: pykka.Actor) -> None:
    """Answer every message left in the mailbox of a stopped actor, as Pykka's loop does."""
    actor._actor_loop_teardown()


def receive(actor: pykka.Actor, message: Any) -> Any:
    """Handle one message as Pykka's loop does, and return the reply."""
    return actor._handle_receive(message)


def report_failure(
    actor: pykka.Actor,
    exception_type: type[BaseException] | None,
    exception_value: BaseException | None,
    traceback: TracebackType | None,
) -> None:
    """Log a failure, unregister the actor and mark it stopped, through its failure hook."""
    actor._handle_failure(exception_type, exception_value, traceback)


def stop_now(actor: pykka.Actor) -> None:
    """Stop the actor at once, from its own thread: unregister, set stopped, run ``on_stop``."""
    actor._stop()


def answer_dead(envelope: Envelope[Any]) -> None:
    """Answer a message that reached a stopped actor, as Pykka's teardown does.

    A stop is answered as done; an ask gets ``ActorDeadError``; a tell needs no answer.
    """
    reply_to = envelope.reply_to
    if reply_to is None:
        return
    if isinstance(envelope.message, _ActorStop):
        reply_to.set(None)
    else:
        error = pykka.ActorDeadError("actor stopped before handling the message")
        reply_to.set_exception(exc_info=(pykka.ActorDeadError, error, None))


class ReceiveHooks(pykka.Actor):
    """Pykka's message and failure hooks under names of this package, for mixins to override.

    ``_supervisors_receive(message)`` handles one message and ``_supervisors_fail(exc_type,
    exc_value, traceback)`` reports a failure; both run on the actor's thread and by default do
    what Pykka does. Put a mixin built on this class before the actor kind in the bases.
    """

    def _handle_receive(self, message: Any) -> Any:
        return self._supervisors_receive(message)

    def _supervisors_receive(self, message: Any) -> Any:
        """Handle one message as Pykka does (the actor's thread)."""
        return super()._handle_receive(message)

    def _handle_failure(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._supervisors_fail(exception_type, exception_value, traceback)

    def _supervisors_fail(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Report a failure as Pykka does (the actor's thread)."""
        super()._handle_failure(exception_type, exception_value, traceback)


# -- watching an actor end ----------------------------------------------------------------------


def actor_of(ref: pykka.ActorRef[Any]) -> pykka.Actor | None:
    """Return the actor behind ``ref``, or None once it is gone.

    Pykka gives no public way from a ref to its actor; the ref's weak reference is the only one.
    """
    return ref._actor_weakref()


def wrap_exits(
    actor: pykka.Actor, stop: Callable[[], None], handle_failure: Callable[..., None]
) -> tuple[Any, Any]:
    """Put ``stop`` and ``handle_failure`` in place of the actor's two exits, on the instance.

    Returns:
        The instance's own ``_stop`` and ``_handle_failure`` before (None: the class's), to call
        through :func:`call_stop` and :func:`call_handle_failure`. Kept as plain values, not
        bound methods: those would cost ~130 bytes more on every watched actor.
    """
    attrs = actor.__dict__
    originals = attrs.get("_stop"), attrs.get("_handle_failure")
    attrs["_stop"] = stop
    attrs["_handle_failure"] = handle_failure
    return originals


def unwrap_exits(
    actor: pykka.Actor, stop: Callable[[], None], handle_failure: Callable[..., None]
) -> None:
    """Remove the wrappers :func:`wrap_exits` put in place, where they still are."""
    attrs = actor.__dict__
    if attrs.get("_stop") == stop:
        del attrs["_stop"]
    if attrs.get("_handle_failure") == handle_failure:
        del attrs["_handle_failure"]


def call_stop(actor: Any, original: Any) -> None:
    """Call the actor's ``_stop`` as it was before :func:`wrap_exits`."""
    if original is not None:
        original()
    else:
        type(actor)._stop(actor)


def call_handle_failure(
    actor: Any,
    original: Any,
    exception_type: type[BaseException] | None,
    exception_value: BaseException | None,
    traceback: TracebackType | None,
) -> None:
    """Call the actor's ``_handle_failure`` as it was before :func:`wrap_exits`."""
    if original is not None:
        original(exception_type, exception_value, traceback)
    else:
        type(actor)._handle_failure(actor, exception_type, exception_value, traceback)


# The monitors' handler of class-level exits (supervisors._monitor installs it on import).
_exit_watcher: Any = None


def install_exit_watcher(watcher: Any) -> None:
    """Set what :class:`ExitHooks` actors report their exits to (``supervisors._monitor``)."""
    global _exit_watcher  # set once, by the one module that watches exits
    _exit_watcher = watcher


class ExitHooks(pykka.Actor):
    """Pykka's two exits, reported to the monitors by the class instead of wrapped per instance.

    Watching an actor of a class built on this costs no wrapper on the instance (four bound
    methods and two instance dicts fewer for the collector). The actor kind must keep one more
    promise: call :func:`loop_ended` on the actor's thread once Pykka's message loop has
    returned (the Down of a handler's crash waits for ``on_failure``, which Pykka calls from
    that loop), and :func:`stopped_outside_exits` wherever it sets ``actor_stopped`` itself.
    """

    def _stop(self) -> None:
        _exit_watcher.stop(self, super()._stop)

    def _handle_failure(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        parent = super()._handle_failure
        _exit_watcher.handle_failure(
            self, lambda: parent(exception_type, exception_value, traceback), exception_value
        )


def loop_ended(actor: pykka.Actor) -> None:
    """Tell the monitors of an :class:`ExitHooks` actor that its message loop has returned."""
    _exit_watcher.loop_ended(actor)


def stopped_outside_exits(actor: pykka.Actor) -> None:
    """Tell the monitors of an :class:`ExitHooks` actor that it stopped without either exit."""
    _exit_watcher.stopped(actor)


def registry_list() -> list[pykka.ActorRef[Any]]:
    """Return ``pykka.ActorRegistry``'s own list of refs (to measure it; do not change it)."""
    refs: list[pykka.ActorRef[Any]] = pykka.ActorRegistry._actor_refs
    return refs


def raised_by_handler(exception: BaseException) -> bool:
    """Return whether ``exception`` came out of a message handler (Pykka's receive hook)."""
    traceback = exception.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_name in _HANDLER_FRAMES:
            return True
        traceback = traceback.tb_next
    return False
