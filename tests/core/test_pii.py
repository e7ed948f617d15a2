"""Tests for ``redact_pii`` and ``redact_value``."""

from __future__ import annotations

import pytest
from _hostile import PII_TEXTS

from praxo_actors.core import redact_pii, redact_value

EMAIL = "[REDACTED_EMAIL]"
CARD = "[REDACTED_CREDIT_CARD]"
SSN = "[REDACTED_SSN]"
PHONE = "[REDACTED_PHONE]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail ada@example.com now", f"mail {EMAIL} now"),
        ("first.last+tag@sub.example.co.uk", EMAIL),
        ("ADA@EXAMPLE.ORG", EMAIL),
        ("x@a.io;y@b.io", f"{EMAIL};{EMAIL}"),
        ("root@localhost", "root@localhost"),
        ("a@b.c", "a@b.c"),
        ("@example.com", "@example.com"),
    ],
)
def test_email(text: str, expected: str) -> None:
    """E-mail addresses with a dotted domain and an alphabetic TLD are redacted."""
    assert redact_pii(text) == expected


@pytest.mark.parametrize(
    "card",
    [
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4111111111111111",
        "4111 1111-1111 1111",
        "3782 822463 10005",
        "3056 930902 5904",
        "4222222222222",
        "4111111111111111110",
        "4222 2222 2222 2",
    ],
)
def test_luhn_valid_cards_are_redacted(card: str) -> None:
    """A Luhn-valid number of 13 to 19 digits, grouped or not, is redacted as a card."""
    assert redact_pii(f"pay with {card}.") == f"pay with {CARD}."


@pytest.mark.parametrize(
    "text",
    [
        "4111 1111 1111 1112",  # fails Luhn
        "411111111117",  # 12 digits
        "41111111111111111115",  # 20 digits
        "4111  1111  1111  1111",  # double spaces
        "4111.1111.1111.1111",  # dots do not group a card
        "41 11 11 11 11 11 11 11",  # groups shorter than four digits
    ],
)
def test_non_cards_are_kept(text: str) -> None:
    """Numbers outside the card rule pass through unchanged."""
    assert redact_pii(text) == text


def test_card_never_splits_a_digit_run() -> None:
    """A card may follow a short group in the same run, but never starts inside a digit run."""
    assert redact_pii("1 4111 1111 1111 1111") == f"1 {CARD}"
    assert redact_pii("94111111111111111") == "94111111111111111"


def test_phone_list_is_not_a_card() -> None:
    """Phone numbers separated by a space are phones, not one long card number."""
    assert redact_pii("555-123-4567 555-987-6543") == f"{PHONE} {PHONE}"


