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
from typing import Any

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


def redact_value(value: Any) -> Any:
    """Return a copy of ``value`` with :func:`redact_pii` applied to every string in it.

    Strings inside lists, tuples and dict values are redacted at any depth; dict keys and values of
    other types are kept as they are. New containers are returned; ``value`` is never mutated.
    """
    if isinstance(value, str):
        return redact_pii(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_value(item) for item in value)
    return value


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
    out: list[str] = []
    pos = 0
    i = 0
    while i < len(groups):
        end = _card_end(run, groups, i)
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


def _card_end(run: str, groups: list[tuple[int, int]], first: int) -> int | None:
    """Return the index of the last group of the longest card starting at group ``first``."""
    candidates: list[int] = []
    digits = 0
    for last in range(first, len(groups)):
        start, end = groups[last]
        digits += end - start
        if digits > _CARD_MAX:
            break
        if digits >= _CARD_MIN:
            candidates.append(last)
        if end - start < _MIN_GROUP:
            # A short group may only close a card: nothing longer can start with it inside.
            break
    for last in reversed(candidates):
        number = "".join(run[s:e] for s, e in groups[first : last + 1])
        if _luhn_valid(number):
            return last
    return None


def _luhn_valid(number: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(number)):
        digit = ord(char) - 48
        if index % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def _redact_phone(match: re.Match[str]) -> str:
    found = match.group()
    # Ten digits and nothing else is an id, an amount or a timestamp as often as a phone.
    return found if found.isdigit() else PHONE_MARK
