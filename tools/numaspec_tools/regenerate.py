"""Regenerate every generated file of the repository, or say which are stale.

    .venv/bin/numaspec-dev regenerate            # the quick ones: seconds, no Go
    .venv/bin/numaspec-dev regenerate --go       # also the fixtures kubelet's own code writes
    .venv/bin/numaspec-dev regenerate --all      # also the comparison report (minutes)
    .venv/bin/numaspec-dev regenerate --check    # write nothing; exit 1 naming what is stale
    .venv/bin/numaspec-dev regenerate --only coverage

Each test that fails on a stale generated file names this command, so a stale file costs a
one-line fix before committing, not a red CI run (CONTRIBUTING.md, "Generated files").  What
each step writes and from what:

* ``checked-by``: each rule's ``Checked by`` line in ``spec/*/*.md``, from what cites the rule
  (the properties, the vectors, the tests; :mod:`numaspec.conformance.speccheck`);
* ``coverage``: ``adapters/kubelet/COVERAGE.md``, which pinned kubelet releases run each rule
  (``tools/numaspec_tools/coverage_table.py``);
* ``operator-state``: ``tests/fixtures/operator/*/state/``, the state files of each operator
  scenario as numaspec writes them (``tools/numaspec_tools/operator_state.py``, OPS-9);
* ``upstream-links`` (Go): ``docs/upstream-links.json``, the pinned release and line each
  rule's Upstream citations link at on the site, read from kubernetes' sources in the Go
  module cache (``tools/numaspec_tools/upstream_links.py``; a release missing there is
  downloaded);
* ``quantity-table`` (Go): ``tests/fixtures/quantity/parse-v0.30.14.json``, apimachinery's own
  ``ParseQuantity`` on the strings of ``tools/numaspec_tools/quantity_strings.py``
  (``adapters/kubelet/quantity/gen.sh``);
* ``checkpoints`` (Go): ``tests/fixtures/state/v1_*/``, kubelet's state files written by its own
  code at each pinned release of ``adapters/kubelet/checkpoints/``;
* ``dracpu`` (Go): the end-to-end table of ``adapters/peers/dra-driver-cpu/FINDINGS.md`` and
  its vectors ``spec/vectors/dra/dra-cpu-driver*.json`` (in pieces when large:
  ``numaspec_tools.vector_pieces``): dra-driver-cpu's own publishing and prepare code beside
  numaspec's DRA allocator and CPU Manager (``tools/numaspec_tools/dracpu.py``; a vector whose
  case is new or changed gets the reference's answer, to review);
* ``comparison`` (Go, minutes): ``adapters/comparison/``, the suite run against kubelet 1.23,
  1.30 and 1.37, the peers and the DRA allocator at 1.37, side by side
  (``adapters/comparison/README.md``).

Left out on purpose: the vectors' ``derived: reference`` answers (``numaspec vectors write``):
a disagreement there is the reference changing its answer, which is to be triaged, not
rewritten; and ``spec/data/feature-gates.json`` (``adapters/kubelet/gates/gen.sh`` builds a
program per kubelet release, about an hour).  The docs site is built, never stored.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from numaspec_tools import REPO
from numaspec_tools.builds import NO_DWARF

if TYPE_CHECKING:
    from numaspec_tools.builds.kubelet import Release

#: The command every staleness test names in its failure.
COMMAND = "numaspec-dev regenerate"


@dataclass(frozen=True)
class Step:
    name: str
    what: str
    outputs: tuple[str, ...]  # globs under the repository, what the step may write
    go: bool
    comparison: bool
    run: Callable[[], None]


def _python(*args: str) -> None:
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise subprocess.CalledProcessError(done.returncode, done.args)


def _parts() -> None:
    from numaspec_tools import parts_tables

    parts_tables.write()


def _checked_by() -> None:
    _python("-m", "numaspec.conformance.speccheck", "--fix")


def _coverage() -> None:
    _python("-m", "numaspec_tools.coverage_table")


def _operator_state() -> None:
    _python("-m", "numaspec_tools.operator_state")


def _transcripts() -> None:
    _python("-m", "numaspec_tools.transcripts")


def _kube_fields() -> None:
    from numaspec_tools.kube_fields import write

    write()


def _upstream_links() -> None:
    _python("-m", "numaspec_tools.upstream_links")


def _quantity_table() -> None:
    subprocess.run(["bash", str(REPO / "adapters" / "kubelet" / "quantity" / "gen.sh")],
                   cwd=REPO, env={**os.environ, "PYTHON": sys.executable}, check=True)


def _release_of(directory: str) -> Release:
    """The releases.json row of a release directory (``v1_38``)."""
    from numaspec_tools.builds.kubelet import TABLE_RELEASES

    return next(r for r in TABLE_RELEASES.values() if r.dir == directory)


def _checkpoints() -> None:
    kubelet = REPO / "adapters" / "kubelet"
    for module in sorted(p.parent for p in (kubelet / "checkpoints").glob("v1_*/go.mod")):
        out = REPO / "tests" / "fixtures" / "state" / module.name
        tags = subprocess.run(["bash", str(kubelet / "build.sh"), "-tags", module.name],
                              capture_output=True, text=True, check=True).stdout.strip()
        # written afresh (a writer that finds a state file restores from it), then copied over
        # the fixtures, whose hand-kept files (pods.yaml, machine.json, ...) stay
        with tempfile.TemporaryDirectory() as fresh:
            done = subprocess.run(["go", "run", NO_DWARF, "-tags", tags, ".", fresh], cwd=module,
                                  capture_output=True, text=True,
                                  env={**_release_of(module.name).go_environment(),
                                       "GOFLAGS": "-mod=mod -p=1"})
            if done.returncode != 0:
                sys.stderr.write(done.stderr[-3000:])
                raise subprocess.CalledProcessError(done.returncode, done.args)
            for path in Path(fresh).rglob("*"):
                if path.is_file():
                    target = out / path.relative_to(fresh)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target)


def _dracpu() -> None:
    peers = REPO / "adapters" / "peers"
    subprocess.run(["bash", str(peers / "build.sh"), "dra-driver-cpu"], check=True)
    from numaspec_tools import dracpu
    from numaspec_tools.builds.peers import VERSIONS

    dracpu.regenerate(peers / "bin" / f"dra-driver-cpu-adapter-{VERSIONS['dra-driver-cpu']}")


def _comparison() -> None:
    kubelet, peers = REPO / "adapters" / "kubelet", REPO / "adapters" / "peers"
    dra = REPO / "adapters" / "dra"
    subprocess.run(["bash", str(kubelet / "build.sh"), "1.23", "1.30", "1.37"], check=True)
    subprocess.run(["bash", str(peers / "build.sh")], check=True)
    subprocess.run(["bash", str(dra / "build.sh"), "1.37"], check=True)
    runs = REPO / "adapters" / "comparison" / "runs"
    columns = [
        ("kubelet-1.23", "kubelet-1-23", kubelet, "kubelet-adapter-v1.23.17", "kubelet-v1.23.17"),
        ("kubelet-1.30", "kubelet-1-30", kubelet, "kubelet-adapter-v1.30.14", "kubelet-v1.30.14"),
        ("kubelet-1.37", "kubelet-1-37", kubelet, "kubelet-adapter-v1.37.2", "kubelet-v1.37.2"),
        ("koordinator", "koordinator", peers, "koordinator-adapter-v1.7.0", "koordinator-v1.7.0"),
        ("katalyst", "katalyst", peers, "katalyst-adapter-v0.5.0", "katalyst-v0.5.0"),
        ("volcano", "volcano", peers, "volcano-adapter-v1.10.0", "volcano-v1.10.0"),
        *((f"scheduler-plugins-0.{m}", f"scheduler-plugins-0-{m}", peers,
           f"scheduler-plugins-adapter-v0.{m}.{p}", f"scheduler-plugins-v0.{m}.{p}")
          for m, p in (("31", "8"), ("32", "7"), ("33", "5"))),
        ("dra-driver-cpu", "dra-driver-cpu", peers, "dra-driver-cpu-adapter-v0.2.0",
         "dra-driver-cpu-v0.2.0"),
        # the scheduler's DRA allocator at 1.37, the variant its case's features choose
        ("dra-allocator-1.37", "dra-allocator-1-37", dra, "dra-allocator-v0.37.2",
         "dra-allocator-v0.37.2")]
    numaspec = [sys.executable, "-m", "numaspec"]
    for _, folder, root, binary, manifest in columns:
        out = runs / folder
        # paths relative to the checkout: the report says how to run it anywhere
        where = root.relative_to(REPO)
        done = subprocess.run(
            [*numaspec, "conformance", "--impl", f"exec:{where / 'bin' / binary}",
             "--expectations", str(where / "expectations" / f"{manifest}.json"),
             "--out", str(out.relative_to(REPO))], cwd=REPO, env={**os.environ, "CI": "true"})
        if done.returncode not in (0, 1):  # 1: a case failed, which the report shows
            raise subprocess.CalledProcessError(done.returncode, done.args)
        (out / "junit.xml").unlink(missing_ok=True)
    subprocess.run([*numaspec, "matrix", "--out", "adapters/comparison", "--from",
                    *(f"{label}={(runs / folder).relative_to(REPO)}"
                      for label, folder, *_ in columns)],
                   cwd=REPO, check=True)


STEPS = (
    Step("parts", "the tables generated from spec/parts.toml (spec/README.md, README.md, "
         "CONTRIBUTING.md)", ("spec/README.md", "README.md", "CONTRIBUTING.md"), False, False,
         _parts),
    Step("checked-by", "each rule's Checked by line (spec/*/*.md)", ("spec/*/*.md",), False,
         False, _checked_by),
    Step("coverage", "which kubelet releases run each rule (adapters/kubelet/COVERAGE.md)",
         ("adapters/kubelet/COVERAGE.md",), False, False, _coverage),
    Step("operator-state", "the operator scenarios' state files (tests/fixtures/operator)",
         ("tests/fixtures/operator/*/state/**/*",), False, False, _operator_state),
    Step("transcripts", "the guides' transcripts, run (docs/guides/*.md)",
         ("docs/guides/*.md",), False, False, _transcripts),
    Step("kube-fields", "the fields of the Kubernetes objects operators import, per pinned "
         "release (spec/data/kube-fields.json)", ("spec/data/kube-fields.json",), True, False,
         _kube_fields),
    Step("upstream-links", "where the site links each rule's Upstream citations "
         "(docs/upstream-links.json)", ("docs/upstream-links.json",), True, False,
         _upstream_links),
    Step("quantity-table", "apimachinery's ParseQuantity table (tests/fixtures/quantity)",
         ("tests/fixtures/quantity/*.json",), True, False, _quantity_table),
    Step("checkpoints", "kubelet's own state files (tests/fixtures/state)",
         ("tests/fixtures/state/**/*",), True, False, _checkpoints),
    Step("dracpu", "dra-driver-cpu end to end (its FINDINGS.md table, "
         "spec/vectors/dra/dra-cpu-driver*.json)",
         ("adapters/peers/dra-driver-cpu/FINDINGS.md", "spec/vectors/dra/dra-cpu-driver*.json"),
         True, False, _dracpu),
    Step("comparison", "the comparison of kubelet and its peers (adapters/comparison)",
         ("adapters/comparison/*.md", "adapters/comparison/*.json", "adapters/comparison/*.html",
          "adapters/comparison/runs/**/*"), True, True, _comparison),
)


def _files(step: Step) -> Iterator[Path]:
    for pattern in step.outputs:
        yield from (p for p in REPO.glob(pattern) if p.is_file())


def _snapshot(step: Step) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in _files(step)}


def _changes(before: dict[Path, bytes], step: Step) -> list[str]:
    after = _snapshot(step)
    changed = [p for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)]
    return [str(p.relative_to(REPO)) for p in changed]


def _restore(before: dict[Path, bytes], step: Step) -> None:
    for path in _files(step):
        if path not in before:
            path.unlink()
    for path, data in before.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def chosen(args: argparse.Namespace) -> list[Step]:
    if args.only:
        known = {s.name: s for s in STEPS}
        unknown = [n for n in args.only if n not in known]
        if unknown:
            raise SystemExit(f"regenerate.py: no step {', '.join(unknown)} (known: "
                             f"{', '.join(known)})")
        return [known[n] for n in args.only]
    return [s for s in STEPS if (not s.go or args.go or args.all)
            and (not s.comparison or args.all)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument("--go", action="store_true",
                        help="also the fixtures kubelet's own code writes (builds Go modules)")
    parser.add_argument("--all", action="store_true",
                        help="also the comparison report (builds the adapters; minutes)")
    parser.add_argument("--only", nargs="+", metavar="STEP",
                        help=f"only these steps ({', '.join(s.name for s in STEPS)})")
    parser.add_argument("--check", action="store_true",
                        help="change nothing: report the stale files, exit 1 if any")
    args = parser.parse_args(argv)
    steps = chosen(args)
    if any(s.go for s in steps) and shutil.which("go") is None:
        raise SystemExit(f"{COMMAND}: Go is not installed, and "
                         f"{', '.join(s.name for s in steps if s.go)} need it")
    stale: list[str] = []
    for step in steps:
        print(f"== {step.name}: {step.what}", flush=True)
        before = _snapshot(step)
        try:
            step.run()
        finally:
            changed = _changes(before, step)
            if args.check:
                _restore(before, step)
        stale += changed
        for path in changed:
            print(f"   {'stale' if args.check else 'rewrote'}: {path}")
        if not changed:
            print("   current")
    if args.check and stale:
        print(f"{len(stale)} generated file(s) stale: run {COMMAND}"
              + (" --go" if any(s.go for s in steps) else ""))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
