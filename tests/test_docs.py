"""Each ``docs/**/*.md`` page's Python examples run, in order, as one program."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from _helpers import python_blocks

from api import check

ROOT = Path(__file__).resolve().parents[1] / "docs"
DOCS = sorted(ROOT.rglob("*.md"))
IDS = [path.relative_to(ROOT).as_posix() for path in DOCS]
# Python blocks the docs run, all pages together: a page split or moved keeps its examples.
MIN_BLOCKS = 78


@contextlib.contextmanager
def logging_restored() -> Iterator[None]:
    """Put back the stdlib loggers' levels, handlers, flags and class, and structlog's config.

    The docs configure logging as a program would (``docs/how-to/logging.md``); no other test
    may see it.
    """
    manager = logging.Logger.manager
    loggers = [logging.getLogger(), *manager.loggerDict.values()]
    saved = {
        id(logger): (logger.level, list(logger.handlers), logger.propagate, logger.disabled)
        for logger in loggers
        if isinstance(logger, logging.Logger)
    }
    structlog_config = structlog.get_config()
    logger_class = logging.getLoggerClass()  # structlog.stdlib.LoggerFactory() replaces it
    try:
        yield
    finally:
        structlog.configure(**structlog_config)
        logging.setLoggerClass(logger_class)
        for logger in [logging.getLogger(), *manager.loggerDict.values()]:
            if not isinstance(logger, logging.Logger):
                continue
            level, handlers, propagate, disabled = saved.get(
                id(logger), (logging.NOTSET, [], True, False)
            )
            for handler in logger.handlers:
                if handler not in handlers:
                    handler.close()
            logger.handlers[:] = handlers
            logger.setLevel(level)
            logger.propagate, logger.disabled = propagate, disabled


def test_the_docs_have_python_examples() -> None:
    """The docs hold Python examples, the tutorial among them; logging holds its three set-ups."""
    blocks = {
        name: python_blocks(path.read_text(encoding="utf-8"))
        for name, path in zip(IDS, DOCS, strict=True)
    }
    assert len(blocks["how-to/logging.md"]) == 3
    assert all(blocks[f"how-to/{name}"] for name in ("agent.md", "memory.md", "supervision.md"))
    assert blocks["tutorial/index.md"]
    assert sum(len(found) for found in blocks.values()) >= MIN_BLOCKS


@pytest.mark.parametrize("path", DOCS, ids=IDS)
def test_the_examples_run_in_order(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_thread_leaks: None
) -> None:
    """Each Python block runs after the ones above it, in one namespace, without an error."""
    monkeypatch.chdir(tmp_path)  # an example may write files under the working directory
    namespace: dict[str, Any] = {"__name__": f"docs_{path.stem}"}
    with logging_restored():
        for line, code in python_blocks(path.read_text(encoding="utf-8")):
            # Padding keeps the file's line numbers in tracebacks.
            exec(compile("\n" * (line - 1) + code, str(path), "exec"), namespace)


def test_every_public_module_has_a_reference_page() -> None:
    """Each public module of the API inventory is rendered on a reference page in the site's nav."""
    pages = {
        path.read_text(encoding="utf-8").split("::: ", 1)[1].strip(): path.relative_to(ROOT)
        for path in (ROOT / "reference" / "api").glob("*.md")
    }
    nav = (ROOT.parent / "mkdocs.yml").read_text(encoding="utf-8")
    assert set(check.PUBLIC_MODULES) <= set(pages)
    for module in check.PUBLIC_MODULES:
        assert f": {pages[module].as_posix()}\n" in nav, module
