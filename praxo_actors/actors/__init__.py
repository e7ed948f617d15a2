"""M:N Pykka actors: many actors share a few scheduler threads, or one asyncio event loop.

Generic, like :mod:`supervisors`: nothing here knows what the actors do. :class:`MNActor` is a
``pykka.Actor`` that runs on a :class:`Scheduler` (a small pool of threads) or a
:class:`LoopScheduler` (an event loop's thread) instead of a thread of its own; its replies are
:class:`MNFuture` s, which any thread can wait on and asyncio can await without blocking its
loop. Beside them:

- :class:`AwaitableThreadingActor`: a thread-per-actor Pykka actor whose replies are
  :class:`MNFuture` s;
- :class:`IOPool`: a bounded pool of threads for blocking calls;
- :class:`LoopBridge`: coroutines started as tasks on a loop, each outcome told to a callback;
- :class:`LoopGate`: the way into a loop's thread from any other;
- :func:`blocking` and the blocking-call guard (:func:`forbid_blocking`,
  :func:`check_not_blocking`);
- the threads an owner of a loop needs (:func:`serve_loop`, :func:`in_thread`).

See ``docs/how-to/runtime.md``.
"""

from __future__ import annotations

from praxo_actors._errors import SchedulerClosedError
from praxo_actors.actors._blocking import check_not_blocking, forbid_blocking
from praxo_actors.actors._bridge import LoopBridge
from praxo_actors.actors._futures import MNFuture
from praxo_actors.actors._gate import LoopGate
from praxo_actors.actors._inbox import inbox_empty
from praxo_actors.actors._iopool import IOPool
from praxo_actors.actors._loop_sched import LoopScheduler
from praxo_actors.actors._mn import MNActor
from praxo_actors.actors._sched import (
    Scheduler,
    SchedulerStatistics,
    blocking,
    default_scheduler,
)
from praxo_actors.actors._threaded import AwaitableThreadingActor
from praxo_actors.actors._threads import in_thread, serve_loop

__all__ = [
    "AwaitableThreadingActor",
    "IOPool",
    "LoopBridge",
    "LoopGate",
    "LoopScheduler",
    "MNActor",
    "MNFuture",
    "Scheduler",
    "SchedulerClosedError",
    "SchedulerStatistics",
    "blocking",
    "check_not_blocking",
    "default_scheduler",
    "forbid_blocking",
    "in_thread",
    "inbox_empty",
    "serve_loop",
]
