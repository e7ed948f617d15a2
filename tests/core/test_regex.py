"""The bounded-time pattern matcher: re's answers, refusals with reasons, a work budget."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from praxo_actors.core._regex import (
    MAX_PATTERN_LENGTH,
    MAX_STATES,
    Budget,
    MatchBudgetExceeded,
    UnsupportedPattern,
    compile_pattern,
)

# Single characters and classes whose meaning differs across flags: case pairs with odd folds
# (Kelvin sign, long s, dotted I), a non-ASCII digit and letter, and the characters \b, $, ^ see.
ATOMS = [
    *("a", "b", "A", "k", "K", "s", "ſ", "ß", "i", "İ", "é", "É", "١", "\n", r"\n", "."),
    *(r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", "[ab]", "[^a]", "[a-c]", r"[\d_]", r"[^\w\n]"),
    *("^", "$", r"\b", r"\B", r"\A", r"\Z"),
]
TEXT = st.text(alphabet="abAB\nké١1_ sſKßİi", max_size=8)


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> str:
    """Draw a pattern of the regular constructs, nested a few levels."""
    choice = draw(st.integers(0, 5 if depth < 3 else 0))
    if choice == 0:
        return draw(st.sampled_from(ATOMS))
    if choice == 1:
        return draw(patterns(depth + 1)) + draw(patterns(depth + 1))
    if choice == 2:
        return f"({draw(patterns(depth + 1))}|{draw(patterns(depth + 1))})"
    if choice == 3:
        repeat = draw(st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "{0,2}", "*?", "{2,}"]))
        return f"(?:{draw(patterns(depth + 1))}){repeat}"
    if choice == 4:
        # Scoped (?a:...) is left out: CPython's search prefilter reads classes in it with the
        # outer (Unicode) meaning, so re.search and re.match disagree there.
        flags = draw(st.sampled_from(["i", "m", "s", "im", "-i", "i-s", "x"]))
        return f"(?{flags}:{draw(patterns(depth + 1))})"
    flag = draw(st.sampled_from("imsa"))
    return f"(?{flag})" + draw(patterns(depth + 1))


@settings(
    max_examples=600,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(pattern=patterns(), texts=st.lists(TEXT, min_size=1, max_size=6))
def test_search_agrees_with_re(pattern: str, texts: list[str]) -> None:
    """On regular patterns the matcher answers exactly what re.search answers."""
    try:
        expected = re.compile(pattern)
    except re.error:
        with pytest.raises(re.error):
            compile_pattern(pattern)
        return
    compiled = compile_pattern(pattern)
    for text in texts:
        assert compiled.search(text) is (expected.search(text) is not None), (pattern, text)


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        ("a$", "a\n", True),  # $ before a final newline
        ("a$", "a\n\n", False),
        ("a\\Z", "a\n", False),
        ("(?m)a$", "a\nb", True),
        ("(?m)^b", "a\nb", True),
        ("^b", "a\nb", False),
        (r"\b", "", False),  # re finds neither a boundary nor its negation in ""
        (r"\B", "", False),
        (r"\bé", " é", True),  # word characters are Unicode ones
        (r"(?a)\bé", " é", False),
        ("(?i)k", "\u212a", True),  # the Kelvin sign folds to k
        ("(?i)[a-z]+$", "ſ", True),
        (r"\d", "١", True),
        (r"(?a)\d", "١", False),
        ("", "", True),
        ("(?:)*x", "x", True),
        ("\ud800", "a\ud800", True),  # lone surrogates are characters like any other
    ],
)
def test_edge_cases_match_re(pattern: str, text: str, found: bool) -> None:
    """Anchors, boundaries, case folding and flags behave as in re."""
    assert (re.search(pattern, text) is not None) is found
    assert compile_pattern(pattern).search(text) is found


@pytest.mark.parametrize(
    ("pattern", "construct"),
    [
        ("(a)\\1", "backreference"),
        ("(?=a)", "lookahead"),
        ("(?<=a)b", "lookbehind"),
        ("(?!a)", "negative lookahead"),
        ("(a)?(?(1)b|c)", "conditional"),
        ("(?>a*)", "atomic"),
        ("a*+", "possessive"),
    ],
)
def test_non_regular_constructs_are_refused(pattern: str, construct: str) -> None:
    """A construct no finite automaton runs is refused, naming it."""
    re.compile(pattern)
    with pytest.raises(UnsupportedPattern, match=construct):
        compile_pattern(pattern)


def test_size_bounds_are_refused() -> None:
    """Patterns beyond the length or the automaton-size bound are refused."""
    with pytest.raises(UnsupportedPattern, match="longer than"):
        compile_pattern("a" * (MAX_PATTERN_LENGTH + 1))
    with pytest.raises(UnsupportedPattern, match="automaton states"):
        compile_pattern("(?:a{100}){101}")
    assert MAX_STATES >= 10_000
    assert compile_pattern("(?:){4294967294}x").search("x")  # an empty body costs nothing


def test_invalid_syntax_raises_re_error() -> None:
    """Invalid syntax raises re's own error."""
    with pytest.raises(re.error):
        compile_pattern("(unclosed")


def test_exploding_automaton_exhausts_the_budget() -> None:
    """A DFA that grows with every character stops at the budget instead of running on."""
    compiled = compile_pattern("a[ab]{16}c")
    text = "".join(random.Random(1).choices("ab", k=20_000))
    with pytest.raises(MatchBudgetExceeded):
        compiled.search(text, Budget(50_000))


def test_searches_draw_on_the_budget_they_are_given() -> None:
    """Building DFA states spends the budget passed in; a spent budget refuses new work."""
    budget = Budget(10**9)
    assert not compile_pattern("a[ab]{4}c").search("abababab", budget)
    assert 0 < 10**9 - budget.steps < 10_000
    with pytest.raises(MatchBudgetExceeded):
        compile_pattern("a[ab]{4}c").search("abababab", Budget(0))
