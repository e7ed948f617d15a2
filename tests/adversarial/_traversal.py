"""A path-traversal corpus: payloads as an attacker writes them, and the careless decoders a web
layer runs on them before the path reaches :class:`~praxo_actors.core.PathPolicy`.

A payload is a sequence of *components* (``..`` in every count and position, a target, a long
name, a trailing dot or space …) joined by *separators* (``/``, ``\\``, fullwidth ``／`` …),
behind a *prefix* (relative, absolute, the root itself, a sibling of the root). Each payload is
then *encoded* (raw, percent-encoded once or twice, ``%c0%ae`` overlong UTF-8, ``%u002e``) and
each encoding *decoded* by every decoder below, the way a web framework, a proxy and an
application would stack them without thinking. The corpus is every distinct decoded path.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Iterator
from urllib.parse import unquote, unquote_to_bytes

__all__ = ["DECODERS", "ENCODINGS", "corpus", "payloads"]

# What an attacker may spell for "the parent directory", "this directory" and "a separator".
DOTDOTS = [
    "..",
    "...",
    "....",
    ".. ",
    "..\t",
    " ..",
    "..%00",
    "\uff0e\uff0e",  # fullwidth full stops: NFKC gives ".."
    "\u2024\u2024",  # one dot leaders: NFKC gives ".."
    "\u2025",  # two dot leader: NFKC gives ".."
    ".\u2024",
    "\uff0e.",
    "\u3002\u3002",  # ideographic full stops (no compatibility mapping)
    "\ufe52\ufe52",  # small full stops: NFKC gives ".."
    "..\u200b",  # zero-width space
    "..\x00",
    "..;",
    "..?",
    "..#",
]
DOTS = [".", " .", ". ", "\uff0e", "\u2024"]
SEPARATORS = [
    "/",
    "\\",
    "//",
    "/./",
    "\\/",
    "/\\",
    "\uff0f",  # fullwidth solidus: NFKC gives "/"
    "\uff3c",  # fullwidth reverse solidus: NFKC gives "\\"
    "\u2215",  # division slash
    "\u2044",  # fraction slash
    "\ufe68",  # small reverse solidus: NFKC gives "\\"
    "\x00/",
]
TARGETS = [
    "etc/passwd",
    "",
    ".git/config",
    "keys/server.pem",
    ".env",
    ".env.local",
    "a" * 255,
    "x.",
    "x. . .",
    "x ",
    "notes.txt",
    "root",
    "rootx/secret",
    "\u00e9t\u00e9",
    "\ud800",
    "\udcff",
]
PREFIXES = [
    "",
    "/",
    "./",
    "a/",
    "a/b/c/",
    "//",
    "///",
    "/srv/praxo/root/",
    "/srv/praxo/root/a/",
    "/srv/praxo/rootx/",
    "/srv/praxo/root/../rootx/",
    "/srv/praxo/",
    "\\srv\\praxo\\root\\",
    "~/",
    "file:///",
]


def _components(count: int) -> Iterator[list[str]]:
    """``..`` spellings, ``count`` of them, with ``.`` and empty components mixed in."""
    for dotdot in DOTDOTS:
        yield [dotdot] * count
        yield [dotdot, *([".."] * (count - 1))]
        yield [".", *([dotdot] * count)]
        yield ["", *([dotdot] * count), ""]
        yield [item for _ in range(count) for item in ("a", dotdot, dotdot)]
    for dot in DOTS:
        yield [dot, *([".."] * count), dot]


def payloads(scale: int = 1) -> Iterator[str]:
    """Every raw payload (not yet encoded), some of them repeated.

    Each (components, separator) pair goes behind ``scale`` prefixes and targets, rotated so that
    every prefix meets every target across the corpus.
    """
    turn = 0
    for count in (1, 2, 3, 6):
        for parts in _components(count):
            for sep in SEPARATORS:
                middle = sep.join(parts)
                for _ in range(scale):
                    turn += 1
                    prefix = PREFIXES[turn % len(PREFIXES)]
                    target = TARGETS[turn * 7 % len(TARGETS)]
                    yield f"{prefix}{middle}{sep}{target}"
    # ``..`` at every position of a deeper path, and past every depth.
    for depth in range(1, 8):
        names = [f"d{i}" for i in range(depth)]
        for position, ups in itertools.product(range(depth + 1), range(1, depth + 3)):
            parts = [*names[:position], *([".."] * ups), *names[position:], "etc", "passwd"]
            yield "/".join(parts)
            yield "/srv/praxo/root/" + "/".join(parts)
            yield "\\".join(parts)
    yield "../" * 2000 + "etc/passwd"
    yield "a/" * 3000 + "../" * 3001 + "etc/passwd"
    yield "/".join(["x" * 300] * 20)
    yield "../" + "b" * 5000 + "/../../etc/passwd"


def _percent(text: str, chars: str, upper: bool = False) -> str:
    out = []
    for char in text:
        if char in chars:
            out.extend(f"%{b:02X}" if upper else f"%{b:02x}" for b in char.encode())
        else:
            out.append(char)
    return "".join(out)


_OVERLONG = {".": "%c0%ae", "/": "%c0%af", "\\": "%c1%9c"}
_OVERLONG3 = {".": "%e0%80%ae", "/": "%e0%80%af", "\\": "%e0%81%9c"}


def _overlong(text: str, table: dict[str, str]) -> str:
    return "".join(table.get(char, char) for char in text)


ENCODINGS: dict[str, Callable[[str], str]] = {
    "raw": lambda p: p,
    "pct-dots": lambda p: _percent(p, "."),
    "pct-all": lambda p: _percent(p, "./\\\x00", upper=True),
    "pct-twice": lambda p: _percent(_percent(p, "./\\"), "%"),
    "pct-half": lambda p: p.replace("..", ".%2e").replace("/", "%2f", 1),
    "overlong2": lambda p: _overlong(p, _OVERLONG),
    "overlong3": lambda p: _overlong(p, _OVERLONG3),
    "iis-u": lambda p: p.replace(".", "%u002e").replace("/", "%u2215"),
}


# Two- and three-byte sequences that spell an ASCII character: invalid UTF-8, but a naive
# decoder computes their value and accepts them ("%c0%ae" is ".").
_OVERLONG_BYTES = re.compile(rb"[\xc0\xc1][\x80-\xbf]|\xe0[\x80-\x81][\x80-\xbf]")
_IIS = re.compile(r"%u([0-9a-fA-F]{4})")


def _overlong_char(match: re.Match[bytes]) -> bytes:
    seq = match.group()
    value = (seq[0] & 0x1F) << 6 | seq[1] & 0x3F
    if len(seq) == 3:
        value = (seq[0] & 0x0F) << 12 | (seq[1] & 0x3F) << 6 | seq[2] & 0x3F
    return bytes([value])


def _careless_utf8(text: str) -> str:
    """Percent-decode to bytes, then decode UTF-8 accepting overlong forms, junk replaced."""
    data = unquote_to_bytes(text.encode("utf-8", "surrogatepass"))
    return _OVERLONG_BYTES.sub(_overlong_char, data).decode("utf-8", "replace")


def _iis(text: str) -> str:
    """IIS's ``%uXXXX``: one UTF-16 code unit per escape."""
    return _IIS.sub(lambda m: chr(int(m.group(1), 16)), text)


DECODERS: dict[str, Callable[[str], str]] = {
    "raw": lambda p: p,
    "unquote": lambda p: unquote(p, errors="surrogateescape"),
    "unquote-twice": lambda p: unquote(unquote(p, errors="replace"), errors="replace"),
    "overlong-utf8": lambda p: _careless_utf8(_iis(p)),
    "nfkc": lambda p: unicodedata.normalize("NFKC", unquote(_iis(p), errors="replace")),
    "backslash-to-slash": lambda p: unquote(p, errors="replace").replace("\\", "/"),
    "strip-dots-spaces": lambda p: "/".join(c.rstrip(". ") for c in unquote(p).split("/")),
}


def corpus(scale: int = 1) -> dict[str, str]:
    """Every distinct decoded path, mapped to how it was made (``encoding|decoder|payload``)."""
    out: dict[str, str] = {}
    for payload in payloads(scale):
        for enc_name, encode in ENCODINGS.items():
            encoded = encode(payload)
            for dec_name, decode in DECODERS.items():
                try:
                    path = decode(encoded)
                except UnicodeError:  # the web layer itself fails on it: it never gets here
                    continue
                out.setdefault(path, f"{enc_name}|{dec_name}|{payload[:80]!r}")
    return out
