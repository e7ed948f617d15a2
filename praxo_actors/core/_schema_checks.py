"""The checks a compiled JSON Schema is made of, and the state of one validation.

A check is a closure ``(value, path, errors, run)`` that appends what it finds; the compiler
(:mod:`praxo_actors.core._schema_compile`) builds a tree of them once per schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from praxo_actors.core._regex import Budget, MatchBudgetExceeded, Pattern
from praxo_actors.core._schema_values import KINDS, is_member, kind_name, kind_of

__all__ = ["Check", "Path", "Raw", "Run", "pointer", "segments"]

# A location in the value: None for the root, else (parent, key or index). A linked tuple, so that
# valid values never pay for string formatting; pointers are rendered only for errors.
Path = tuple[Any, str | int] | None
# An error before rendering: (location, keyword, message).
Raw = tuple[Path, str, str]


class Run:
    """The state of one validation.

    Attributes:
        broken: Schema faults met so far.
        active: The ``$ref`` targets in progress, each with the value it is applied to.
        memo: Finished ``$ref`` evaluations: (target, value, location) to the errors and faults
            they gave, each once. A target reached again at the same place is replayed, not
            re-run, so ``anyOf`` (or ``allOf``, or ``items`` beside ``not``) over ``$ref`` chains
            stays linear instead of doubling at every level, in time and in errors.
        budget: What is left of the pattern-matching work this validation may spend.
    """

    __slots__ = ("active", "broken", "budget", "memo")

    def __init__(self) -> None:
        self.broken: list[Raw] = []
        self.active: set[tuple[int, int]] = set()
        # (target, value) by identity (each entry holds its value, so the id is not reused)
        # to the locations it was evaluated at and what each gave.
        self.memo: dict[tuple[int, int], list[tuple[Path, Any, list[Raw], list[Raw]]]] = {}
        self.budget = Budget()


Check = Callable[[Any, Path, list[Raw], Run], None]


def _accept(value: Any, path: Path, errs: list[Raw], run: Run) -> None:
    return None


def _reject(value: Any, path: Path, errs: list[Raw], run: Run) -> None:
    errs.append((path, "false", "no value is allowed here"))


def _faulty(faults: tuple[tuple[str, str], ...]) -> Check:
    def check(value: Any, path: Path, errs: list[Raw], run: Run) -> None:
        run.broken.extend((path, keyword, message) for keyword, message in faults)

    return check


def _type_check(
    types: frozenset[str] | None, type_text: str, float_integer: bool, enum: list[Any] | None
) -> Check:
    """Check ``type`` and ``enum`` alone (either may be None), as the general closure does."""

    def check(value: Any, path: Path, errs: list[Raw], run: Run) -> None:
        kind = KINDS.get(type(value)) or kind_of(value)
        if (
            types is not None
            and kind not in types
            and not (float_integer and kind == "number" and value.is_integer())
        ):
            errs.append((path, "type", f"expected {type_text}, got {kind_name(kind, value)}"))
        if enum is not None and not is_member(value, kind, enum):
            errs.append((path, "enum", f"value is not one of {enum!r:.200}"))

    if enum is None and types is not None:
        # A branch of an ``anyOf`` whose value kinds alone decide it (see _union_check).
        check.kinds = types if not float_integer else None  # type: ignore[attr-defined]
    return check


def _union_check(kinds: frozenset[str], subs: tuple[Check, ...]) -> Check:
    """Check an ``anyOf`` of ``type``-only branches: a value of one of their kinds passes at
    once; any other goes through :func:`_check_any_of` for the same error as ever."""

    def check(value: Any, path: Path, errs: list[Raw], run: Run) -> None:
        if (KINDS.get(type(value)) or kind_of(value)) not in kinds:
            _check_any_of(value, path, errs, run, subs)

    return check


def _unique(raw: list[Raw]) -> list[Raw]:
    """``raw`` without repeats (the same error reached by two branches), in order."""
    seen: set[tuple[int, str, str]] = set()
    out: list[Raw] = []
    for error in raw:
        key = (id(error[0]), error[1], error[2])
        if key not in seen:
            seen.add(key)
            out.append(error)
    return out


def _check_object(
    value: dict[Any, Any],
    path: Path,
    errs: list[Raw],
    run: Run,
    required: list[str] | None,
    props: dict[Any, Check] | None,
    known: dict[Any, Any],
    additional: Check | bool | None,
) -> None:
    if required is not None:
        for name in required:
            if name not in value:
                errs.append((path, "required", f"missing required property {name!r}"))
    if props is not None:
        if len(value) < len(props):
            for name, item in value.items():
                sub_check = props.get(name)
                if sub_check is not None:
                    sub_check(item, (path, name), errs, run)
        else:
            for name, sub_check in props.items():
                if name in value:
                    sub_check(value[name], (path, name), errs, run)
    if additional is False:
        for name in value:
            if name not in known:
                for extra in sorted((n for n in value if n not in known), key=str):
                    message = f"property {extra!r} is not allowed"
                    errs.append((path, "additionalProperties", message))
                break
    elif additional is not None and additional is not True:
        for name, item in value.items():
            if name not in known:
                additional(item, (path, name), errs, run)


def _check_any_of(
    value: Any, path: Path, errs: list[Raw], run: Run, subs: tuple[Check, ...]
) -> None:
    failures: list[list[Raw]] = []
    for sub_check in subs:
        trial: list[Raw] = []
        sub_check(value, path, trial, run)
        if not trial:
            return
        failures.append(trial)
    errs.append((path, "anyOf", _none_matched("anyOf", path, failures)))


def _check_one_of(
    value: Any, path: Path, errs: list[Raw], run: Run, subs: tuple[Check, ...]
) -> None:
    failures: list[list[Raw]] = []
    matched: list[int] = []
    for index, sub_check in enumerate(subs):
        trial: list[Raw] = []
        sub_check(value, path, trial, run)
        if trial:
            failures.append(trial)
        else:
            matched.append(index)
            if len(matched) == 2:
                message = f"value matches oneOf schemas {matched[0]} and {matched[1]}"
                errs.append((path, "oneOf", message))
                return
    if not matched:
        errs.append((path, "oneOf", _none_matched("oneOf", path, failures)))


def _none_matched(keyword: str, path: Path, failures: list[list[Raw]]) -> str:
    # Closest: a branch whose type matched (it failed deeper), then the one with fewest errors.
    def distance(trial: list[Raw]) -> tuple[bool, int]:
        # A $ref below holds this location as its canonical object: equal, maybe not the same.
        return any(e[1] == "type" and (e[0] is path or e[0] == path) for e in trial), len(trial)

    where, closest_keyword, message = min(failures, key=distance)[0]
    return (
        f"value matches none of the {len(failures)} schemas in {keyword}; "
        f"closest: {closest_keyword} at {pointer(where) or 'the value'}: {message:.200}"
    )


def segments(path: Path) -> list[str | int]:
    """Return the keys and indexes leading from the root to ``path``."""
    out: list[str | int] = []
    while path is not None:
        path, segment = path
        out.append(segment)
    out.reverse()
    return out


def pointer(path: Path) -> str:
    """Render a location as a JSON Pointer (RFC 6901)."""
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments(path))


def _check_pattern(
    value: str, path: Path, errs: list[Raw], run: Run, regex: Pattern, pattern: Any
) -> None:
    try:
        found = regex.search(value, run.budget)
    except MatchBudgetExceeded:
        message = f"matching {pattern!r:.200} needs more work than the validation may spend"
        run.broken.append((path, "pattern", message))
        return
    if not found:
        errs.append((path, "pattern", f"does not match {pattern!r:.200}"))


_MISSING: Any = object()


def _resolve(root: Any, ref: str) -> Any:
    """Return the part of ``root`` a local ``#`` + JSON Pointer reference names, or ``_MISSING``."""
    if not ref.startswith("#"):
        return _MISSING
    fragment = unquote(ref[1:])  # a URI fragment: percent-decoded before the pointer is read
    if not fragment:
        return root
    if not fragment.startswith("/"):
        return _MISSING  # an anchor such as "#node": not supported
    node = root
    for token in fragment[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node.get(token, _MISSING)
            if node is _MISSING:
                return _MISSING
        elif isinstance(node, list) and token.isdecimal() and token.isascii():
            if (token != "0" and token.startswith("0")) or int(token) >= len(node):
                return _MISSING
            node = node[int(token)]
        else:
            return _MISSING
    return node
