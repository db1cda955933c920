"""The README's two set-up commands are the ones CI runs, as written (issue 24, item 1)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

ROOT = Path(__file__).resolve().parent.parent.parent


def _sh_blocks_after(text: str, heading: str) -> str:
    """The first line of the first ```sh block after ``heading`` in the README."""
    rest = text[text.index(heading) :]
    match = re.search(r"```sh\n(.*?)\n", rest)
    assert match is not None, heading
    return match.group(1)


def test_ci_runs_the_readme_commands_as_written() -> None:
    readme = (ROOT / "README.md").read_text()
    demo = _sh_blocks_after(readme, "Try it on a fresh machine")
    tests = _sh_blocks_after(readme, "Run the tests")
    # A stock Debian 12 / Ubuntu >= 23.04 python3 refuses pip outside a venv (PEP 668).
    for command in (demo, tests):
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && ")
    assert demo.endswith("python3 -m pip install . && dxserial demo")
    assert tests.endswith("python3 -m pip install -e '.[test]' && python3 -m pytest")
    assert "python3-venv" in readme

    ci = (ROOT / ".ci/run").read_text()
    extract = next(line for line in ci.splitlines() if line.startswith("mapfile -t readme_commands"))
    assert 'eval "$command" || ' in ci  # a failing step fails CI despite the && list
    found = subprocess.run(
        ["bash", "-c", extract + '\nprintf "%s\\n" "${readme_commands[@]}"'],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert found == [demo, tests]
