"""An actor that subscribes to the runtime's ``run.*`` events and keeps per-session counts.

The event bus asks the subscriber actor with each :class:`~praxo_actors.models.Event`, one at
a time and in order, so the actor's state needs no lock. Its counts are read through its
proxy. ``ended(n)`` shows a common actor pattern: the reply is a future that the actor
completes later, once ``n`` runs have ended.

Run: ``python examples/event_subscriber.py``
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import pykka

from praxo_actors import PraxoError
from praxo_actors.agent import new_agent_options
from praxo_actors.models import Event, ModelError, Request, message_assistant, response
from praxo_actors.runtime import Runtime

TIMEOUT = 5.0


class RunCounter(pykka.ThreadingActor):
    """Count ``run.*`` events per session: started, completed, failed (and failure codes)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_session: dict[str, Counter[str]] = {}
        self.failure_codes: Counter[str] = Counter()
        self._ended = 0
        self._waiters: list[tuple[int, pykka.Future[int]]] = []

    def on_receive(self, message: Any) -> Any:
        """Count one event (the bus asks with each one)."""
        if not isinstance(message, Event):
            return None
        kind = message.type.removeprefix("run.")
        self.by_session.setdefault(message.session_id, Counter())[kind] += 1
        if kind == "failed":
            self.failure_codes[str(message.data.get("code"))] += 1
        if kind in ("completed", "failed"):
            self._ended += 1
            self._wake()
        return None

    def counts(self) -> dict[str, dict[str, int]]:
        """Return the counts per session id, e.g. ``{"s1": {"started": 2, "completed": 2}}``."""
        return {sid: dict(counter) for sid, counter in self.by_session.items()}

    def codes(self) -> dict[str, int]:
        """Return how many runs failed with each code."""
        return dict(self.failure_codes)

    def ended(self, n: int) -> pykka.Future[int]:
        """Return a future that completes once ``n`` runs have ended (completed or failed)."""
        future: pykka.Future[int] = pykka.ThreadingFuture()
        self._waiters.append((n, future))
        self._wake()
        return future

    def _wake(self) -> None:
        ready = [w for w in self._waiters if w[0] <= self._ended]
        self._waiters = [w for w in self._waiters if w[0] > self._ended]
        for _, future in ready:
            future.set(self._ended)


def model(request: Request) -> Any:
    """Echo the user's message; fail with ``MODEL_UNAVAILABLE`` when it is ``fail``."""
    text = str(request.messages[-1].content)
    if text == "fail":
        return ModelError("MODEL_UNAVAILABLE", "the model is down")
    return response(message_assistant(f"echo: {text}"))


def main() -> dict[str, dict[str, int]]:
    """Run a few sessions with a subscribed counter; print and return its counts."""
    runtime = Runtime.start()
    counter = RunCounter.start()
    try:
        runtime.register_agent("echo", lambda: new_agent_options(model))
        runtime.events.subscribe(counter, pattern="run.*")
        plan = {"alice": ["hi", "how are you?", "fail"], "bob": ["hello"], "carol": ["fail"]}
        futures = [
            runtime.session(sid, "echo").run(text) for sid, texts in plan.items() for text in texts
        ]
        for future in futures:
            try:
                future.get(timeout=TIMEOUT)
            except PraxoError as exc:
                print(f"{future.session_id}: failed with {exc.code}")
        proxy = counter.proxy()
        # The bus delivers on its own threads: wait until the counter has seen every run end.
        proxy.ended(len(futures)).get(timeout=TIMEOUT).get(timeout=TIMEOUT)
        counts: dict[str, dict[str, int]] = proxy.counts().get(timeout=TIMEOUT)
        for sid, per_kind in sorted(counts.items()):
            print(f"{sid}: {per_kind}")
        print(f"failure codes: {proxy.codes().get(timeout=TIMEOUT)}")
        return counts
    finally:
        runtime.stop()
        counter.stop()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C: what main() started has stopped by now
        sys.exit(130)
