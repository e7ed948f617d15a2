"""Search text for a Python regular expression in time linear in the text's length.

:mod:`re` backtracks: ``^(a+)+$`` takes exponential time on ``"a" * 40 + "!"``, and even ``\\d+$``
is quadratic under ``search`` (two seconds on 20,000 digits and a letter). Schema patterns come
from schema authors and the strings they check from models, so the validator matches with this
module instead. It reads the pattern with Python's own parser (so the syntax, the flags and the
meaning of every construct are :mod:`re`'s), builds a Thompson automaton over the parse tree, and
runs it as a lazily built DFA, one dictionary lookup per character of the text.

Only the question "does the pattern match anywhere?" is answered, which is all ``pattern`` needs:
greedy and lazy repeats mean the same there, and no groups are captured. What a finite automaton
cannot do is refused when the pattern is compiled, with :class:`UnsupportedPattern`:
backreferences, lookahead and lookbehind, conditional groups, and atomic groups and possessive
repeats (which change what matches, not only how). The bounds, each with the reason:

- :data:`MAX_PATTERN_LENGTH` characters and :data:`MAX_STATES` automaton states (a counted repeat
  is expanded, so ``(a{100}){100}`` has 10,000), so compiling is cheap;
- a search's work: building DFA states costs a step per automaton state visited, and the steps
  spent in one validation are capped (see :class:`Budget`). A pattern whose DFA explodes on a text
  (``(a|b)*a(a|b){20}`` has 2**21 states) raises :class:`MatchBudgetExceeded` instead of running
  for minutes. Ordinary patterns need a few dozen states and never come near the cap.
"""

from __future__ import annotations

import bisect
from re import _parser as sre_parse  # type: ignore[attr-defined]

from praxo_actors.core._regex_classes import _NL, _START, _WORD_A, _WORD_U, UnsupportedPattern
from praxo_actors.core._regex_nfa import (
    _ASSERT,
    _BOL,
    _BOS,
    _CHAR,
    _EOL,
    _EOS,
    _EOS_NL,
    _MATCH,
    _NWB_A,
    _NWB_U,
    _WB_A,
    _WB_U,
    MAX_STATES,
    _Automaton,
    _Builder,
)

__all__ = [
    "MAX_PATTERN_LENGTH",
    "MAX_STATES",
    "Budget",
    "MatchBudgetExceeded",
    "Pattern",
    "UnsupportedPattern",
    "compile_pattern",
]

#: Longest pattern accepted, in characters (far beyond any schema's).
MAX_PATTERN_LENGTH = 10_000
# DFA states kept per pattern; past this the cache starts afresh (as RE2's does).
_MAX_DFA_STATES = 4_096
# Character transitions kept per DFA state; past this, characters go through their class.
_MAX_CHAR_EDGES = 4_096
#: Steps one validation may spend building DFA states: about half a second of Python.
DEFAULT_STEPS = 1_000_000


class MatchBudgetExceeded(RuntimeError):
    """A search needed more work than its :class:`Budget` had left."""


class Budget:
    """The steps left for building DFA states; share one across the searches of a validation."""

    __slots__ = ("steps",)

    def __init__(self, steps: int = DEFAULT_STEPS) -> None:
        self.steps = steps


def compile_pattern(pattern: str) -> Pattern:
    """Compile ``pattern`` (Python :mod:`re` syntax) for bounded-time searching.

    Raises:
        re.error: The pattern is not valid :mod:`re` syntax.
        UnsupportedPattern: It uses a construct no finite automaton can run, or is too large.
    """
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise UnsupportedPattern(f"longer than {MAX_PATTERN_LENGTH} characters")
    # re's own parser: its syntax, its errors (re.error) and its warnings, once. What only re's
    # compiler checks (fixed-width lookbehind) concerns constructs refused here anyway.
    parsed = sre_parse.parse(pattern)
    return Pattern(_Builder(parsed, parsed.state.flags).automaton())


# --- the lazy DFA --------------------------------------------------------------------------------


class _DState:
    """A DFA state: the automaton states reached (before their epsilon closure) and what came
    before (the ``prev`` facts assertions read)."""

    __slots__ = ("by_class", "chars", "end", "prev", "threads")

    def __init__(self, threads: frozenset[int], prev: int) -> None:
        self.threads = threads
        self.prev = prev
        self.chars: dict[str, _DState] = {}
        self.by_class: dict[int, _DState] = {}
        self.end: bool | None = None  # whether the text may end here (matched at the end)


_MATCHED = _DState(frozenset(), -1)
_DEAD = _DState(frozenset(), -2)


