"""Fixtures for the kernel's tests: a kernel driven by hand (see ``_kernel_fakes``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _kernel_fakes import Rig


@pytest.fixture
def rig() -> Iterator[Callable[..., Rig]]:
    """Build kernels (``rig(**Rig.build kwargs)``); at teardown close each and its loop, and
    check that nothing started a thread."""
    before = set(threading.enumerate())
    built: list[Rig] = []

    def build(**kwargs: Any) -> Rig:
        made = Rig.build(**kwargs)
        built.append(made)
        return made

    yield build
    for made in built:
        made.close()
    started = [t.name for t in set(threading.enumerate()) - before]
    assert started == [], f"a kernel driven by hand started threads: {started}"