def test_two_cards_in_a_row() -> None:
    """Two grouped cards joined by a space are both redacted."""
    text = "4111 1111 1111 1111 5500 0000 0000 0004"
    assert redact_pii(text) == f"{CARD} {CARD}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("123-45-6789", SSN),
        ("ssn: 078-05-1120.", f"ssn: {SSN}."),
        ("000-12-3456", "000-12-3456"),
        ("666-12-3456", "666-12-3456"),
        ("900-12-3456", "900-12-3456"),
        ("999-12-3456", "999-12-3456"),
        ("123-00-4567", "123-00-4567"),
        ("123-45-0000", "123-45-0000"),
        ("1123-45-6789", "1123-45-6789"),
        ("123-45-67890", "123-45-67890"),
        ("123456789", "123456789"),
        ("123 45 6789", "123 45 6789"),
    ],
)
def test_ssn(text: str, expected: str) -> None:
    """Only hyphenated SSNs with a valid area, group and serial are redacted."""
    assert redact_pii(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("555-123-4567", PHONE),
        ("(555) 123-4567", PHONE),
        ("(555)123-4567", PHONE),
        ("555.123.4567", PHONE),
        ("555 123 4567", PHONE),
        ("+1 555 123 4567", PHONE),
        ("+1-555-123-4567", PHONE),
        ("+1 (555) 123-4567", PHONE),
        ("+15551234567", PHONE),
        ("(555)1234567", PHONE),
        ("555-1234567", PHONE),
        ("5551234567", "5551234567"),
        ("15551234567", "15551234567"),
        ("555-123-45678", "555-123-45678"),
        ("1555-123-4567", "1555-123-4567"),
        ("555_123_4567", "555_123_4567"),
    ],
)
def test_phone(text: str, expected: str) -> None:
    """US-style phones need a separator, parentheses or +1, and never sit in a longer run."""
    assert redact_pii(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("+10000000000+10000000000", f"{PHONE}{PHONE}"),
        ("(555) 123-4567(555) 123-4567", f"{PHONE}{PHONE}"),
        ("555-123-4567+1 555 123 4567", f"{PHONE}{PHONE}"),
        ("555-123-4567(555) 123-4567", f"{PHONE}{PHONE}"),
        ("555-123-4567-555-123-4567", f"{PHONE}-{PHONE}"),
        ("(555) 123-45670555-123-4567", "(555) 123-45670555-123-4567"),
        ("0(555) 123-4567", f"0{PHONE}"),
        ("0+1 555 123 4567", f"0{PHONE}"),
        ("1(555)1234567", f"1{PHONE}"),
        ("+1+15551234567", f"+1{PHONE}"),
        ("5551234567(555) 123-4567", f"5551234567{PHONE}"),
    ],
)
def test_adjacent_phones(text: str, expected: str) -> None:
    """A phone starting with +1 or ( may follow a digit or another phone; a bare digit may not."""
    assert redact_pii(text) == expected
    assert redact_pii(expected) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a@b.io-x@c.io", f"{EMAIL}{EMAIL}"),
        ("a@b.io.x@c.io", f"{EMAIL}{EMAIL}"),
        ("a@b.io5x@c.io", f"{EMAIL}{EMAIL}"),
        ("a@b.io-555-123-4567-x@c.io", f"{EMAIL}{EMAIL}"),
        ("a@b.io-x c@d.io", f"{EMAIL}-x {EMAIL}"),
        ("a@b.io@c.io", f"{EMAIL}@c.io"),
    ],
)
def test_adjacent_emails(text: str, expected: str) -> None:
    """A local part runs back to the end of the previous address, never into it."""
    assert redact_pii(text) == expected
    assert redact_pii(expected) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("123-45-6789-123-45-6789", f"{SSN}-{SSN}"),
        ("123-45-6789123-45-6789", "123-45-6789123-45-6789"),
        ("123-45-6789(555) 123-4567", f"{SSN}{PHONE}"),
        ("123-45-6789+1 555 123 4567", f"{SSN}{PHONE}"),
        ("4111111111111111-4111111111111111", f"{CARD}-{CARD}"),
        ("4111111111111111+1 555 123 4567", f"{CARD}{PHONE}"),
        ("4111 1111 1111 1111(555) 123-4567", f"{CARD}{PHONE}"),
        ("a@b.io4111111111111111", f"{EMAIL}{CARD}"),
        ("a@b.io+1 555 123 4567", f"{EMAIL}{PHONE}"),
    ],
)
def test_adjacent_kinds(text: str, expected: str) -> None:
    """Cards, SSNs, e-mails and phones right next to each other are each redacted."""
    assert redact_pii(text) == expected
    assert redact_pii(expected) == expected


def test_rules_apply_in_order() -> None:
    """E-mail runs first, so digits inside an address become part of the e-mail marker."""
    assert redact_pii("555-123-4567@example.com") == EMAIL
    assert redact_pii("4111111111111111@example.com") == EMAIL


def test_all_rules_in_one_text() -> None:
    """Every kind of PII in one text is redacted and the rest is kept."""
    text = "Ada <ada@example.com>, (555) 123-4567, card 4111-1111-1111-1111, SSN 123-45-6789."
    expected = f"Ada <{EMAIL}>, {PHONE}, card {CARD}, SSN {SSN}."
    assert redact_pii(text) == expected


