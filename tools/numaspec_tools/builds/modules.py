"""One Go module at one version, as the module cache holds it (``go mod download -json``:
fetched from the module proxy, checksum verified, when the cache lacks it).  The findings'
runner, the citation table and the field table read upstream sources this way."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from numaspec_tools import REPO

__all__ = ["ModuleUnavailable", "download", "go_environment"]


class ModuleUnavailable(RuntimeError):
    """The module cannot be had at that version: the message says why, in the go command's
    words."""


def go_environment(toolchain: str | None = None) -> dict[str, str]:
    """This process's environment for a go command that reads modules: ``-mod=mod``, and the
    Go toolchain ``toolchain`` names (one newer than the machine's, for a module that needs
    it); without one, the environment's ``GOTOOLCHAIN``, else the machine's own Go."""
    env = {**os.environ, "GOFLAGS": "-mod=mod"}
    if toolchain:
        env["GOTOOLCHAIN"] = toolchain
    else:
        env.setdefault("GOTOOLCHAIN", "local")
    return env


def download(module: str, version: str, *, toolchain: str | None = None, cwd: Path = REPO,
             timeout: float = 1800) -> Path:
    """The folder of ``module`` at ``version`` in the module cache, downloaded when it is not
    there; :class:`ModuleUnavailable` saying why when it cannot be had."""
    done = subprocess.run(["go", "mod", "download", "-json", f"{module}@{version}"],
                          capture_output=True, text=True, env=go_environment(toolchain),
                          cwd=cwd, timeout=timeout, check=False)
    try:
        info = json.loads(done.stdout or "{}")
    except json.JSONDecodeError:
        info = {}
    folder = Path(info["Dir"]) if info.get("Dir") else None
    if done.returncode != 0 or folder is None or not folder.is_dir():
        why = info.get("Error") or (done.stderr.strip().splitlines() or ["no Dir"])[-1]
        raise ModuleUnavailable(f"{module}@{version} could not be had from the module cache "
                                f"or the module proxy: {why}")
    return folder
