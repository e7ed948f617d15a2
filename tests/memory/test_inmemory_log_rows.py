"""The in-memory store keeps the session log's rows short, and gives every text back exactly."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from praxo_actors.core._log_docs import dump_record
from praxo_actors.memory import InMemoryStore
from praxo_actors.memory._log import HEADS, RECORDS, RESULTS, Commit, SessionLog
from praxo_actors.memory._runs import RUNS
from praxo_actors.models import message_assistant, message_user

RESULT = (
    '{"agent":"zero","model_calls":1,"output":"ok","run_id":"run_18ee77a699c583c8_afe8',
    '19cb502debfe_0","steps":1,"structured":null,"tool_calls":0,"usage":{}}',
)


def _stored_size(store: InMemoryStore, namespace: tuple[str, ...], key: str) -> int:
    return len(store._data[namespace][key])


def test_a_runs_rows_are_kept_short_and_read_back_exactly() -> None:
    """A run of one exchange: its record, result, head and run-index row each take a fraction of
    their text, and read back as written."""
    run_id = "run_18ee77a699c583c8_afe819cb502debfe_0"
    record = dump_record("s", 1, run_id, [message_user("hello"), message_assistant("ok")])
    result = "".join(RESULT)
    with InMemoryStore() as store:
        log = SessionLog(store)
        assert log.write([Commit("s", 0, run_id, record, result=result, agent="zero")], [])
        assert store._read_texts(RECORDS, ["s#1"]) == [record]
        assert store._read_texts(RESULTS, ["s#0"]) == [result]
        assert _stored_size(store, RECORDS, "s#1") < len(record) // 4
        assert _stored_size(store, RESULTS, "s#0") < len(result) // 2
        head = store._read_texts(HEADS, ["s"])[0]
        assert head is not None and _stored_size(store, HEADS, "s") < len(head)
        assert log.find_run(run_id) == "s" and log.results("s") == [result]


@pytest.mark.parametrize(
    ("namespace", "value"),
    [
        (RECORDS, {"record": '{"format":"praxo.record","messages":[{"content":"'}),
        (RESULTS, {"output": '","model_calls":1,"output":"', "agent": "x"}),
        (HEADS, {"base": 1, "results": 2, "version": 3}),  # no agent: another first phrase
        (RUNS, {"n": "\u0001\u0002", "session": ',"session":"'}),
        (("app", "notes"), {"format": "praxo.record", "agent": '{"agent":"'}),
    ],
)
def test_any_document_under_any_namespace_reads_back_exactly(
    namespace: tuple[str, ...], value: dict[str, object]
) -> None:
    """A document holding the phrases (or their codes, escaped) reads back equal, whichever
    namespace it is under."""
    with InMemoryStore() as store:
        store.put(namespace, "k", value)
        item = store.get(namespace, "k")
        assert item is not None and item.value == value


def test_a_row_holding_a_control_character_is_still_shortened() -> None:
    """A log text with a raw control character (only a broken writer gives one) is shortened
    like any other, and reads back exactly: the codes are bytes no text's UTF-8 holds."""
    text = '{"agent":"a\u0001\u00c0","base":0,"results":1,"version":1}'
    with InMemoryStore() as store:
        store._apply([(HEADS, "s", text)], [], 1)
        assert store._read_texts(HEADS, ["s"]) == [text]
        # A code for each phrase, then 'a', the control character, 'À' (two bytes) and the ints.
        assert _stored_size(store, HEADS, "s") == 16 + 4 + 1 + 1 + 2 + 4


_PHRASES = [
    '{"format":"praxo.record","messages":[{"content":"',
    '","name":null,"role":"user","tool_call_id":null,"tool_calls":[],"type":"message"}',
    ',{"content":"',
    '","seq":',
    '{"agent":"',
    '","model_calls":1,"output":"',
    '","base":',
    ',"results":',
    '{"n":',
    ',"session":"',
    '":',
]
_TEXTS = st.lists(
    st.one_of(
        st.sampled_from(_PHRASES),
        st.text(),
        st.characters(max_codepoint=0x1F),  # control characters
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
        st.characters(min_codepoint=0xC0, max_codepoint=0xFF),  # the codes' own code points
    ),
    max_size=12,
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_TEXTS, min_size=1, max_size=4))
def test_every_text_under_every_namespace_reads_back_exactly(texts: list[str]) -> None:
    """Any text (the log's phrases in any order, control characters, non-ASCII, lone
    surrogates) written under the log's namespaces or another reads back exactly."""
    namespaces = [RECORDS, RESULTS, HEADS, RUNS, ("app", "notes")]
    with InMemoryStore() as store:
        keys = [f"k{i}" for i in range(len(texts))]
        store._apply(
            [(ns, k, t) for k, t in zip(keys, texts, strict=True) for ns in namespaces], [], 1
        )
        for ns in namespaces:
            assert store._read_texts(ns, keys) == texts
            found = [store._read(ns, key) for key in keys]
            assert [None if row is None else row.text for row in found] == texts
        assert [row.text for row in store._scan((), 0, None)] == [
            text for _ in namespaces for text in texts
        ]
