"""Compile a JSON Schema of the supported subset into nested checking closures.

Each schema object becomes one closure that holds its keyword values pre-parsed (limits, compiled
patterns, sub-schema closures), so validating a value walks only the keywords present. Malformed
keyword values are found here, once, and reported by the closure every time validation reaches it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from praxo_actors.core._regex import (
    Pattern,
    UnsupportedPattern,
    compile_pattern,
)
from praxo_actors.core._schema_checks import (
    _MISSING,
    Check,
    Path,
    Raw,
    Run,
    _accept,
    _check_any_of,
    _check_object,
    _check_one_of,
    _check_pattern,
    _faulty,
    _reject,
    _resolve,
    _type_check,
    _union_check,
    _unique,
    pointer,
    segments,
)
from praxo_actors.core._schema_values import (
    KINDS,
    describe,
    first_duplicate,
    is_member,
    is_multiple,
    json_equal,
    kind_name,
    kind_of,
)

__all__ = ["Check", "Compiler", "Path", "Raw", "Run", "pointer", "segments"]


_TYPE_NAMES = frozenset(KINDS.values())
_APPLICATORS = ("allOf", "anyOf", "oneOf")


class Compiler:
    """Compile the schema objects of one root schema, each once, resolving ``$ref`` lazily."""

    __slots__ = ("_memo", "root", "stateful")

    def __init__(self, root: Any) -> None:
        self.root = root
        # Keyed by id(): the compiler holds the root, so the ids of its parts stay valid.
        self._memo: dict[int, Check] = {}
        # Whether any check compiled uses its Run (a $ref, a pattern, a schema fault): if none
        # does, one validation needs no Run of its own.
        self.stateful = False

    def compile(self, schema: Any) -> Check:
        """Return the closure checking values against ``schema`` (a part of the root)."""
        check = self._memo.get(id(schema))
        if check is None:
            check = self._memo[id(schema)] = self._build(schema)
        return check

    def _ref(self, ref: Any) -> Check:
        self.stateful = True
        target: Check | None = None

        def check(value: Any, path: Path, errs: list[Raw], run: Run) -> None:
            nonlocal target
            if target is None:
                schema = _resolve(self.root, ref) if isinstance(ref, str) else _MISSING
                fault = ("$ref", f"cannot resolve $ref {ref!r:.200}")
                target = _faulty((fault,)) if schema is _MISSING else self.compile(schema)
            # Entering the same target at the same value again means no progress: a loop.
            key = (id(target), id(value))
            if key in run.active:
                message = f"$ref {ref!r:.200} loops without reaching a schema"
                run.broken.append((path, "$ref", message))
                return
            # The location is compared by what it spells: two branches reaching one place build
            # two equal paths (cheap to compare: they share their parent objects).
            done = run.memo.get(key)
            if done is not None:
                for where, _value, found, faults in done:
                    if where == path:
                        errs.extend(found)
                        run.broken.extend(faults)
                        return
            first_error, first_fault = len(errs), len(run.broken)
            run.active.add(key)
            target(value, path, errs, run)
            run.active.discard(key)
            # Kept (and left in errs) once each: what two branches both found is one error.
            found, faults = errs[first_error:], run.broken[first_fault:]
            if len(found) > 1:
                errs[first_error:] = found = _unique(found)
            if len(faults) > 1:
                run.broken[first_fault:] = faults = _unique(faults)
            run.memo.setdefault(key, []).append((path, value, found, faults))

        return check

    def _build(self, schema: Any) -> Check:
        if schema is True:
            return _accept
        if schema is False:
            return _reject
        if not isinstance(schema, dict):
            self.stateful = True
            return _faulty(
                (("schema", f"a schema must be an object or a boolean, not {describe(schema)}"),)
            )
        faults: list[tuple[str, str]] = []
        get = schema.get

        ref = self._ref(schema["$ref"]) if "$ref" in schema else None

        types: frozenset[str] | None = None
        type_text = ""
        float_integer = False
        if "type" in schema:
            names = _type_names(schema["type"])
            if names is None:
                faults.append(("type", f"'type' must name JSON types, not {schema['type']!r:.80}"))
            else:
                wanted = set(names) | ({"integer"} if "number" in names else set())
                types = frozenset(wanted)
                type_text = " or ".join(names)
                float_integer = "integer" in names and "number" not in names

        enum = get("enum")
        if "enum" in schema and not isinstance(enum, list):
            faults.append(("enum", "'enum' must be an array"))
            enum = None
        const = get("const", _MISSING)

        min_len = _count(schema, "minLength", faults)
        max_len = _count(schema, "maxLength", faults)
        pattern = get("pattern")
        regex = _compile_pattern(pattern, faults) if "pattern" in schema else None
        has_string = min_len is not None or max_len is not None or regex is not None

        minimum = _number(schema, "minimum", faults)
        maximum = _number(schema, "maximum", faults)
        ex_minimum = _number(schema, "exclusiveMinimum", faults)
        ex_maximum = _number(schema, "exclusiveMaximum", faults)
        step = _number(schema, "multipleOf", faults)
        if step is not None and not (step > 0 and math.isfinite(step)):
            faults.append(("multipleOf", "'multipleOf' must be a number greater than 0"))
            step = None
        has_number = any(n is not None for n in (minimum, maximum, ex_minimum, ex_maximum, step))

        required = get("required")
        if required is not None and not (
            isinstance(required, list) and all(isinstance(n, str) for n in required)
        ):
            faults.append(("required", "'required' must be an array of strings"))
            required = None
        required = required or None
        known: dict[Any, Any] = {}
        props: dict[Any, Check] | None = None
        if "properties" in schema:
            if isinstance(schema["properties"], dict):
                known = schema["properties"]
                compiled = {name: self.compile(sub) for name, sub in known.items()}
                props = {name: c for name, c in compiled.items() if c is not _accept} or None
            else:
                faults.append(("properties", "'properties' must be an object"))
        additional: Check | bool | None = None
        if "additionalProperties" in schema:
            extra = schema["additionalProperties"]
            if extra is False:
                additional = False
            elif isinstance(extra, dict):
                additional = self.compile(extra)
                additional = None if additional is _accept else additional
            elif extra is not True:
                faults.append(("additionalProperties", "'additionalProperties' must be a schema"))
        has_object = required is not None or props is not None or additional is not None

        min_items = _count(schema, "minItems", faults)
        max_items = _count(schema, "maxItems", faults)
        unique = get("uniqueItems", False)
        if type(unique) is not bool:
            faults.append(("uniqueItems", "'uniqueItems' must be a boolean"))
            unique = False
        items: Check | None = None
        if "items" in schema:
            each = schema["items"]
            if each is True or each is False or isinstance(each, dict):
                items = self.compile(each)
                items = None if items is _accept else items
            else:
                faults.append(("items", "'items' must be one schema (2020-12 has no tuple form)"))
        has_array = min_items is not None or max_items is not None or unique or items is not None

        applied: dict[str, tuple[Check, ...]] = {}
        for keyword in _APPLICATORS:
            if keyword in schema:
                subs = schema[keyword]
                if isinstance(subs, list) and subs:
                    applied[keyword] = tuple(self.compile(sub) for sub in subs)
                else:
                    faults.append((keyword, f"'{keyword}' must be a non-empty array of schemas"))
        all_of = applied.get("allOf")
        any_of = applied.get("anyOf")
        one_of = applied.get("oneOf")
        negated: Check | None = None
        if "not" in schema:
            sub = schema["not"]
            if sub is True or sub is False or isinstance(sub, dict):
                negated = self.compile(sub)
            else:
                faults.append(("not", "'not' must be a schema"))
        has_applicators = bool(applied) or negated is not None
        broken = tuple(faults)
        if broken or regex is not None:
            self.stateful = True
        # Fast paths for what most properties of a tool's arguments say: the checks of the
        # general closure below, without testing for every keyword the schema does not have.
        plain = not (broken or ref is not None or const is not _MISSING) and not (
            has_string or has_number or has_object or has_array
        )
        if plain and not has_applicators:
            if types is None and enum is None:
                return _accept  # no keyword this subset checks (a title, a default, ...)
            return _type_check(types, type_text, float_integer, enum)
        if (
            plain
            and types is None
            and enum is None
            and negated is None
            and set(applied) == {"anyOf"}
        ):
            assert any_of is not None
            kinds: list[frozenset[str]] = [
                k for k in (getattr(sub, "kinds", None) for sub in any_of) if k is not None
            ]
            if len(kinds) == len(any_of):  # e.g. Optional[str]: one of some types
                return _union_check(frozenset().union(*kinds), any_of)

        def check(value: Any, path: Path, errs: list[Raw], run: Run) -> None:
            kind = KINDS.get(type(value)) or kind_of(value)
            if ref is not None:
                ref(value, path, errs, run)
            if (
                types is not None
                and kind not in types
                and not (float_integer and kind == "number" and value.is_integer())
            ):
                errs.append((path, "type", f"expected {type_text}, got {kind_name(kind, value)}"))
            if enum is not None and not is_member(value, kind, enum):
                errs.append((path, "enum", f"value is not one of {enum!r:.200}"))
            if const is not _MISSING and not json_equal(value, const):
                errs.append((path, "const", f"value must be {const!r:.200}"))
            if kind == "string":
                if has_string:
                    if min_len is not None and len(value) < min_len:
                        errs.append((path, "minLength", f"shorter than {min_len} characters"))
                    if max_len is not None and len(value) > max_len:
                        errs.append((path, "maxLength", f"longer than {max_len} characters"))
                    if regex is not None:
                        _check_pattern(value, path, errs, run, regex, pattern)
            elif kind == "integer" or kind == "number":
                if has_number:
                    if minimum is not None and value < minimum:
                        errs.append((path, "minimum", f"less than {minimum!r}"))
                    if maximum is not None and value > maximum:
                        errs.append((path, "maximum", f"greater than {maximum!r}"))
                    if ex_minimum is not None and value <= ex_minimum:
                        errs.append((path, "exclusiveMinimum", f"not greater than {ex_minimum!r}"))
                    if ex_maximum is not None and value >= ex_maximum:
                        errs.append((path, "exclusiveMaximum", f"not less than {ex_maximum!r}"))
                    if step is not None and not is_multiple(value, step):
                        errs.append((path, "multipleOf", f"not a multiple of {step!r}"))
            elif kind == "object":
                if has_object:
                    _check_object(value, path, errs, run, required, props, known, additional)
            elif kind == "array" and has_array:
                size = len(value)
                if min_items is not None and size < min_items:
                    errs.append((path, "minItems", f"fewer than {min_items} items"))
                if max_items is not None and size > max_items:
                    errs.append((path, "maxItems", f"more than {max_items} items"))
                if unique and size > 1:
                    pair = first_duplicate(value)
                    if pair is not None:
                        errs.append(
                            (path, "uniqueItems", f"items {pair[0]} and {pair[1]} are equal")
                        )
                if items is not None:
                    for index, item in enumerate(value):
                        items(item, (path, index), errs, run)
            if has_applicators:
                if all_of is not None:
                    for sub_check in all_of:
                        sub_check(value, path, errs, run)
                if any_of is not None:
                    _check_any_of(value, path, errs, run, any_of)
                if one_of is not None:
                    _check_one_of(value, path, errs, run, one_of)
                if negated is not None:
                    trial: list[Raw] = []
                    negated(value, path, trial, run)
                    if not trial:
                        errs.append((path, "not", "value must not match the schema in 'not'"))
            if broken:
                run.broken.extend((path, keyword, message) for keyword, message in broken)

        return check


def _type_names(declared: Any) -> list[str] | None:
    names = [declared] if isinstance(declared, str) else declared
    if (
        isinstance(names, list)
        and names
        and all(isinstance(n, str) and n in _TYPE_NAMES for n in names)
    ):
        return names
    return None


def _count(schema: dict[str, Any], keyword: str, faults: list[tuple[str, str]]) -> int | None:
    """Return a non-negative integer keyword value (``2.0`` counts as 2), or None."""
    if keyword not in schema:
        return None
    limit = schema[keyword]
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0:
        return int(limit)
    if isinstance(limit, float) and limit.is_integer() and limit >= 0:
        return int(limit)
    faults.append((keyword, f"'{keyword}' must be a non-negative integer"))
    return None


def _number(
    schema: dict[str, Any], keyword: str, faults: list[tuple[str, str]]
) -> int | float | None:
    if keyword not in schema:
        return None
    limit = schema[keyword]
    if isinstance(limit, int | float) and not isinstance(limit, bool) and limit == limit:
        return limit
    faults.append((keyword, f"'{keyword}' must be a number"))
    return None


# Compiled patterns shared across schemas; bounded, since schema authors choose them.
_PATTERNS: dict[str, Pattern] = {}
_PATTERN_CACHE_SIZE = 512


def _compile_pattern(pattern: Any, faults: list[tuple[str, str]]) -> Pattern | None:
    if not isinstance(pattern, str):
        faults.append(("pattern", f"'pattern' must be a string, not {describe(pattern)}"))
        return None
    regex = _PATTERNS.get(pattern)
    if regex is None:
        try:
            regex = compile_pattern(pattern)
        except (re.error, OverflowError, RecursionError, ValueError) as exc:
            # ValueError covers UnsupportedPattern: valid re syntax beyond a finite automaton.
            what = "unsupported" if isinstance(exc, UnsupportedPattern) else "invalid"
            faults.append(("pattern", f"{what} pattern {pattern!r:.200}: {exc}"))
            return None
        if len(_PATTERNS) >= _PATTERN_CACHE_SIZE:
            _PATTERNS.clear()
        _PATTERNS[pattern] = regex
    return regex
