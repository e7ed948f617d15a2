"""The runtime's OpenTelemetry metrics: observable instruments that read ``statistics()``.

A meter provider keeps the first callbacks registered under an instrument name, so the
instruments are made once per provider and observe every runtime registered with it, each
under its own ``praxo.runtime.id``; a stopped runtime is no longer observed. Run durations are
recorded by the runs themselves (``gen_ai.client.operation.duration`` with
``gen_ai.operation.name = invoke_agent``, on the runtime's meter provider).

Imported only when a meter provider is configured (on the runtime, or globally).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from opentelemetry.metrics import CallbackOptions, Observation

from praxo_actors._errors import PraxoError
from praxo_actors._version import __version__

if TYPE_CHECKING:
    from praxo_actors.runtime._front._runtime import Runtime
    from praxo_actors.runtime._kernel._statistics import RuntimeStatistics

__all__ = ["INSTRUMENTS", "observe_runtime"]

_Read = Callable[["RuntimeStatistics"], Iterable[tuple[int, dict[str, str]]]]

# name -> (kind, unit, description, what to read from the statistics)
INSTRUMENTS: dict[str, tuple[str, str, str, _Read]] = {
    "praxo.runtime.sessions.live": (
        "gauge",
        "{session}",
        "Sessions an actor hosts now",
        lambda s: [(s.live_sessions, {})],
    ),
    "praxo.runtime.runs.pending": (
        "gauge",
        "{run}",
        "Runs admitted and not yet settled",
        lambda s: [(s.runs_pending, {})],
    ),
    "praxo.runtime.activations": (
        "counter",
        "{activation}",
        "Sessions activated (started, or restored from the store)",
        lambda s: [(s.activations, {})],
    ),
    "praxo.runtime.passivations": (
        "counter",
        "{passivation}",
        "Idle sessions checkpointed and stopped",
        lambda s: [(s.passivations, {})],
    ),
    "praxo.runtime.crashes": (
        "counter",
        "{crash}",
        "Session actors that crashed",
        lambda s: [(s.crashes, {})],
    ),
    "praxo.runtime.runs": (
        "counter",
        "{run}",
        "Runs settled, by outcome (refused: never started)",
        lambda s: [
            (s.runs_completed, {"praxo.run.outcome": "completed"}),
            (s.runs_failed, {"praxo.run.outcome": "failed"}),
            (s.runs_refused, {"praxo.run.outcome": "refused"}),
        ],
    ),
}


class _Observed:
    """The instruments of one meter provider and the runtimes they observe."""

    def __init__(self, provider: Any) -> None:
        self.runtimes: weakref.WeakValueDictionary[str, Runtime] = weakref.WeakValueDictionary()
        meter = provider.get_meter("praxo_actors", __version__)
        for name, (kind, unit, description, read) in INSTRUMENTS.items():
            gauge = kind == "gauge"
            make = meter.create_observable_gauge if gauge else meter.create_observable_counter
            make(name, callbacks=[self._callback(read)], unit=unit, description=description)

    def _callback(self, read: _Read) -> Callable[[CallbackOptions], Iterable[Observation]]:
        def observe(_options: CallbackOptions) -> Iterable[Observation]:
            out = []
            for runtime_id, runtime in list(self.runtimes.items()):
                if runtime._stopped:
                    continue
                try:
                    stats = runtime.statistics()
                except PraxoError:  # stopping meanwhile, or too busy to answer in time
                    continue
                for value, attributes in read(stats):
                    out.append(Observation(value, {"praxo.runtime.id": runtime_id, **attributes}))
            return out

        return observe


_observed: dict[int, tuple[Any, _Observed]] = {}
_lock = threading.Lock()
_ids = itertools.count(1)


def observe_runtime(runtime: Runtime, provider: Any) -> str:
    """Observe ``runtime``'s statistics on ``provider``; return its ``praxo.runtime.id``."""
    with _lock:
        hit = _observed.get(id(provider))
        if hit is None or hit[0] is not provider:
            hit = (provider, _Observed(provider))
            _observed[id(provider)] = hit
        runtime_id = str(next(_ids))
        hit[1].runtimes[runtime_id] = runtime
    return runtime_id
