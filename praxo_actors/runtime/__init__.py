"""The actor runtime: supervised sessions on M:N Pykka actors, the event bus, and the store."""

from __future__ import annotations

from praxo_actors.actors import (
    MNActor,
    MNFuture,
    Scheduler,
    SchedulerClosedError,
    SchedulerStatistics,
    blocking,
    default_scheduler,
)
from praxo_actors.runtime._events._events import EventStream, Subscription, SubscriptionStatistics
from praxo_actors.runtime._events._sinks import JsonLinesSink, StructlogSink
from praxo_actors.runtime._events._stream import RunStream
from praxo_actors.runtime._front._agent_session import AgentSession, AwaitableRun
from praxo_actors.runtime._front._agent_tool import agent_tool
from praxo_actors.runtime._front._config import RuntimeConfig, RuntimeOptions
from praxo_actors.runtime._front._inspect import SessionInfo
from praxo_actors.runtime._front._runtime import (
    Events,
    RegisteredAgent,
    Runtime,
    RuntimeStatistics,
    SessionHandle,
)
from praxo_actors.runtime._kernel._clock import RuntimeClock
from praxo_actors.runtime._kernel._run_future import RunFuture
from praxo_actors.runtime._schedule._front import Schedule
from praxo_actors.runtime._session._restore import read_session
from praxo_actors.runtime._session._session import SessionCrashedError

__all__ = [
    "AgentSession",
    "AwaitableRun",
    "EventStream",
    "Events",
    "JsonLinesSink",
    "MNActor",
    "MNFuture",
    "RegisteredAgent",
    "RunFuture",
    "RunStream",
    "Runtime",
    "RuntimeClock",
    "RuntimeConfig",
    "RuntimeOptions",
    "RuntimeStatistics",
    "Schedule",
    "Scheduler",
    "SchedulerClosedError",
    "SchedulerStatistics",
    "SessionCrashedError",
    "SessionHandle",
    "SessionInfo",
    "StructlogSink",
    "Subscription",
    "SubscriptionStatistics",
    "agent_tool",
    "blocking",
    "default_scheduler",
    "read_session",
]
