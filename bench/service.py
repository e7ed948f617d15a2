"""Compare the runtime with direct ``arun_agent`` inside an ASGI service, side by side (not a test).

    python bench/service.py            # 3 rounds of 5,000 requests per variant (~1.5 min)
    python bench/service.py --quick    # 1 round of 1,000 requests per variant
    python bench/service.py --profile  # also sample the servers with py-spy (first round)
    python bench/service.py --variants fastapi-direct,fastapi-example,fastapi-volatile

The FastAPI pair serves ``examples/fastapi_service.py`` itself next to a FastAPI twin of it
that awaits ``arun_agent``; every variant reports requests/s, latency p50/p99 and CPU/request.
``fastapi-volatile`` (only when named in ``--variants``) is the example with its agent not
durable: no run is stored before it is answered, so a restart loses the runs in flight, as the
twin does; against ``fastapi-example`` it gives what the example's durability costs.

A Starlette app, served by uvicorn on 127.0.0.1 (a free port) in a process of its own, answers
``POST /sessions/{id}/runs`` (the body is the user's text) with a zero-latency ``async`` model.
Variants, each in a fresh server process, alternated round by round:

- ``direct``: the handler awaits ``arun_agent(options, session, text)`` and keeps each session in
  a dict (no actor, no checkpoint): the floor;
- ``runtime``: the handler awaits ``runtime.session(id).arun(text)``, the runtime opened in the
  app's lifespan with ``Runtime.open()``, so it shares uvicorn's event loop;
- ``runtime-thread`` (for comparison): the same, the runtime started with ``Runtime.start()`` on
  a loop thread of its own, so every run crosses threads twice.

httpx.AsyncClient drives each server from this process: first one request per session (which
activates it, untimed), then the timed requests, ``--concurrency`` at a time over the same
sessions. Measured: the server process's CPU seconds per request (utime + stime from
``/proc/<pid>/stat`` before and after) and requests per second. Each session's replies are
checked (the k-th run of a session holds 2k messages). Targets: the runtime variant's CPU per
request <= 1.2x the direct variant's; the FastAPI example's <= 1.5x its FastAPI twin's. Traffic
goes only to 127.0.0.1.

Each server also answers ``POST /bench/mark/{ready,start,end}``, which the client calls before
the warm-up and around the timed requests: the garbage collector's time (``gc.callbacks``) and
collections in the timed phase, as a share of the server's CPU in it, and the objects the
collector tracks per session (after ``gc.collect()``, the end against the start of the
warm-up), each shown next to the floor's (``direct``, or ``fastapi-direct``). Both sides keep
every session's history, so the tracked objects beyond the floor's are the runtime's own.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib.util
import json
import os
import platform
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from typing import Any

from _machine import OtherLoad, cpu_model, load_note
from _profile import Profiler, print_profile

READY = "SERVICE-READY "
DONE = "SERVICE-DONE "
VARIANTS = ("direct", "runtime", "runtime-thread", "fastapi-direct", "fastapi-example")
# Run only when named in --variants: the example with its agent not durable (for comparison).
EXTRA = ("fastapi-volatile",)
# The FastAPI pair: examples/fastapi_service.py itself (its runtime on an in-memory store),
# against a FastAPI handler of the same shape that awaits arun_agent.
FASTAPI = ("fastapi-direct", "fastapi-example", "fastapi-volatile")
TARGET = 1.2  # the runtime's CPU per request against the direct variant's
FASTAPI_TARGET = 1.5  # examples/fastapi_service.py against its FastAPI twin


# -- the server (in its own process) -------------------------------------------------------


class GCClock:
    """Add up the CPU time and the number of the collector's passes (``gc.callbacks``).

    A pass runs on the thread whose allocation triggered it, so that thread's CPU clock times
    it: other processes on a busy machine do not stretch it as they stretch a wall clock.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = 0
        self.full = 0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.thread_time()
            return
        self.seconds += time.thread_time() - self._started
        self.collections += 1
        self.full += info.get("generation") == 2


def add_marks(app: Any) -> None:
    """Answer ``POST /bench/mark/{name}`` with the collector's clock, CPU and tracked objects."""
    from starlette.requests import Request as HTTPRequest
    from starlette.responses import JSONResponse

    clock = GCClock()

    async def mark(request: HTTPRequest) -> JSONResponse:
        snapshot: dict[str, Any] = {
            "gc_s": clock.seconds,
            "collections": clock.collections,
            "full": clock.full,
            "cpu_s": time.process_time(),
        }
        if request.path_params["name"] in ("ready", "end"):
            gc.collect()  # after the snapshot: its own time is not counted
            snapshot["tracked"] = len(gc.get_objects())
        return JSONResponse(snapshot)

    app.add_route("/bench/mark/{name}", mark, methods=["POST"])


