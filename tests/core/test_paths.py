"""Tests for PathPolicy: lexical normalisation, root boundaries, deny globs and symlinks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from praxo_actors.core import PathPolicy, PathPolicyError

POLICY = PathPolicy(["/srv/a", "/data/repo/.git"], deny=[".git", "*.pem", ".env*"])


def _code(policy: PathPolicy, path: Any, base: Any = None) -> str:
    with pytest.raises(PathPolicyError) as info:
        policy.check(path, base)
    return info.value.code


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/srv/a", "/srv/a"),
        ("/srv/a/", "/srv/a"),
        ("/srv/a/x/y.txt", "/srv/a/x/y.txt"),
        ("x/y.txt", "/srv/a/x/y.txt"),
        (".", "/srv/a"),
        ("./x/./y", "/srv/a/x/y"),
        ("x/../y", "/srv/a/y"),
        ("//srv//a///x", "/srv/a/x"),
        ("/../../srv/a/x", "/srv/a/x"),
        ("/srv/b/../a/x", "/srv/a/x"),
        ("a\\..\\..\\etc", "/srv/a/a\\..\\..\\etc"),
        ("x..y", "/srv/a/x..y"),
        ("...", "/srv/a/..."),
    ],
)
def test_admitted_paths_are_normalised(path: str, expected: str) -> None:
    """An admitted path comes back absolute, with ``.``, ``..`` and ``//`` collapsed lexically."""
    assert POLICY.check(path) == expected


@pytest.mark.parametrize(
    "path",
    ["/srv/ab", "/srv/a-b/x", "/srv", "/", "../b", "../../etc/passwd", "/srv/a/../../etc", "/etc"],
)
def test_paths_outside_every_root_are_refused(path: str) -> None:
    """A root admits itself and what lies below it at a separator boundary, nothing else."""
    assert _code(POLICY, path) == "PATH_OUTSIDE_ROOTS"


@pytest.mark.parametrize(
    "path",
    [".git", ".git/config", "x/.git/HEAD", "key.pem", "deep/er/server.pem", ".env", ".env.local"],
)
def test_denied_components_are_refused(path: str) -> None:
    """Deny globs match any component below the root."""
    assert _code(POLICY, path) == "PATH_DENIED"


def test_deny_globs_match_whole_components_case_sensitively() -> None:
    """A deny glob matches a whole component, with case, not a substring."""
    for path in ("x.git", "git", "key.pem.txt", "KEY.PEM", "my.env", "pem/x"):
        assert POLICY.check(path).startswith("/srv/a/")


def test_deny_does_not_apply_to_the_root_itself() -> None:
    """Components of the root are never tested against the deny globs."""
    assert POLICY.check("/data/repo/.git/config") == "/data/repo/.git/config"
    assert POLICY.check("/data/repo/.git") == "/data/repo/.git"
    assert _code(POLICY, "/data/repo/.git/hooks/.git") == "PATH_DENIED"


def test_nested_roots_use_the_deepest_root() -> None:
    """A path under nested roots passes when the components below the deepest one pass."""
    policy = PathPolicy(["/repo", "/repo/.git/hooks"], deny=[".git"])
    assert policy.check("/repo/.git/hooks/pre-commit") == "/repo/.git/hooks/pre-commit"
    assert _code(policy, "/repo/.git/config") == "PATH_DENIED"


def test_relative_paths_resolve_against_base() -> None:
    """A relative path resolves against ``base``, which defaults to the first root."""
    assert POLICY.check("x", base="/srv/a/sub") == "/srv/a/sub/x"
    assert POLICY.check("../y", base="/srv/a/sub") == "/srv/a/y"
    assert _code(POLICY, "x", base="/tmp") == "PATH_OUTSIDE_ROOTS"
    assert POLICY.check("/srv/a/z", base="/tmp") == "/srv/a/z"


@pytest.mark.parametrize("path", ["", "x\0y", "/srv/a/\0", None, b"/srv/a/x", Path("/srv/a"), 7])
def test_invalid_paths(path: Any) -> None:
    """Empty paths, NUL bytes and non-str values are PATH_INVALID."""
    assert _code(POLICY, path) == "PATH_INVALID"


@pytest.mark.parametrize("base", ["relative", "", "/srv/a\0", 5])
def test_invalid_base(base: Any) -> None:
    """A base that is not an absolute str without NUL bytes is PATH_INVALID."""
    assert _code(POLICY, "x", base) == "PATH_INVALID"


@pytest.mark.parametrize(
    ("roots", "deny"),
    [
        ("/srv/a", ()),
        ([], ()),
        (["srv/a"], ()),
        ([""], ()),
        (["/srv/\0"], ()),
        ([b"/srv"], ()),
        (None, ()),
        (["/srv"], ".git"),
        (["/srv"], ["a/b"]),
        (["/srv"], [""]),
        (["/srv"], [3]),
    ],
)
def test_invalid_construction(roots: Any, deny: Any) -> None:
    """Malformed roots or deny patterns are refused at construction with PATH_INVALID."""
    with pytest.raises(PathPolicyError) as info:
        PathPolicy(roots, deny)
    assert info.value.code == "PATH_INVALID"


def test_roots_are_normalised() -> None:
    """Roots are normalised like paths, and the policy exposes them read-only."""
    policy = PathPolicy(["//srv/./a/", "/x/../y"], deny=("*.key",))
    assert policy.roots == ("/srv/a", "/y")
    assert policy.deny == ("*.key",)
    assert policy.check("/y/z") == "/y/z"
    with pytest.raises(AttributeError):
        policy.roots = ("/",)  # type: ignore[misc]
    assert "'/srv/a'" in repr(policy)


def test_slash_root_admits_everything_not_denied() -> None:
    """The root ``/`` admits every absolute path, deny globs still apply."""
    policy = PathPolicy(["/"], deny=[".ssh"])
    assert policy.check("/etc/passwd") == "/etc/passwd"
    assert policy.check("/") == "/"
    assert _code(policy, "/home/u/.ssh/id_rsa") == "PATH_DENIED"


def test_symlinks_are_not_resolved_by_default(tmp_path: Path) -> None:
    """Without resolve_symlinks, a link leading out of the root is admitted (lexical check)."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "out").symlink_to(tmp_path)
    policy = PathPolicy([str(root)])
    assert policy.check("out/secret") == f"{root}/out/secret"


def test_resolve_symlinks_rechecks_the_real_path(tmp_path: Path) -> None:
    """With resolve_symlinks, the real path must also lie under a root and pass the globs."""
    real = tmp_path / "real"
    (real / "inside").mkdir(parents=True)
    (real / "id.pem").write_text("k")
    root = tmp_path / "root"
    root.symlink_to(real)  # a root that is itself a link still admits its contents
    (real / "out").symlink_to(tmp_path)
    (real / "cert").symlink_to(real / "id.pem")
    policy = PathPolicy([str(root)], deny=["*.pem"], resolve_symlinks=True)
    assert policy.check("inside/file") == f"{root}/inside/file"
    assert policy.check("missing/file") == f"{root}/missing/file"
    assert _code(policy, "out/x") == "PATH_OUTSIDE_ROOTS"
    assert _code(policy, "cert") == "PATH_DENIED"
    assert os.path.islink(root / "cert")
