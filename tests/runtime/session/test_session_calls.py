"""A callback: an ``async def`` one as a task on the loop, a plain one on a pool."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from praxo_actors.runtime._session._calls import _is_async


async def _model(value: Any) -> Any:
    return value


def _plain(value: Any) -> Any:
    return value


class _AsyncCallable:
    async def __call__(self, value: Any) -> Any:
        return value


class _PlainCallable:
    def __call__(self, value: Any) -> Any:
        return value


class _Holder:
    async def method(self, value: Any) -> Any:
        return value


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (_model, True),
        (functools.partial(_model, 1), True),
        (_AsyncCallable(), True),
        (_Holder().method, True),
        (_plain, False),
        (functools.partial(_plain, 1), False),
        (_PlainCallable(), False),
        (lambda value: value, False),
        (print, False),
    ],
)
def test_a_callback_is_async_when_inspect_says_so(fn: Any, expected: bool) -> None:
    """An ``async def`` function, a partial or bound method of one, or an object whose
    ``__call__`` is ``async def`` starts as a task; everything else runs on the I/O pool."""
    assert _is_async(fn) is expected
