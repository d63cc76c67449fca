"""numaspec's own version, in one place: ``numaspec.__version__`` re-exports it, the
distribution's metadata reads it when a wheel or an sdist is built (``pyproject.toml``), and
the reference's adapter names it in its ``start`` answer (PROTO-2), without importing the whole
package from inside it.

The version is derived, never written by hand (CONTRIBUTING.md, "Versions"), at its first use:

* in a git checkout (an editable install included, so it is never the install's stale copy):
  the release itself on the release's commit with no tracked file changed, otherwise PEP 440's
  development version of the next patch release, which names the distance from the release and
  the commit: ``0.2.1.dev376+g560ed9d``, with ``.dirty`` after the commit when tracked files
  differ from it;
* in an unpacked sdist (no ``.git``): the ``PKG-INFO`` the sdist was built with;
* installed from a wheel: the distribution's metadata, which the build wrote;
* otherwise ``0+unknown`` (a ``git archive`` of a commit, say, which names no commit).

The release is not a git tag (a tag is no file of the project, so a clone made from its
commits alone would not have it): it is ``RELEASE``, cut from ``RELEASE_COMMIT``.  A release
commit sets ``RELEASE`` and empties ``RELEASE_COMMIT``, which then means the commit that last
changed the ``RELEASE`` line of this file.  0.2.0 came before this scheme, so its commit is
named: cde6ca0, which wrote the last entry of CHANGELOG.md's 0.2.0 section (5fb187a had set the
number, but the section also lists the command line, the site, the wheel test and
``numaspec check``, added up to cde6ca0); the next change to CHANGELOG.md opened Unreleased.
"""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

__all__ = ["RELEASE", "RELEASE_COMMIT", "__version__", "compose", "from_git", "release_of",
           "version"]

#: The last release (CHANGELOG.md's newest numbered section; CITATION.cff's version).
RELEASE = "0.2.0"
#: The commit ``RELEASE`` was cut from; empty: the commit that last changed ``RELEASE``'s line.
RELEASE_COMMIT = "cde6ca0b9875e176e0d2a80504f170e98e4584fd"

#: numaspec's version: :func:`version`, derived at the first ask (PEP 562), not at import.
__version__: str

_HERE = Path(__file__).resolve()
#: The checkout when this file is its reference/about.py (the package's folder is reference/);
#: for an installed wheel, site-packages, where no .git is looked for.
_ROOT = _HERE.parent.parent


def __getattr__(name: str) -> str:
    if name == "__version__":
        return version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def version() -> str:
    """numaspec's version, from git, an sdist's PKG-INFO or the installed metadata, in that
    order (the module's docstring)."""
    return (from_git(_ROOT) or _from_pkg_info(_ROOT / "PKG-INFO") or _installed()
            or "0+unknown")


def compose(release: str, distance: int | None, commit: str, *, dirty: bool = False) -> str:
    """The version of ``commit``, ``distance`` commits after ``release``'s (``None``: not
    known, as in a shallow clone without the release's commit, counted as 0): the release
    itself at distance 0 and clean, else the next patch's ``.devN+g<commit>[.dirty]``."""
    if distance == 0 and not dirty:
        return release
    parts = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", release)
    if parts is None:
        raise ValueError(f"a release is MAJOR.MINOR.PATCH, not {release!r}")
    major, minor, patch = (int(p) for p in parts.groups())
    local = f"g{commit[:7]}" + (".dirty" if dirty else "")
    return f"{major}.{minor}.{patch + 1}.dev{distance or 0}+{local}"


def release_of(version: str) -> str | None:
    """The release a version of :func:`compose`'s is or follows (``0.2.1.dev376+g560ed9d``:
    ``0.2.0``); ``None`` for any other version (``0+unknown``)."""
    found = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(\.dev\d+\+g[0-9a-f]+(\.dirty)?)?", version)
    if found is None:
        return None
    major, minor, patch = (int(p) for p in found.groups()[:3])
    if found.group(4) is None:
        return version
    return f"{major}.{minor}.{patch - 1}" if patch > 0 else None


def from_git(root: Path) -> str | None:
    """The version of the git checkout ``root`` (its own ``.git``, never one above it, such as a
    checkout holding the virtual environment this is installed in); ``None`` where there is
    none or git cannot say."""
    if not (root / ".git").exists() or not (root / "pyproject.toml").is_file():
        return None

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "--no-optional-locks", "-C", str(root), *args],
                                  capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):  # no git on this machine
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    head = git("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if head is None or not re.fullmatch(r"[0-9a-f]{40}", head):
        return None
    released = RELEASE_COMMIT or git("log", "-1", "--format=%H", "-G", r"^RELEASE = ", "--",
                                     "reference/about.py")
    counted = git("rev-list", "--count", f"{released}..HEAD") if released else None
    distance = int(counted) if counted is not None and counted.isdigit() else None
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return compose(RELEASE, distance, head, dirty=dirty)


def _from_pkg_info(path: Path) -> str | None:
    """The version an sdist's ``PKG-INFO`` names, if it is numaspec's."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    head = text.split("\n\n", 1)[0]
    name = re.search(r"^Name: *(\S+)", head, re.MULTILINE)
    found = re.search(r"^Version: *(\S+)", head, re.MULTILINE)
    return found.group(1) if found and name and name.group(1) == "numaspec" else None


def _installed() -> str | None:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("numaspec")
    except PackageNotFoundError:
        return None