def test_non_ascii_digits_are_kept() -> None:
    """Only ASCII digits form numbers."""
    text = "٥٥٥-١٢٣-٤٥٦٧ and ４１１１１１１１１１１１１１１１"
    assert redact_pii(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no pii here",
        f"{EMAIL} {CARD} {SSN} {PHONE}",
        "a@b.com@c.org 555-123-4567 4111 1111 1111 1111 123-45-6789",
        "+1 +1 555-123-4567-8901 4111-1111-1111-1111-555-123-4567",
        "+10000000000+10000000000",
        "(555) 123-4567(555) 123-4567",
        "555-123-4567+1 555 123 4567",
        "x@a.io-y@b.io.z@c.io%w@d.io",
        "123-45-6789+1(555)123-4567+15551234567(555) 123-4567",
    ],
)
def test_idempotent(text: str) -> None:
    """Redacting twice gives the same text as redacting once."""
    once = redact_pii(text)
    assert redact_pii(once) == once


def test_non_str_raises_type_error() -> None:
    """A non-str argument is a programming error and raises TypeError."""
    with pytest.raises(TypeError, match="expects str"):
        redact_pii(b"ada@example.com")  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "emails"), PII_TEXTS)
def test_adversarial_input_is_redacted(text: str, emails: int) -> None:
    """A 100 KB adversarial string is redacted whole: its e-mail addresses, nothing else (its
    time against the bound is ``bench/adversarial.py``'s)."""
    redacted = redact_pii(text)
    assert redacted.count(EMAIL) == emails
    assert redacted == text if emails == 0 else "@" not in redacted
    assert redact_pii(redacted) == redacted


def test_redact_value_walks_containers() -> None:
    """Strings in nested lists, tuples and dict values are redacted; keys and others are not."""
    value = {
        "ada@example.com": ["call 555-123-4567", 4111111111111111, None, True, 1.5],
        "nested": {"ssn": "123-45-6789", "t": ("x@y.io",)},
    }
    assert redact_value(value) == {
        "ada@example.com": [f"call {PHONE}", 4111111111111111, None, True, 1.5],
        "nested": {"ssn": SSN, "t": (EMAIL,)},
    }


def test_redact_value_does_not_mutate() -> None:
    """The input containers are left untouched and new ones are returned."""
    inner = ["ada@example.com"]
    value = {"a": inner}
    result = redact_value(value)
    assert value == {"a": ["ada@example.com"]}
    assert result["a"] is not inner
    assert result is not value


def test_redact_value_keeps_other_objects() -> None:
    """Objects that are not str, list, tuple or dict are returned as they are."""
    marker = object()
    assert redact_value(marker) is marker
    assert redact_value(b"ada@example.com") == b"ada@example.com"


def test_redact_value_with_keys_redacts_dict_keys_too() -> None:
    """``keys=True`` redacts string keys at any depth as well as values."""
    value = {"ada@example.com": ["x"], "n": [{"555-123-4567": "bob@example.org"}], 7: "k"}
    assert redact_value(value, keys=True) == {EMAIL: ["x"], "n": [{PHONE: EMAIL}], 7: "k"}
    assert redact_value(value) == {"ada@example.com": ["x"], "n": [{"555-123-4567": EMAIL}], 7: "k"}


def test_redact_value_with_keys_keeps_keys_that_redact_alike() -> None:
    """Keys that redact to the same text are all kept, numbered in their order."""
    value = {"ada@example.com": 1, "bob@example.org": 2, f"{EMAIL} #2": 3, "eve@example.net": 4}
    assert redact_value(value, keys=True) == {
        EMAIL: 1,
        f"{EMAIL} #2": 2,
        f"{EMAIL} #2 #2": 3,
        f"{EMAIL} #3": 4,
    }


class _CountingDict(dict[str, int]):
    """A dict that counts its membership tests."""

    checks = 0

    def __contains__(self, key: object) -> bool:
        type(self).checks += 1
        return super().__contains__(key)


def test_numbering_keys_that_redact_alike_is_linear() -> None:
    """Numbering n keys that redact to one costs O(n) membership tests, not O(n²)."""
    from praxo_actors.core._pii import _free_key

    taken = _CountingDict()
    numbers: dict[str, int] = {}
    for value in range(2_000):
        taken[_free_key(taken, EMAIL, numbers)] = value
    assert len(taken) == 2_000 and f"{EMAIL} #2000" in taken
    assert _CountingDict.checks <= 3 * 2_000 + 1
