"""Supervision scenarios: a tree spec and a script of crashes and calls -> the expected tree.

A case is ``{"name", "tree", "script"?, "expect"?, "start_error"?}``. ``tree`` is a
supervisor node: ``kind`` (``"supervisor"`` or ``"dynamic"``), ``strategy``, ``max_restarts``,
``max_seconds``, ``auto_shutdown``, ``max_children`` and ``children``. A child node has ``id``,
``restart``, ``type`` (a ``"supervisor"`` child is itself a supervisor node), ``significant``,
``ask_crash`` (its worker crashes on ask exceptions too), ``fail_on_stop``, ``fail_starts``
(1-based start attempts that fail) and ``fail_mode`` (``"raise"`` in the start function, or
``"on_start"``). Children are named by paths (``"sub/worker"``). Script steps: ``crash``,
``stop`` and ``ask_error`` (a worker path), ``advance`` (seconds on the shared manual clock),
``terminate_child``, ``restart_child``, ``delete_child`` (a path) and ``start_child`` (a
child node, under the supervisor at ``under``); a step with ``error`` expects that code.
``expect`` may hold ``alive``, ``exit`` (the root's Down reason), ``restarts``, ``stats``,
``counts`` ([specs, active, supervisors, workers]), ``children`` (per child: ``id``,
``running``, ``starts`` = start attempts, ``restarting``, nested ``children``), ``stops``
(workers' ``on_stop`` so far, in order), ``stop_order`` (``on_stop`` order when the root is
then stopped) and ``reports`` (how many reports (log records) of each named event, e.g.
``child_crashed``). Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import pykka
from pykka.messages import ProxyGetAttr

from conformance._runner import Case, CaseFailure
from supervisors import (
    ChildSpec,
    CrashOnAskError,
    Down,
    DynamicSupervisor,
    ManualClock,
    Supervisor,
    SupervisorError,
    monitor,
)

TIMEOUT = 5.0
_PING = ProxyGetAttr(attr_path=("actor_urn",))


class _StartFailure(Exception):
    """A start function failing on purpose."""


class _Worker(pykka.ThreadingActor):
    """A worker that crashes on ``"crash"``, fails on ``fail()`` and records its stop."""

    def __init__(self, path: str, stops: _Stops, fail_on_start: bool, fail_on_stop: bool) -> None:
        super().__init__()
        self.path, self.stops = path, stops
        self.fail_on_start, self.fail_on_stop = fail_on_start, fail_on_stop

    def on_start(self) -> None:
        if self.fail_on_start:
            raise _StartFailure(self.path)

    def on_stop(self) -> None:
        self.stops.add(self.path)
        if self.fail_on_stop:
            raise RuntimeError(f"{self.path} failed in on_stop")

    def on_receive(self, message: Any) -> Any:
        if message == "crash":
            raise RuntimeError(f"{self.path} crashed")
        return None

    def fail(self) -> None:
        raise ValueError(f"{self.path} refused")


class _AskCrashWorker(CrashOnAskError, _Worker):
    """A worker for which an ask exception is a crash too."""


class _Stops:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.paths: list[str] = []

    def add(self, path: str) -> None:
        with self._lock:
            self.paths.append(path)

    def since(self, start: int) -> list[str]:
        with self._lock:
            return self.paths[start:]


class _Tree:
    """Builds a case's tree and keeps, per path, start attempts and the current ref."""

    def __init__(self) -> None:
        self.clock = ManualClock()
        self.stops = _Stops()
        self.attempts: dict[str, int] = {}
        self.current: dict[str, pykka.ActorRef[Any]] = {}
        self.supervisor_paths: set[str] = set()
        self.dynamic_root = False
        self.root: pykka.ActorRef[Any] | None = None
        self.root_downs: list[Down] = []
        self.root_stopped = threading.Event()

    def start(self, node: dict[str, Any]) -> pykka.ActorRef[Any]:
        if node.get("kind", "supervisor") == "dynamic":
            self.dynamic_root = True
            root = DynamicSupervisor.start(
                max_children=node.get("max_children"),
                max_restarts=node.get("max_restarts", 3),
                max_seconds=node.get("max_seconds", 5.0),
                clock=self.clock,
            )
            self.root = root
            for child in node.get("children", []):
                _ask(root, "start_child", self.spec(child, ""))
        else:
            self.root = self.supervisor(node, "")
        monitor(self.root, self._root_down)
        return self.root

    def _root_down(self, down: Down) -> None:
        self.root_downs.append(down)
        self.root_stopped.set()

    def supervisor(self, node: dict[str, Any], prefix: str) -> pykka.ActorRef[Any]:
        return Supervisor.start(
            [self.spec(child, prefix) for child in node.get("children", [])],
            strategy=node.get("strategy", "one_for_one"),
            max_restarts=node.get("max_restarts", 3),
            max_seconds=node.get("max_seconds", 5.0),
            auto_shutdown=node.get("auto_shutdown", "never"),
            clock=self.clock,
        )

    def spec(self, node: dict[str, Any], prefix: str) -> ChildSpec:
        path = prefix + node["id"]
        kind = node.get("type", "worker")
        if kind == "supervisor":
            self.supervisor_paths.add(path)
        return ChildSpec(
            node["id"],
            self._starter(node, path),
            restart=node.get("restart", "permanent"),
            type=kind,
            significant=node.get("significant", False),
            shutdown=node.get("shutdown", 5.0),
        )

    def _starter(self, node: dict[str, Any], path: str) -> Callable[[], pykka.ActorRef[Any]]:
        def start() -> pykka.ActorRef[Any]:
            attempt = self.attempts[path] = self.attempts.get(path, 0) + 1
            failing = attempt in node.get("fail_starts", [])
            mode = node.get("fail_mode", "raise")
            if failing and mode == "raise":
                raise _StartFailure(f"{path} attempt {attempt}")
            if node.get("type") == "supervisor":
                ref = self.supervisor(node, path + "/")
            else:
                worker = _AskCrashWorker if node.get("ask_crash") else _Worker
                fail_on_start = failing and mode == "on_start"
                ref = worker.start(path, self.stops, fail_on_start, node.get("fail_on_stop", False))
            self.current[path] = ref
            return ref

        return start

    def parent(self, path: str) -> pykka.ActorRef[Any]:
        if "/" not in path:
            assert self.root is not None
            return self.root
        return self.current[path.rsplit("/", 1)[0]]

    def settle(self) -> None:
        """Wait until every supervisor has handled what happened, retries included."""
        for _ in range(200):
            busy = False
            for ref in self._supervisors_deepest_first():
                try:
                    ref.ask(_PING, timeout=TIMEOUT)
                    busy = busy or any(r.restarting for r in _ask(ref, "which_children"))
                except pykka.ActorDeadError:
                    continue
            if not busy:
                break
        else:
            raise CaseFailure("the tree did not settle")
        # A root that is stopping has its Down delivered once its children have stopped.
        if (
            self.root is not None
            and not self.root.is_alive()
            and not self.root_stopped.wait(TIMEOUT)
        ):
            raise CaseFailure("the root did not finish stopping")

    def _supervisors_deepest_first(self) -> list[pykka.ActorRef[Any]]:
        nested = sorted(self.supervisor_paths, key=lambda p: p.count("/"), reverse=True)
        refs = [self.current[p] for p in nested if p in self.current]
        return [*refs, self.root] if self.root is not None else refs

    def shutdown(self) -> None:
        if self.root is not None:
            self.root.stop(timeout=TIMEOUT)
        for ref in self.current.values():
            ref.stop(timeout=TIMEOUT)


