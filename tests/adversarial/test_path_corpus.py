"""PathPolicy against a generated traversal corpus (``_traversal.py``): zero escapes.

Every path a careless web layer could hand over is checked, lexically and with
``resolve_symlinks=True`` over a real tree full of hostile links. An accepted path must lie inside
a root by an independent check (``posixpath.normpath`` and ``os.path.commonpath``; the kernel's
own view of an opened file with symlinks), and pass the deny globs; a refusal must be a
``PathPolicyError`` with one of the three codes. Lexically the check is also differential: a path
the independent check finds inside, allowed and well-formed must be accepted.
``PRAXO_PATH_CORPUS_SCALE`` multiplies the corpus (``make fuzz`` runs it at 8).
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections import Counter
from pathlib import Path

import pytest
from _traversal import corpus

from praxo_actors.core import PathPolicy, PathPolicyError

pytestmark = pytest.mark.timeout(300)

SCALE = int(os.environ.get("PRAXO_PATH_CORPUS_SCALE", "1"))
CODES = {"PATH_INVALID", "PATH_OUTSIDE_ROOTS", "PATH_DENIED"}
DENY = [".git", "*.pem", ".env*"]
ROOTS = ["/srv/praxo/root", "/srv/praxo/data"]
BASES = [None, "/srv/praxo/root/a/b", "/srv/praxo/data"]


@pytest.fixture(scope="module")
def paths() -> dict[str, str]:
    made = corpus(SCALE)
    assert len(made) >= 20_000
    return made


def _inside(path: str, roots: list[str]) -> str | None:
    """The root ``path`` lies in (None: none), by ``os.path.commonpath``."""
    for root in roots:
        if os.path.commonpath([path, root]) == root:
            return root
    return None


def _denied(path: str, root: str) -> bool:
    below = [c for c in path[len(root) :].split("/") if c]
    return any(fnmatch.fnmatchcase(c, p) for c in below for p in DENY)


def _expected(path: str, base: str) -> str:
    """The policy's lexical answer, computed another way (normpath keeps a leading "//")."""
    joined = path if path.startswith("/") else posixpath.join(base, path)
    normal = posixpath.normpath(joined)
    return "/" + normal.lstrip("/")


def _encodable(path: str) -> bool:
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        return False
    return True


def test_lexical_corpus_has_no_escapes(paths: dict[str, str]) -> None:
    policy = PathPolicy(ROOTS, deny=DENY)
    outcomes: Counter[str] = Counter()
    escapes: list[str] = []
    wrong: list[str] = []
    for path, how in paths.items():
        for base in BASES:
            try:
                result = policy.check(path, base=base)
            except PathPolicyError as exc:
                outcomes[exc.code] += 1
                if exc.code not in CODES:
                    wrong.append(f"{exc.code} for {how}")
                elif "\0" not in path and _encodable(path):
                    expected = _expected(path, base or ROOTS[0])
                    root = _inside(expected, ROOTS)
                    if root is not None and not _denied(expected, root):
                        wrong.append(f"refused an allowed path {expected!r:.120} ({how})")
                continue
            except Exception as exc:  # the finding this test is for
                wrong.append(f"{type(exc).__name__}: {exc!s:.80} for {how}")
                continue
            outcomes["accepted"] += 1
            root = _inside(result, ROOTS)
            if root is None or _denied(result, root) or "\0" in result:
                escapes.append(f"{result!r:.120} from {how}")
            elif result != _expected(path, base or ROOTS[0]):
                wrong.append(f"{result!r:.80} != {_expected(path, base or ROOTS[0])!r:.80}")
    assert not escapes, (len(escapes), escapes[:5])
    assert not wrong, (len(wrong), wrong[:5])
    # The corpus reaches every verdict, or it would prove little.
    assert set(outcomes) == {"accepted", *CODES}, outcomes
    assert outcomes["PATH_OUTSIDE_ROOTS"] > 1000 and outcomes["PATH_DENIED"] > 1000


# -- resolve_symlinks=True over a real tree -------------------------------------------------------

