"""A ``RunAgentInput`` read by the app's own structs is the one ``ag_ui.core`` reads, or none."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from ag_ui.core import RunAgentInput

from praxo_actors.protocols._ag_ui_input import given
from praxo_actors.protocols._http import Refused

BASE = '{"threadId":"t","runId":"r","messages":[%s],"state":%s}'
USER = '{"id":"m1","role":"user","content":"hi","metadata":null}'
CALL = (
    '{"id":"a","role":"assistant","content":null,"toolCalls":[{"id":"c","type":"function",'
    '"function":{"name":"f","arguments":"{}"}}]},{"id":"b","role":"tool","content":"5",'
    '"toolCallId":"c"}'
)

BODIES = [
    BASE % (USER, "{}"),
    BASE % ('{"id":"s","role":"system","content":"be brief"},' + USER, '{"a":[1,2.5,null]}'),
    BASE % (USER + "," + CALL, "null"),
    BASE % (USER, '{"a":1,"a":2}'),  # a repeated key: the last
    '{"threadId":"t","threadId":"u","runId":"r","messages":[]}',
    '{"threadId":"t","runId":"r","messages":[],"zzz":[1],"thread_id":"x"}',
    '{"threadId":"t","runId":"r","messages":[],"tools":[{"name":"x","description":"d",'
    '"parameters":{"type":"object"}}],"context":[{"description":"d","value":"v"}]}',
    '{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"i",'
    '"status":"resolved","payload":{"approved":true}}]}',
    '{"thread_id":"t","run_id":"r","messages":[]}',  # Python names: the model's way
    BASE % ('{"id":"m","role":"user","content":[{"type":"text","text":"hi"}]}', "1e400"),
    BASE % (USER, "1" + "0" * 400),
]

REFUSED = [
    BASE % (USER, "[" * 300 + "]" * 300),  # nested deeper than the model reads
    BASE % (USER, "1" + "0" * 5000),
    BASE % (USER, '"\\ud800"'),
    '{"threadId":"t","runId":"r","messages":null}',
    '{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user"}]}',
    '{"threadId":"t","runId":"r","messages":[{"id":"m","role":"pirate","content":"x"}]}',
    '{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"i","status":"maybe"}]}',
    '{"threadId":"t","runId":"r","messages":[]} x',
]


def _seen(v: Any) -> object:
    """What the app reads of an input."""
    return (
        v.thread_id,
        v.run_id,
        v.state,
        [(m.role, m.content) for m in v.messages],
        [(t.name, t.description, t.parameters) for t in v.tools or []],
        [(r.status, r.payload) for r in v.resume or []],
    )


@pytest.mark.parametrize("body", BODIES)
def test_an_input_reads_as_the_model_reads_it(body: str) -> None:
    data = body.encode()
    assert _seen(given(data)) == _seen(RunAgentInput.model_validate_json(data))


@pytest.mark.parametrize("body", REFUSED)
def test_what_the_model_refuses_is_refused(body: str) -> None:
    data = body.encode("utf-8", "surrogatepass")
    with pytest.raises(pydantic.ValidationError):
        RunAgentInput.model_validate_json(data)
    with pytest.raises(Refused) as caught:
        given(data)
    assert caught.value.code in {"PROTOCOL_BAD_JSON", "PROTOCOL_INVALID_INPUT"}
    assert caught.value.status in {400, 422}
