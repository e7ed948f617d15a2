"""The library logs through the standard ``logging`` module and prints nothing of its own."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pykka
import pytest
import structlog

import praxo_actors._log
import supervisors._log
from supervisors import ChildSpec, Supervisor

TIMEOUT = 10.0

# A supervisor that starts two children, has one crash and be restarted, then stops; and a
# runtime logger that reports an error. Run in a fresh interpreter, whose logging is untouched.
SCRIPT = """
import threading

import pykka

import praxo_actors._log
from supervisors import ChildSpec, Supervisor, monitor


class Child(pykka.ThreadingActor):
    def on_receive(self, message):
        raise RuntimeError("boom")


sup = Supervisor.start([ChildSpec("a", Child.start), ChildSpec("b", Child.start)], name="sessions")
first = sup.proxy().which_children().get(timeout=10)[0].ref
down = threading.Event()
monitor(first, lambda _down: down.set())
first.tell("crash")
assert down.wait(10)
sup.proxy().which_children().get(timeout=10)  # queued behind the crash: answered after the restart
praxo_actors._log.get_logger("praxo_actors.runtime").bind(run_id="r1").error("run_failed")
assert sup.stop(timeout=10)
"""


class Records(logging.Handler):
    """A handler that keeps every record it is given."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class Child(pykka.ThreadingActor):
    """A child that does nothing."""


@pytest.fixture
def sessions(no_thread_leaks: None) -> Iterator[Any]:
    """Return a function that starts and stops a supervisor ``sessions`` with child ``a``."""

    def run() -> None:
        sup = Supervisor.start([ChildSpec("a", Child.start)], name="sessions")
        assert sup.stop(timeout=TIMEOUT) is True

    yield run


@pytest.fixture
def on_supervisors() -> Iterator[Any]:
    """Return a function that attaches a handler to ``supervisors`` at DEBUG until the test ends."""
    logger = logging.getLogger("supervisors")
    level, attached = logger.level, []

    def attach(handler: logging.Handler) -> logging.Handler:
        logger.addHandler(handler)
        attached.append(handler)
        logger.setLevel(logging.DEBUG)
        return handler

    yield attach
    for handler in attached:
        logger.removeHandler(handler)
    logger.setLevel(level)


