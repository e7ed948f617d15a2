"""``ClusterRunFuture``: the future of one run on the cluster, as its host answers it."""

from __future__ import annotations

import time
from typing import Any, Protocol

import msgspec

from praxo_actors._errors import AgentError, PraxoError
from praxo_actors.cluster._host import TAKEN_OVER
from praxo_actors.cluster._results import typed_output
from praxo_actors.codes import RUNTIME_TIMEOUT
from praxo_actors.models import RunResult

__all__ = ["ClusterRunFuture", "Recovers"]


class Recovers(Protocol):
    """What a future asks of its cluster when its host died or lost the run to another."""

    _durable: set[str]

    def _after_host_failed(self, future: ClusterRunFuture, timeout: float | None) -> RunResult: ...

    def _after_taken_over(
        self, future: ClusterRunFuture, reply: tuple[Any, ...], timeout: float | None
    ) -> RunResult: ...


def _unpack(reply: tuple[Any, ...], run_id: str | None, kind: type[Any]) -> Any:
    if reply[0] == "ok":
        return msgspec.msgpack.decode(reply[1], type=kind)
    _, origin, code, message = reply
    if origin == "agent":
        raise AgentError(code, message, run_id)
    raise PraxoError(code, message)


class ClusterRunFuture:
    """The future of one run on the cluster: ``get(timeout)`` or ``await``."""

    def __init__(
        self,
        cluster: Recovers,
        session_id: str,
        agent: str,
        run_id: str,
        host: str,
        ref: Any,
        sent: tuple[str, float | None] | None = ("", None),
    ) -> None:
        self.cluster = cluster
        self.sent = sent  # the input and deadline, to send the run again (None: a resume)
        self.session_id = session_id
        self.agent = agent
        self.run_id = run_id
        self.host = host
        self.number = -1  # the run's number in its session's order (see ``_order``)
        self._ref = ref

    def settled(self) -> bool:
        """Whether the run's call to its host has returned (its result or error is here)."""
        import ray

        if self._ref is None:  # being sent, on another thread
            return False
        ready, _ = ray.wait([self._ref], timeout=0)
        return bool(ready)

    def get(self, timeout: float | None = None) -> RunResult:
        """Return the run's result, or raise its error.

        Raises:
            AgentError: The run's code; ``SESSION_CRASHED`` if its host died (a durable run is
                finished on another host instead).
            PraxoError: ``RUNTIME_TIMEOUT``.
        """
        import ray

        began = time.monotonic()
        try:
            reply = ray.get(self._ref, timeout=timeout)
        except ray.exceptions.GetTimeoutError:
            raise PraxoError(RUNTIME_TIMEOUT, f"no result within {timeout} s") from None
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
            return self.cluster._after_host_failed(self, timeout)
        if reply[0] != "ok" and reply[2] in TAKEN_OVER and self.agent in self.cluster._durable:
            left = None if timeout is None else max(0.0, timeout - (time.monotonic() - began))
            return self.cluster._after_taken_over(self, reply, left)
        result: RunResult = typed_output(_unpack(reply, self.run_id, RunResult), reply)
        self.run_id = result.run_id  # a resume's: the interrupted run's, found by its host
        return result

    def __await__(self) -> Any:
        import asyncio

        return asyncio.get_running_loop().run_in_executor(None, self.get).__await__()
