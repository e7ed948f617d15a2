"""The Thompson automaton that :mod:`praxo_actors.core._regex` runs, built from a parse tree."""

from __future__ import annotations

from collections.abc import Iterable
from re import _constants as sre  # type: ignore[attr-defined]
from typing import Any

from praxo_actors.core._regex_classes import (
    _A,
    _M,
    _NL,
    _WORD_A,
    _WORD_U,
    UnsupportedPattern,
    _partition,
    _predicate_key,
)

__all__ = ["MAX_STATES", "UnsupportedPattern"]

#: Most automaton states a compiled pattern may have; counted repeats are expanded.
MAX_STATES = 10_000
# Automaton state kinds.
_CHAR, _SPLIT, _ASSERT, _MATCH = range(4)
# Zero-width assertions: start of text, of line; end of text, of line, of text or before a
# final newline (``$``); word boundary and its negation, Unicode and ASCII.
_BOS, _BOL, _EOS, _EOL, _EOS_NL, _WB_U, _NWB_U, _WB_A, _NWB_A = range(9)


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
        auto.preds, auto.bounds, auto.classes_of, auto.class_flags = _partition(
            auto.preds, self.facts
        )
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
