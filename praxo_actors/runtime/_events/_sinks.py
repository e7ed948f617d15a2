"""Event sinks that ship with the runtime: structlog and JSON Lines."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import IO, Any

import msgspec

from praxo_actors._log import get_logger
from praxo_actors.models import Event

__all__ = ["JsonLinesSink", "StructlogSink"]

_encoder = msgspec.json.Encoder(order="sorted")


class StructlogSink:
    """Log each event through structlog (event name ``praxo.event``), with its fields bound.

    By default the records go to the stdlib logger ``praxo_actors.events`` (shown only where the
    host configures logging); pass any structlog logger to send them elsewhere.
    """

    def __init__(self, logger: Any = None, level: str = "info") -> None:
        self._logger = logger if logger is not None else get_logger("praxo_actors.events")
        self._level = level

    def __call__(self, event: Event) -> None:
        """Log one event."""
        getattr(self._logger, self._level)(
            "praxo.event",
            type=event.type,
            run_id=event.run_id,
            session_id=event.session_id,
            seq=event.seq,
            data=event.data,
        )


class JsonLinesSink:
    """Append each event as one JSON object per line to a file (flushed per event).

    Args:
        target: A path (opened for appending, closed by :meth:`close`) or an open text file.
    """

    def __init__(self, target: str | Path | IO[str]) -> None:
        if isinstance(target, str | Path):
            self._file: IO[str] = open(target, "a", encoding="utf-8")  # noqa: SIM115
            self._owned = True
        else:
            self._file = target
            self._owned = False
        self._lock = threading.Lock()
        self.written = 0

    def __call__(self, event: Event) -> None:
        """Write one event."""
        line = _encoder.encode(event).decode() + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()
            self.written += 1

    def close(self) -> None:
        """Close the file if this sink opened it."""
        with self._lock:
            if self._owned and not self._file.closed:
                self._file.close()
