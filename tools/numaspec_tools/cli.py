"""``numaspec-dev``: a checkout's maintenance commands.

    numaspec-dev regenerate [--go | --all | --only STEP... | --check]
    numaspec-dev build [kubelet | peers | dra]...   # what the test run would build (warms caches)
    numaspec-dev mutation init | run | report        # the suite's mutation campaign
    numaspec-dev reach [--profile P] [--compare A B] # branch reach of the suite's cases
    numaspec-dev findings check [FINDING...]         # each finding's Go test, with its fixes

Each verb's ``--help`` says the rest; CONTRIBUTING.md says when to run which."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

VERBS = ("regenerate", "build", "mutation", "reach", "findings")


def _build(argv: Sequence[str]) -> int:
    """Build the Go adapters the test run would build under the current selection
    (``NUMASPEC_KUBELET_RELEASES``, ``NUMASPEC_PEERS``, ``NUMASPEC_DRA_RELEASES``)."""
    from numaspec_tools.builds import dra, kubelet, peers

    families: dict[str, tuple[Callable[[], str | None], str]] = {
        "kubelet": (kubelet.build, kubelet.describe_selection()),
        "peers": (peers.build, "peers: " + ", ".join(peers.SELECTED)),
        "dra": (dra.build, dra.describe_selection()),
    }
    unknown = [a for a in argv if a not in families]
    if unknown or any(a.startswith("-") for a in argv):
        print(f"numaspec-dev build: unknown adapters {' '.join(unknown)} "
              f"(choose from {', '.join(families)})", file=sys.stderr)
        return 2
    failed = 0
    for name in argv or families:
        build, selection = families[name]
        print(f"== {name}: {selection}", flush=True)
        problem = build()
        if problem is not None:
            print(problem, file=sys.stderr)
            failed = 1
    return failed


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    verb, rest = args[0], args[1:]
    if verb == "regenerate":
        from numaspec_tools import regenerate
        return regenerate.main(rest)
    if verb == "mutation":
        from numaspec_tools import mutation
        return mutation.main(rest)
    if verb == "reach":
        from numaspec_tools import reach
        return reach.main(rest)
    if verb == "build":
        return _build(rest)
    if verb == "findings":
        if rest[:1] != ["check"]:
            print("numaspec-dev findings: the one action is check", file=sys.stderr)
            return 2
        from numaspec_tools.builds import findings
        return findings.main(rest[1:])
    print(f"numaspec-dev: unknown command {verb!r} (choose from {', '.join(VERBS)})",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
