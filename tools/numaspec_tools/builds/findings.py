"""A finding's Go test run in a copy of the upstream module at its pinned version, as is or with a
change applied (``numaspec-dev findings check``; tests/upstream/findings).

The module is the one the Go module proxy serves at the finding's version (``go mod download``,
checksum verified by the go command); the copy links the cache's files and copies those a change
rewrites, so nothing is written into the module cache.  A finding with a ``host`` (a folder of
this repository whose go.mod pins the module's dependencies, as kubelet's adapters do for
k8s.io/kubernetes) is tested from that folder with a go.mod that replaces the module by the
copy; the others from the copy's own root.  The copy is removed afterwards.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import attrs

from numaspec.conformance.cases.upstream_findings import Change, Finding
from numaspec_tools import REPO
from numaspec_tools.builds.modules import ModuleUnavailable, download, go_environment

ROOT = REPO / "adapters" / "findings"
#: What a test may take, compile included (a cold module cache downloads the module first).
TIMEOUT = 1800


@attrs.frozen
class Outcome:
    finding: str
    change: str
    #: "failed" (the test ran and failed), "passed", or "broken" (it did not run: a build
    #: error, a patch that does not apply, no such test)
    result: str
    output: str

    def line(self) -> str:
        """The outcome in one line, with the failure's first line when the test failed."""
        first = next((ln.strip() for ln in self.output.splitlines()
                      if ln.strip().startswith(("zz_", "numaspec", "--- FAIL"))
                      or "_test.go:" in ln), "")
        return f"{self.finding} with {self.change}: {self.result}" + (
            f" ({first})" if self.result != "passed" and first else "")


class CheckError(Exception):
    """The check could not be set up (no Go, the module not served, a patch that does not
    apply); the message names what."""


class DiskFull(CheckError):
    """The go command ran out of disk: the run says where and how much was free, rather than
    reporting a test that did not build."""


class Unavailable(CheckError):
    """What the check needs cannot be had here (no Go, the module not served): a skip, or a
    failure when the run requires Go."""


def _go_env(found: Finding | None = None) -> dict[str, str]:
    return go_environment(found.toolchain if found is not None else None)


def _download(found: Finding, where: Path) -> Path:
    try:
        return download(found.module, found.version, toolchain=found.toolchain or None,
                        cwd=where, timeout=TIMEOUT)
    except ModuleUnavailable as exc:
        raise Unavailable(f"{found.id}: {exc}") from None


def _patched_files(patch: str) -> set[str]:
    return set(re.findall(r"^(?:\+\+\+|---) [ab]/(\S+)", patch, flags=re.M))


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system than the module cache's
        shutil.copy2(source, target)


def _copy(source: Path, target: Path, rewritten: set[str]) -> None:
    shutil.copytree(source, target, copy_function=_link_or_copy, symlinks=True)
    # the module cache's folders are read-only, and copytree copies their modes
    for folder, _, _ in os.walk(target):
        os.chmod(folder, 0o755)
    for name in rewritten:
        path = target / name
        if path.is_file():
            text = path.read_bytes()
            path.unlink()
            path.write_bytes(text)
            path.chmod(0o644)


