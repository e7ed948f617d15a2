"""Redact e-mail addresses, card numbers, US SSNs and US phone numbers from text.

Four rules run one after another over the whole text, in this order:

1. e-mail (``local@domain.tld``, ASCII) → ``[REDACTED_EMAIL]``. The local part is the whole run of
   local-part characters before the ``@`` but never reaches back into the previous address, so
   ``a@b.io-x@c.io`` is two addresses;
2. credit card → ``[REDACTED_CREDIT_CARD]``: 13–19 digits, written as one run or in groups
   joined by single spaces or hyphens, that pass the Luhn check. Grouped numbers are written in
   groups of at least four digits, except the last one (4-4-4-4, 4-6-5, 4-4-4-4-3), so a list of
   phone numbers or SSNs (groups of 2 and 3) is never taken for a card. A digit run is never split:
   ``1 4111 1111 1111 1111`` redacts the last four groups and keeps ``1``;
3. US SSN ``ddd-dd-dddd`` whose area is not 000, 666 or 900–999, whose group is not 00 and whose
   serial is not 0000 → ``[REDACTED_SSN]``;
4. US-style phone → ``[REDACTED_PHONE]``: an optional ``+1``, a three-digit area code (optionally in
   parentheses), three digits and four digits, with an optional space, dot or hyphen between the
   parts. A bare run of ten digits (no separator, no parentheses, no ``+1``) is not a phone.

A number never starts or ends inside a longer run of digits: ``15551234567`` is no phone and
``0123-45-6789`` no SSN. A phone that starts with ``+1`` or ``(`` may follow a digit, since neither
character is one: ``0(555) 123-4567`` ends in a phone and ``555-123-4567+1 555 123 4567`` holds two.
The rules use ASCII digits only. Every pattern runs in linear time on any input (no nested,
overlapping quantifiers), and redaction is idempotent: the markers hold no digit and no ``@``,
every redacted span is bounded by non-digits, and no rule refuses a match for the character just
before it when that character ends an earlier match of the same rule (which a second pass would see
as a marker), so a second pass finds nothing new.
This is not a comprehensive privacy filter: names, addresses and numbers in other formats pass
through.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

from praxo_actors._errors import JSONError
from praxo_actors.codes import JSON_INVALID
from praxo_actors.core._json import MAX_DEPTH

__all__ = ["redact_pii", "redact_value"]

EMAIL_MARK = "[REDACTED_EMAIL]"
CARD_MARK = "[REDACTED_CREDIT_CARD]"
SSN_MARK = "[REDACTED_SSN]"
PHONE_MARK = "[REDACTED_PHONE]"

_LOCAL = r"[A-Za-z0-9._%+-]"
_ADDRESS = _LOCAL + r"+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
# The lookbehind lets a local part start only where a run of local-part characters starts; without
# it every position of a long run is a new start and the scan turns quadratic.
_EMAIL = re.compile(rf"(?<!{_LOCAL}){_ADDRESS}")
# Anchored with ``match`` at the end of the previous address, where the lookbehind would refuse.
_EMAIL_NEXT = re.compile(_ADDRESS)

# A maximal run of digit groups joined by single spaces or hyphens; cards are searched inside it.
_DIGIT_RUN = re.compile(r"[0-9]+(?:[ -][0-9]+)*")
_GROUP = re.compile(r"[0-9]+")

_SSN = re.compile(r"(?<![0-9])(?!000|666|9)[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}(?![0-9])")

# Only a number that starts with a bare digit checks the character before it: ``+1`` and ``(`` are
# no digits, so they never extend a digit run. Checking before them would keep the second number of
# ``555-123-4567(555) 123-4567``, which a second pass, seeing a marker there, would then redact.
_PHONE = re.compile(
    r"(?:\+1[ .-]?|(?=\()|(?<![0-9]))(?:\([0-9]{3}\)|[0-9]{3})[ .-]?[0-9]{3}[ .-]?[0-9]{4}(?![0-9])"
)

_CARD_MIN, _CARD_MAX = 13, 19
_MIN_GROUP = 4


def redact_pii(text: str) -> str:
    """Return ``text`` with e-mails, card numbers, SSNs and US phone numbers replaced by markers.

    Args:
        text: Any string.

    Returns:
        The redacted text; ``redact_pii(redact_pii(t)) == redact_pii(t)``.

    Raises:
        TypeError: ``text`` is not a ``str`` (a programming error, so no ``PraxoError`` code).
    """
    if not isinstance(text, str):
        raise TypeError(f"redact_pii expects str, got {type(text).__name__}")
    text = _redact_emails(text)
    text = _DIGIT_RUN.sub(_redact_cards, text)
    text = _SSN.sub(SSN_MARK, text)
    return _PHONE.sub(_redact_phone, text)


def redact_value(value: Any, *, keys: bool = False) -> Any:
    """Return a copy of ``value`` with :func:`redact_pii` applied to every string in it.

    Strings inside lists, tuples and dict values are redacted at any depth up to
    :data:`~praxo_actors.core._json.MAX_DEPTH` containers; dict keys and values of other types are
    kept as they are. New containers are returned; ``value`` is never mutated. A container met
    twice is redacted once and its copy shared, so the work is linear in the distinct objects.

    Args:
        value: Any value.
        keys: Redact string dict keys too (what telemetry records). A key that redacts to one
            already in its dict is numbered, ``"[REDACTED_EMAIL] #2"``, so no entry is lost.

    Raises:
        JSONError: ``JSON_INVALID`` for containers nested deeper than ``MAX_DEPTH`` (512, the
            limit of :func:`~praxo_actors.core.parse_json`) or a container that holds itself.
    """
    if isinstance(value, str):
        return redact_pii(value)
    if not isinstance(value, dict | list | tuple):
        return value
    return _redact_containers(value, keys)


def _free_key(taken: dict[Any, Any], key: str, numbers: dict[str, int]) -> str:
    """Return ``key``, or the first of ``key #2``, ``key #3``… that ``taken`` does not hold.

    ``numbers`` keeps the last number given to each key of this dict, so that a search starts
    past it: a dict of 100,000 addresses is numbered in linear time, not quadratic.
    """
    if key not in taken:
        return key
    number = numbers.get(key, 1) + 1
    while f"{key} #{number}" in taken:
        number += 1
    numbers[key] = number
    return f"{key} #{number}"


def _redact_containers(root: dict[Any, Any] | list[Any] | tuple[Any, ...], keys: bool) -> Any:
    """Redact a tree of containers without recursion (a frame per open container)."""
    done: dict[int, Any] = {}  # id of a finished container -> its copy (the input keeps ids live)
    active: set[int] = set()

    def open_frame(container: Any, depth: int) -> list[Any]:
        if depth > MAX_DEPTH:
            raise JSONError(JSON_INVALID, f"nesting deeper than {MAX_DEPTH}")
        if id(container) in active:
            raise JSONError(JSON_INVALID, "value contains a cycle")
        active.add(id(container))
        if isinstance(container, dict):
            return [container, iter(container.items()), {}, depth, None, {}]
        return [container, iter(container), [], depth, None, None]

    stack = [open_frame(root, 1)]
    while True:
        frame = stack[-1]
        container, items, out, depth, _, numbers = frame
        is_dict = isinstance(container, dict)
        descended = False
        for item in items:
            key, child = item if is_dict else (None, item)
            if keys and isinstance(key, str):
                # Nothing else enters ``out`` before this key does, even after a descent.
                key = _free_key(out, redact_pii(key), numbers)
            if isinstance(child, str):
                child = redact_pii(child)
            elif isinstance(child, dict | list | tuple):
                copy = done.get(id(child))
                if copy is None:
                    frame[4] = key
                    stack.append(open_frame(child, depth + 1))
                    descended = True
                    break
                child = copy
            if is_dict:
                out[key] = child
            else:
                out.append(child)
        if descended:
            continue
        stack.pop()
        active.discard(id(container))
        finished = tuple(out) if isinstance(container, tuple) else out
        done[id(container)] = finished
        if not stack:
            return finished
        parent = stack[-1]
        if isinstance(parent[0], dict):
            parent[2][parent[4]] = finished
        else:
            parent[2].append(finished)


def _redact_emails(text: str) -> str:
    match = _EMAIL.search(text)
    if match is None:
        return text
    parts: list[str] = []
    pos = 0
    while match is not None:
        parts += (text[pos : match.start()], EMAIL_MARK)
        pos = match.end()
        # The next local part may start right where this address ends (``a@b.io-x@c.io``): a second
        # pass sees a marker there, so refusing it now would redact ``-x@c.io`` only then.
        match = _EMAIL_NEXT.match(text, pos) or _EMAIL.search(text, pos)
    parts.append(text[pos:])
    return "".join(parts)


def _redact_cards(match: re.Match[str]) -> str:
    run = match.group()
    groups = [(m.start(), m.end()) for m in _GROUP.finditer(run)]
    offsets = [0, *accumulate(end - start for start, end in groups)]
    if offsets[-1] < _CARD_MIN:
        return run
    luhn = _LuhnSums(run)
    out: list[str] = []
    pos = 0
    i = 0
    while i < len(groups):
        end = _card_end(groups, offsets, luhn, i)
        if end is None:
            i += 1
            continue
        out.append(run[pos : groups[i][0]])
        out.append(CARD_MARK)
        pos = groups[end][1]
        i = end + 1
    if not out:
        return run
    out.append(run[pos:])
    return "".join(out)


def _card_end(
    groups: list[tuple[int, int]], offsets: list[int], luhn: _LuhnSums, first: int
) -> int | None:
    """Return the index of the last group of the longest card starting at group ``first``."""
    candidates: list[int] = []
    for last in range(first, len(groups)):
        start, end = groups[last]
        digits = offsets[last + 1] - offsets[first]
        if digits > _CARD_MAX:
            break
        if digits >= _CARD_MIN:
            candidates.append(last)
        if end - start < _MIN_GROUP:
            # A short group may only close a card: nothing longer can start with it inside.
            break
    for last in reversed(candidates):
        if luhn.valid(offsets[first], offsets[last + 1]):
            return last
    return None


# Each digit's value, and its value doubled with the digits of the product summed (Luhn).
_PLAIN = bytes.maketrans(b"0123456789", bytes(range(10)))
_DOUBLED = bytes.maketrans(b"0123456789", bytes((0, 2, 4, 6, 8, 1, 3, 5, 7, 9)))


class _LuhnSums:
    """Luhn checks of any stretch of a run's digits in constant time, from prefix sums.

    A run of 200,000 four-digit groups holds 200,000 candidate cards; summing each one's digits
    afresh cost a second per megabyte.
    """

    __slots__ = ("_even_last", "_odd_last")

    def __init__(self, run: str) -> None:
        digits = run.replace(" ", "").replace("-", "").encode("ascii")
        plain, doubled = digits.translate(_PLAIN), digits.translate(_DOUBLED)
        # The last digit of a number is never doubled, the one before it is, and so on: when the
        # last digit sits at an even index, even indexes count plain and odd ones doubled.
        even_last, odd_last = bytearray(plain), bytearray(doubled)
        even_last[1::2] = doubled[1::2]
        odd_last[1::2] = plain[1::2]
        self._even_last = [0, *accumulate(even_last)]
        self._odd_last = [0, *accumulate(odd_last)]

    def valid(self, start: int, end: int) -> bool:
        """Tell whether the digits ``[start, end)`` pass the Luhn check."""
        sums = self._even_last if (end - 1) % 2 == 0 else self._odd_last
        return (sums[end] - sums[start]) % 10 == 0


def _redact_phone(match: re.Match[str]) -> str:
    found = match.group()
    # Ten digits and nothing else is an id, an amount or a timestamp as often as a phone.
    return found if found.isdigit() else PHONE_MARK
