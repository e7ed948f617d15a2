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

import _sre  # type: ignore[import-not-found]
import array
import bisect
import re
import sys
from collections.abc import Iterable
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

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
#: Most automaton states a compiled pattern may have; counted repeats are expanded.
MAX_STATES = 10_000
# DFA states kept per pattern; past this the cache starts afresh (as RE2's does).
_MAX_DFA_STATES = 4_096
# Character transitions kept per DFA state; past this, characters go through their class.
_MAX_CHAR_EDGES = 4_096
#: Steps one validation may spend building DFA states: about half a second of Python.
DEFAULT_STEPS = 1_000_000

_MAX_CODE = sys.maxunicode
_I, _M, _S, _A = re.IGNORECASE, re.MULTILINE, re.DOTALL, re.ASCII

# Automaton state kinds.
_CHAR, _SPLIT, _ASSERT, _MATCH = range(4)
# Zero-width assertions: start of text, of line; end of text, of line, of text or before a
# final newline (``$``); word boundary and its negation, Unicode and ASCII.
_BOS, _BOL, _EOS, _EOL, _EOS_NL, _WB_U, _NWB_U, _WB_A, _NWB_A = range(9)
# Facts about a character that assertions read (bits of a class's flags and a state's ``prev``).
_NL, _WORD_U, _WORD_A, _START = 1, 2, 4, 8

Interval = tuple[int, int]


class UnsupportedPattern(ValueError):
    """A valid :mod:`re` pattern that cannot be matched in bounded time (or is too large)."""


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


class _Automaton:
    """A Thompson automaton: parallel lists indexed by state, and its character classes."""

    __slots__ = ("arg", "bounds", "class_flags", "classes_of", "kind", "out", "preds", "start")

    def __init__(self) -> None:
        self.kind: list[int] = []
        self.arg: list[int] = []  # a predicate index (_CHAR) or an assertion (_ASSERT)
        self.out: list[list[int]] = []
        self.start = 0
        self.preds: list[Any] = []  # predicate keys, replaced by class-id sets once resolved
        self.bounds: list[int] = []  # code points where the character class changes
        self.classes_of: list[int] = []  # the class of each span between bounds
        self.class_flags: list[int] = []  # _NL/_WORD_U/_WORD_A facts of each class


class _Builder:
    """Turn a parse tree into an automaton, building continuation first (no patching)."""

    def __init__(self, parsed: Any, flags: int) -> None:
        self.auto = _Automaton()
        self.flags = flags
        self.parsed = parsed
        self.pred_index: dict[Any, int] = {}
        self.facts = 0  # which of _NL/_WORD_U/_WORD_A assertions read

    def automaton(self) -> _Automaton:
        auto = self.auto
        match = self._state(_MATCH, -1, [])
        auto.start = self._sequence(self.parsed, self.flags, match)
        _partition(auto, self.facts)
        return auto

    def _state(self, kind: int, arg: int, out: list[int]) -> int:
        auto = self.auto
        if len(auto.kind) >= MAX_STATES:
            raise UnsupportedPattern(f"needs more than {MAX_STATES} automaton states")
        auto.kind.append(kind)
        auto.arg.append(arg)
        auto.out.append(out)
        return len(auto.kind) - 1

    def _sequence(self, items: Iterable[tuple[Any, Any]], flags: int, then: int) -> int:
        for op, av in reversed(list(items)):
            then = self._item(op, av, flags, then)
        return then

    def _item(self, op: Any, av: Any, flags: int, then: int) -> int:
        if op is sre.LITERAL or op is sre.NOT_LITERAL or op is sre.ANY or op is sre.IN:
            return self._state(_CHAR, self._predicate(op, av, flags), [then])
        if op is sre.SUBPATTERN:
            _group, add, remove, sub = av
            return self._sequence(sub, (flags | add) & ~remove, then)
        if op is sre.BRANCH:
            return self._state(_SPLIT, -1, [self._sequence(b, flags, then) for b in av[1]])
        if op is sre.MAX_REPEAT or op is sre.MIN_REPEAT:
            low, high, sub = av
            if high is sre.MAXREPEAT:
                loop = self._state(_SPLIT, -1, [])
                self.auto.out[loop] += [self._sequence(sub, flags, loop), then]
                tail = loop
            else:
                tail = then
                for _ in range(high - low):
                    body = self._sequence(sub, flags, tail)
                    if body == tail:
                        break
                    tail = self._state(_SPLIT, -1, [body, then])
            for _ in range(low):
                body = self._sequence(sub, flags, tail)
                if body == tail:
                    break  # an empty body: repeating it changes nothing (and low may be 2**32)
                tail = body
            return tail
        if op is sre.AT:
            return self._state(_ASSERT, self._assertion(av, flags), [then])
        construct = _UNSUPPORTED.get(str(op), str(op).lower())
        raise UnsupportedPattern(f"uses {construct}, which a finite automaton cannot match")

    def _assertion(self, at: Any, flags: int) -> int:
        if at is sre.AT_BEGINNING_STRING:
            return _BOS
        if at is sre.AT_END_STRING:
            return _EOS
        if at is sre.AT_BEGINNING:
            if flags & _M:
                self.facts |= _NL
                return _BOL
            return _BOS
        if at is sre.AT_END:
            self.facts |= _NL
            return _EOL if flags & _M else _EOS_NL
        ascii_ = bool(flags & _A)
        self.facts |= _WORD_A if ascii_ else _WORD_U
        if at is sre.AT_BOUNDARY:
            return _WB_A if ascii_ else _WB_U
        if at is sre.AT_NON_BOUNDARY:
            return _NWB_A if ascii_ else _NWB_U
        raise UnsupportedPattern(f"uses the assertion {at}")  # pragma: no cover - re has no other

    def _predicate(self, op: Any, av: Any, flags: int) -> int:
        key = _predicate_key(op, av, flags)
        index = self.pred_index.get(key)
        if index is None:
            index = self.pred_index[key] = len(self.auto.preds)
            self.auto.preds.append(key)
        return index


