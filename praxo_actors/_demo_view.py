"""The demo's display: a live progress bar and counters on a terminal, plain lines elsewhere."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

__all__ = ["DemoView", "Snapshot"]


@dataclass(frozen=True)
class Snapshot:
    """The counters shown while the demo runs."""

    elapsed: float
    runs_total: int
    completed: int
    failed: int
    live_sessions: int
    events: int
    dropped: int
    crashes: int
    passivations: int

    @property
    def done(self) -> int:
        """Runs that ended, completed or failed."""
        return self.completed + self.failed

    @property
    def runs_per_second(self) -> float:
        """Runs ended per second so far."""
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    def line(self) -> str:
        """Return the snapshot as one plain line."""
        return (
            f"[{self.elapsed:6.1f}s] runs {self.done}/{self.runs_total}"
            f"  completed {self.completed}  failed {self.failed}"
            f"  live sessions {self.live_sessions}  events {self.events}"
            f"  dropped {self.dropped}  crashes {self.crashes}"
            f"  passivations {self.passivations}  runs/s {self.runs_per_second:.0f}"
        )


class DemoView:
    """Show the demo's progress and summary on ``console``.

    Args:
        console: Where to print.
        live: Show a live display; it falls back to plain periodic lines when the console is
            not a terminal.
        interval: Seconds between plain progress lines.
    """

    def __init__(self, console: Console, live: bool = True, interval: float = 1.0) -> None:
        self.console = console
        self.live = live and console.is_terminal
        self.interval = interval

    @contextlib.contextmanager
    def progress(self, snapshot: Callable[[], Snapshot]) -> Iterator[None]:
        """Show ``snapshot()`` from a display thread until the block ends (then once more)."""
        if self.live:
            with self._live(snapshot):
                yield
            return
        stop = threading.Event()

        def report() -> None:
            while not stop.wait(self.interval):
                self._plain(snapshot().line())

        thread = threading.Thread(target=report, name="praxo-demo-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(self.interval + 5.0)
            self._plain(snapshot().line())

    @contextlib.contextmanager
    def _live(self, snapshot: Callable[[], Snapshot]) -> Iterator[None]:
        bar = Progress(
            TextColumn("[bold]runs"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
        )
        task = bar.add_task("runs", total=None)

        def render() -> RenderableType:
            now = snapshot()
            bar.update(task, total=now.runs_total, completed=now.done)
            table = Table(show_header=False, box=None, padding=(0, 2))
            table.add_column(style="cyan")
            table.add_column(justify="right")
            for label, value in (
                ("live sessions", now.live_sessions),
                ("runs completed", now.completed),
                ("runs failed", now.failed),
                ("runs/s", f"{now.runs_per_second:.0f}"),
                ("events", now.events),
                ("dropped", now.dropped),
                ("crashes", now.crashes),
                ("passivations", now.passivations),
            ):
                table.add_row(label, str(value))
            return Group(bar, table)

        with Live(get_renderable=render, console=self.console, refresh_per_second=8):
            yield

    def summary(self, title: str, rows: Sequence[tuple[str, str]]) -> None:
        """Print the closing summary: a table on a terminal, ``label: value`` lines elsewhere."""
        if self.live:
            table = Table(title=title, show_header=False)
            table.add_column(style="cyan")
            table.add_column(justify="right")
            for label, value in rows:
                table.add_row(label, value)
            self.console.print(table)
            return
        self._plain(title)
        width = max((len(label) for label, _ in rows), default=0)
        for label, value in rows:
            self._plain(f"  {label + ':':<{width + 1}} {value}")

    def _plain(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)
