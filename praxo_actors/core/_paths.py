"""Confine file paths to allowed roots, lexically, with deny globs for sensitive names.

Choices where the behaviour could differ, fixed here:

- Paths are POSIX and checked lexically: empty and ``.`` components and repeated separators are
  dropped, ``..`` removes the previous component and stays at ``/`` above the top (so the result
  never contains ``..`` or ``//``; unlike :func:`posixpath.normpath`, a leading ``//`` becomes
  ``/``). A backslash is an ordinary character.
- Roots must be absolute strings without NUL bytes, given as a non-empty sequence (a bare string
  is refused, since iterating it would yield characters); they are normalised the same way.
  Anything else raises ``PATH_INVALID`` at construction, as do deny patterns that are not
  non-empty strings or that contain ``/`` (a pattern matches one component, so such a pattern
  could never deny anything).
- ``base``, when given, must be an absolute string (even for an absolute path); ``None`` means
  the first root.
- A path under several roots is admitted when it passes the deny patterns below any of them (the
  deepest one, which leaves the fewest components to test). Components of the root itself are never
  tested.
- A path, base or root the file-system encoding cannot encode (a lone surrogate such as
  ``"\\ud800"``, which a JSON-escaped string can decode to) names no file: ``PATH_INVALID``, in
  both modes. Surrogates ``os.fsdecode`` produces for undecodable bytes (``surrogateescape``) pass.
- With ``resolve_symlinks=True`` a path longer than the system's ``PATH_MAX`` (4,096 bytes on
  Linux) is ``PATH_INVALID``: no file has such a name, and resolving one is quadratic.
- With ``resolve_symlinks=True`` the real path (:func:`os.path.realpath`) must also pass the check
  against the roots' real paths; :meth:`PathPolicy.check` still returns the lexical path.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable

from praxo_actors._errors import PathPolicyError
from praxo_actors.codes import PATH_DENIED, PATH_INVALID, PATH_OUTSIDE_ROOTS

__all__ = ["PathPolicy"]


def _path_max() -> int:
    try:
        return os.pathconf("/", "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):
        return 4096  # Linux's PATH_MAX


#: Longest path (in bytes, encoded) that ``resolve_symlinks=True`` resolves.
_PATH_MAX = _path_max()


class PathPolicy:
    """Admit paths under a set of roots unless a component below the root matches a deny glob.

    Args:
        roots: Absolute directories; a path must equal one of them or lie below it.
        deny: Glob patterns (:func:`fnmatch.fnmatchcase`, case-sensitive) matched against every
            component below the root, e.g. ``".git"``, ``"*.pem"``, ``".env*"``.
        resolve_symlinks: Also check the path with symlinks resolved (reads the file system).

    Raises:
        PathPolicyError: ``PATH_INVALID`` for malformed roots or deny patterns.
    """

    __slots__ = ("_deny", "_deny_regex", "_prefixes", "_resolve_symlinks", "_roots")

    def __init__(
        self, roots: Iterable[str], deny: Iterable[str] = (), resolve_symlinks: bool = False
    ) -> None:
        self._roots = tuple(
            _normalize(_absolute(root, "root")) for root in _strings(roots, "roots")
        )
        if not self._roots:
            raise PathPolicyError(PATH_INVALID, "a path policy needs at least one root")
        patterns = _strings(deny, "deny")
        for pattern in patterns:
            if not isinstance(pattern, str) or not pattern or "/" in pattern or "\0" in pattern:
                raise PathPolicyError(
                    PATH_INVALID,
                    f"a deny pattern must be a non-empty component glob, not {pattern!r}",
                )
        self._deny = tuple(patterns)
        self._resolve_symlinks = bool(resolve_symlinks)
        # One regex for all patterns: fnmatch.translate anchors each alternative at both ends.
        self._deny_regex = (
            re.compile("|".join(fnmatch.translate(p) for p in self._deny)) if self._deny else None
        )
        self._prefixes = tuple(_prefix(root) for root in self._roots)

    @property
    def roots(self) -> tuple[str, ...]:
        """The normalised roots, in the order given (the first is the default base)."""
        return self._roots

    @property
    def deny(self) -> tuple[str, ...]:
        """The deny glob patterns."""
        return self._deny

    @property
    def resolve_symlinks(self) -> bool:
        """Whether :meth:`check` also checks the path with symlinks resolved."""
        return self._resolve_symlinks

    def __repr__(self) -> str:
        return (
            f"PathPolicy(roots={list(self.roots)!r}, deny={list(self.deny)!r}, "
            f"resolve_symlinks={self.resolve_symlinks!r})"
        )

    def check(self, path: str, base: str | None = None) -> str:
        """Return the normalised absolute path if the policy admits it.

        Args:
            path: An absolute path, or a relative one resolved against ``base``.
            base: Absolute directory for relative paths; defaults to the first root.

        Returns:
            The normalised absolute path (lexical; symlinks are never substituted).

        Raises:
            PathPolicyError: ``PATH_INVALID`` (empty, NUL byte, not a str, not encodable for
                the file system, unresolvable with ``resolve_symlinks``, or a bad ``base``),
                ``PATH_OUTSIDE_ROOTS`` or ``PATH_DENIED``.
        """
        if not isinstance(path, str):
            raise PathPolicyError(PATH_INVALID, f"a path must be a str, not {type(path).__name__}")
        if not path:
            raise PathPolicyError(PATH_INVALID, "the path is empty")
        if "\0" in path:
            raise PathPolicyError(PATH_INVALID, "the path contains a NUL byte")
        _encodable(path, "path")
        start = self._roots[0] if base is None else _absolute(base, "base")
        joined = path if path.startswith("/") else f"{start}/{path}"
        normalised = _normalize(joined)
        self._admit(normalised, self._roots, self._prefixes)
        if self._resolve_symlinks:
            if len(os.fsencode(normalised)) > _PATH_MAX:
                # No system call takes it (ENAMETOOLONG), and realpath's walk over its
                # components is quadratic: 500,000 of them kept it busy for minutes.
                raise PathPolicyError(
                    PATH_INVALID, f"the path is longer than {_PATH_MAX} bytes, the system's limit"
                )
            # Roots are resolved on every check: links may change while the policy lives.
            try:
                real_roots = tuple(os.path.realpath(root) for root in self._roots)
                real = os.path.realpath(normalised)
            except (OSError, ValueError) as exc:  # e.g. a name too long for the file system
                raise PathPolicyError(
                    PATH_INVALID, f"{normalised!r:.200} cannot be resolved: {exc}"
                ) from None
            self._admit(_normalize(real), real_roots, tuple(_prefix(root) for root in real_roots))
        return normalised

    def _admit(self, path: str, roots: tuple[str, ...], prefixes: tuple[str, ...]) -> None:
        """Raise unless ``path`` (normalised) lies under a root and passes the deny patterns."""
        below: str | None = None
        for root, prefix in zip(roots, prefixes, strict=True):
            if path == root:
                return  # nothing below the root to deny
            if path.startswith(prefix):
                rest = path[len(prefix) :]
                if below is None or len(rest) < len(below):
                    below = rest
        if below is None:
            raise PathPolicyError(PATH_OUTSIDE_ROOTS, f"{path!r} is outside the allowed roots")
        deny = self._deny_regex
        if deny is not None:
            for component in below.split("/"):
                if deny.match(component):
                    raise PathPolicyError(
                        PATH_DENIED, f"{path!r} is denied: {component!r} matches a deny pattern"
                    )


def _strings(items: Iterable[str], what: str) -> list[str]:
    if isinstance(items, str | bytes):
        raise PathPolicyError(PATH_INVALID, f"{what} must be a sequence of strings, not a string")
    try:
        return list(items)
    except TypeError:
        raise PathPolicyError(
            PATH_INVALID, f"{what} must be a sequence of strings, not {type(items).__name__}"
        ) from None


def _absolute(path: object, what: str) -> str:
    if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
        raise PathPolicyError(
            PATH_INVALID,
            f"a {what} must be an absolute path without NUL bytes, not {path!r:.200}",
        )
    return _encodable(path, what)


def _encodable(path: str, what: str) -> str:
    """Refuse text no file name can hold: a lone surrogate the file-system encoding rejects."""
    try:
        os.fsencode(path)
    except UnicodeEncodeError as exc:
        raise PathPolicyError(
            PATH_INVALID,
            f"the {what} cannot be encoded for the file system ({exc.reason} at {exc.start})",
        ) from None
    return path


def _normalize(path: str) -> str:
    """Collapse ``.``, ``..`` and repeated separators of an absolute path, lexically."""
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part and part != ".":
            parts.append(part)
    return "/" + "/".join(parts)


def _prefix(root: str) -> str:
    return root if root.endswith("/") else root + "/"