def create_fastapi_app(variant: str, report: dict[str, Any], port: int) -> Any:
    """Return the FastAPI app of ``variant``: the example itself, or a direct twin of it."""
    from fastapi import FastAPI
    from pydantic import BaseModel

    here = os.path.dirname(os.path.abspath(__file__))
    # bench/mcp.py would shadow the mcp package the example imports: this folder off the path
    # (the helpers from it are imported already), the examples' on it.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    sys.path.insert(0, os.path.join(here, "..", "examples"))
    import fastapi_service  # type: ignore[import-not-found]

    from praxo_actors.agent import arun_agent, new_agent_options
    from praxo_actors.models import Request, Response, Session, message_assistant, session

    async def model(_request: Request) -> Response:
        return Response(message_assistant("ok"))

    if variant != "fastapi-direct":
        if variant == "fastapi-volatile":  # the example's agent registered not durable
            register = fastapi_service.Runtime.register_agent

            def volatile(self: Any, name: str, factory: Any, **options: Any) -> Any:
                return register(self, name, factory, **{**options, "durable": False})

            fastapi_service.Runtime.register_agent = volatile
        app = fastapi_service.create_app(None, model=model, idle_timeout=None)
        inner = app.router.lifespan_context

        @contextlib.asynccontextmanager
        async def lifespan(app_: Any) -> AsyncIterator[None]:
            async with inner(app_):
                ready(port)
                yield
            report["shut_down"] = True

        app.router.lifespan_context = lifespan
        return app

    options = new_agent_options(model)
    sessions: dict[str, Session] = {}

    class RunBody(BaseModel):
        input: str

    # FastAPI reads the handler's (string) annotations in this module's globals.
    globals()["RunBody"] = RunBody

    @contextlib.asynccontextmanager
    async def direct_lifespan(_app: Any) -> AsyncIterator[None]:
        ready(port)
        yield
        report["shut_down"] = True

    direct = FastAPI(lifespan=direct_lifespan)

    @direct.post("/sessions/{session_id}/runs")
    async def start_run(session_id: str, body: RunBody) -> dict[str, Any]:
        result = await arun_agent(
            options, sessions.get(session_id) or session(session_id), body.input
        )
        sessions[session_id] = result.session
        return {"run_id": result.run_id, "output": result.output, "steps": result.steps}

    return direct


def create_app(variant: str, report: dict[str, Any], port: int) -> Any:
    """Return the Starlette app of ``variant``; its lifespan fills ``report`` on shutdown."""
    if variant in FASTAPI:
        return create_fastapi_app(variant, report, port)
    from starlette.applications import Starlette
    from starlette.requests import Request as HTTPRequest
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from praxo_actors.agent import arun_agent, new_agent_options
    from praxo_actors.models import Request, Response, Session, message_assistant, session
    from praxo_actors.runtime import Runtime

    async def model(_request: Request) -> Response:
        return Response(message_assistant("ok"))

    options = new_agent_options(model)
    sessions: dict[str, Session] = {}
    state: dict[str, Runtime] = {}

    async def run_direct(request: HTTPRequest) -> JSONResponse:
        sid = request.path_params["sid"]
        text = (await request.body()).decode()
        result = await arun_agent(options, sessions.get(sid) or session(sid), text)
        sessions[sid] = result.session
        return JSONResponse({"output": result.output, "messages": len(result.session.messages)})

    async def run_runtime(request: HTTPRequest) -> JSONResponse:
        sid = request.path_params["sid"]
        text = (await request.body()).decode()
        result = await state["runtime"].session(sid, agent="zero").arun(text)
        return JSONResponse({"output": result.output, "messages": len(result.session.messages)})

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        if variant == "direct":
            ready(port)
            yield
            report["sessions"] = len(sessions)
            report["shut_down"] = True
            return
        if variant == "runtime":
            async with Runtime.open(idle_timeout=None) as runtime:
                runtime.register_agent("zero", lambda: options)
                state["runtime"] = runtime
                ready(port)
                yield
                report["statistics"] = _statistics(runtime)
            report["shut_down"] = True  # Runtime.open's astop() has returned
            return
        runtime = Runtime.start(idle_timeout=None)  # a loop thread of its own
        try:
            runtime.register_agent("zero", lambda: options)
            state["runtime"] = runtime
            ready(port)
            yield
            report["statistics"] = _statistics(runtime)
        finally:
            await runtime.astop()
        report["shut_down"] = True

    handler = run_direct if variant == "direct" else run_runtime
    return Starlette(
        routes=[Route("/sessions/{sid}/runs", handler, methods=["POST"])], lifespan=lifespan
    )


