"""The package's loggers: structlog's API over the standard ``logging`` module.

Only modules that already need the runtime import this one: it imports :mod:`supervisors` (and so
Pykka). See :mod:`supervisors._log` for what a record carries.
"""

from __future__ import annotations

import logging

from supervisors._log import EventMessage, get_logger

__all__ = ["EventMessage", "get_logger"]

# Also added by the package's ``__init__``; here too so that every module logging through this
# one has it, and only once.
_package_logger = logging.getLogger("praxo_actors")
if not any(isinstance(handler, logging.NullHandler) for handler in _package_logger.handlers):
    _package_logger.addHandler(logging.NullHandler())
