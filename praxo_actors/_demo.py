"""The live demo: thousands of agent sessions on the actor runtime, with failures and crashes.

Sessions run a scripted ``async`` model with simulated latency that calls a calculator tool
and the memory tools, and that sometimes fails with a :class:`~praxo_actors.models.ModelError`.
A few sessions are crashed mid-run (``crash_for_testing``): the run they hold fails with
``SESSION_CRASHED`` and the session is restored from its checkpoint by its next run. At the end
the demo checks that every session's history holds exactly the runs that completed (a failed or
crashed run commits nothing), and reports throughput, latency (split into the model's time
and the time spent waiting in the runtime: see :mod:`praxo_actors._demo_report`) and the
runtime's counters.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import structlog

from praxo_actors._demo_report import DemoConfig, DemoReport
from praxo_actors._demo_view import DemoView, Snapshot
from praxo_actors._errors import PraxoError
from praxo_actors.agent import Tool, new_agent_options
from praxo_actors.memory import InMemoryStore, memory_tools
from praxo_actors.models import ModelError, Request, Response, ToolCall, message_assistant
from praxo_actors.runtime import Runtime

__all__ = ["DemoConfig", "DemoReport", "run_demo"]

AGENT = "demo"
MODEL_ERROR_CODES = ("MODEL_UNAVAILABLE", "MODEL_RATE_LIMITED")
"""The codes the scripted model fails with, drawn at random."""


class DemoModel:
    """A scripted ``async`` model: multiply, remember (and recall the last run), then answer.

    Each call sleeps ``latency`` seconds on average (uniformly jittered by ±50 %). A run's first
    call fails with a random code of :data:`MODEL_ERROR_CODES` with probability
    ``failure_rate``; for a session in ``crash_targets`` it calls ``crash(session_id)`` once,
    on the run given there, and the session crashes while the call is in flight.
    """

    def __init__(
        self,
        latency: float,
        failure_rate: float,
        rng: random.Random,
        crash_targets: dict[str, int],
        crash: Callable[[str], None],
    ) -> None:
        self.latency = latency
        self.failure_rate = failure_rate
        # Called only on the runtime's event loop thread, so one generator needs no lock.
        self.rng = rng
        self.crash_targets = crash_targets
        self.crash = crash
        self.crashed: list[str] = []
        # The simulated latency each run's calls asked for, by run id; the driver pops it.
        self.model_seconds: dict[str, float] = {}

    async def __call__(self, request: Request) -> Response | ModelError:
        """Answer one step of a run."""
        messages = request.messages
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        turn = messages[last_user + 1 :]
        # The driver numbers its runs in the input ("run 2: ..."), whatever earlier runs did.
        run_index = int(str(messages[last_user].content).split(":")[0].removeprefix("run "))
        sid = request.session_id
        if not turn and self.crash_targets.get(sid) == run_index:
            del self.crash_targets[sid]
            self.crashed.append(sid)
            self.crash(sid)
        delay = self.latency * self.rng.uniform(0.5, 1.5)
        self.model_seconds[request.run_id] = self.model_seconds.get(request.run_id, 0.0) + delay
        await asyncio.sleep(delay)
        results = [json.loads(str(m.content)) for m in turn if m.role == "tool"]
        if not results:
            if self.rng.random() < self.failure_rate:
                return ModelError(self.rng.choice(MODEL_ERROR_CODES), "simulated model failure")
            a, b = self.rng.randint(2, 99), self.rng.randint(2, 99)
            call = ToolCall("calculator", {"op": "mul", "a": a, "b": b}, id="call-1")
            return Response(message_assistant("", [call]))
        if len(results) == 1:
            key = f"{sid}/{run_index}"
            calls = [ToolCall("remember", {"key": key, "value": results[0]}, id="call-2")]
            if run_index > 0:
                calls.append(ToolCall("recall", {"key": f"{sid}/{run_index - 1}"}, id="call-3"))
            return Response(message_assistant("", calls))
        return Response(message_assistant(f"The product is {results[0]['result']}."))


def _calculate(arguments: dict[str, Any]) -> Any:
    a, b, op = arguments.get("a"), arguments.get("b"), arguments.get("op")
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        return {"error": "a and b must be numbers"}
    ops = {"add": a + b, "sub": a - b, "mul": a * b}
    return {"op": op, "result": ops[op]} if op in ops else {"error": f"unknown op {op!r}"}


CALCULATOR = Tool(
    "calculator",
    "Apply an arithmetic operation to two numbers.",
    {
        "type": "object",
        "properties": {
            "op": {"enum": ["add", "sub", "mul"]},
            "a": {"type": "number"},
            "b": {"type": "number"},
        },
        "required": ["op", "a", "b"],
    },
    _calculate,
)


def run_demo(
    config: DemoConfig, view: DemoView, show: Callable[[DemoReport], None] | None = None
) -> DemoReport:
    """Run the demo and return its report; ``view`` shows progress and the summary.

    ``show`` is given the report as soon as the demo has finished, while the runtime (and the
    observer) still run: with ``config.keep`` that is before serving on until SIGINT or
    SIGTERM. Logs (crash reports included) go to a ``.log`` file beside the store, not to
    the terminal.
    """
    store = Path(config.store)
    store.parent.mkdir(parents=True, exist_ok=True)
    with _logs_to(store.with_suffix(".log")):
        return asyncio.run(_demo(config, view, show))


async def _until_signalled() -> None:
    """Return on SIGINT or SIGTERM (the demo's loop runs on the main thread)."""
    loop = asyncio.get_running_loop()
    signalled = asyncio.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, signalled.set)
    try:
        await signalled.wait()
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


