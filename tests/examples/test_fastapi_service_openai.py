"""The FastAPI example on ``openai_model`` when ``OPENAI_BASE_URL`` is set, against a loopback
OpenAI-compatible server started by the test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _model_servers import Reply, Server, Stream
from _model_servers import serve as serve_model
from test_fastapi_service import TIMEOUT, read_events, serve


def completion(text: str) -> dict[str, object]:
    """Return a chat completion answering ``text``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "served-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }


def chunk(text: str) -> tuple[None, dict[str, object]]:
    """Return a stream chunk carrying ``text``."""
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    return None, {**body, "choices": [choice]}


@pytest.fixture
def model_server(no_thread_leaks: None) -> Iterator[Server]:
    """Serve scripted chat completions on a loopback port."""
    with serve_model() as running:
        yield running


def test_the_service_answers_with_the_openai_compatible_server(
    tmp_path: Path, model_server: Server
) -> None:
    """With OPENAI_BASE_URL set, a run's output is the server's completion of the user text."""
    model_server.script(Reply(completion("served answer")))
    settings = {
        "OPENAI_BASE_URL": f"{model_server.url}/v1",
        "OPENAI_MODEL": "served-model",
        "OPENAI_API_KEY": "sk-loopback",
    }
    with serve(tmp_path, tmp_path / "s.sqlite3", **settings) as server:
        reply = server.client.post("/sessions/s1/runs", json={"input": "hello model"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["output"] == "served answer"
    [sent] = model_server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-loopback"
    assert sent.body["model"] == "served-model"
    assert sent.body["messages"] == [{"role": "user", "content": "hello model"}]


def test_a_streaming_service_shows_the_deltas_and_maps_provider_errors(
    tmp_path: Path, model_server: Server
) -> None:
    """PRAXO_STREAM=1 streams model.delta events; a 429 from the server answers 502."""
    model_server.script(
        Stream([chunk("str"), chunk("eamed"), (None, "[DONE]")]),
        Reply({"error": {"message": "slow down"}}, status=429, headers={"retry-after": "3"}),
    )
    settings = {"OPENAI_BASE_URL": f"{model_server.url}/v1", "PRAXO_STREAM": "1"}
    with serve(tmp_path, tmp_path / "s.sqlite3", **settings) as server:
        with server.client.stream("GET", "/sessions/s1/events") as stream:
            lines = stream.iter_lines()
            assert next(lines) == ": subscribed"
            with ThreadPoolExecutor(1) as pool:
                posted = pool.submit(server.client.post, "/sessions/s1/runs", json={"input": "x"})
                events = read_events(lines, until="run.completed")
                assert posted.result(TIMEOUT).json()["output"] == "streamed"
        limited = server.client.post("/sessions/s2/runs", json={"input": "y"})
    deltas = [json.loads(e["data"])["data"]["text"] for e in events if e["event"] == "model.delta"]
    assert deltas == ["str", "eamed"]
    assert limited.status_code == 502
    error = limited.json()["error"]
    assert error["code"] == "MODEL_RATE_LIMITED"
    assert error["message"].endswith("(retry after 3 s)")
