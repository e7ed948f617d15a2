"""Check what callers saw of their runs against the session logs the runs left.

A *history* is the callers' side: each session's runs in submission order, each acknowledged
(with the output its caller got and the log version its result reported) or failed (with the
exception its caller got). A *log* is the store's side: each session's committed messages,
read back after the load. :func:`check` lists every way the two disagree:

- ``unsettled``: a run whose caller got neither a result nor an error;
- ``uncoded``: a failure that is not a ``PraxoError`` with a ``str`` code (a raw exception);
- ``lost`` / ``duplicated``: an acknowledged run missing from its log, or there twice;
- ``out_of_order``: acknowledged runs of one session logged in another order than submitted;
- ``wrong_output``: a logged run whose output differs from the one its caller got;
- ``version_twice``: two acknowledged runs of one session that report the same version;
- ``version_misplaced``: an acknowledged run logged at another version than it reported;
- ``unknown``: a run in a log that nobody submitted (a failed run may be logged, once).

Runs are told apart by their input, so every input of a history must be unique; a run's log
version is how many runs its session holds up to and including it (one user message each).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from praxo_actors import PraxoError
from praxo_actors.models import Message, RunResult

__all__ = ["History", "Logged", "Run", "Violation", "check", "describe", "logged_runs"]


@dataclass
class Run:
    """One submitted run and how it ended for its caller (output and error None: not yet).

    ``submitted_at`` and ``settled_at`` are ``time.monotonic()`` readings, for the suites that
    measure how soon a cluster serves again; the checker does not read them, nor ``where``.
    """

    session_id: str
    input: str
    output: str | None = None
    version: int | None = None
    error: BaseException | None = None
    submitted_at: float = 0.0
    settled_at: float | None = None
    where: str = ""  # what the caller knows of where it ran (for a report; not checked)

    @property
    def acknowledged(self) -> bool:
        return self.output is not None

    def acknowledge(self, result: RunResult, at: float | None = None) -> None:
        """Note the result its caller got: the output, and the version its session says the
        run committed (0 if the session does not hold the run)."""
        self.output = result.output
        self.version = 0
        users = 0
        for message in result.session.messages:  # a kept result carries the session as it is
            if message.role == "user":
                users += 1
                if message.content == self.input:
                    self.version = users
                    break
        self.settled_at = at

    def fail(self, error: BaseException, at: float | None = None) -> None:
        """Note the exception its caller got."""
        self.error = error
        self.settled_at = at


@dataclass(frozen=True)
class Logged:
    """One run as its session's log holds it: its input and its final output."""

    input: str
    output: str


@dataclass(frozen=True)
class Violation:
    """One disagreement between a history and the logs (``kind`` as in the module docstring)."""

    kind: str
    session_id: str
    detail: str


@dataclass
class History:
    """Runs in submission order per session, recorded from many threads at once."""

    sessions: dict[str, list[Run]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def submitted(self, session_id: str, input: str) -> Run:
        """Record a run submitted now (after every earlier one of its session); return it."""
        run = Run(session_id, input, submitted_at=time.monotonic())
        with self._lock:
            self.sessions.setdefault(session_id, []).append(run)
        return run

    def runs(self) -> list[Run]:
        """Every run recorded so far."""
        with self._lock:
            return [run for runs in self.sessions.values() for run in runs]


def logged_runs(messages: Sequence[Message]) -> list[Logged]:
    """Split a session's messages into runs: each begins at a user message and its output is
    the text of its last assistant message."""
    runs: list[tuple[str, str]] = []
    for message in messages:
        text = message.content if isinstance(message.content, str) else ""
        if message.role == "user":
            runs.append((text, ""))
        elif message.role == "assistant" and runs:
            runs[-1] = (runs[-1][0], text)
    return [Logged(input, output) for input, output in runs]


def _failure(run: Run) -> Violation | None:
    if run.error is None and run.output is None:
        return Violation("unsettled", run.session_id, f"{run.input!r} never ended")
    error = run.error
    if error is not None and not (isinstance(error, PraxoError) and isinstance(error.code, str)):
        detail = f"{run.input!r} failed with {type(error).__name__}: {error}"
        return Violation("uncoded", run.session_id, detail)
    return None


def _check_session(session_id: str, runs: Sequence[Run], log: Sequence[Logged]) -> list[Violation]:
    out = [v for v in map(_failure, runs) if v is not None]
    submitted = {run.input for run in runs}
    counts = Counter(entry.input for entry in log)
    places: dict[str, int] = {}  # each input's first version in the log
    for version, entry in enumerate(log, 1):
        places.setdefault(entry.input, version)

    def add(kind: str, detail: str) -> None:
        out.append(Violation(kind, session_id, detail))

    for entry in log:
        if entry.input not in submitted:
            add("unknown", f"{entry.input!r} is logged but was never submitted")
    for input, count in counts.items():
        if count > 1 and input in submitted:
            add("duplicated", f"{input!r} is logged {count} times")
    acked = [run for run in runs if run.acknowledged]
    for run in acked:
        if counts[run.input] == 0:
            add("lost", f"{run.input!r} was acknowledged and is not in the log")
        elif log[places[run.input] - 1].output != run.output:
            logged = log[places[run.input] - 1].output
            add("wrong_output", f"{run.input!r}: the caller got {run.output!r}, logged {logged!r}")
    order = [run.input for run in acked if counts[run.input]]
    for before, after in itertools.pairwise(order):
        if places[before] > places[after]:
            add("out_of_order", f"{before!r} was submitted before {after!r} and logged after it")
    versions = Counter(run.version for run in acked)
    for version, count in sorted(versions.items(), key=lambda item: item[0] or 0):
        if count > 1:
            add("version_twice", f"{count} acknowledged runs report version {version}")
    for run in acked:
        if counts[run.input] and places[run.input] != run.version:
            add(
                "version_misplaced",
                f"{run.input!r} reported version {run.version}, logged at {places[run.input]}",
            )
    return out


def check(
    history: History | Mapping[str, Sequence[Run]], logs: Mapping[str, Iterable[Message]]
) -> list[Violation]:
    """Return every violation of the history against the logs (see the module docstring).

    Args:
        history: The runs per session, in submission order.
        logs: Each session's committed messages (a session missing here has an empty log).

    Raises:
        ValueError: Two runs of the history share an input (they could not be told apart).
    """
    sessions = history.sessions if isinstance(history, History) else history
    inputs = Counter(run.input for runs in sessions.values() for run in runs)
    shared = sorted(input for input, count in inputs.items() if count > 1)
    if shared:
        raise ValueError(f"inputs submitted more than once: {shared[:5]}")
    out: list[Violation] = []
    for session_id in sorted(set(sessions) | set(logs)):
        log = logged_runs(list(logs.get(session_id, ())))
        out.extend(_check_session(session_id, sessions.get(session_id, ()), log))
    return out


def describe(history: History, logs: Mapping[str, Iterable[Message]], session_id: str) -> str:
    """Return one session's runs and log side by side, to read a violation by."""
    lines = [f"session {session_id}:"]
    for run in history.sessions.get(session_id, []):
        outcome = (
            f"ok v{run.version} {run.output!r}"
            if run.acknowledged
            else f"failed {getattr(run.error, 'code', run.error)!r}"
        )
        lines.append(f"  sent {run.input!r} -> {outcome} {run.where}")
    logged = logged_runs(list(logs.get(session_id, ())))
    lines.append("  log: " + ", ".join(f"v{v} {e.input!r}" for v, e in enumerate(logged, 1)))
    return "\n".join(lines)
