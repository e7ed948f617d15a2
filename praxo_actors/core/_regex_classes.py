"""Character classes for :mod:`praxo_actors.core._regex`: what each one-character pattern matches.

A predicate key is (negated, parts); a part is ("r", low, high) or ("s", source, flags): the set
of characters a one-character pattern matches, found by scanning every code point with re itself,
for what only re knows exactly (Unicode categories, case-insensitive matching). The code points
are then split into classes on which every predicate of a pattern is constant, so that the DFA
steps on a class, not on a character.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import array
import bisect
import re
import sys
from collections.abc import Iterable
from re import _constants as sre  # type: ignore[attr-defined]
from typing import Any

__all__ = ["UnsupportedPattern"]

_MAX_CODE = sys.maxunicode
_I, _M, _S, _A = re.IGNORECASE, re.MULTILINE, re.DOTALL, re.ASCII
# Facts about a character that assertions read (bits of a class's flags and a state's ``prev``).
_NL, _WORD_U, _WORD_A, _START = 1, 2, 4, 8
Interval = tuple[int, int]


class UnsupportedPattern(ValueError):
    """A valid :mod:`re` pattern that cannot be matched in bounded time (or is too large)."""


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


def _partition(preds: list[Any], facts: int) -> tuple[list[Any], list[int], list[int], list[int]]:
    """Split the code points into classes on which every predicate and fact is constant.

    Return each predicate as (its classes, negated), the code points where the class changes
    (``bisect_right(bounds, code)`` is the span index), the class of each span and the facts of
    each class.
    """
    fact_bits = [bit for bit in (_NL, _WORD_U, _WORD_A) if facts & bit]
    keys = [*preds, *(_FACT_KEYS[bit] for bit in fact_bits)]
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
    npreds = len(preds)
    class_flags = [0] * len(signature_class)
    for offset, bit in enumerate(fact_bits):
        index = npreds + offset
        for cls in range(len(class_flags)):
            if (cls in marked[index]) != negated[index]:
                class_flags[cls] |= bit
    resolved = [(frozenset(marked[i]), negated[i]) for i in range(npreds)]
    return resolved, starts[1:], classes_of, class_flags


def _span_range(starts: list[int], low: int, high: int) -> tuple[int, int]:
    """Return the indexes of the spans (between cuts) that ``[low, high]`` covers."""
    return bisect.bisect_left(starts, low), bisect.bisect_right(starts, high)