def check(found: Finding, change: Change | None = None) -> Outcome:
    """Run the finding's test in a copy of its module, with ``change`` applied when given."""
    if shutil.which("go") is None:
        raise Unavailable("Go is not installed")
    name = change.name if change else "the pinned release"
    (ROOT / "build").mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{found.id}-", dir=ROOT / "build"))
    try:
        host = REPO / found.host if found.host else None
        source = _download(found, host or work)
        module = work / "module"
        patch = found.file(change.patch) if change else ""
        _copy(source, module, _patched_files(patch))
        package = module / found.package
        if not package.is_dir():
            raise CheckError(f"{found.id}: {found.module}@{found.version} has no package "
                             f"{found.package}")
        stand_in = re.compile(r"^\s*k8s\.io/ktesting => \.", flags=re.M)
        if host is not None and stand_in.search((host / "go.mod").read_text(encoding="utf-8")):
            # the release's go.mod replaces k8s.io/ktesting by a stand-in (1.38: the module
            # proxy does not serve it; adapters/kubelet/build.sh does the same): the package's
            # own tests import it and cannot compile, so the copy keeps only the finding's
            for path in package.glob("*_test.go"):
                path.unlink()
        (package / found.test_file).write_text(found.file(found.test_file), encoding="utf-8")
        if change:
            (work / "change.patch").write_text(patch, encoding="utf-8")
            applied = subprocess.run(["git", "apply", "-p1", str(work / "change.patch")],
                                     cwd=module, capture_output=True, text=True,
                                     env={**os.environ, "GIT_CEILING_DIRECTORIES": str(work)})
            if applied.returncode != 0:
                first = (applied.stderr.strip().splitlines() or ["git apply failed"])[0]
                raise CheckError(f"{found.id}: {change.patch} does not apply to "
                                 f"{found.module}@{found.version}: {first}")
        # the flags the adapters build with, so that the dependencies come from the build cache
        run = ["go", "test", "-count=1", "-v", "-trimpath", "-buildvcs=false",
               "-gcflags=all=-dwarf=false", "-run", f"^{found.test}$"]
        if host is not None:
            modfile = work / "go.mod"
            modfile.write_text((host / "go.mod").read_text(encoding="utf-8")
                               + f"\nreplace {found.module} => {module}\n", encoding="utf-8")
            shutil.copy(host / "go.sum", work / "go.sum")
            done = subprocess.run([*run, f"-modfile={modfile}", f"{found.module}/{found.package}"],
                                  cwd=host, capture_output=True, text=True,
                                  env=_go_env(found), timeout=TIMEOUT)
        else:
            done = subprocess.run([*run, f"./{found.package}/"], cwd=module, capture_output=True,
                                  text=True, env=_go_env(found), timeout=TIMEOUT)
        output = done.stdout + done.stderr
        if "no space left on device" in output:
            raise DiskFull(f"{found.id} with {name}: the go command ran out of disk "
                           f"({_free()}); free some (a Go build cache that has grown: "
                           "go clean -cache) and run again")
        if f"--- FAIL: {found.test}" in output and done.returncode != 0:
            result = "failed"
        elif done.returncode == 0 and f"--- PASS: {found.test}" in output:
            result = "passed"
        else:
            result = "broken"
        return Outcome(finding=found.id, change=name, result=result, output=output)
    finally:
        shutil.rmtree(work, onerror=_writable_then_retry)


def _free() -> str:
    """Free space where the go command writes: its temporary folder and its build cache."""
    places = {"TMPDIR": Path(tempfile.gettempdir())}
    try:
        cache = subprocess.run(["go", "env", "GOCACHE"], capture_output=True, text=True,
                               env=_go_env(), timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        cache = ""
    if cache:
        places["GOCACHE"] = Path(cache)
    parts = []
    for what, where in places.items():
        probe = where if where.exists() else where.parent
        parts.append(f"{what} {where}: {shutil.disk_usage(probe).free / 2**30:.1f} GiB free")
    return "; ".join(parts)


def _writable_then_retry(remove: Callable[[str], object], path: str, _: object) -> None:
    """rmtree's handler: a copy left half made can hold read-only folders of the module
    cache's; make the parent writable and remove again."""
    try:
        os.chmod(os.path.dirname(path), 0o755)
        remove(path)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    """``numaspec-dev findings check [FINDING...] [--change NAME]``: each finding's test at its
    pinned release, then with each of its changes; prints one line per run."""
    import argparse

    from numaspec.conformance.cases.upstream_findings import finding, findings

    parser = argparse.ArgumentParser(prog="numaspec-dev findings check",
                                     description=main.__doc__)
    parser.add_argument("ids", nargs="*", metavar="FINDING", help="default: every finding")
    parser.add_argument("--change", default=None, metavar="NAME",
                        help="only this change (fix, or another change's name); 'none': only "
                             "the pinned release")
    parser.add_argument("-v", "--verbose", action="store_true", help="print go test's output")
    args = parser.parse_args(argv)
    chosen = [finding(i) for i in args.ids] if args.ids else list(findings())
    status = 0
    for found in chosen:
        runs: list[Change | None] = [None] if args.change in (None, "none") else []
        runs += [c for c in found.changes if args.change in (None, c.name)]
        for change in runs:
            try:
                outcome = check(found, change)
            except CheckError as exc:
                print(exc)
                status = 1
                continue
            want = "failed" if change is None or not change.test_passes else "passed"
            mark = "as expected" if outcome.result == want else f"UNEXPECTED (expected {want})"
            print(f"{outcome.line()}: {mark}", flush=True)
            if args.verbose or outcome.result != want:
                print(outcome.output[-4000:])
            status |= outcome.result != want
    return status
