"""``numaspec-dev``, the checkout's toolbox (tools/, CONTRIBUTING.md): each verb is reachable
and a wrong command line is one line naming what, with exit status 2."""

from __future__ import annotations

import pytest

from numaspec_tools.cli import VERBS, main


def test_help_names_every_verb(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(f"numaspec-dev {verb}" in out for verb in VERBS)


@pytest.mark.parametrize(("argv", "complaint"), [
    ([], "numaspec-dev regenerate"),
    (["regen"], "unknown command 'regen' "
                "(choose from regenerate, build, mutation, reach, findings)"),
    (["build", "kublet"], "unknown adapters kublet (choose from kubelet, peers, dra)"),
    (["build", "--all"], "unknown adapters --all"),
])
def test_a_wrong_command_line_is_one_line(argv: list[str], complaint: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert complaint in captured.out + captured.err


def test_regenerate_check_is_reachable(capsys: pytest.CaptureFixture[str]) -> None:
    """The quick steps through the verb, changing nothing (tests/meta/test_regenerate.py
    checks what they find)."""
    assert main(["regenerate", "--check", "--only", "coverage"]) == 0
    assert "coverage" in capsys.readouterr().out