_UNSUPPORTED = {
    "GROUPREF": "a backreference",
    "GROUPREF_EXISTS": "a conditional group",
    "ASSERT": "a lookahead or lookbehind",
    "ASSERT_NOT": "a negative lookahead or lookbehind",
    "ATOMIC_GROUP": "an atomic group",
    "POSSESSIVE_REPEAT": "a possessive repeat",
}


# --- character predicates ------------------------------------------------------------------------
# A predicate key is (negated, parts); a part is ("r", low, high) or ("s", source, flags): the set
# of characters a one-character pattern matches, found by scanning every code point with re
# itself, for what only re knows exactly (Unicode categories, case-insensitive matching).


def _predicate_key(op: Any, av: Any, flags: int) -> tuple[bool, tuple[Any, ...]]:
    scan_flags = flags & (_I | _A)
    if op is sre.ANY:
        return (False, (("r", 0, _MAX_CODE),)) if flags & _S else (True, (("r", 10, 10),))
    if op is sre.LITERAL or op is sre.NOT_LITERAL:
        negated = op is sre.NOT_LITERAL
        if flags & _I and _cased(av, flags):
            return negated, (("s", _escape(av), scan_flags),)
        return negated, (("r", av, av),)
    negated = bool(av) and av[0][0] is sre.NEGATE
    items = av[1:] if negated else av
    if flags & _I:
        source = "[" + "".join(_class_source(o, a) for o, a in items) + "]"
        return negated, (("s", source, scan_flags),)
    parts: list[Any] = []
    for item_op, item_av in items:
        if item_op is sre.LITERAL:
            parts.append(("r", item_av, item_av))
        elif item_op is sre.RANGE:
            parts.append(("r", *item_av))
        else:
            parts.append(("s", _class_source(item_op, item_av), flags & _A))
    return negated, tuple(parts)


def _cased(code: int, flags: int) -> bool:
    return bool(_sre.ascii_iscased(code) if flags & _A else _sre.unicode_iscased(code))


def _escape(code: int) -> str:
    return f"\\U{code:08x}"


_CATEGORY_SOURCE = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}


def _class_source(op: Any, av: Any) -> str:
    if op is sre.LITERAL:
        return _escape(av)
    if op is sre.RANGE:
        return f"{_escape(av[0])}-{_escape(av[1])}"
    if op is sre.CATEGORY and str(av) in _CATEGORY_SOURCE:
        return _CATEGORY_SOURCE[str(av)]
    raise UnsupportedPattern(f"uses {op} {av} in a character class")  # pragma: no cover


def _all_code_points() -> str:
    """Return every code point, in order, as one string (lone surrogates included)."""
    codec = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"
    return array.array("I", range(_MAX_CODE + 1)).tobytes().decode(codec, "surrogatepass")