def ready(port: int) -> None:
    print(f"{READY}{json.dumps({'port': port, 'pid': os.getpid()})}", flush=True)


def _statistics(runtime: Any) -> dict[str, int]:
    s = runtime.statistics()
    return {
        "runs_completed": s.runs_completed,
        "runs_failed": s.runs_failed,
        "live": s.live_sessions,
    }


def serve(variant: str) -> None:
    """Serve ``variant`` on 127.0.0.1 (a free port) until SIGINT; then print the report line."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    report: dict[str, Any] = {"variant": variant}
    app = create_app(variant, report, sock.getsockname()[1])
    add_marks(app)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        loop="asyncio",
        http="h11",
        timeout_graceful_shutdown=10,
        backlog=1024,
    )
    # uvicorn shuts down gracefully on SIGINT (the lifespan's shutdown fills the report),
    # then raises the signal again: a KeyboardInterrupt here.
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
    print(f"{DONE}{json.dumps(report)}", flush=True)


# -- the client (this process) -------------------------------------------------------------


class ServerFailed(Exception):
    """The server did not start, did not answer correctly, or did not stop."""


def proc_cpu_seconds(pid: int) -> float:
    """Return a process's user + system CPU time so far, from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_line(stream: Any, prefix: str, timeout: float) -> str:
    """Return the first line of ``stream`` that starts with ``prefix`` (others are skipped)."""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                break
            line = stream.readline()
            if not line:
                break
            if line.startswith(prefix):
                return line[len(prefix) :]
    raise ServerFailed(f"no {prefix.strip()} line within {timeout:.0f} s")


PER_CLIENT = 1  # connections per httpx client (see drive)


