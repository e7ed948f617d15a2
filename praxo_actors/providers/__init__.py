"""Real models: OpenAI-compatible servers and Anthropic, and wrappers that share a budget or retry.

``openai_model`` (extra ``openai``) and ``anthropic_model`` (extra ``anthropic``) return
``async`` models: callables ``Request -> Awaitable[Response | ModelError]`` for
:func:`~praxo_actors.agent.arun_agent` and the runtime. The SDKs are imported when a factory
is called, never by ``import praxo_actors.providers``; without one, the factory raises
``ImportError`` naming the extra to install.

A failed call is returned as a ``ModelError`` (never raised) with one of the codes below:
``timeout`` is a deadline on the whole call, a stream included (``MODEL_TIMEOUT``), and an
answer that is not JSON or not of the API's shape is ``MODEL_BAD_RESPONSE``. A rate limit's
message ends with ``(retry after N s)`` when the server said how long, which
:func:`retry_after` reads back, whatever the number. ``Response.usage`` counts ``input_tokens`` and
``output_tokens`` (the agent loop sums them into ``RunResult.usage``). With ``stream=True``
the text arrives as ``model.delta`` events while the call runs, and the call still returns
the whole response.

``rate_limited(model, requests_per_second, max_concurrency)`` shares one budget across every
session, thread and event loop that uses the returned model; ``retrying(model, attempts)``
calls it again on transient codes, with exponential backoff, jitter and the server's
retry-after. Both wait on an injectable :class:`Clock`.
"""

from __future__ import annotations

from praxo_actors.providers._anthropic import AnthropicModel, anthropic_model
from praxo_actors.providers._clock import Clock, SystemClock
from praxo_actors.providers._errors import (
    MODEL_AUTH,
    MODEL_BAD_REQUEST,
    MODEL_BAD_RESPONSE,
    MODEL_RATE_LIMITED,
    MODEL_TIMEOUT,
    MODEL_UNAVAILABLE,
    retry_after,
)
from praxo_actors.providers._limit import (
    RateLimit,
    RateLimitedModel,
    RateLimitStatistics,
    rate_limited,
)
from praxo_actors.providers._openai import OpenAIModel, openai_model
from praxo_actors.providers._retry import RetryingModel, retrying

__all__ = [
    "MODEL_AUTH",
    "MODEL_BAD_REQUEST",
    "MODEL_BAD_RESPONSE",
    "MODEL_RATE_LIMITED",
    "MODEL_TIMEOUT",
    "MODEL_UNAVAILABLE",
    "AnthropicModel",
    "Clock",
    "OpenAIModel",
    "RateLimit",
    "RateLimitStatistics",
    "RateLimitedModel",
    "RetryingModel",
    "SystemClock",
    "anthropic_model",
    "openai_model",
    "rate_limited",
    "retry_after",
    "retrying",
]
