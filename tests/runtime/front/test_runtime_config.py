"""``start``, ``astart`` and ``open`` take the same settings: ``RuntimeConfig``'s fields or one."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import threading
import typing
from collections.abc import Callable
from typing import Any

import pytest
from _helpers import assert_no_new_threads
from _runtime_helpers import TIMEOUT

from praxo_actors import PraxoError
from praxo_actors.runtime import Runtime, RuntimeConfig, RuntimeOptions

FIELDS = {f.name for f in dataclasses.fields(RuntimeConfig)}


def _keywords(method: Callable[..., Any]) -> set[str]:
    """The settings a start method takes: its keywords, its ``**options`` TypedDict's keys."""
    signature = inspect.signature(method)
    names = set()
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.name != "config":
            names.add(parameter.name)
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            hints = typing.get_type_hints(method, include_extras=True)
            (options,) = typing.get_args(hints[parameter.name])
            names |= set(typing.get_type_hints(options))
    return names


@pytest.mark.parametrize("name", ["start", "astart", "open"])
def test_start_methods_take_exactly_the_config_fields(name: str) -> None:
    """Each start method's settings are exactly ``RuntimeConfig``'s fields, plus ``config=``."""
    method = getattr(Runtime, name)
    assert _keywords(method) == FIELDS
    assert "config" in inspect.signature(method).parameters


def test_options_typed_dict_mirrors_the_config_types() -> None:
    """``RuntimeOptions`` gives each field the type ``RuntimeConfig`` gives it."""
    options = typing.get_type_hints(RuntimeOptions)
    config = typing.get_type_hints(RuntimeConfig)
    assert options == {name: config[name] for name in FIELDS}


def test_start_with_a_config_uses_it(runtime: Callable[..., Runtime]) -> None:
    """``Runtime.start(config=...)`` runs with that config's settings."""
    config = RuntimeConfig(max_queue=7, idle_timeout=None, timeout=TIMEOUT)
    before = set(threading.enumerate())
    rt = Runtime.start(config=config)
    try:
        assert rt._config is config
    finally:
        rt.stop()
    assert_no_new_threads(before, TIMEOUT)


def test_config_and_keywords_together_are_refused() -> None:
    """Both a config and keywords, a config of another type or an unknown keyword are refused."""
    before = set(threading.enumerate())
    config = RuntimeConfig(idle_timeout=None)
    for call in (
        lambda: Runtime.start(config=config, max_queue=3),
        lambda: Runtime.start(config={"max_queue": 3}),  # type: ignore[arg-type]
        lambda: Runtime.start(max_queu=3),  # type: ignore[call-arg]
    ):
        with pytest.raises(PraxoError) as info:
            call()
        assert info.value.code == "RUNTIME_INVALID_CONFIG"
    assert_no_new_threads(before, TIMEOUT)


def test_astart_and_open_take_a_config() -> None:
    """``astart`` and ``open`` take ``config=``, and refuse it beside keywords, at once."""
    config = RuntimeConfig(max_queue=5, idle_timeout=None, timeout=TIMEOUT)

    async def main() -> tuple[int, int]:
        rt = await Runtime.astart(config=config)
        try:
            started = rt._config.max_queue
        finally:
            await rt.astop()
        async with Runtime.open(config=config) as opened:
            queue = opened._config.max_queue
        for bad in (
            lambda: Runtime.astart(config=config, timeout=1.0),
            lambda: Runtime.open(config=config, timeout=1.0).__aenter__(),
        ):
            with pytest.raises(PraxoError) as info:
                await bad()
            assert info.value.code == "RUNTIME_INVALID_CONFIG"
        return started, queue

    assert asyncio.run(asyncio.wait_for(main(), TIMEOUT)) == (5, 5)


def test_keywords_still_work_everywhere() -> None:
    """The 0.1 and 0.2 keyword calls keep working on all three start methods."""

    async def main() -> int:
        async with Runtime.open(max_queue=4, idle_timeout=None, timeout=TIMEOUT) as rt:
            return rt._config.max_queue

    assert asyncio.run(asyncio.wait_for(main(), TIMEOUT)) == 4
    with Runtime.start(max_queue=3, idle_timeout=None, timeout=TIMEOUT) as rt:
        assert rt._config == RuntimeConfig(max_queue=3, idle_timeout=None, timeout=TIMEOUT)
