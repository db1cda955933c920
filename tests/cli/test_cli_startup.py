"""The CLI's entry points: fast paths import no command module, every command stays reachable.

Start-up time itself is measured in bench/ (perf.py, section "idle"); these tests check the
behaviour that makes it short: ``--version`` and ``--help`` import none of the modules
behind the commands, and the command list still names every command with its help.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_in_process
from typer.testing import CliRunner

from dxserial.cli import app
from dxserial.cli.app import COMMANDS, _load

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

#: Modules only a command needs; ``--version`` and ``--help`` must not load any of them.
HEAVY = (
    "asyncio",
    "serial",
    "dxserial.bridge",
    "dxserial.protocol",
    "dxserial.draughts",
    "dxserial.transports",
    "dxserial.sim",
    "dxserial.host.udev",
    "dxserial.match.runner",
)


def loaded_modules(*argv: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """Run the console-script entry point with ``argv``; return the modules it imported."""
    code = (
        "import sys\n"
        f"sys.argv = ['dxserial', *{list(argv)!r}]\n"
        "from dxserial.cli import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    return set(result.stderr.split()), result


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] == "serial" or m.startswith(HEAVY))


@pytest.mark.parametrize("argv", [("--version",), ("--help",)])
def test_version_and_help_import_no_command_module(argv: tuple[str, ...]) -> None:
    modules, result = loaded_modules(*argv)
    assert result.returncode == 0, result.stderr
    assert not [m for m in modules if m.endswith("_cmd")]
    assert heavy_in(modules) == []


def test_a_command_imports_only_its_own_module() -> None:
    modules, result = loaded_modules("parse", "E20")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("GAMEEND")
    assert sorted(m for m in modules if m.endswith("_cmd")) == ["dxserial.cli.parse_cmd"]


def test_help_lists_every_command_with_its_one_line_help() -> None:
    result = run_in_process("--help", columns=300)
    assert result.returncode == 0, result.stderr
    for name, (_, short) in COMMANDS.items():
        assert any(
            line.strip("│ ").startswith(f"{name} ") and short in line
            for line in result.stdout.splitlines()
        ), (name, result.stdout)


def test_help_lists_the_commands_in_the_readmes_order() -> None:
    """Issue 38 point 18: bridge, serve, probe first, as the README's command map."""
    readme = (Path(__file__).resolve().parent.parent.parent / "README.md").read_text()
    mapped = re.findall(r"^\| \[`dxserial ([a-z-]+)`\]", readme, re.M)
    result = run_in_process("--help", columns=300)
    listed = [
        name for line in result.stdout.splitlines()
        for name in [line.strip("│ ").split(" ")[0]] if name in COMMANDS
    ]
    assert listed == mapped == list(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_listed_help_is_the_commands_own_first_paragraph(name: str) -> None:
    """The table cannot drift from the docstrings `dxserial CMD --help` shows."""
    command = _load(name)
    doc = command.help or ""
    if command.callback is not None and not doc:
        doc = inspect.getdoc(command.callback) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    assert COMMANDS[name][1] == first


def test_command_help_shows_its_options_and_the_version_still_prints() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["bridge", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "--referee" in result.output and "--echo-timeout" in result.output
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.output.startswith("dxserial ")


def test_a_mistyped_command_is_a_usage_error_with_a_suggestion() -> None:
    result = run_in_process("brige")
    assert result.returncode == 2
    assert "Did you mean 'bridge'?" in result.stderr


def complete(words: str, cword: int) -> tuple[list[str], set[str]]:
    """What bash completion offers for ``words``, and the modules the process imported."""
    code = (
        "import sys\n"
        "sys.argv = ['dxserial']\n"
        "from dxserial.cli import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    env = {**os.environ, "_DXSERIAL_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(cword)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env
    )
    return result.stdout.split(), set(result.stderr.split())


def test_shell_completion_offers_commands_without_importing_them() -> None:
    offered, modules = complete("dxserial br", 1)
    assert offered == ["bridge"]
    assert not [m for m in modules if m.endswith("_cmd")]


def test_shell_completion_offers_a_commands_options() -> None:
    offered, modules = complete("dxserial bridge --par", 2)
    assert offered == ["--parity"]
    assert "dxserial.cli.bridge_cmd" in modules
