"""The runtime's settings, checked once at start: one dataclass and the keywords that mirror it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from praxo_actors._errors import PraxoError
from praxo_actors.codes import RUNTIME_INVALID_CONFIG
from praxo_actors.core import DEFAULT_CHECKPOINT_TYPES
from praxo_actors.runtime._kernel._clock import RuntimeClock
from praxo_actors.runtime._kernel._waits import MAX_SECONDS

__all__ = ["RuntimeConfig", "RuntimeOptions", "config_from"]

OnBusy = Literal["enqueue", "reject", "interrupt", "rollback"]


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """The runtime's settings: give one as ``Runtime.start(config=...)`` (or ``astart``,
    ``open``), or its fields as keywords.

    Attributes:
        max_live_sessions: Live sessions beyond which the least recently used idle one is
            passivated; when none is idle, new sessions get ``RUNTIME_SESSION_LIMIT``.
        max_queue: Runs pending per session beyond the running one
            (``SESSION_OVERLOADED``).
        on_busy: What a run that finds its session busy does. ``"enqueue"`` queues it
            behind the running one; ``"interrupt"`` cancels the running (and queued) runs at
            their next step boundary, keeping the steps they completed, and runs after them;
            ``"rollback"`` does the same keeping nothing of them; ``"reject"`` refuses it
            with ``SESSION_BUSY``.
        idle_timeout: Seconds after which an idle session is passivated (None: never).
        checkpoint_key: HMAC key for checkpoints (so a writer to the store cannot forge
            sessions).
        allowed_types: Checkpoint type tags revived on restore.
        scheduler_threads: None (the default) runs the sessions on the runtime's event loop
            thread, beside their ``async`` callbacks. A number runs them on that many
            scheduler threads instead (their ``async`` callbacks still on the loop).
        io_threads: Threads for synchronous (blocking) model and tool callbacks.
        delivery_threads: Threads delivering events to subscribers.
        subscriber_timeout: Seconds a subscriber's call may run before it is reported (a
            ``subscriber_stuck`` warning) and skipped: its thread leaves the delivery pool
            and a fresh one takes its place, and the subscription's events wait in its
            buffer (or are dropped, counted) until the call returns. It stays subscribed.
        subscriber_handoff: Seconds a subscriber's call may hold its place in the delivery
            pool: a call that runs longer goes on on a thread of its own (which ends when
            the subscription's buffer is empty) and a fresh thread takes its place, so no
            subscriber waits behind another for longer than this. At most
            ``subscriber_timeout`` counts.
        timeout: Bound on each internal wait (store reads, shutdown) and on a stuck
            activation: new sessions fail ``RUNTIME_TIMEOUT`` when the store or the
            sessions supervisor they wait on has answered nothing for that long (a backlog
            that keeps moving is never cut short, however long it takes).
        clock: Where deadlines, idle timeouts and the activation timeout read the time and
            set their timers (None: real time). A test passes a
            :class:`praxo_actors.testing.ManualClock` and moves it by hand.
        resume: Resume the durable runs a previous process left in the store: each agent's
            sessions with a journaled run are restored as soon as that agent is registered
            (see :meth:`resume_pending`).
        tracer_provider: An OpenTelemetry ``TracerProvider`` for the spans of hosted runs
            whose agent options set none (None: the global provider, if one is set).
        meter_provider: An OpenTelemetry ``MeterProvider`` for the runtime's metrics and
            those of hosted runs (None: the global provider, if one is set). See
            docs/how-to/observability.md.
        versions_kept: Stopped sessions whose last log version the runtime remembers, so
            that restoring one from an older log (a store put back) fails with
            ``CHECKPOINT_STALE``; the least recently stopped is forgotten first. Each
            costs about 120 bytes (0: no check).

    Raises:
        PraxoError: ``RUNTIME_INVALID_CONFIG`` for a bad value.
    """

    max_live_sessions: int = 100_000
    max_queue: int = 100
    on_busy: OnBusy = "enqueue"
    idle_timeout: float | None = 300.0
    checkpoint_key: bytes | None = None
    allowed_types: frozenset[str] = DEFAULT_CHECKPOINT_TYPES
    scheduler_threads: int | None = None
    io_threads: int = 256
    delivery_threads: int = 4
    subscriber_timeout: float = 5.0
    timeout: float = 10.0
    clock: RuntimeClock | None = None
    resume: bool = False
    tracer_provider: Any = None
    meter_provider: Any = None
    versions_kept: int = 100_000
    subscriber_handoff: float = 0.05

    def __post_init__(self) -> None:
        if not isinstance(self.resume, bool):
            raise _bad("resume must be a bool")
        for name, method in (("tracer_provider", "get_tracer"), ("meter_provider", "get_meter")):
            provider = getattr(self, name)
            if provider is not None and not callable(getattr(provider, method, None)):
                raise _bad(f"{name} must be an OpenTelemetry {name[:-9]} provider or None")
        for name in ("max_live_sessions", "io_threads", "delivery_threads"):
            _check_count(name, getattr(self, name), 1)
        if self.scheduler_threads is not None:
            _check_count("scheduler_threads", self.scheduler_threads, 1)
        _check_count("max_queue", self.max_queue, 0)
        _check_count("versions_kept", self.versions_kept, 0)
        if self.on_busy not in ("enqueue", "reject", "interrupt", "rollback"):
            raise _bad("on_busy must be 'enqueue', 'reject', 'interrupt' or 'rollback'")
        idle = self.idle_timeout
        if idle is not None and not _seconds(idle):
            raise _bad("idle_timeout must be a positive number the clock can hold, or None")
        for name in ("timeout", "subscriber_timeout", "subscriber_handoff"):
            if not _seconds(getattr(self, name)):
                raise _bad(f"{name} must be a positive, finite number the clock can hold")
        clock = self.clock
        if clock is not None and not all(
            callable(getattr(clock, name, None)) for name in ("now", "monotonic_ns", "call_later")
        ):
            raise _bad("clock must have now(), monotonic_ns() and call_later() (or be None)")
        key = self.checkpoint_key
        if key is not None and (not isinstance(key, bytes) or not key):
            raise _bad("checkpoint_key must be non-empty bytes")
        types = self.allowed_types
        if not isinstance(types, set | frozenset) or not all(isinstance(t, str) for t in types):
            raise _bad("allowed_types must be a set of str")
        if "session" not in types:
            raise _bad("allowed_types must admit 'session' to restore anything")
        object.__setattr__(self, "allowed_types", frozenset(types))


class RuntimeOptions(TypedDict, total=False):
    """The fields of :class:`RuntimeConfig` as keywords of ``start``, ``astart`` and ``open``."""

    max_live_sessions: int
    max_queue: int
    on_busy: OnBusy
    idle_timeout: float | None
    checkpoint_key: bytes | None
    allowed_types: frozenset[str]
    scheduler_threads: int | None
    io_threads: int
    delivery_threads: int
    subscriber_timeout: float
    timeout: float
    clock: RuntimeClock | None
    resume: bool
    tracer_provider: Any
    meter_provider: Any
    versions_kept: int
    subscriber_handoff: float


def config_from(config: RuntimeConfig | None, options: RuntimeOptions) -> RuntimeConfig:
    """Return the settings given as ``config=`` or as keywords (not both).

    Raises:
        PraxoError: ``RUNTIME_INVALID_CONFIG`` for both, a ``config`` that is not a
            :class:`RuntimeConfig`, an unknown keyword or a bad value.
    """
    if config is not None:
        if not isinstance(config, RuntimeConfig):
            raise _bad("config must be a RuntimeConfig")
        if options:
            raise _bad(f"give config= or keywords, not both (got {', '.join(sorted(options))})")
        return config
    unknown = sorted(set(options) - set(RuntimeConfig.__dataclass_fields__))
    if unknown:
        raise _bad(f"unknown runtime option(s): {', '.join(unknown)}")
    return RuntimeConfig(**options)


def _bad(message: str) -> PraxoError:
    return PraxoError(RUNTIME_INVALID_CONFIG, message)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _seconds(value: object) -> bool:
    """Whether ``value`` is a number of seconds > 0 that the clock can wait."""
    return _is_number(value) and 0 < value <= MAX_SECONDS  # type: ignore[operator]


def _check_count(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _bad(f"{name} must be an int >= {minimum}")
