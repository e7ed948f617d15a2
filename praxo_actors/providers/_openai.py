"""``openai_model``: an async model on any OpenAI-compatible chat-completions server."""

from __future__ import annotations

from typing import Any

from praxo_actors.agent import model_context
from praxo_actors.models import ModelError, Request, Response
from praxo_actors.providers._clients import ClientModel, LoopClients
from praxo_actors.providers._errors import MODEL_AUTH, MODEL_BAD_REQUEST
from praxo_actors.providers._held import HeldDeltas
from praxo_actors.providers._openai_wire import Assembler, from_completion, to_messages, to_tools
from praxo_actors.providers._telemetry import model_attributes
from praxo_actors.providers._wire import (
    BadRequest,
    check_format,
    check_params,
    check_settings,
    import_sdk,
)

__all__ = ["OpenAIModel", "openai_model"]

_RESERVED = ("model", "messages", "tools", "stream", "stream_options", "timeout")


class OpenAIModel(ClientModel):
    """An ``async`` model calling ``chat.completions`` with the ``openai`` SDK.

    Made by :func:`openai_model`. It holds one SDK client per event loop that calls it (an
    async HTTP client's connections belong to one loop); :meth:`aclose` (on that loop) or
    :meth:`close` (from another thread) closes those it made.
    """

    __slots__ = ("_clients", "_sdk", "model", "params", "stream", "timeout", "tool_call_format")
    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        sdk: Any,
        clients: LoopClients,
        tool_call_format: str | None,
        stream: bool,
        timeout: float | None,
        params: dict[str, Any],
    ) -> None:
        self.model = model
        self.tool_call_format = tool_call_format
        self.stream = stream
        self.timeout = timeout
        self.params = params
        self._sdk = sdk
        self._clients = clients

    async def __call__(self, request: Request) -> Response | ModelError:
        """Send the request's messages and tools; return the reply, or the failure's code."""
        try:
            body: dict[str, Any] = {"model": self.model, "messages": to_messages(request.messages)}
        except BadRequest as exc:
            return ModelError(MODEL_BAD_REQUEST, f"openai: {exc}")
        if request.tools:
            body["tools"] = to_tools(request.tools)
        body.update(self.params)
        client = self._clients.get()
        if self.stream:
            streamed: Response | ModelError = await self._send(self._streamed(client, body))
            return streamed
        completion = await self._send(client.chat.completions.create(**body, timeout=self.timeout))
        if isinstance(completion, ModelError):
            return completion
        return self._read(from_completion, completion, self.tool_call_format)

    async def _streamed(self, client: Any, body: dict[str, Any]) -> Response | ModelError:
        assembler = Assembler()
        context = model_context()
        # Offered tools, the model may write a call as text: that text is held, not streamed.
        held = None if context is None else HeldDeltas(context.delta, "tools" in body)
        stream = await client.chat.completions.create(
            **body, stream=True, stream_options={"include_usage": True}, timeout=self.timeout
        )
        failed = await self._drain(stream, assembler.add, None if held is None else held.add)
        reply = failed or self._read(assembler.response, self.tool_call_format)
        if held is not None:
            held.finish(reply)
        return reply

    def __repr__(self) -> str:
        return f"openai_model({self.model!r}, stream={self.stream})"

    @property
    def telemetry_attributes(self) -> dict[str, Any]:
        """What this model's ``chat`` spans carry: provider, server, request parameters."""
        return model_attributes("openai", self._clients.base_url, self.params)


def openai_model(
    model: str,
    *,
    client: Any = None,
    base_url: str | None = None,
    api_key: str | None = None,
    tool_call_format: str | None = None,
    stream: bool = False,
    timeout: float | None = 60.0,
    **params: Any,
) -> OpenAIModel:
    """Return an ``async`` model on an OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama).

    Args:
        model: The server's model name.
        client: An ``openai.AsyncOpenAI`` to use as it is (its own retries and settings);
            None: one is made per event loop from ``base_url`` and ``api_key``, with the
            SDK's own retries off (wrap the model in :func:`retrying` for those).
        base_url: The server, e.g. ``"http://127.0.0.1:8000/v1"`` (None: ``OPENAI_BASE_URL``
            or OpenAI's).
        api_key: None: ``OPENAI_API_KEY``. A self-hosted server may take any string.
        tool_call_format: When the server answers with text, read tool calls from it in this
            named format (``"hermes"``, ``"llama3_json"``, ...) and keep the prose as the text;
            None leaves the text as it is (the agent loop may still read calls from it).
        stream: Stream the answer: its text arrives as ``model.delta`` events meanwhile.
        timeout: A deadline in seconds on the whole call, a stream read to its end
            included (None: no limit); past it, ``MODEL_TIMEOUT``.
        params: Sent with every request (``temperature``, ``max_tokens``, ``tool_choice``...).

    Returns:
        The model; ``Response.usage`` is ``{"input_tokens": n, "output_tokens": n}``.

    Raises:
        ImportError: The ``openai`` extra is not installed.
        TypeError: A setting of the wrong type, a parameter the request sets, or one the
            SDK does not take.
        ValueError: An empty ``model``, a bad ``timeout``, or ``client`` with a URL or key.
        PraxoError: ``MODEL_AUTH`` without an API key; ``TOOL_CALL_UNKNOWN_FORMAT``.
    """
    check_settings("openai_model", model, timeout, stream, params, _RESERVED)
    check_format(tool_call_format)
    if client is not None and (base_url is not None or api_key is not None):
        raise ValueError("openai_model: pass a client or base_url/api_key, not both")
    sdk = import_sdk("openai", "openai_model")
    if client is not None and not isinstance(client, sdk.AsyncOpenAI):
        raise TypeError(f"openai_model: client must be an openai.AsyncOpenAI, not {client!r}")

    def make() -> Any:
        return sdk.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout)

    try:
        clients = LoopClients(make, client)
    except sdk.OpenAIError as exc:  # no key given nor in the environment
        from praxo_actors import PraxoError

        raise PraxoError(MODEL_AUTH, f"openai_model: {exc}") from None
    check_params("openai_model", clients.sample().chat.completions.create, params)
    return OpenAIModel(
        model,
        sdk=sdk,
        clients=clients,
        tool_call_format=tool_call_format,
        stream=stream,
        timeout=timeout,
        params=dict(params),
    )
