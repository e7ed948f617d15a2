"""Benchmark supervision: restart latency against a bare actor start, and 10,000 children.

Run with ``.venv/bin/python bench/supervision.py`` (``--help`` for the sizes). One run prints:

- the time to start a bare Pykka ``ThreadingActor`` and get its first answer, and the time
  from a supervised child's crash to its replacement answering (target: within 3x), timed in
  alternation; then the same for the runtime's M:N actor;
- the time to start, then stop, 10,000 temporary children under a ``DynamicSupervisor``
  (target: under 10 s), and the same without a supervisor for reference. These children are
  the runtime's M:N actors (``praxo_actors.runtime.MNActor`` on a two-thread scheduler), as
  session actors are: 10,000 ``ThreadingActor`` threads alone take longer than that to start
  on this machine, supervised or not.

The exit status is 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import logging
import queue
import statistics
import sys
import time
from typing import Any

import pykka
import structlog

from praxo_actors.actors import MNActor, Scheduler
from supervisors import ChildSpec, DynamicSupervisor, Supervisor

TIMEOUT = 30.0


class Echo(pykka.ThreadingActor):
    """Answers every message with itself; crashes on ``"crash"``."""

    def on_receive(self, message: Any) -> Any:
        if message == "crash":
            raise RuntimeError("crash requested")
        return message


class MNEcho(MNActor):
    """``Echo`` as an M:N actor (its scheduler is set in ``main``)."""

    def on_receive(self, message: Any) -> Any:
        if message == "crash":
            raise RuntimeError("crash requested")
        return message


def start_and_restart(actor: type[pykka.Actor], rounds: int) -> tuple[list[float], list[float]]:
    """Time, in alternation, a bare start and a supervised restart of ``actor``.

    A bare start runs from ``actor.start()`` to the actor's first answer; a restart from a
    supervised child's crash to its replacement's first answer. Alternating the two gives both
    the same conditions on a machine that other work shares.

    Returns:
        The bare start times and the restart times, ``rounds`` of each, in seconds.
    """
    started: queue.Queue[pykka.ActorRef[Any]] = queue.Queue()

    def start() -> pykka.ActorRef[Any]:
        ref = actor.start()
        started.put(ref)
        return ref

    sup = Supervisor.start([ChildSpec("echo", start)], max_restarts=rounds, max_seconds=3600.0)
    current = started.get(timeout=TIMEOUT)
    bare_times, restart_times = [], []
    for _ in range(rounds):
        began = time.perf_counter()
        ref = actor.start()
        ref.ask("ping", timeout=TIMEOUT)
        bare_times.append(time.perf_counter() - began)
        ref.stop(timeout=TIMEOUT)

        began = time.perf_counter()
        current.tell("crash")
        current = started.get(timeout=TIMEOUT)
        current.ask("ping", timeout=TIMEOUT)
        restart_times.append(time.perf_counter() - began)
    sup.stop(timeout=TIMEOUT)
    return bare_times, restart_times


def supervised_children(actor: type[pykka.Actor], count: int) -> tuple[float, float]:
    """Start ``count`` temporary children under a DynamicSupervisor, then stop it.

    Returns:
        Seconds to start them all (each answering), and seconds to stop the supervisor.
    """
    sup = DynamicSupervisor.start()
    proxy = sup.proxy()
    spec = ChildSpec("echo", actor.start, restart="temporary")
    began = time.perf_counter()
    for _ in range(count):
        proxy.start_child(spec).get(timeout=TIMEOUT)
    started = time.perf_counter()
    active = proxy.count_children().get(timeout=TIMEOUT).active
    if active != count:
        raise RuntimeError(f"{active} children running, expected {count}")
    sup.stop(timeout=TIMEOUT * 4)
    return started - began, time.perf_counter() - started


def bare_children(actor: type[pykka.Actor], count: int) -> tuple[float, float]:
    """Start ``count`` actors (each answering), then stop them all; no supervisor."""
    began = time.perf_counter()
    refs = []
    for _ in range(count):
        ref = actor.start()
        ref.ask("ping", timeout=TIMEOUT)
        refs.append(ref)
    started = time.perf_counter()
    for future in [ref.stop(block=False) for ref in reversed(refs)]:
        future.get(timeout=TIMEOUT)
    return started - began, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Run the measurements, print them, and return 1 if a target is missed."""
    parser = argparse.ArgumentParser(description="Benchmark the supervisors package.")
    parser.add_argument("--rounds", type=int, default=300, help="starts and restarts to time")
    parser.add_argument("--children", type=int, default=10_000, help="dynamic children")
    args = parser.parse_args(argv)
    # An application configures logging, a library does not: keep the per-crash reports
    # (structlog) and Pykka's crash logs (stdlib) out of the output and the timings.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    logging.getLogger("pykka").setLevel(logging.CRITICAL)

    with Scheduler(2) as scheduler:
        MNEcho.actor_scheduler = scheduler
        bare, restart = map(statistics.median, start_and_restart(Echo, args.rounds))
        mn_bare, mn_restart = map(statistics.median, start_and_restart(MNEcho, args.rounds))
        sup_start, sup_stop = supervised_children(MNEcho, args.children)
        ref_start, ref_stop = bare_children(MNEcho, args.children)

    ratio = restart / bare
    total = sup_start + sup_stop
    n = args.children
    rows = [
        f"ThreadingActor start -> first answer  median {bare * 1e6:7.0f} us",
        f"ThreadingActor crash -> replacement   median {restart * 1e6:7.0f} us"
        f"   {ratio:4.2f}x a bare start (target <= 3x)",
        f"MNActor start -> first answer         median {mn_bare * 1e6:7.0f} us",
        f"MNActor crash -> replacement          median {mn_restart * 1e6:7.0f} us"
        f"   {mn_restart / mn_bare:4.2f}x a bare start",
        f"{n} temporary MNActor children, DynamicSupervisor: start {sup_start:5.2f} s,"
        f" stop {sup_stop:5.2f} s, total {total:5.2f} s (target < 10 s)",
        f"{n} MNActors, no supervisor (reference):           start {ref_start:5.2f} s,"
        f" stop {ref_stop:5.2f} s, total {ref_start + ref_stop:5.2f} s",
    ]
    print(f"supervisors benchmark ({args.rounds} rounds, medians)")
    print("\n".join(rows))
    return 0 if ratio <= 3 and total < 10 else 1


if __name__ == "__main__":
    sys.exit(main())
