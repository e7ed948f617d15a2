"""The FastAPI example's research agent: an MCP tool and a sub-agent, over HTTP."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")
from fastapi.testclient import TestClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def client() -> Iterator[TestClient]:
    """The example app with its research agent, its lifespan run (the MCP server started)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        import fastapi_service

        app = fastapi_service.create_app(None, research=True)
        with TestClient(app) as client:
            yield client
    finally:
        sys.path.remove(str(EXAMPLES))


def test_the_research_agent_searches_over_mcp_and_asks_its_summarizer(client: TestClient) -> None:
    """The run calls the MCP server's search, then the summarizer on a child session."""
    reply = client.post("/research/r1", json={"input": "what are actors and supervisors?"})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["output"] == (
        "research: summary: An actor owns its state and handles one message at a time."
    )
    assert body["tool_calls"] == 2
    child = client.get("/sessions/r1-summarize/history")
    assert child.status_code == 200, child.text
    texts = [m["content"] for m in child.json()["messages"]]
    assert texts[-1].startswith("summary: An actor")


def test_a_search_with_no_notes_is_still_summarised(client: TestClient) -> None:
    """The MCP tool's text result reaches the model as text, and the sub-agent summarises it."""
    reply = client.post("/research/r2", json={"input": "quantum"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["output"] == "research: summary: no notes on 'quantum'"