def _ask(ref: pykka.ActorRef[Any], method: str, *args: Any) -> Any:
    return getattr(ref.proxy(), method)(*args).get(timeout=TIMEOUT)


class _Reports(logging.Handler):
    """Keep the event dict of every record the ``supervisors`` loggers emit."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.events: list[MutableMapping[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, dict):
            self.events.append(record.msg)


@contextlib.contextmanager
def _captured_reports() -> Iterator[list[MutableMapping[str, Any]]]:
    logger = logging.getLogger("supervisors")
    handler, level = _Reports(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler.events
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def run_case(case: Case) -> None:
    """Run one supervision scenario; raise CaseFailure on any difference."""
    tree = _Tree()
    with _captured_reports() as reports:
        try:
            _run(tree, case, reports)
        finally:
            tree.shutdown()


def _run(tree: _Tree, case: Case, reports: list[MutableMapping[str, Any]]) -> None:
    try:
        tree.start(case["tree"])
    except SupervisorError as exc:
        if case.get("start_error") != exc.code:
            raise CaseFailure(f"start failed with {exc.code}: {exc}") from exc
    else:
        if "start_error" in case:
            raise CaseFailure(f"expected start error {case['start_error']}")
        for step in case.get("script", []):
            _run_step(tree, step)
    _check(tree, case.get("expect", {}), reports)


def _run_step(tree: _Tree, step: dict[str, Any]) -> None:
    try:
        _do(tree, step)
    except SupervisorError as exc:
        if step.get("error") != exc.code:
            raise CaseFailure(f"step {step}: unexpected error {exc.code}") from exc
    else:
        if "error" in step:
            raise CaseFailure(f"step {step}: expected error {step['error']}")
    tree.settle()


def _do(tree: _Tree, step: dict[str, Any]) -> None:
    if "advance" in step:
        tree.clock.advance(step["advance"])
    elif "crash" in step or "stop" in step or "ask_error" in step:
        path = step.get("crash") or step.get("stop") or step["ask_error"]
        ref = tree.current[path]
        if "ask_error" in step:
            try:
                ref.proxy().fail().get(timeout=TIMEOUT)
            except ValueError:
                return
            raise CaseFailure(f"{path}: fail() did not raise")
        stopped = threading.Event()
        monitor(ref, lambda _down: stopped.set())
        if "crash" in step:
            ref.tell("crash")
        else:
            ref.stop(timeout=TIMEOUT)
        if not stopped.wait(TIMEOUT):
            raise CaseFailure(f"{path} did not stop")
    elif "start_child" in step:
        under = step.get("under")
        sup = tree.current[under] if under else tree.root
        assert sup is not None
        _ask(sup, "start_child", tree.spec(step["start_child"], f"{under}/" if under else ""))
    else:
        for call in ("terminate_child", "restart_child", "delete_child"):
            if call in step:
                path = step[call]
                target: Any = path.rsplit("/", 1)[-1]
                if tree.dynamic_root and "/" not in path:
                    target = tree.current[path]
                _ask(tree.parent(path), call, target)
                return
        raise CaseFailure(f"unknown step {step}")


def _check(tree: _Tree, expect: dict[str, Any], reports: list[MutableMapping[str, Any]]) -> None:
    root = tree.root
    alive = root is not None and root.is_alive()
    got: dict[str, Any] = {}
    if "reports" in expect:
        events = [entry["event"] for entry in reports]
        got["reports"] = {event: events.count(event) for event in expect["reports"]}
    if "alive" in expect:
        got["alive"] = alive
    if "exit" in expect:
        got["exit"] = tree.root_downs[0].reason if tree.root_downs else None
    if "stops" in expect:
        got["stops"] = tree.stops.since(0)
    if alive and root is not None:
        stats = _ask(root, "statistics")
        if "restarts" in expect:
            got["restarts"] = stats.restarts
        if "stats" in expect:
            got["stats"] = {key: getattr(stats, key) for key in expect["stats"]}
        if "counts" in expect:
            counts = _ask(root, "count_children")
            got["counts"] = [counts.specs, counts.active, counts.supervisors, counts.workers]
        if "children" in expect:
            got["children"] = _children(tree, root, "", expect["children"])
    if "stop_order" in expect:
        mark = len(tree.stops.since(0))
        if root is not None:
            root.stop(timeout=TIMEOUT)
        got["stop_order"] = tree.stops.since(mark)
    wanted = {key: expect[key] for key in got}
    if got != wanted or set(got) != set(expect):
        raise CaseFailure(f"expected {expect}, got {got}")


def _children(
    tree: _Tree, sup: pykka.ActorRef[Any], prefix: str, expected: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    records = _ask(sup, "which_children")
    result = []
    for index, record in enumerate(records):
        want = expected[index] if index < len(expected) else {}
        path = prefix + record.id
        entry: dict[str, Any] = {"id": record.id}
        if "running" in want:
            entry["running"] = record.ref is not None
        if "starts" in want:
            entry["starts"] = tree.attempts.get(path, 0)
        if "restarting" in want:
            entry["restarting"] = record.restarting
        if "children" in want and record.ref is not None:
            entry["children"] = _children(tree, record.ref, path + "/", want["children"])
        result.append(entry)
    return result