LINKS = {
    "abs_out": "{outside}",
    "abs_out_file": "{outside}/secret.txt",
    "rel_out": "../outside",
    "rel_deep_out": "a/b/../../../outside",
    "parent": "..",
    "slash": "/",
    "loop1": "loop2",
    "loop2": "loop1",
    "self": "self",
    "dangling_abs": "{tmp}/nowhere",
    "dangling_rel": "nowhere/x",
    "dangling_out": "../nowhere/secret.txt",
    "inside": "a/b",
    "a/b/up": "../../..",
    "a/b/sibling": "{tmp}/rootx",
    "chain1": "chain2",
    "chain2": "abs_out",
    "git_alias": ".git",
    "pem_alias": "a/key.pem",
    "to_root": "{root}",
}
SUFFIXES = ["", "/", "/secret.txt", "/..", "/../..", "/x/../secret.txt", "/../outside/secret.txt"]
PREFIXES = ["", "./", "a/../", "inside/../", "{root}/", "a/b/up/", "parent/root/"]


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, str]:
    """A root full of links that leave it, loop or dangle; a secret outside; a sibling root."""
    names = {"tmp": str(tmp_path), "root": str(tmp_path / "root")}
    names["outside"] = str(tmp_path / "outside")
    for directory in ("root/a/b", "root/.git", "outside", "rootx"):
        (tmp_path / directory).mkdir(parents=True)
    for file in ("outside/secret.txt", "rootx/secret.txt", "root/a/key.pem", "root/notes.txt"):
        (tmp_path / file).write_text("x")
    for link, target in LINKS.items():
        os.symlink(target.format(**names), tmp_path / "root" / link)
    os.symlink(names["root"], tmp_path / "rootlink")
    return names


def _kernel_path(path: str) -> str | None:
    """Where the kernel lands opening ``path`` (None if it cannot be opened)."""
    try:
        fd = os.open(path, os.O_PATH)
    except OSError:
        return None
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)


def _symlink_paths(tree: dict[str, str], sample: list[str]) -> list[str]:
    links = [*LINKS, "notes.txt", "a", ".git", "nowhere"]
    made = [
        prefix.format(**tree) + link + suffix
        for prefix in PREFIXES
        for link in links
        for suffix in SUFFIXES
    ]
    return made + [f"{link}/{path}" for link in ("inside", "rel_out") for path in sample] + sample


@pytest.mark.parametrize("root_spelling", ["root", "rootlink"])
def test_symlinks_never_escape(
    tree: dict[str, str], paths: dict[str, str], root_spelling: str
) -> None:
    root = str(Path(tree["tmp"]) / root_spelling)
    policy = PathPolicy([root], deny=DENY, resolve_symlinks=True)
    real_root = os.path.realpath(root)
    sample = [p for i, p in enumerate(paths) if i % 40 == 0]
    outcomes: Counter[str] = Counter()
    escapes: list[str] = []
    wrong: list[str] = []
    for path in _symlink_paths(tree, sample):
        try:
            result = policy.check(path)
        except PathPolicyError as exc:
            outcomes[exc.code] += 1
            if exc.code not in CODES:
                wrong.append(f"{exc.code} for {path!r:.120}")
            continue
        except Exception as exc:  # the finding this test is for
            wrong.append(f"{type(exc).__name__}: {exc!s:.80} for {path!r:.120}")
            continue
        outcomes["accepted"] += 1
        real = os.path.realpath(result)
        kernel = _kernel_path(result)
        if (
            _inside(result, [root]) is None
            or _inside(real, [real_root]) is None
            or _denied(real, real_root)
            or (kernel is not None and _inside(kernel, [real_root]) is None)
        ):
            escapes.append(f"{path!r:.120} -> {real!r:.120}")
    assert not escapes, (len(escapes), escapes[:5])
    assert not wrong, (len(wrong), wrong[:5])
    assert set(outcomes) == {"accepted", *CODES}, outcomes
    # Every link that leaves the root is refused when followed, by name.
    for link in ("abs_out", "rel_out", "rel_deep_out", "parent", "slash", "a/b/up", "chain1"):
        with pytest.raises(PathPolicyError) as caught:
            policy.check(f"{link}/secret.txt")
        assert caught.value.code == "PATH_OUTSIDE_ROOTS", link
    assert policy.check("inside/x") == f"{root}/inside/x"
    assert policy.check("loop1") == f"{root}/loop1"  # a loop resolves to itself, inside