# Scanned sets, shared by every pattern: Unicode categories are few, case-insensitive sets many.
_SCANNED: dict[tuple[str, int], tuple[Interval, ...]] = {}
_SCANNED_LIMIT = 4_096


def _resolve_scans(keys: Iterable[tuple[str, int]]) -> None:
    missing = [key for key in dict.fromkeys(keys) if key not in _SCANNED]
    if not missing:
        return
    text = _all_code_points()  # 4 MB, built once per batch (65 ms) and then dropped
    if len(_SCANNED) + len(missing) > _SCANNED_LIMIT:
        _SCANNED.clear()
    for source, flags in missing:
        found = re.finditer(f"(?:{source})+", text, flags)
        _SCANNED[source, flags] = tuple((m.start(), m.end() - 1) for m in found)


def _union(parts: Iterable[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for low, high in sorted(parts):
        if out and low <= out[-1][1] + 1:
            if high > out[-1][1]:
                out[-1] = (out[-1][0], high)
        else:
            out.append((low, high))
    return out


def _complement(intervals: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    pos = 0
    for low, high in intervals:
        if low > pos:
            out.append((pos, low - 1))
        pos = high + 1
    if pos <= _MAX_CODE:
        out.append((pos, _MAX_CODE))
    return out


def _key_intervals(key: tuple[bool, tuple[Any, ...]]) -> list[Interval]:
    negated, parts = key
    spans: list[Interval] = []
    for part in parts:
        if part[0] == "r":
            spans.append((part[1], part[2]))
        else:
            spans.extend(_SCANNED[part[1], part[2]])
    merged = _union(spans)
    return _complement(merged) if negated else merged


_FACT_KEYS: dict[int, tuple[bool, tuple[Any, ...]]] = {
    _NL: (False, (("r", 10, 10),)),
    _WORD_U: (False, (("s", r"\w", 0),)),
    _WORD_A: (False, (("s", r"\w", _A),)),
}


def _partition(auto: _Automaton, facts: int) -> None:
    """Split the code points into classes on which every predicate and fact is constant."""
    fact_bits = [bit for bit in (_NL, _WORD_U, _WORD_A) if facts & bit]
    keys = [*auto.preds, *(_FACT_KEYS[bit] for bit in fact_bits)]
    _resolve_scans((p[1], p[2]) for _, parts in keys for p in parts if p[0] == "s")
    sets = [_key_intervals(key) for key in keys]
    cuts = {0}
    for intervals in sets:
        for low, high in intervals:
            cuts.add(low)
            cuts.add(high + 1)
    cuts.discard(_MAX_CODE + 1)
    starts = sorted(cuts)
    # A span's signature lists the sets that differ from their default there. A set that covers
    # most spans (``.``, ``[^a]``) defaults to "member" and is recorded where it is absent, so the
    # work is the smaller side of each set, never sets x spans.
    marks: list[list[int]] = [[] for _ in starts]
    negated: list[bool] = []
    for index, intervals in enumerate(sets):
        ranges = [_span_range(starts, low, high) for low, high in intervals]
        covered = sum(last - first for first, last in ranges)
        inverted = 2 * covered > len(starts)
        if inverted:
            ranges = [_span_range(starts, low, high) for low, high in _complement(intervals)]
        negated.append(inverted)
        for first, last in ranges:
            for span in range(first, last):
                marks[span].append(index)
    signature_class: dict[tuple[int, ...], int] = {}
    classes_of = [signature_class.setdefault(tuple(m), len(signature_class)) for m in marks]
    marked: list[set[int]] = [set() for _ in sets]
    for signature, cls in signature_class.items():
        for index in signature:
            marked[index].add(cls)
    npreds = len(auto.preds)
    class_flags = [0] * len(signature_class)
    for offset, bit in enumerate(fact_bits):
        index = npreds + offset
        for cls in range(len(class_flags)):
            if (cls in marked[index]) != negated[index]:
                class_flags[cls] |= bit
    auto.preds = [(frozenset(marked[i]), negated[i]) for i in range(npreds)]
    auto.bounds = starts[1:]  # bisect_right(bounds, code) is the span index
    auto.classes_of = classes_of
    auto.class_flags = class_flags


def _span_range(starts: list[int], low: int, high: int) -> tuple[int, int]:
    """Return the indexes of the spans (between cuts) that ``[low, high]`` covers."""
    return bisect.bisect_left(starts, low), bisect.bisect_right(starts, high)


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