class Pattern:
    """A compiled pattern: :meth:`search` answers whether it matches anywhere in a text."""

    __slots__ = ("_auto", "_facts_used", "_final_newline", "_initial", "_restart", "_states")

    def __init__(self, auto: _Automaton) -> None:
        self._auto = auto
        used = {auto.arg[s] for s, kind in enumerate(auto.kind) if kind == _ASSERT}
        # ``prev`` facts only matter when an assertion reads them; dropping them otherwise keeps
        # the DFA small.
        mask = 0
        if used & {_BOS, _BOL, _WB_U, _NWB_U, _WB_A, _NWB_A}:
            mask |= _START
        if _BOL in used:
            mask |= _NL
        if used & {_WB_U, _NWB_U}:
            mask |= _WORD_U
        if used & {_WB_A, _NWB_A}:
            mask |= _WORD_A
        self._facts_used = mask
        self._final_newline = _EOS_NL in used
        self._restart = _restarts(auto)
        self._states: dict[tuple[frozenset[int], int], _DState] = {}
        self._initial = self._state(frozenset((auto.start,)), _START & mask)

    def search(self, text: str, budget: Budget | None = None) -> bool:
        """Return whether the pattern matches somewhere in ``text`` (as ``re.search`` would).

        Raises:
            MatchBudgetExceeded: ``budget`` ran out before the answer was known.
        """
        budget = budget if budget is not None else Budget()
        state = self._initial
        last = text[-1:] if self._final_newline and text.endswith("\n") else ""
        body = text[:-1] if last else text
        matched, dead = _MATCHED, _DEAD
        bounds, classes_of = self._auto.bounds, self._auto.classes_of
        span_of, limit = bisect.bisect_right, _MAX_CHAR_EDGES
        chars = state.chars
        for char in body:
            nxt = chars.get(char)
            if nxt is None:
                # Inline, since random text misses here on nearly every character.
                cls = classes_of[span_of(bounds, ord(char))]
                nxt = state.by_class.get(cls)
                if nxt is None:
                    nxt = state.by_class[cls] = self._step(state, cls, False, budget)
                if len(chars) < limit:
                    chars[char] = nxt
            if nxt is matched or nxt is dead:
                return nxt is matched
            state = nxt
            chars = nxt.chars
        if last:
            state = self._advance_final(state, last, budget)
            if state is matched or state is dead:
                return state is matched
        if state.end is None:
            state.end = self._closure(state, 0, True, False, budget)[1]
        return state.end

    def _state(self, threads: frozenset[int], prev: int) -> _DState:
        key = (threads, prev)
        state = self._states.get(key)
        if state is None:
            if len(self._states) >= _MAX_DFA_STATES:
                self._states = {}  # start afresh; states in use stay valid
            state = self._states[key] = _DState(threads, prev)
        return state

    def _advance_final(self, state: _DState, char: str, budget: Budget) -> _DState:
        """Step over the text's last character, a newline before which ``$`` also matches."""
        auto = self._auto
        cls = auto.classes_of[bisect.bisect_right(auto.bounds, ord(char))]
        return self._step(state, cls, True, budget)

    def _step(self, state: _DState, cls: int, final: bool, budget: Budget) -> _DState:
        auto = self._auto
        flags = auto.class_flags[cls]
        ready, matched = self._closure(state, flags, False, final, budget)
        if matched:
            return _MATCHED
        preds, out, arg = auto.preds, auto.out, auto.arg
        threads = set()
        for s in ready:
            members, negated = preds[arg[s]]
            if (cls in members) != negated:
                threads.add(out[s][0])
        if self._restart:
            threads.add(auto.start)
        elif not threads:
            return _DEAD
        return self._state(frozenset(threads), flags & self._facts_used)

    def _closure(
        self, state: _DState, next_flags: int, at_end: bool, final: bool, budget: Budget
    ) -> tuple[list[int], bool]:
        """Follow epsilon moves from ``state``'s threads before the next character (or the end).

        Returns the character-consuming states reached, and whether a match was reached.
        """
        auto = self._auto
        kind, arg, out = auto.kind, auto.arg, auto.out
        prev = state.prev
        stack = list(state.threads)
        seen = set(stack)
        ready: list[int] = []
        steps = 0
        while stack:
            s = stack.pop()
            steps += 1
            k = kind[s]
            if k == _CHAR:
                ready.append(s)
                continue
            if k == _MATCH:
                budget.steps -= steps
                return ready, True
            if k == _ASSERT and not _holds(arg[s], prev, next_flags, at_end, final):
                continue
            for t in out[s]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        budget.steps -= steps + len(ready)
        if budget.steps < 0:
            raise MatchBudgetExceeded("the pattern's automaton grew beyond its bound")
        return ready, False


def _holds(assertion: int, prev: int, nxt: int, at_end: bool, final: bool) -> bool:
    at_start = bool(prev & _START)
    if assertion == _BOS:
        return at_start
    if assertion == _BOL:
        return at_start or bool(prev & _NL)
    if assertion == _EOS:
        return at_end
    if assertion == _EOL:
        return at_end or bool(nxt & _NL)
    if assertion == _EOS_NL:
        return at_end or final
    if at_start and at_end:
        return False  # re finds no word boundary, nor its negation, in an empty text
    bit = _WORD_U if assertion in (_WB_U, _NWB_U) else _WORD_A
    before = bool(prev & bit) and not at_start
    after = bool(nxt & bit) and not at_end
    return (before != after) == (assertion in (_WB_U, _WB_A))


def _restarts(auto: _Automaton) -> bool:
    """Whether a match may start after the first character (unless ``\\A``/``^`` bar it)."""
    stack, seen = [auto.start], {auto.start}
    while stack:
        s = stack.pop()
        kind = auto.kind[s]
        if kind in (_CHAR, _MATCH):
            return True
        if kind == _ASSERT and auto.arg[s] == _BOS:
            continue
        for t in auto.out[s]:
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return False
