"""Every usage or configuration error: one line, exit 2; ``-h`` is ``--help`` (issue 24, item 4).

Exit 2 is what the shipped systemd unit takes for "do not restart" (RestartPreventExitStatus).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.cli.app import COMMANDS


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_in_process(*args, cwd=cwd, columns=100)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["engine", "tcp://127.0.0.1:9", "--role", "folower"], "--role: 'folower'"),
        (["engine", "tcp://127.0.0.1:9", "--role", "follower", "--depth", "11"], "--depth"),
        (["bridge", "/dev/null", "--link", "nulmodm"], "--link: 'nulmodm'"),
        (["bridge", "/dev/null", "--listen", "127.0.0.1:1", "--connect", "127.0.0.1:2"],
         "--listen and --connect exclude each other"),
        (["bridge"], "no serial port"),
        (["bridge", "--config", "CONF"], "referee"),
        # click's own usage errors, in the same one-line style (no box):
        (["engine", "--bogus"], "No such option: --bogus"),
        (["engine", "tcp://127.0.0.1:9", "--role", "follower", "--depth", "x"], "'x' is not a valid"),
        (["engine"], "Missing argument 'ENDPOINT'"),
        (["tournament"], "Missing argument"),
        (["match", "tcp://127.0.0.1:9", "tcp://127.0.0.1:9", "--moves", "3", "--max-moves", "3"],
         "--moves is the old name of --max-moves: give only --max-moves"),
        (["match", "tcp://127.0.0.1:9", "tcp://127.0.0.1:9", "--time-moves", "1000"],
         "--time-moves"),
    ],
)
def test_usage_and_config_errors_exit_2_in_one_line(
    argv: list[str], words: str, tmp_path: Path
) -> None:
    conf = tmp_path / "rig.toml"
    conf.write_text('port = "/dev/null"\nreferee = "strictt"\n')
    result = run(*(str(conf) if a == "CONF" else a for a in argv))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dxserial: error: "), result.stderr
    assert words in lines[0]
    assert "╭" not in result.stderr and "Traceback" not in result.stderr


def test_a_click_usage_error_names_the_commands_help() -> None:
    result = run("engine", "--bogus")
    assert result.stderr.rstrip().endswith("see 'dxserial engine --help'")


@pytest.mark.parametrize("argv", [[], *([name] for name in COMMANDS), ["udev", "install"]])
def test_dash_h_is_help_everywhere(argv: list[str]) -> None:
    short, long = run(*argv, "-h"), run(*argv, "--help")
    assert short.returncode == 0, short.stderr
    assert short.stdout == long.stdout and "Usage: dxserial" in short.stdout


@pytest.mark.e2e  # binds the --web port
def test_a_port_that_fails_ends_before_the_web_view_is_announced() -> None:
    """`bridge /nonexistent --web ...` said "web view: http://..." and then failed on the port."""
    pytest.importorskip("aiohttp", reason="--web needs aiohttp (pip install dxserial[web])")
    result = run("bridge", "/nonexistent", "--web", "127.0.0.1:0", "--listen", "127.0.0.1:0")
    assert result.returncode == 1, result.stderr
    assert "web view" not in result.stdout, result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dxserial: error: cannot open /nonexistent")
