"""OTP-style supervision for Pykka actors: monitors, supervisors, a registry.

Generic: nothing here knows what the supervised actors do. See ``docs/how-to/supervision.md``.
"""

from __future__ import annotations

import logging

from supervisors._ask_crash import CrashOnAskError
from supervisors._clock import Clock, ManualClock
from supervisors._dynamic import DynamicSupervisor
from supervisors._errors import CODES, SupervisorError
from supervisors._monitor import Down, DownReason, Monitor, monitor
from supervisors._records import ChildCounts, ChildRecord, SupervisorStatistics
from supervisors._registry import Registry
from supervisors._spec import ChildSpec, ChildType, Restart
from supervisors._supervisor import AutoShutdown, Strategy, Supervisor

# A library never configures logging; this handler only keeps the stdlib's last-resort handler
# from printing our warnings to stderr when the host configured nothing.
logging.getLogger("supervisors").addHandler(logging.NullHandler())

__all__ = [
    "CODES",
    "AutoShutdown",
    "ChildCounts",
    "ChildRecord",
    "ChildSpec",
    "ChildType",
    "Clock",
    "CrashOnAskError",
    "Down",
    "DownReason",
    "DynamicSupervisor",
    "ManualClock",
    "Monitor",
    "Registry",
    "Restart",
    "Strategy",
    "Supervisor",
    "SupervisorError",
    "SupervisorStatistics",
    "monitor",
]
