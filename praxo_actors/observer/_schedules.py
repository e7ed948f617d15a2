"""The observer's schedules: list them (next fire, last outcome) and cancel one.

- ``GET /api/schedules`` — ``{"schedules": [...]}``, every schedule in the runtime's store
  (query ``session``: one session's), each with its ``next_fire`` and ``last_fire`` as ISO
  8601 UTC times and its input PII-redacted when the app redacts;
- ``POST /api/schedules/{id}/cancel`` — ``{"schedule_id", "cancelled": true}``; an unknown id is
  404 ``SCHEDULE_NOT_FOUND``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from praxo_actors._errors import PraxoError
from praxo_actors.codes import SCHEDULE_NOT_FOUND
from praxo_actors.observer._responses import error_response, json_response

if TYPE_CHECKING:
    from praxo_actors.runtime import Runtime, Schedule

__all__ = ["schedule_routes"]


def _shown(schedule: Schedule, redact: bool) -> dict[str, Any]:
    from praxo_actors.core import redact_value

    last = schedule.last_fire
    return {
        "id": schedule.id,
        "session_id": schedule.session_id,
        "agent": schedule.agent,
        "input": redact_value(schedule.input) if redact else schedule.input,
        "kind": schedule.kind,
        "every": schedule.every,
        "cron": schedule.cron,
        "tz": schedule.tz,
        "key": schedule.key,
        "catch_up": schedule.catch_up,
        "next_fire": schedule.next_fire.isoformat(),
        "fired": schedule.fired,
        "last_fire": None if last is None else last.isoformat(),
        "last_run_id": schedule.last_run_id,
        "last_outcome": schedule.last_outcome,
        "last_error": schedule.last_error,
    }


def schedule_routes(runtime: Runtime, redact: bool) -> list[Route]:
    """The routes above, over ``runtime``'s schedules."""

    async def listing(request: Request) -> Response:
        try:
            found = await runtime.aschedules(request.query_params.get("session") or None)
        except PraxoError as exc:
            return error_response(exc)
        return json_response({"schedules": [_shown(s, redact) for s in found]})

    async def cancel(request: Request) -> Response:
        schedule_id = request.path_params["schedule_id"]
        try:
            for schedule in await runtime.aschedules():
                if schedule.id == schedule_id:
                    await schedule.acancel()
                    return json_response({"schedule_id": schedule_id, "cancelled": True})
            raise PraxoError(SCHEDULE_NOT_FOUND, f"no schedule {schedule_id!r}")
        except PraxoError as exc:
            return error_response(exc)

    return [
        Route("/api/schedules", listing),
        Route("/api/schedules/{schedule_id}/cancel", cancel, methods=["POST"]),
    ]
