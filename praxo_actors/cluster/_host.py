"""A session host: one Ray actor running an embedded ``Runtime`` on the shared store."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from typing import Any

import msgspec

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors._log import get_logger
from praxo_actors.agent._caller import attached
from praxo_actors.cluster._order import Turns
from praxo_actors.cluster._results import pack_result
from praxo_actors.codes import RUNTIME_INVALID_CONFIG
from praxo_actors.models import Event

__all__ = ["TAKEN_OVER", "Host", "resolve_factory"]

# The codes a run's copy fails with when another host took its session over and committed it.
TAKEN_OVER = frozenset({"STORE_FAILED", "SESSION_CONFLICT"})

logger = get_logger("praxo_actors.cluster")


def resolve_factory(factory: Any) -> Any:
    """A factory given as ``"package.module:function"`` is imported; a callable is itself."""
    if isinstance(factory, str):
        module, _, name = factory.partition(":")
        if not module or not name:
            raise PraxoError(RUNTIME_INVALID_CONFIG, f"factory {factory!r} is not 'module:name'")
        return getattr(importlib.import_module(module), name)
    return factory


def _error(exc: BaseException) -> tuple[str, str, str, str | None]:
    kind = "agent" if isinstance(exc, AgentError) else "praxo"
    code = getattr(exc, "code", None)
    if not isinstance(exc, PraxoError) or not isinstance(code, str):
        return ("error", "other", "AGENT_CALLBACK_EXCEPTION", f"{type(exc).__name__}: {exc}")
    return ("error", kind, code, str(getattr(exc, "message", exc)))


class Host:
    """Host sessions for the cluster (a Ray actor: ``ray.remote`` makes it one at start)."""

    def __init__(self, name: str, dsn: str, schema: str, options: dict[str, Any], hub: Any) -> None:
        import ray

        from praxo_actors.memory import PostgresStore
        from praxo_actors.runtime import Runtime

        self.name = name
        self.hub = hub
        self.store = PostgresStore(dsn, schema=schema)
        self.runtime = Runtime.start(self.store, **options)
        for agent, (factory, per_session, durable) in ray.get(hub.agent_specs.remote()).items():
            self.runtime.register_agent(agent, resolve_factory(factory), per_session, durable)
        self._subscription: Any = None
        self._turns = Turns()
        self._timeout = float(options.get("timeout", 10.0))  # the runtime's own bound

    def ping(self) -> str:
        return self.name

    def register_agent(self, name: str, factory: Any, per_session: bool, durable: bool) -> None:
        self.runtime.register_agent(name, resolve_factory(factory), per_session, durable)

    def publish_events(self, on: bool) -> None:
        """Forward every event of this host's runs to the hub (while anyone subscribes)."""
        if on and self._subscription is None:
            hub = self.hub

            def forward(event: Event) -> None:
                hub.push.remote([msgspec.msgpack.encode(event)])

            self._subscription = self.runtime.events.subscribe(forward, pattern="*")
        elif not on and self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None

    async def run(
        self,
        session_id: str,
        agent: str,
        input: str,
        deadline: float | None,
        run_id: str,
        number: int | None = None,
        after: int | None = None,
        traceparent: str | None = None,
    ) -> tuple[Any, ...]:
        """Queue a run in its session, after its run number ``after`` (see ``_order``); its
        span is a child of the caller's that ``traceparent`` names, if any."""
        if after is not None and not await self._turns.wait(session_id, after):
            logger.warning("run_turn_not_seen", session_id=session_id, run_id=run_id, after=after)
        try:
            handle = self.runtime.session(session_id, agent)
            with attached(traceparent):
                future = handle._submit(run_id, input, deadline, None)
        except Exception as exc:
            return _error(exc)
        finally:
            if number is not None:
                self._turns.queued(session_id, number)
        try:
            result = await future
        except Exception as exc:
            if getattr(exc, "code", None) in TAKEN_OVER:
                await self._forget(session_id, agent)
            return _error(exc)
        return pack_result(result)

    async def submit(
        self,
        session_id: str,
        agent: str,
        input: str,
        deadline: float | None,
        traceparent: str | None = None,
    ) -> tuple[Any, ...]:
        """Accept a run and answer its id (a durable agent's run is in the store by then)."""
        try:
            handle = self.runtime.session(session_id, agent)
            with attached(traceparent):
                run_id = await handle.asubmit(input, deadline)
        except Exception as exc:
            return _error(exc)
        return ("ok", msgspec.msgpack.encode(run_id))

    async def resume(
        self, session_id: str, agent: str, document: str, deadline: float | None
    ) -> tuple[Any, ...]:
        """Go on with the session's interrupted run here; ``document`` is the value's JSON."""
        try:
            handle = self.runtime.session(session_id, agent)
            result = await handle.aresume(msgspec.json.decode(document), deadline)
        except Exception as exc:
            return _error(exc)
        return pack_result(result)

    async def interrupted(self, session_id: str, agent: str) -> str | None:
        """The id of the session's interrupted run here (None: none, or not found in time)."""
        handle = self.runtime.session(session_id, agent)
        return await asyncio.to_thread(handle._interrupted, self._timeout)

    async def _forget(self, session_id: str, agent: str) -> None:
        """Stop the session here if it is idle, so that its next use restores it from the store.

        A run that failed as a copy (another host took the session over and committed the run)
        leaves the session here behind the store; a commit refused as stale reloads it anyway,
        a journal write refused so does not.
        """
        handle = self.runtime.session(session_id, agent)
        with contextlib.suppress(PraxoError):
            await asyncio.to_thread(handle.passivate, self._timeout)

    async def result(
        self, session_id: str, agent: str | None, run_id: str, timeout: float | None
    ) -> tuple[Any, ...]:
        """The outcome of ``run_id``, resuming it here if its session's journal holds it."""
        try:
            handle = self.runtime.session(session_id, agent)
            result = await asyncio.to_thread(handle.result, run_id, timeout)
            return pack_result(result)
        except Exception as exc:
            return _error(exc)

    async def find_session(self, run_id: str) -> str | None:
        """The session the shared store names for ``run_id`` (None: no session knows it)."""
        from praxo_actors.memory._log import SessionLog

        log = SessionLog(self.store)
        return await asyncio.to_thread(log.find_run, run_id)

    async def history(self, session_id: str, agent: str, timeout: float) -> tuple[Any, ...]:
        try:
            messages = await self.runtime.session(session_id, agent).ahistory(timeout)
        except Exception as exc:
            return _error(exc)
        return ("ok", msgspec.msgpack.encode(messages))

    def statistics(self) -> bytes:
        return msgspec.msgpack.encode(self.runtime.statistics())

    def stop(self) -> None:
        self.publish_events(False)
        self.runtime.stop()
        self.store.close()
