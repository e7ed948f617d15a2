"""The protocol tests' bounds, and the serving helpers they share with other suites."""

from __future__ import annotations

from praxo_actors.testing._served import free_port, served, wait_until_serving

__all__ = ["CHILD_TIMEOUT", "TIMEOUT", "free_port", "served", "wait_until_serving"]

TIMEOUT = 10.0
CHILD_TIMEOUT = 30.0  # a child's start or exit on a busy machine; under a second on a quiet one
