"""Vector files in pieces of a reviewable size (issue 54, item 4).

The vectors live in ``spec/vectors/<part>/`` (the folder of the spec's part whose chapters they
mostly illustrate); a file larger than :data:`LIMIT` is kept as numbered pieces beside each
other (``node/resize-1.json``, ``node/resize-2.json``, ...), each vector whole and in its order,
so that the suite (which reads the files by name, :func:`numaspec.conformance.cases.vectors.
vector_paths`) runs the same cases in the same order.  A vector file's name ends in ``-<n>``
only when it is such a piece.

    .venv/bin/python -m numaspec_tools.vector_pieces FILE...   # split each file over the limit

Generators that write a whole file (:mod:`numaspec_tools.dracpu`) write it through
:func:`write`; tests read a file and its pieces alike through :func:`read`."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from numaspec_tools import REPO

#: The largest vector file kept whole (bytes): larger ones are split into pieces.
LIMIT = 150 * 1024
#: The spec's vectors, a folder per part.
VECTORS = REPO / "spec" / "vectors"

_PIECE = re.compile(r"^(?P<stem>.+?)(?:-(?P<number>\d+))?\.json$")


def stem(name: str) -> str:
    """The name of the file a piece belongs to, without folder, number or ``.json``:
    ``node/resize-2.json`` and ``resize.json`` are both ``resize``."""
    found = _PIECE.match(Path(name).name)
    if found is None:
        raise ValueError(f"{name}: not a vector file's name")
    return found.group("stem")


def pieces(name: str, root: Path = VECTORS) -> list[Path]:
    """The file ``<name>.json`` or its pieces ``<name>-<n>.json``, in whichever folder of
    ``root`` they are, in their order."""
    found = []
    for path in root.rglob("*.json"):
        match = _PIECE.match(path.name)
        if match is not None and match.group("stem") == name:
            found.append((int(match.group("number") or 0), path))
    if not found:
        raise FileNotFoundError(f"no vector file {name}.json (or its pieces) under {root}")
    if len({path.parent for _, path in found}) > 1:
        raise ValueError(f"the pieces of {name}.json are in several folders: "
                         f"{sorted(str(p) for _, p in found)}")
    return [path for _, path in sorted(found)]


def read(name: str, root: Path = VECTORS) -> list[dict[str, Any]]:
    """Every vector of the file ``name`` (``resize``) or of its pieces, in order, as stored."""
    return [vector for path in pieces(name, root)
            for vector in json.loads(path.read_text(encoding="utf-8"))["vectors"]]


def dump(vectors: Sequence[dict[str, Any]]) -> str:
    """A vector file's text, as the vectors' generator writes it."""
    return json.dumps({"vectors": list(vectors)}, indent=1, ensure_ascii=False) + "\n"


def split(vectors: Sequence[dict[str, Any]], limit: int = LIMIT) -> list[list[dict[str, Any]]]:
    """The vectors cut, in order, into the fewest pieces of at most ``limit`` bytes each, of
    sizes as even as whole vectors allow (one piece when they fit in one)."""
    sizes = [len(dump([vector]).encode("utf-8")) for vector in vectors]
    total = sum(sizes)
    for count in range(1, len(vectors) + 1):
        cut: list[list[dict[str, Any]]] = [[]]
        done = 0
        for vector, size in zip(vectors, sizes, strict=True):
            # a new piece once this one holds its even share of the whole
            if cut[-1] and done >= total * len(cut) / count and len(cut) < count:
                cut.append([])
            cut[-1].append(vector)
            done += size
        if all(len(dump(piece).encode("utf-8")) <= limit for piece in cut):
            return cut
    raise ValueError(f"a single vector is larger than {limit} bytes")


def write(folder: Path, name: str, vectors: Sequence[dict[str, Any]],
          limit: int = LIMIT) -> list[Path]:
    """Write ``vectors`` as ``folder/<name>.json``, or as its numbered pieces when larger than
    ``limit``; the file or pieces written before under that name go.  The paths written."""
    try:
        old = pieces(name, folder)
    except FileNotFoundError:
        old = []
    cut = split(vectors, limit)
    paths = [folder / f"{name}.json"] if len(cut) == 1 else [
        folder / f"{name}-{number}.json" for number in range(1, len(cut) + 1)]
    for path in old:
        if path not in paths:
            path.unlink()
    for path, piece in zip(paths, cut, strict=True):
        path.write_text(dump(piece), encoding="utf-8")
    return paths


def oversized(root: Path = VECTORS, limit: int = LIMIT) -> list[str]:
    """The vector files larger than ``limit``, as paths under ``root``."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.json")
                  if p.stat().st_size > limit)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numaspec_tools.vector_pieces",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="vector files to split if too large")
    args = parser.parse_args(argv)
    for path in args.files:
        if path.stat().st_size <= LIMIT:
            print(f"{path}: {path.stat().st_size} bytes, kept whole")
            continue
        vectors = json.loads(path.read_text(encoding="utf-8"))["vectors"]
        written = write(path.parent, stem(path.name), vectors)
        print(f"{path}: {len(vectors)} vectors in {', '.join(p.name for p in written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
