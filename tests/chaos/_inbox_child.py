"""A process that submits durable runs on a SQLite store, prints each id once ``submit`` has
returned it (acknowledged), then waits to be killed with its first run held in its model call.

``queued``: one run held, then three queued behind it. ``approval``: one approval-gated run
held in its first model call.
"""

from __future__ import annotations

import sys
import threading

from _inbox_agents import Agents

from praxo_actors.memory import SQLiteStore
from praxo_actors.runtime import Runtime


def main(db: str, mode: str) -> None:
    agents = Agents(hold=True)
    store = SQLiteStore(db, synchronous="NORMAL")  # what is committed survives a killed process
    rt = Runtime.start(store, idle_timeout=None, timeout=30.0)
    rt.register_agent("default", agents.agent, durable=True)
    handle = rt.session("s")
    inputs = ["first", "m0", "m1", "m2"] if mode == "queued" else ["mail ada"]
    for i, text in enumerate(inputs):
        print(handle.submit(text), flush=True)
        if i == 0 and not agents.entered.wait(30.0):
            sys.exit("the first run never reached its model")
    print("ready", flush=True)
    threading.Event().wait()  # killed here


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
