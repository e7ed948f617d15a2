"""Run parse_json over JSONTestSuite's test_parsing files (y_ accept, n_ reject, i_ either)."""

from __future__ import annotations

from pathlib import Path

import pytest

from praxo_actors.core import JSONError, parse_json

SUITE = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "external" / "JSONTestSuite"
).resolve() / "test_parsing"

FILES = sorted(SUITE.glob("*.json")) if SUITE.is_dir() else []


def _decode(path: Path) -> str | None:
    """Return the file as text, or None when it is not UTF-8 (a rejection for a str parser)."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return None


def _ids(path: Path) -> str:
    return path.name


pytestmark = pytest.mark.skipif(not FILES, reason=f"JSONTestSuite not found at {SUITE}")


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("y_")], ids=_ids)
def test_accepts_valid_documents(path: Path) -> None:
    """Every y_ document is UTF-8 and parses."""
    text = _decode(path)
    assert text is not None, "a y_ file is not UTF-8"
    parse_json(text)


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("n_")], ids=_ids)
def test_rejects_invalid_documents(path: Path) -> None:
    """Every n_ document is rejected with JSON_INVALID (or is not even UTF-8)."""
    text = _decode(path)
    if text is None:
        return
    with pytest.raises(JSONError) as info:
        parse_json(text)
    assert info.value.code == "JSON_INVALID"


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("i_")], ids=_ids)
def test_implementation_defined_documents_parse_or_fail_cleanly(path: Path) -> None:
    """Every i_ document gives a value or JSON_INVALID, never another exception."""
    text = _decode(path)
    if text is None:
        return
    try:
        parse_json(text)
    except JSONError as exc:
        assert exc.code == "JSON_INVALID"


def test_the_suite_is_complete_when_present() -> None:
    """The suite, when present, holds all three kinds of file."""
    prefixes = {path.name[:2] for path in FILES}
    assert prefixes == {"y_", "n_", "i_"}
