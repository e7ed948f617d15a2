"""The future of one run."""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType

import pykka

from praxo_actors._errors import PraxoError
from praxo_actors.actors import MNFuture
from praxo_actors.codes import RUNTIME_TIMEOUT
from praxo_actors.models import RunResult
from praxo_actors.runtime._kernel._waits import check_timeout

__all__ = ["RunFuture", "RunTimeoutError"]


class RunTimeoutError(PraxoError, pykka.Timeout):
    """``RUNTIME_TIMEOUT``: a run's future was not settled within the wait asked for.

    Also a ``pykka.Timeout``, as :meth:`RunFuture.get` raised before it had a code.
    """


class RunFuture(MNFuture[RunResult]):
    """The future of one run: ``get(timeout)``, ``await``, and cooperative ``cancel()``.

    ``get()`` on the runtime's own event loop thread raises ``RUNTIME_BLOCKING_CALL`` while the
    run is pending (it would wait for work that only that thread can do): await it there.
    """

    def __init__(
        self, run_id: str, session_id: str, cancel: Callable[[str], bool] | None = None
    ) -> None:
        super().__init__()
        self.run_id = run_id
        self.session_id = session_id
        # A bound method is kept as its owner and function: a bound method made for each run
        # would be one more object per run in flight for the collector.
        self._cancel_owner: object = None
        self._cancel: Callable[..., bool] | None = cancel
        if isinstance(cancel, MethodType):
            self._cancel_owner, self._cancel = cancel.__self__, cancel.__func__

    def __repr__(self) -> str:
        return f"<RunFuture {self.run_id} {'done' if self.done() else 'pending'}>"

    def get(self, *, timeout: float | None = None) -> RunResult:
        """Return the run's result, or raise its error, once it has ended.

        Args:
            timeout: Seconds to wait; ``None`` waits as long as it takes.

        Raises:
            RunTimeoutError: ``RUNTIME_TIMEOUT`` (a :class:`~praxo_actors.PraxoError` and a
                ``pykka.Timeout``) if the run has not ended within ``timeout``.
            PraxoError: ``RUNTIME_INVALID_INPUT`` for a timeout that is not a finite number
                of seconds >= 0 the clock can wait; ``RUNTIME_BLOCKING_CALL`` on the
                runtime's loop thread while the run is pending.
            Exception: The run's own error.
        """
        check_timeout(timeout, none=True)
        try:
            return super().get(timeout=timeout)
        except pykka.Timeout:
            if self.done():  # the run's own error, or settled as the wait ended
                return super().get(timeout=0)
            raise RunTimeoutError(
                RUNTIME_TIMEOUT, f"run {self.run_id} did not end within {timeout} s"
            ) from None

    def cancel(self) -> bool:
        """Ask for the run to stop; return False if it had already ended.

        A queued run is removed at once; a run in flight stops at its next step boundary. The
        future then raises :class:`~praxo_actors.AgentError` ``AGENT_CANCELLED``, unless the
        run completed the step it was in without needing another (cancellation is
        cooperative: a callback in flight is never interrupted). When it returns True the
        cancellation is on its way to the session, ahead of anything the caller does next.
        """
        cancel = self._cancel
        if self.done() or cancel is None:
            return False
        if self._cancel_owner is not None:
            return cancel(self._cancel_owner, self.run_id)
        return cancel(self.run_id)