def run_script(prelude: str, capfd: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """Run ``prelude`` and ``SCRIPT`` in a fresh interpreter; return its stdout and stderr."""
    done = subprocess.run([sys.executable, "-c", prelude + SCRIPT], timeout=60, check=False)
    out, err = capfd.readouterr()
    assert done.returncode == 0, err
    return out, err


def test_an_unconfigured_host_sees_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    """With logging not configured, starts, a crash, a restart, errors and a stop print nothing."""
    assert run_script("", capfd) == ("", "")


def test_basic_config_at_warning_shows_only_warnings_and_up(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """``logging.basicConfig(level=WARNING)`` shows the crash and the error, not debug or info."""
    prelude = "import logging\nlogging.basicConfig(level=logging.WARNING)\n"
    out, err = run_script(prelude, capfd)
    assert out == ""
    assert "ERROR:supervisors:child_crashed supervisor=sessions" in err
    assert "ERROR:praxo_actors.runtime:run_failed run_id=r1" in err
    assert "child_started" not in err  # debug
    assert "child_restarted" not in err  # info


def test_a_stdlib_handler_gets_the_event_and_its_bound_fields(
    sessions: Any, on_supervisors: Any
) -> None:
    """A stdlib handler on ``supervisors`` at DEBUG gets ``child_started`` with ``supervisor``."""
    handler = on_supervisors(Records())
    sessions()
    [started] = [r for r in handler.records if r.msg["event"] == "child_started"]
    assert (started.name, started.levelname) == ("supervisors", "DEBUG")
    assert (started.module, started.funcName) == ("_base", "_report")  # the caller, not structlog
    assert started.pathname.endswith("supervisors/_base.py")
    assert (started.msg["supervisor"], started.msg["child_id"]) == ("sessions", "a")
    line = logging.Formatter("%(levelname)s %(name)s %(message)s").format(started)
    assert line.startswith("DEBUG supervisors child_started supervisor=sessions ref='Child (urn:")
    assert line.endswith(" child_id=a")


def test_a_processor_formatter_renders_json_with_the_bound_fields(
    sessions: Any, on_supervisors: Any
) -> None:
    """structlog's ``ProcessorFormatter`` with ``JSONRenderer`` renders the whole event dict."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.add_logger_name,
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.stdlib.add_log_level,
                structlog.processors.JSONRenderer(),
            ]
        )
    )
    on_supervisors(handler)
    sessions()
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    [started] = [line for line in lines if line["event"] == "child_started"]
    assert started["ref"].startswith("Child (urn:")
    assert {k: started[k] for k in ("logger", "level", "supervisor", "child_id")} == {
        "logger": "supervisors",
        "level": "debug",
        "supervisor": "sessions",
        "child_id": "a",
    }


def test_an_exception_reaches_both_kinds_of_formatter(on_supervisors: Any) -> None:
    """``exception()`` gives the record its exception and the event dict the same triple."""
    stream = io.StringIO()
    structured = logging.StreamHandler(stream)
    structured.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.dict_tracebacks,
                structlog.processors.JSONRenderer(),
            ]
        )
    )
    on_supervisors(structured)
    records = on_supervisors(Records())
    try:
        raise ValueError("bad")
    except ValueError:
        supervisors._log.get_logger("supervisors.test").exception("failed", child_id="a")
    [record] = records.records
    assert (record.levelname, record.funcName) == (
        "ERROR",
        "test_an_exception_reaches_both_kinds_of_formatter",
    )
    assert record.exc_info is not None and isinstance(record.exc_info[1], ValueError)
    text = logging.Formatter("%(message)s").format(record)
    assert text.startswith("failed child_id=a\nTraceback (most recent call last):")
    assert text.endswith("ValueError: bad")
    [rendered] = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert rendered["exception"][0]["exc_type"] == "ValueError"


def test_bind_carries_context_into_the_record(on_supervisors: Any) -> None:
    """Values bound with ``bind()`` are fields of the record's event dict, after the call's own."""
    records = on_supervisors(Records())
    logger = supervisors._log.get_logger("supervisors.test").bind(supervisor="s")
    logger.bind(child_id="a").info("hello", n=1)
    logger.debug("plain")
    assert [dict(r.msg) for r in records.records] == [
        {"supervisor": "s", "child_id": "a", "n": 1, "event": "hello"},
        {"supervisor": "s", "event": "plain"},
    ]
    assert {r.funcName for r in records.records} == {"test_bind_carries_context_into_the_record"}
    assert [r.getMessage() for r in records.records] == [
        "hello supervisor=s child_id=a n=1",
        "plain supervisor=s",
    ]


def test_the_record_names_the_caller_under_structlog_logger_factory(on_supervisors: Any) -> None:
    """After ``structlog.stdlib.LoggerFactory()`` replaced the logger class, the caller is right."""
    records = on_supervisors(Records())
    logger_class = logging.getLoggerClass()
    structlog.stdlib.LoggerFactory()
    try:
        stdlib_logger = logging.getLogger("supervisors.test.factory")
    finally:
        logging.setLoggerClass(logger_class)
    assert type(stdlib_logger).findCaller is not logging.Logger.findCaller
    supervisors._log.get_logger("supervisors.test.factory").info("here")
    supervisors._log.get_logger("supervisors.test.plain").info("here")
    assert [r.funcName for r in records.records] == [
        "test_the_record_names_the_caller_under_structlog_logger_factory"
    ] * 2


def test_a_disabled_level_is_dropped_before_the_record(on_supervisors: Any) -> None:
    """Below the stdlib logger's effective level, no record is made."""
    records = on_supervisors(Records())
    logging.getLogger("supervisors").setLevel(logging.INFO)
    supervisors._log.get_logger("supervisors.test").debug("hidden")
    assert records.records == []


def test_structlog_configuration_does_not_change_the_library_loggers(
    on_supervisors: Any,
) -> None:
    """``structlog.configure`` has no effect on the library's loggers: they still reach stdlib."""
    records = on_supervisors(Records())
    previous = structlog.get_config()
    structlog.configure(processors=[structlog.processors.KeyValueRenderer()])
    try:
        supervisors._log.get_logger("supervisors.test").info("still_stdlib")
    finally:
        structlog.configure(**previous)
    assert [r.msg["event"] for r in records.records] == ["still_stdlib"]


def test_both_packages_have_a_null_handler_and_one_get_logger() -> None:
    """``praxo_actors`` and ``supervisors`` each add a NullHandler; they share ``get_logger``."""
    assert praxo_actors._log.get_logger is supervisors._log.get_logger
    for name in ("praxo_actors", "supervisors"):
        handlers = logging.getLogger(name).handlers
        assert sum(isinstance(h, logging.NullHandler) for h in handlers) == 1
