"""The guides' transcripts, run: every ``console`` block in a section of ``docs/guides/*.md``
whose heading starts with "A transcript" is a shell session run from the repository's root
(``numaspec`` the checkout's, ``COLUMNS=100``), and its output is the code's.

A ``$ `` line is a command (its variables last for the rest of the section: the section's blocks
are one session); the lines up to the next command are its output, stdout and stderr together,
trailing blanks stripped.  An output
ending in ``...`` keeps only its first lines.

``numaspec-dev regenerate --only transcripts`` rewrites the outputs;
``tests/meta/test_regenerate.py`` fails when one is stale.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import attrs

from numaspec_tools import REPO

__all__ = ["Command", "blocks", "rewrite", "run_block"]

GUIDES = REPO / "docs" / "guides"
_SECTION = re.compile(r"^## A transcript", flags=re.M)
_BLOCK = re.compile(r"^```console\n(.*?)^```", flags=re.M | re.S)
ELIDED = "..."


@attrs.frozen
class Command:
    line: str
    output: tuple[str, ...]

    @property
    def elided(self) -> bool:
        return bool(self.output) and self.output[-1] == ELIDED


def _sections(text: str) -> list[tuple[int, int]]:
    """The spans of the transcript sections (to the next ``## `` heading)."""
    spans = []
    for found in _SECTION.finditer(text):
        end = text.find("\n## ", found.end())
        spans.append((found.start(), len(text) if end < 0 else end))
    return spans


def blocks(text: str) -> list[list[tuple[int, int, list[Command]]]]:
    """Per transcript section, each block: its span in ``text`` (the block's body) and its
    commands."""
    out = []
    for start, end in _sections(text):
        section = []
        for found in _BLOCK.finditer(text, start, end):
            commands: list[Command] = []
            for line in found.group(1).splitlines():
                if line.startswith("$ "):
                    commands.append(Command(line[2:], ()))
                elif commands:
                    last = commands[-1]
                    commands[-1] = attrs.evolve(last, output=(*last.output, line))
            section.append((found.start(1), found.end(1), commands))
        out.append(section)
    return out


def run_block(commands: list[Command]) -> list[tuple[str, ...]]:
    """Each command's output, the commands run as one shell session from the repository's
    root."""
    marker = "@@numaspec-transcript@@"
    script = "\n".join(f"echo {marker}\n{c.line} 2>&1" for c in commands)
    env = {**os.environ, "COLUMNS": "100",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", script], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    parts = done.stdout.split(marker + "\n")[1:]
    return [tuple(line.rstrip() for line in part.rstrip("\n").splitlines()) if part.strip()
            else () for part in parts]


def _shown(command: Command, actual: tuple[str, ...]) -> tuple[str, ...]:
    if command.elided:
        return (*actual[:len(command.output) - 1], ELIDED)
    return actual


def rewrite(path: Path) -> bool:
    """Rewrite the outputs of ``path``'s transcripts; whether anything changed."""
    text = path.read_text(encoding="utf-8")
    pieces = []
    at = 0
    for section in blocks(text):
        actual = iter(run_block([c for _, _, commands in section for c in commands]))
        for start, end, commands in section:
            body = []
            for command in commands:
                body += [f"$ {command.line}", *_shown(command, next(actual, ()))]
            pieces += [text[at:start], "\n".join(body) + "\n"]
            at = end
    new = "".join(pieces) + text[at:]
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main() -> int:
    for path in sorted(GUIDES.glob("*.md")):
        rewrite(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