async def drive(
    port: int,
    warmup: int,
    requests: int,
    concurrency: int,
    sessions: int,
    pid: int,
    profiler: Profiler,
    json_body: bool = False,
) -> dict[str, Any]:
    """Warm up (one request per session), then time ``requests`` requests; check the replies.

    The ``concurrency`` connections are spread over clients of ``PER_CLIENT`` each: one httpx
    pool of 200 connections spends ~7 ms of client CPU per request finding a connection (its
    scan is quadratic in the requests waiting), which made the client, not the server, the
    bottleneck (~120 requests/s).
    """
    import httpx

    limits = httpx.Limits(max_connections=PER_CLIENT, max_keepalive_connections=PER_CLIENT)
    counts: dict[str, list[int]] = defaultdict(list)
    latencies: list[float] = []
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                # The example answers 202 at once unless asked to wait; the other apps
                # ignore the header.
                httpx.AsyncClient(
                    base_url=f"http://127.0.0.1:{port}",
                    limits=limits,
                    timeout=30,
                    trust_env=False,
                    headers={"Prefer": "wait=60"},
                )
            )
            for _ in range(max(1, concurrency // PER_CLIENT))
        ]

        async def batch(jobs: range) -> None:
            todo = iter(jobs)

            async def worker(client: httpx.AsyncClient) -> None:
                for j in todo:  # one iterator shared by the workers (one thread: no race)
                    sid = f"s{j % sessions}"
                    started = time.perf_counter()
                    if json_body:
                        reply = await client.post(f"/sessions/{sid}/runs", json={"input": "hello"})
                    else:
                        reply = await client.post(f"/sessions/{sid}/runs", content=b"hello")
                    latencies.append(time.perf_counter() - started)
                    if reply.status_code != 200:
                        raise ServerFailed(f"{reply.status_code}: {reply.text[:300]}")
                    body = reply.json()
                    if body.get("output") != "ok":
                        raise ServerFailed(f"wrong reply {body!r}")
                    if "messages" in body:
                        counts[sid].append(body["messages"])

            workers = min(concurrency, len(jobs))
            await asyncio.gather(*(worker(clients[w % len(clients)]) for w in range(workers)))

        async def mark(name: str) -> dict[str, Any]:
            reply = await clients[0].post(f"/bench/mark/{name}")
            if reply.status_code != 200:
                raise ServerFailed(f"mark {name}: {reply.status_code}: {reply.text[:300]}")
            answer: dict[str, Any] = reply.json()
            return answer

        ready = await mark("ready")
        await batch(range(warmup))
        latencies.clear()
        start = await mark("start")
        with profiler.phase("server"):
            cpu0, own0 = proc_cpu_seconds(pid), time.process_time()
            t0 = time.perf_counter()
            await batch(range(warmup, warmup + requests))
            wall = time.perf_counter() - t0
            cpu, own = proc_cpu_seconds(pid) - cpu0, time.process_time() - own0
        end = await mark("end")
    for sid, seen in counts.items():
        if sorted(seen) != [2 * k for k in range(1, len(seen) + 1)]:
            raise ServerFailed(f"session {sid}: message counts {sorted(seen)}")
    ordered = sorted(latencies)
    return {
        "cpu_per_request": cpu / requests,
        "requests_per_s": requests / wall,
        "p50_ms": ordered[len(ordered) // 2] * 1e3,
        "p99_ms": ordered[int(len(ordered) * 0.99)] * 1e3,
        "client_cpu_per_request": own / requests,
        "wall": wall,
        # The collector, in the timed phase, against the server's own CPU in it.
        "gc_share": (end["gc_s"] - start["gc_s"]) / max(end["cpu_s"] - start["cpu_s"], 1e-9),
        "gc_collections": end["collections"] - start["collections"],
        "gc_full": end["full"] - start["full"],
        "tracked_per_session": (end["tracked"] - ready["tracked"]) / sessions,
    }


def measure(
    variant: str, warmup: int, requests: int, concurrency: int, profile: bool
) -> dict[str, Any]:
    """Start a server for ``variant``, drive it, stop it; return the measurement."""
    with tempfile.TemporaryFile("w+") as errors:
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", variant],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        try:
            assert server.stdout is not None
            info = json.loads(wait_line(server.stdout, READY, 30))
            profiler = Profiler(profile, info["pid"])
            result = asyncio.run(
                drive(
                    info["port"],
                    warmup,
                    requests,
                    concurrency,
                    warmup,
                    info["pid"],
                    profiler,
                    json_body=variant in FASTAPI,
                )
            )
            result["profile"] = profiler.summaries
            server.send_signal(signal.SIGINT)
            try:
                out, _ = server.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                raise ServerFailed(f"{variant}: the server did not stop within 30 s") from None
            if server.returncode != 0:
                raise ServerFailed(f"{variant}: the server exited {server.returncode}")
            reports = [line for line in out.splitlines() if line.startswith(DONE)]
            if not reports:
                raise ServerFailed(f"{variant}: no {DONE.strip()} line")
            result["report"] = json.loads(reports[-1][len(DONE) :])
            if not result["report"].get("shut_down"):
                raise ServerFailed(f"{variant}: the lifespan's shutdown did not complete")
            return result
        except BaseException as exc:
            if server.poll() is None:
                server.kill()
                server.wait(10)
            errors.seek(0)
            tail = errors.read()[-3000:]
            if isinstance(exc, ServerFailed) and tail:
                raise ServerFailed(f"{exc}\n{tail}") from None
            raise


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 round of 1,000 requests")
    parser.add_argument("--requests", type=int, help="timed requests per round (5,000)")
    parser.add_argument("--sessions", type=int, help="sessions, each warmed up once (1,000)")
    parser.add_argument("--concurrency", type=int, default=200, help="requests in flight (200)")
    parser.add_argument("--rounds", type=int, help="rounds per variant (3)")
    parser.add_argument(
        "--profile", action="store_true", help="sample the servers' first round with py-spy"
    )
    parser.add_argument(
        "--variants", help=f"comma-separated, of {', '.join(VARIANTS + EXTRA)} (all but the last)"
    )
    parser.add_argument("--serve", choices=VARIANTS + EXTRA, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    missing = [m for m in ("httpx", "starlette", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"bench/service.py: skipped, needs {', '.join(missing)} (the 'test' extra)")
        return 0
    chosen = tuple(args.variants.split(",")) if args.variants else VARIANTS
    unknown = [v for v in chosen if v not in VARIANTS + EXTRA]
    floors = {"direct" for v in chosen if v not in FASTAPI} | {
        "fastapi-direct" for v in chosen if v in FASTAPI
    }
    if unknown or not floors <= set(chosen):
        parser.error(f"--variants: unknown {unknown}, or without its floor {sorted(floors)}")
    requests = args.requests or (1000 if args.quick else 5000)
    sessions = args.sessions or (250 if args.quick else 1000)
    rounds = args.rounds or (1 if args.quick else 3)
    import httpx
    import starlette
    import uvicorn

    print("praxo-actors in an ASGI service" + (" (--quick sizes)" if args.quick else ""))
    print(
        f"  Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs ({cpu_model()}); uvicorn {uvicorn.__version__} (h11, asyncio "
        f"loop), starlette {starlette.__version__}, httpx {httpx.__version__}"
    )
    print(f"  {load_note()}")
    others = OtherLoad()
    print(
        f"  {requests:,} timed requests per round over {sessions:,} warmed-up sessions, "
        f"{args.concurrency} in flight, zero-latency async model; {rounds} round(s), variants "
        "alternated, each in a fresh server process; median of the rounds"
    )
    results: dict[str, list[dict[str, Any]]] = {v: [] for v in chosen}
    try:
        for r in range(rounds):
            for variant in chosen:
                profile = args.profile and r == 0 and variant != "runtime-thread"
                m = measure(variant, sessions, requests, args.concurrency, profile)
                results[variant].append(m)
    except ServerFailed as exc:
        print(f"  FAILED: {exc}")
        return 1
    median = {
        v: {k: statistics.median(r[k] for r in rs) for k in rs[0] if k not in ("report", "profile")}
        for v, rs in results.items()
    }
    print(
        f"\n  {'server handler':<44} {'CPU/request':>12} {'ratio':>7} {'requests/s':>11} "
        f"{'p50 ms':>7} {'p99 ms':>7}  {'target':<9}"
    )
    for variant, label in (
        ("direct", "direct: await arun_agent(...) (the floor)"),
        ("runtime", "runtime: Runtime.open(), await arun(...)"),
        ("runtime-thread", "runtime on its own loop thread (comparison)"),
        ("fastapi-direct", "FastAPI, await arun_agent(...) (its floor)"),
        ("fastapi-example", "examples/fastapi_service.py (the runtime)"),
        ("fastapi-volatile", "the example, its agent not durable"),
    ):
        if variant not in median:
            continue
        m = median[variant]
        floor = median["fastapi-direct" if variant in FASTAPI else "direct"]["cpu_per_request"]
        ratio = m["cpu_per_request"] / floor
        target, verdict = ("", "")
        limit = {"runtime": TARGET, "fastapi-example": FASTAPI_TARGET}.get(variant)
        if limit is not None:
            target, verdict = f"<= {limit}×", "met" if ratio <= limit else "MISSED"
        print(
            f"  {label:<44} {m['cpu_per_request'] * 1e6:9,.0f} µs {ratio:6.2f}× "
            f"{m['requests_per_s']:11,.0f} {m['p50_ms']:7.1f} {m['p99_ms']:7.1f}  "
            f"{target:<9} {verdict}".rstrip()
        )
    for variant in chosen:
        per_round = ", ".join(f"{r['cpu_per_request'] * 1e6:,.0f}" for r in results[variant])
        client = median[variant]["client_cpu_per_request"] * 1e6
        report = results[variant][-1]["report"]
        extra = f"; at shutdown {report['statistics']}" if "statistics" in report else ""
        print(f"    {variant}: rounds {per_round} µs; client CPU {client:,.0f} µs/request{extra}")
    for variant, floor, what in (
        ("runtime", "direct", "the runtime's own cost"),
        ("fastapi-example", "fastapi-direct", "the example's own cost"),
        ("fastapi-example", "fastapi-volatile", "the example's durability"),
    ):
        if variant in median and floor in median:
            extra = (median[variant]["cpu_per_request"] - median[floor]["cpu_per_request"]) * 1e6
            print(f"  {what} per request: {extra:,.0f} µs of server CPU")
    print_collector(median)
    print(f"  {others.note()}")
    for variant in chosen:
        profile = results[variant][0].get("profile") or {}
        if "note" in profile:
            print(f"  profile: {profile['note']}")
        elif "server" in profile:
            print(f"  profile of the {variant} server, its first round (timings perturbed):")
            print_profile(profile["server"], indent="    ")
    return 0


def print_collector(median: dict[str, dict[str, float]]) -> None:
    """Print the collector's share of each server's CPU and its tracked objects per session."""
    print(
        f"\n  the collector, timed phase: {'variant':<17} {'gc share':>9} {'floor':>7} "
        f"{'passes':>7} {'full':>5}   tracked/session {'floor':>7} {'beyond':>7}"
    )
    for variant in median:
        m = median[variant]
        floor = median["fastapi-direct" if variant in FASTAPI else "direct"]
        beyond = m["tracked_per_session"] - floor["tracked_per_session"]
        print(
            f"  {'':<28}{variant:<17} {m['gc_share']:9.1%} {floor['gc_share']:7.1%} "
            f"{m['gc_collections']:7.0f} {m['gc_full']:5.0f}   {m['tracked_per_session']:15.1f} "
            f"{floor['tracked_per_session']:7.1f} {beyond:7.1f}"
        )


if __name__ == "__main__":
    sys.exit(main())