async def _demo(
    config: DemoConfig, view: DemoView, show: Callable[[DemoReport], None] | None = None
) -> DemoReport:
    rng = random.Random(config.seed)
    # Session ids are new on every invocation, so a store kept from an earlier demo never
    # mixes old histories into this one's consistency check.
    tag = f"{time.strftime('%H%M%S')}-{rng.randrange(16**4):04x}"
    ids = [f"demo-{tag}-{i:05d}" for i in range(config.sessions)]
    # The second run crashes: the first may have left a checkpoint to restore, and a later run
    # (or the history check at the end) restores it.
    targets = {sid: 1 for sid in rng.sample(ids, config.crash_count())}
    report = DemoReport(runs_total=config.sessions * config.runs_per_session)
    report.sessions = config.sessions
    report.concurrency = min(config.concurrency, config.sessions)
    completed_by_session: Counter[str] = Counter()
    # The display thread reads this while the driver counts: a plain int, unlike the Counter.
    failures = [0]
    events = _EventCounter()

    runtime = Runtime.start(config.store, idle_timeout=config.idle_timeout)
    observer = None
    try:
        if config.observe:
            from praxo_actors.observer import ObserverServer

            observer = await asyncio.to_thread(ObserverServer, runtime, port=config.observe_port)
            view.console.print(
                f"observer: {observer.url}", markup=False, highlight=False, soft_wrap=True
            )
        model = DemoModel(
            config.latency,
            config.failure_rate,
            random.Random(rng.random()),
            targets,
            lambda sid: runtime.session(sid, AGENT).crash_for_testing("demo crash"),
        )
        notes = InMemoryStore()  # the tools' own store, apart from the runtime's checkpoints
        tools = [CALCULATOR, *memory_tools(notes, ("demo", "notes"))]
        runtime.register_agent(AGENT, lambda: new_agent_options(model, tools=tools))
        runtime.events.subscribe(events, pattern="*", buffer=100_000)

        async def drive(sid: str, gate: asyncio.Semaphore) -> None:
            async with gate:
                handle = runtime.session(sid, AGENT)
                for k in range(config.runs_per_session):
                    started = time.perf_counter()
                    future = None
                    try:
                        future = handle.run(f"run {k}: multiply two numbers")
                        await asyncio.wait_for(_wait(future), config.run_timeout)
                    except PraxoError as exc:
                        report.failed[exc.code] += 1
                        failures[0] += 1
                    except TimeoutError:
                        report.unexpected.append(f"{sid} run {k}: no outcome after timeout")
                        failures[0] += 1
                    except Exception as exc:
                        report.unexpected.append(f"{sid} run {k}: {type(exc).__name__}: {exc}")
                        failures[0] += 1
                    else:
                        report.completed += 1
                        completed_by_session[sid] += 1
                    report.latencies.append(time.perf_counter() - started)
                    run_id = getattr(future, "run_id", "")
                    report.model_times.append(model.model_seconds.pop(run_id, 0.0))

        start = time.perf_counter()

        def snapshot() -> Snapshot:
            stats = runtime.statistics()
            return Snapshot(
                elapsed=time.perf_counter() - start,
                runs_total=report.runs_total,
                completed=report.completed,
                failed=failures[0],
                live_sessions=stats.live_sessions,
                events=events.count,
                dropped=stats.events_dropped,
                crashes=stats.crashes,
                passivations=stats.passivations,
            )

        gate = asyncio.Semaphore(config.concurrency)
        with view.progress(snapshot):
            await asyncio.gather(*(drive(sid, gate) for sid in ids))
            report.elapsed = time.perf_counter() - start
        # Events travel through the bus actor: the last ones may still be on their way.
        stats = runtime.statistics()
        await asyncio.to_thread(events.wait_for, stats.events_emitted - stats.events_dropped, 5.0)
        history = await asyncio.to_thread(_check_histories, runtime, ids, completed_by_session)
        report.consistent_sessions = sum(history.values())
        report.crashed_sessions = len(model.crashed)
        report.restored_sessions = sum(1 for sid in model.crashed if history[sid])
        stats = runtime.statistics()
        report.crashes = stats.crashes
        report.activations = stats.activations
        report.passivations = stats.passivations
        report.events_emitted = stats.events_emitted
        report.events_dropped = stats.events_dropped
        report.events_counted = events.count
        if show is not None:
            show(report)
        if config.keep and observer is not None:
            view.console.print(
                f"observer: still serving {observer.url} (Ctrl-C or SIGTERM stops it)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            await _until_signalled()
    finally:
        await asyncio.to_thread(runtime.stop)
        if observer is not None:  # after the runtime: its event streams have ended
            await asyncio.to_thread(observer.stop)
    return report


async def _wait(future: Any) -> Any:
    return await future


def _check_histories(runtime: Runtime, ids: list[str], completed: Counter[str]) -> dict[str, bool]:
    """Return, per session, whether its history holds exactly its completed runs."""
    return {
        sid: sum(1 for m in runtime.session(sid, AGENT).history() if m.role == "user")
        == completed[sid]
        for sid in ids
    }


class _EventCounter:
    """A subscriber that counts the events it receives."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = threading.Condition()

    def __call__(self, _event: object) -> None:
        with self._changed:
            self.count += 1
            self._changed.notify_all()

    def wait_for(self, count: int, timeout: float) -> bool:
        """Wait until ``count`` events have arrived; return success."""
        with self._changed:
            return self._changed.wait_for(lambda: self.count >= count, timeout)


@contextlib.contextmanager
def _logs_to(path: Path) -> Iterator[None]:
    """Write the library's records (INFO and up) and others' warnings to ``path`` as JSON lines.

    The demo is a program, so it configures logging, as a host would
    (``docs/how-to/logging.md``): one stdlib handler with structlog's ``ProcessorFormatter``,
    which renders the library's event dicts, other libraries' stdlib records and any
    ``structlog.get_logger()`` logger alike.
    Everything is put back when the demo ends.
    """
    previous = structlog.get_config()
    logger_class = logging.getLoggerClass()  # structlog.stdlib.LoggerFactory() replaces it
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.add_logger_name,
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.stdlib.add_log_level,
                structlog.processors.TimeStamper(fmt="iso"),
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    root = logging.getLogger()
    libraries = [logging.getLogger(name) for name in ("praxo_actors", "supervisors")]
    levels = [logger.level for logger in libraries]
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.stdlib.BoundLogger,
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
    for logger in libraries:
        logger.setLevel(logging.INFO)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()
        for logger, level in zip(libraries, levels, strict=True):
            logger.setLevel(level)
        structlog.configure(**previous)
        logging.setLoggerClass(logger_class)
