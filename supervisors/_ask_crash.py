"""Opt-in let-it-crash for ask handlers: the caller gets the exception and the actor stops."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

import pykka

from supervisors import _pykka_compat as compat

__all__ = ["CrashOnAskError"]

_CRASHED = "_supervisors_crashed_with"


class CrashOnAskError(compat.ReceiveHooks):
    """Mixin that makes an exception in *any* message handler crash the actor.

    Pykka's default is kept everywhere else: an exception in a ``tell`` handler stops the
    actor, while one in an ``ask`` handler (proxy calls included) goes back to the caller and
    the actor lives on. Put this mixin first in the bases
    (``class Worker(CrashOnAskError, pykka.ThreadingActor)``) and an ask exception also
    crashes the actor: ``on_failure`` runs, monitors see ``Down(reason="crash")``, a
    supervisor restarts it, and the caller still receives the original exception.
    """

    def _supervisors_receive(self, message: Any) -> Any:
        """Handle one message; an exception from it crashes the actor (the actor's thread)."""
        try:
            return super()._supervisors_receive(message)
        except Exception:
            exc_type, exc_value, traceback = sys.exc_info()
            if not self.actor_stopped.is_set():
                # Crash now, before the reply: on the ask path Pykka would not crash at all,
                # and the caller must find the actor stopped once it has the exception.
                compat.report_failure(self, exc_type, exc_value, traceback)
                self.__dict__[_CRASHED] = exc_value
                try:
                    self.on_failure(exc_type, exc_value, traceback)
                except Exception:
                    compat.report_failure(self, *sys.exc_info())
                self.__dict__["on_failure"] = _SkipOnce(self, exc_value)
            raise

    def _supervisors_fail(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Report a failure, once (the actor's thread)."""
        # On the tell path Pykka's loop reports the same exception again; it already was.
        if exception_value is None or exception_value is not self.__dict__.get(_CRASHED):
            super()._supervisors_fail(exception_type, exception_value, traceback)


class _SkipOnce:
    """Stands in for ``on_failure`` once, so the tell path does not run it a second time."""

    __slots__ = ("_actor", "_exception")

    def __init__(self, actor: pykka.Actor, exception: BaseException | None) -> None:
        self._actor = actor
        self._exception = exception

    def __call__(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        actor = self._actor
        actor.__dict__.pop("on_failure", None)
        if exception_value is not self._exception:
            actor.on_failure(exception_type, exception_value, traceback)
