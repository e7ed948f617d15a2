"""Benchmark what ``@tool`` adds to a call: argument conversion and the loop's schema check.

Run ``python bench/tools.py`` (``--quick`` for a smoke run). For a five-parameter tool it
prints the best time per call of

1. a bare handler (the floor): a plain ``Tool`` handler reading its five arguments from the
   dict and returning the same text;
2. the ``@tool`` handler of the same function: ``msgspec.convert`` into its arguments type,
   the call, the returned text;
3. the tool's compiled schema check, as the loop makes it before the handler;

and the overhead, (2) + (3) - (1) (target: at most 10 µs), then the check of a loose
``{"type": "object"}`` schema, what a hand-written tool often has. It then runs the agent loop with
one call per step both ways, the plain tool unchecked (``validate_tool_arguments=False``, as
before arguments were checked) and the ``@tool`` one checked, and prints the difference per
call: the same overhead, seen through the loop.

Times are this process's CPU time (``time.process_time``), the best of several batches: on a
machine shared with other work, wall time also counts the time spent waiting for a core.
"""

from __future__ import annotations

import argparse
import gc
import platform
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from _machine import cpu_model, load_note

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from praxo_actors.agent import Tool, new_agent_options, run_agent, tool
from praxo_actors.models import Request, Response, ToolCall, message_assistant, response, session

TARGET_US = 10.0
CLOCK = time.process_time
STEPS = 10  # model calls per run: nine tool calls and a final answer

ARGUMENTS = {"query": "actor model", "top_k": 5, "safe": True, "language": "en", "after": None}


def search(
    query: str,
    top_k: int = 5,
    safe: bool = True,
    language: Literal["en", "de", "fr"] = "en",
    after: str | None = None,
) -> str:
    """Search the web.

    Args:
        query: What to look for.
        top_k: How many results.
        safe: Filter unsafe results.
        language: The results' language.
        after: Only results after this date.
    """
    return f"{top_k} results for {query}"


SEARCH = tool(search)


def bare(arguments: dict[str, Any]) -> str:
    """The same work on the dict, as a hand-written handler does it."""
    query, top_k = arguments["query"], arguments.get("top_k", 5)
    arguments.get("safe"), arguments.get("language"), arguments.get("after")
    return f"{top_k} results for {query}"


PLAIN = Tool("search", SEARCH.description, SEARCH.parameters, bare)


def best_per_call(func: Callable[[], Any], repeats: int, budget: float) -> float:
    """Return the best µs per ``func()`` over ``repeats`` runs of about ``budget`` s each."""
    number = 1
    while True:
        elapsed = timeit.Timer(func, timer=CLOCK).timeit(number=number)
        if elapsed >= budget / 5 or number >= 1 << 20:
            break
        number *= 2
    number = max(1, int(number * budget / max(elapsed, 1e-9)))
    return min(timeit.Timer(func, timer=CLOCK).repeat(repeats, number)) / number * 1e6


def bench_call(repeats: int, budget: float) -> float:
    """Print the per-call figures; return the overhead in µs."""
    check = SEARCH._validator
    assert check is not None and check(ARGUMENTS) == []
    assert SEARCH.handler(dict(ARGUMENTS)) == bare(dict(ARGUMENTS)) == "5 results for actor model"
    floor = best_per_call(lambda: bare(dict(ARGUMENTS)), repeats, budget)
    handler = best_per_call(lambda: SEARCH.handler(dict(ARGUMENTS)), repeats, budget)
    checked = best_per_call(lambda: check(ARGUMENTS), repeats, budget)
    loose = Tool("loose", "", {"type": "object"}, bare)._validator
    assert loose is not None
    loose_check = best_per_call(lambda: loose(ARGUMENTS), repeats, budget)
    overhead = handler + checked - floor
    print("one call of a five-parameter tool (best per call)")
    print(f"  {'bare handler (floor)':<34}{floor:8.2f} µs")
    print(f"  {'@tool handler (convert + call)':<34}{handler:8.2f} µs")
    print(f"  {'schema check':<34}{checked:8.2f} µs")
    verdict = "met" if overhead <= TARGET_US else "NOT met"
    label = "overhead (handler + check - floor)"
    print(f"  {label:<34}{overhead:8.2f} µs   target <= 10 µs: {verdict}")
    print(f"  {'a {type: object} schema check':<34}{loose_check:8.2f} µs")
    return overhead


def model_for(name: str) -> Callable[[Request], Response]:
    """Return a zero-latency model calling ``name`` on every step but the last."""
    calls = [
        response(message_assistant("", [ToolCall(name, dict(ARGUMENTS), id=f"c{i}")]))
        for i in range(STEPS - 1)
    ]
    replies = [*calls, response(message_assistant("done"))]
    return lambda request: replies[request.step - 1]


def bench_loop(runs: int, repeats: int) -> None:
    """Print the per-call cost of the loop with the plain, unchecked tool and the @tool one."""
    model = model_for("search")
    variants = {
        "plain Tool, unchecked": new_agent_options(
            model, tools=[PLAIN], validate_tool_arguments=False
        ),
        "@tool, checked": new_agent_options(model, tools=[SEARCH]),
    }
    start = session("s")
    for options in variants.values():
        result = run_agent(options, start, "go")
        assert result.tool_calls == STEPS - 1 and result.output == "done"
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(repeats):  # interleaved, so a burst of load slows one batch, not one variant
        for name, options in variants.items():
            gc.collect()
            began = CLOCK()
            for _ in range(runs):
                run_agent(options, start, "go")
            best[name] = min(best[name], (CLOCK() - began) / (runs * (STEPS - 1)))
    print(f"the loop, per tool call ({STEPS - 1} calls/run, {runs} runs, best of {repeats})")
    for name, seconds in best.items():
        print(f"  {name:<34}{seconds * 1e6:8.2f} µs")
    difference = (best["@tool, checked"] - best["plain Tool, unchecked"]) * 1e6
    print(f"  {'difference':<34}{difference:8.2f} µs")


def main(argv: list[str] | None = None) -> int:
    """Run both measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few, short repeats (smoke run)")
    args = parser.parse_args(argv)
    repeats, budget, runs = (2, 0.01, 20) if args.quick else (7, 0.2, 300)
    print(f"Python {platform.python_version()} on {cpu_model()} ({platform.machine()})")
    print(load_note())
    bench_call(repeats, budget)
    bench_loop(runs, repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
