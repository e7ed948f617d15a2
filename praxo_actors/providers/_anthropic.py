"""``anthropic_model``: an async model on the Anthropic Messages API."""

from __future__ import annotations

from typing import Any

from praxo_actors.models import ModelError, Request, Response
from praxo_actors.providers._anthropic_wire import Assembler, from_message, to_messages, to_tools
from praxo_actors.providers._clients import ClientModel, LoopClients
from praxo_actors.providers._errors import MODEL_BAD_REQUEST
from praxo_actors.providers._telemetry import model_attributes
from praxo_actors.providers._wire import (
    BadRequest,
    check_params,
    check_settings,
    import_sdk,
)

__all__ = ["AnthropicModel", "anthropic_model"]

_RESERVED = ("model", "messages", "system", "tools", "stream", "max_tokens", "timeout")


class AnthropicModel(ClientModel):
    """An ``async`` model calling ``messages.create`` with the ``anthropic`` SDK.

    Made by :func:`anthropic_model`; holds one SDK client per event loop that calls it, as
    :class:`OpenAIModel` does (:meth:`aclose`, :meth:`close`).
    """

    __slots__ = ("_clients", "_sdk", "max_tokens", "model", "params", "stream", "timeout")
    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        sdk: Any,
        clients: LoopClients,
        stream: bool,
        timeout: float | None,
        max_tokens: int,
        params: dict[str, Any],
    ) -> None:
        self.model = model
        self.stream = stream
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.params = params
        self._sdk = sdk
        self._clients = clients

    async def __call__(self, request: Request) -> Response | ModelError:
        """Send the request's turns and tools; return the reply, or the failure's code."""
        try:
            system, turns = to_messages(request.messages)
        except BadRequest as exc:
            return ModelError(MODEL_BAD_REQUEST, f"anthropic: {exc}")
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": turns,
        }
        if system is not None:
            body["system"] = system
        if request.tools:
            body["tools"] = to_tools(request.tools)
        body.update(self.params)
        client = self._clients.get()
        if self.stream:
            streamed: Response | ModelError = await self._send(self._streamed(client, body))
            return streamed
        message = await self._send(client.messages.create(**body, timeout=self.timeout))
        if isinstance(message, ModelError):
            return message
        return self._read(from_message, message)

    async def _streamed(self, client: Any, body: dict[str, Any]) -> Response | ModelError:
        assembler = Assembler()
        stream = await client.messages.create(**body, stream=True, timeout=self.timeout)
        failed = await self._drain(stream, assembler.add)
        return failed or self._read(assembler.response)

    def __repr__(self) -> str:
        return f"anthropic_model({self.model!r}, stream={self.stream})"

    @property
    def telemetry_attributes(self) -> dict[str, Any]:
        """What this model's ``chat`` spans carry: provider, server, request parameters."""
        params = {"max_tokens": self.max_tokens, **self.params}
        return model_attributes("anthropic", self._clients.base_url, params)


def anthropic_model(
    model: str,
    *,
    client: Any = None,
    base_url: str | None = None,
    api_key: str | None = None,
    stream: bool = False,
    timeout: float | None = 60.0,
    max_tokens: int = 4096,
    **params: Any,
) -> AnthropicModel:
    """Return an ``async`` model on the Anthropic Messages API.

    Args:
        model: The model name, e.g. ``"claude-sonnet-4-5"``.
        client: An ``anthropic.AsyncAnthropic`` to use as it is (its own retries and
            settings); None: one is made per event loop from ``base_url`` and ``api_key``,
            with the SDK's own retries off (wrap the model in :func:`retrying` for those).
        base_url: None: ``ANTHROPIC_BASE_URL`` or Anthropic's.
        api_key: None: ``ANTHROPIC_API_KEY``.
        stream: Stream the answer: its text arrives as ``model.delta`` events meanwhile.
        timeout: A deadline in seconds on the whole call, a stream read to its end
            included (None: no limit); past it, ``MODEL_TIMEOUT``.
        max_tokens: The most tokens one answer may have (the API requires a bound).
        params: Sent with every request: what the installed SDK's ``messages.create`` takes
            (``tool_choice``, ``thinking``, ``stop_sequences``, ``extra_body``...).

    Returns:
        The model; ``Response.usage`` holds ``input_tokens``, ``output_tokens`` and, when
        the API reports them, ``cache_creation_input_tokens``, ``cache_read_input_tokens``.

    Raises:
        ImportError: The ``anthropic`` extra is not installed.
        TypeError: A setting of the wrong type, a parameter the request sets, or one the
            SDK does not take.
        ValueError: An empty ``model``, a bad ``timeout`` or ``max_tokens``, or ``client``
            with a URL or key.
    """
    check_settings("anthropic_model", model, timeout, stream, params, _RESERVED)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise TypeError("anthropic_model: max_tokens must be an int")
    if max_tokens < 1:
        raise ValueError(f"anthropic_model: max_tokens must be at least 1, got {max_tokens}")
    if client is not None and (base_url is not None or api_key is not None):
        raise ValueError("anthropic_model: pass a client or base_url/api_key, not both")
    sdk = import_sdk("anthropic", "anthropic_model")
    if client is not None and not isinstance(client, sdk.AsyncAnthropic):
        raise TypeError(
            f"anthropic_model: client must be an anthropic.AsyncAnthropic, not {client!r}"
        )

    def make() -> Any:
        return sdk.AsyncAnthropic(
            base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout
        )

    clients = LoopClients(make, client)
    check_params("anthropic_model", clients.sample().messages.create, params)
    return AnthropicModel(
        model,
        sdk=sdk,
        clients=clients,
        stream=stream,
        timeout=timeout,
        max_tokens=max_tokens,
        params=dict(params),
    )
