"""Loggers for library code: structlog's API in front, the standard ``logging`` module behind.

A library prints nothing unless its host configures logging. structlog's default configuration
prints every line to stdout, so these loggers do not use structlog's global configuration at all:
each wraps ``logging.getLogger(name)`` with its own two processors, and the host's handlers and
levels decide what is shown.

The record's ``msg`` is the whole event dict (an :class:`EventMessage`), with the bound context,
and the record carries the ``_logger`` and ``_name`` extras that
``structlog.stdlib.ProcessorFormatter.wrap_for_formatter`` would add: a ``ProcessorFormatter`` on a
host handler therefore runs its processors on the event dict itself, while a plain
``logging.Formatter`` shows ``str(msg)``, e.g. ``child_started supervisor=sessions child_id=x``.
"""

from __future__ import annotations

import logging
import re
import sys
from types import FrameType, TracebackType
from typing import Any

import structlog
from structlog.typing import EventDict, Processor

__all__ = ["EventMessage", "get_logger"]

# A string value shown without quotes: non-empty, no whitespace, quote or `=` to misread.
_BARE = re.compile(r"[^\s'\"=]+")

_ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class EventMessage(dict[str, Any]):
    """A structlog event dict used as a log record's ``msg``; ``str()`` gives one readable line.

    ``ProcessorFormatter`` copies it (``dict.copy`` gives a plain ``dict``) before its processors
    run, so the host's renderers see an ordinary event dict.
    """

    __slots__ = ()

    def __str__(self) -> str:
        fields = " ".join(
            f"{key}={_show(value)}"
            for key, value in self.items()
            if key not in ("event", "exc_info")  # the traceback is the record's own exc_info
        )
        event = str(self.get("event"))
        return f"{event} {fields}" if fields else event


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """Return a structlog logger that hands its events to ``logging.getLogger(name)``.

    It ignores ``structlog.configure``: an event below the stdlib logger's effective level is
    dropped before anything else runs, and every other one becomes one stdlib record (see the
    module docstring). ``bind()`` works as usual; the bound values are fields of the event dict.

    Args:
        name: The stdlib logger name; begins with ``supervisors`` or ``praxo_actors``.
    """
    return structlog.stdlib.BoundLogger(logging.getLogger(name), _PROCESSORS, {})


def _to_stdlib(
    logger: logging.Logger, method_name: str, event_dict: EventDict
) -> tuple[tuple[EventMessage], dict[str, Any]]:
    """Render the event as ``logging.Logger`` arguments, as ``wrap_for_formatter`` does."""
    kwargs: dict[str, Any] = {"extra": {"_logger": logger, "_name": method_name}}
    if "exc_info" in event_dict:
        # Resolved now: `exc_info=True` means the exception being handled at the call, and a
        # formatter resolving it later (in another thread, say) would find another or none.
        # Kept in the event dict too, where ProcessorFormatter's processors (format_exc_info,
        # dict_tracebacks) look for it.
        exc_info = _resolve(event_dict.pop("exc_info"))
        if exc_info is not None:
            event_dict["exc_info"] = kwargs["exc_info"] = exc_info
    if "stack_info" in event_dict:
        kwargs["stack_info"] = event_dict.pop("stack_info")
    stacklevel = event_dict.pop("stacklevel", 1)
    if type(logger).findCaller is logging.Logger.findCaller:
        # Not so for the logger class that structlog.stdlib.LoggerFactory installs: its own
        # findCaller skips structlog's frames already.
        stacklevel += _structlog_depth() - 1
    kwargs["stacklevel"] = stacklevel
    return (EventMessage(event_dict),), kwargs


def _structlog_depth() -> int:
    """Return how many structlog frames the stdlib call will have between it and our caller.

    Passed on as ``stacklevel``, this makes the record's file, line and function those of the
    code that logged, not structlog's. Counted from here: structlog's ``_process_event`` (which
    calls the processors) returns before the stdlib call, and the stdlib call's own frame is the
    one ``stacklevel=1`` stands for, so the two cancel out.
    """
    depth = 0
    frame: FrameType | None = sys._getframe(2)  # skip this function and `_to_stdlib`
    while frame is not None and _is_structlog(frame.f_globals.get("__name__", "")):
        depth += 1
        frame = frame.f_back
    return depth


def _is_structlog(module: str) -> bool:
    return module == "structlog" or module.startswith("structlog.")


# `filter_by_level` first: a disabled call costs a context copy and a raised DropEvent, no more.
_PROCESSORS: list[Processor] = [structlog.stdlib.filter_by_level, _to_stdlib]


def _resolve(value: object) -> _ExcInfo | None:
    """Return the exception triple meant by an ``exc_info`` value, or ``None`` for none."""
    if isinstance(value, tuple):
        value = value[1] if len(value) == 3 else None
    elif value is not None and not isinstance(value, BaseException):
        value = sys.exc_info()[1] if value else None
    if isinstance(value, BaseException):
        return (type(value), value, value.__traceback__)
    return None


def _show(value: object) -> str:
    """Return ``value`` as it appears after ``key=``: bare if a plain word, else its repr."""
    if isinstance(value, str) and _BARE.fullmatch(value):
        return value
    return repr(value)
