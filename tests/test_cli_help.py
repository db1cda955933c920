"""What ``dxserial ... --help`` shows and how flags parse, as a user sees them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dxserial", *args],
        capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "200"},
    )


def option_line(help_text: str, option: str) -> str:
    """The help line that starts with ``option``."""
    for line in help_text.splitlines():
        if line.strip("│ ").startswith(option + " "):
            return line
    raise AssertionError(f"{option} not in help:\n{help_text}")


@pytest.mark.parametrize(
    ("argv", "flags"),
    [
        ((), ["--version", "--help"]),
        (("bridge",), ["--rtscts", "--kick-old", "--block-console", "--verbose", "--quiet"]),
        (("engine",), ["--verbose", "--quiet", "--help"]),
        (("udev", "check"), ["--udevadm", "--help"]),
    ],
)
def test_flags_show_no_value_placeholder(argv: tuple[str, ...], flags: list[str]) -> None:
    result = run(*argv, "--help")
    assert result.returncode == 0, result.stderr
    for flag in flags:
        line = option_line(result.stdout, flag)
        assert "<bool>" not in line and "<int>" not in line, line


def test_options_that_take_a_value_still_show_its_kind() -> None:
    result = run("bridge", "--help")
    assert "<int>" in option_line(result.stdout, "--baud")
    assert "<float>" in option_line(result.stdout, "--echo-timeout")


def test_verbose_counts_repeated_letters_and_takes_no_value() -> None:
    counted = run("engine", "tcpp://127.0.0.1:1", "--role", "follower", "-vv")
    assert counted.returncode == 1  # -vv parsed; the endpoint is what is wrong
    valued = run("engine", "tcp://127.0.0.1:1", "--role", "follower", "-v", "2")
    assert valued.returncode == 2
    assert "unexpected extra argument" in valued.stderr and "(2)" in valued.stderr
