"""retry_after reads back every wait the providers write and servers send; retrying obeys it.

The servers' waits travel through the real SDKs from a loopback server; ``retrying`` runs on a
virtual clock, and the server counts the requests it was sent.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _model_servers import Reply, Server
from _payloads import VirtualClock, completion, message, request

from praxo_actors.models import ModelError
from praxo_actors.providers import anthropic_model, openai_model, retry_after, retrying
from praxo_actors.providers._errors import with_retry_after

PROVIDERS = ["openai", "anthropic"]
YEAR = 365 * 24 * 3600.0


@pytest.mark.parametrize(
    "seconds",
    [0.0, 0.001, 0.25, 1.5, 7.0, 12345678.0, 31535999.125, 1e9, 5e6, 1e16, 1e300, math.inf],
)
def test_retry_after_reads_back_what_the_providers_write(seconds: float) -> None:
    """Every wait written into a message is read back as the same number, however large."""
    written = with_retry_after("openai: HTTP 429: slow down", seconds)
    assert retry_after(ModelError("MODEL_RATE_LIMITED", written)) == seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("(retry after 1e+09 s)", 1e9),  # how 0.2 wrote a wait of 1,000,000,000 s
        ("(retry after 3.1536e+07 s)", 31536000.0),
        ("(retry after 5e-05 s)", 0.00005),
        ("(retry after 1E+03 s)", 1000.0),
        ("(retry after 1000000000 s)", 1e9),
        ("(retry after 2.5 s)", 2.5),
        ("(retry after -1 s)", None),
        ("(retry after nan s)", None),
        ("(retry after 1e+09 s) and more", None),  # only at the end of the message
    ],
)
def test_retry_after_reads_every_form_of_the_number(text: str, seconds: float | None) -> None:
    """Exponent forms and big integers are read; a negative or NaN wait is no wait."""
    assert retry_after(f"openai: HTTP 429: slow {text}") == seconds


def http_date(offset: float) -> Callable[[], str]:
    """Return a maker of the HTTP-date ``offset`` seconds from when it is called."""
    return lambda: email.utils.formatdate(time.time() + offset, usegmt=True)


def asctime_date(offset: float) -> Callable[[], str]:
    """Return a maker of that date in asctime form (which has no zone: it is UTC)."""
    return lambda: time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(time.time() + offset))


def sent(headers: dict[str, str | Callable[[], str]]) -> dict[str, str]:
    """Return the headers, each date made now."""
    return {name: value if isinstance(value, str) else value() for name, value in headers.items()}


def about(expected: float) -> Any:
    """Return a matcher for a wait computed from a date ``expected`` seconds away: at most
    ``expected`` (a date has whole seconds), a minute less at least."""

    class About:
        def __eq__(self, other: object) -> bool:
            return isinstance(other, float) and expected - 60 < other <= expected

        def __repr__(self) -> str:
            return f"about({expected})"

    return About()


HEADERS = [
    pytest.param({"retry-after": "7"}, 7.0, id="seconds"),
    pytest.param({"retry-after": "1000000000"}, 1e9, id="seconds-a-billion"),
    pytest.param({"retry-after": "9" * 400}, math.inf, id="seconds-beyond-a-float"),
    pytest.param({"retry-after": "1.5"}, 1.5, id="seconds-with-a-fraction"),
    pytest.param({"retry-after-ms": "1500"}, 1.5, id="milliseconds"),
    pytest.param({"retry-after-ms": "5000000000"}, 5e6, id="milliseconds-five-billion"),
    pytest.param({"retry-after-ms": "soon", "retry-after": "3"}, 3.0, id="bad-ms-then-seconds"),
    pytest.param({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0, id="date-past"),
    pytest.param({"retry-after": http_date(0)}, 0.0, id="date-now"),
    pytest.param({"retry-after": http_date(YEAR)}, about(YEAR), id="date-next-year"),
    pytest.param({"retry-after": asctime_date(YEAR)}, about(YEAR), id="asctime-next-year"),
    pytest.param({"retry-after": "soon"}, None, id="unreadable"),
    pytest.param({"retry-after": "-5"}, None, id="negative"),
    pytest.param({"retry-after": "1_000"}, None, id="not-digits"),
    pytest.param({}, None, id="none"),
]


def make(provider: str, server: Server) -> Any:
    """Return the provider's model on the server."""
    if provider == "openai":
        return openai_model("m", base_url=f"{server.url}/v1", api_key="sk-test")
    return anthropic_model("m", base_url=server.url, api_key="sk-ant")


def limited(headers: dict[str, str]) -> Reply:
    """Return a 429 with ``headers``."""
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    return Reply(error, status=429, headers=headers)


def answer(provider: str) -> Reply:
    """Return a well-formed answer of the provider."""
    if provider == "openai":
        return Reply(completion("ok"))
    return Reply(message([{"type": "text", "text": "ok"}]))


def ask(model: Any, provider_model: Any = None) -> Any:
    """Call ``model`` once on a fresh loop, closing the client of ``provider_model`` (the one
    it wraps, or itself) there."""

    async def go() -> Any:
        async with provider_model or model:
            return await model(request())

    return asyncio.run(go())


@pytest.fixture
def far_from_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run the test in a time zone five hours from UTC, as a server's host may be."""
    monkeypatch.setenv("TZ", "EST+05")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("headers", "seconds"), HEADERS)
def test_a_servers_wait_is_read_back_from_the_error(
    server: Server, far_from_utc: None, provider: str, headers: dict[str, Any], seconds: Any
) -> None:
    """Retry-After in seconds or as an HTTP date, and retry-after-ms, read back exactly."""
    server.script(limited(sent(headers)))
    result = ask(make(provider, server))
    assert result.code == "MODEL_RATE_LIMITED"
    assert retry_after(result) == seconds


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"retry-after": "1000000000"}, id="seconds-a-billion"),
        pytest.param({"retry-after": http_date(YEAR)}, id="date-next-year"),
        pytest.param({"retry-after-ms": "5000000000"}, id="milliseconds-five-billion"),
        pytest.param({"retry-after": "31"}, id="just-past-max-delay"),
    ],
)
def test_retrying_stops_at_once_when_the_server_asks_for_longer_than_max_delay(
    server: Server, clock: VirtualClock, provider: str, headers: dict[str, Any]
) -> None:
    """A wait beyond max_delay ends the retries: one request sent, no wait, the 429 returned."""
    server.script(*[limited(sent(headers))] * 4)  # what further attempts would take
    inner = make(provider, server)
    result = ask(retrying(inner, 4, max_delay=30.0, clock=clock), inner)
    assert result.code == "MODEL_RATE_LIMITED"
    assert len(server.requests) == 1
    assert clock.sleeps == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retrying_waits_the_servers_wait_within_max_delay(
    server: Server, clock: VirtualClock, provider: str
) -> None:
    """A wait within max_delay and above the backoff is waited out, then the call is sent again."""
    server.script(limited({"retry-after": "30"}), answer(provider))
    inner = make(provider, server)
    result = ask(retrying(inner, 4, max_delay=30.0, clock=clock, random=lambda: 0.0), inner)
    assert result.message.content == "ok"
    assert len(server.requests) == 2
    assert clock.sleeps == [30.0]
