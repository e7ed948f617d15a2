"""Drive ``_model_child.py`` (a runtime in a child process) and read the effects it logged.

:class:`Child` sends one command at a time and waits a bounded time for its answer; it kills
and reaps the process on :meth:`Child.kill` (also when a command goes unanswered).
:func:`repeated_effects` finds the model and tool calls made again though they had completed.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Child", "Effect", "Spares", "read_effects", "repeated_effects"]

SCRIPT = Path(__file__).with_name("_model_child.py")


class Child:
    """One child process; :meth:`open` starts its runtime (it imports everything before)."""

    def __init__(self, answer_within: float) -> None:
        self.answer_within = answer_within
        self.generation = -1
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        self.process = subprocess.Popen(
            [sys.executable, str(SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="model-child-reader", daemon=True)
        self._reader.start()
        self._loaded = False

    def open(self, db: Path, logs: Path, generation: int) -> Child:
        """Start the runtime on ``db`` (resume=True) as generation ``generation``; return self."""
        if not self._loaded:
            self._answer("load")
            self._loaded = True
        self.generation = self.send("open", db=str(db), logs=str(logs), generation=generation)[
            "ready"
        ]
        return self

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)  # the process closed its output: it ended

    def _answer(self, op: str) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=self.answer_within)
        except queue.Empty:
            self.kill()
            within = self.answer_within
            raise AssertionError(f"the runtime answered nothing to {op} in {within} s") from None
        if line is None:
            code = self.process.wait(timeout=self.answer_within)
            raise AssertionError(f"the child process ended (exit {code}) during {op}")
        answer: dict[str, Any] = json.loads(line)
        if "child_error" in answer:
            raise AssertionError(f"{op} raised in the child process:\n{answer['child_error']}")
        return answer

    def send(self, op: str, **args: Any) -> dict[str, Any]:
        """Send a command and return the child's answer."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.process.stdin.flush()
        return self._answer(op)

    def close(self) -> None:
        """Stop the runtime cleanly, then end the process."""
        try:
            self.send("close")
            self.process.wait(timeout=self.answer_within)
        finally:
            self.kill()

    def kill(self) -> None:
        """SIGKILL the process (if it still runs), reap it and join the reader."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=self.answer_within)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self._reader.join(self.answer_within)


class Spares:
    """Child processes started ahead of need: each loads (seconds on a busy machine) while
    the test works, so a crash or a new example takes one that is ready."""

    def __init__(self, answer_within: float) -> None:
        self.answer_within = answer_within
        self._waiting: list[Child] = []

    def take(self) -> Child:
        """Return a loaded (or loading) child and start another in its place."""
        child = self._waiting.pop() if self._waiting else Child(self.answer_within)
        self._waiting.append(Child(self.answer_within))
        return child

    def close(self) -> None:
        """Kill and reap every child still waiting."""
        while self._waiting:
            self._waiting.pop().kill()


@dataclass(frozen=True)
class Effect:
    """One logged call: ``key`` names the call (``model <input> <step>``, ``tool <name>
    <input>``), ``input`` its run's input, ``attempt`` the tool attempt (0 for a model call),
    ``generation`` the runtime that made it."""

    key: str
    input: str
    attempt: int
    generation: int


def read_effects(path: Path) -> list[Effect]:
    """Parse ``effects.log`` (every line whole: each is written and fsynced at once)."""
    effects = []
    for line in path.read_text().splitlines() if path.exists() else []:
        kind, *fields = line.split()
        if kind == "model":
            input, step, generation = fields
            effects.append(Effect(f"model {input} {step}", input, 0, int(generation)))
        else:
            name, input, attempt, generation = fields
            effects.append(Effect(f"tool {name} {input}", input, int(attempt), int(generation)))
    return effects


def repeated_effects(
    effects: list[Effect], ended: dict[str, int], at_rest: dict[str, list[int]]
) -> list[str]:
    """Return every call made again though it had completed, and every call of a run after
    the generation in which it ended.

    A durable run repeats no completed call: a call is made again only in a later generation,
    and only if it was its run's last call in its own generation (the one in flight when that
    runtime stopped or died) and its run was not seen at rest (interrupted) after it, and a
    tool's attempt then grows. ``ended`` maps the inputs of runs seen ended to the generation
    that saw it; ``at_rest`` those of runs seen interrupted to how many effects were logged
    each time they were (every call of the run among those had completed then).
    """
    out = []
    last: dict[tuple[str, int], int] = {}  # (input, generation) -> index of its last call
    for index, effect in enumerate(effects):
        last[(effect.input, effect.generation)] = index
    seen: dict[str, list[int]] = defaultdict(list)
    for index, effect in enumerate(effects):
        before = seen[effect.key]
        if before:
            previous = effects[before[-1]]
            if effect.generation <= previous.generation:
                out.append(f"{effect.key} made twice in runtime {effect.generation}")
            elif last[(previous.input, previous.generation)] != before[-1] or any(
                before[-1] < seen <= index for seen in at_rest.get(effect.input, ())
            ):
                out.append(
                    f"{effect.key} completed in runtime {previous.generation} "
                    f"and made again in runtime {effect.generation}"
                )
            elif effect.key.startswith("tool ") and effect.attempt <= previous.attempt:
                out.append(f"{effect.key} made again with attempt {effect.attempt}")
        before.append(index)
        generation = ended.get(effect.input)
        if generation is not None and effect.generation > generation:
            out.append(f"{effect.key} made in runtime {effect.generation} after its run ended")
    return out
