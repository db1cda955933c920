"""What ``dxserial ... --help`` shows and how flags parse, as a user sees them."""

from __future__ import annotations

import subprocess

import pytest
from helpers import run_in_process


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_in_process(*args, columns=200)


def option_line(help_text: str, option: str) -> str:
    """The help line that starts with ``option``."""
    for line in help_text.splitlines():
        if line.strip("│ ").startswith(option + " "):
            return line
    raise AssertionError(f"{option} not in help:\n{help_text}")


@pytest.mark.parametrize(
    ("argv", "flags"),
    [
        ((), ["--version", "--install-completion", "--show-completion", "--help"]),
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
    assert counted.returncode == 2  # -vv parsed; the endpoint is what is wrong
    valued = run("engine", "tcp://127.0.0.1:1", "--role", "follower", "-v", "2")
    assert valued.returncode == 2
    assert "unexpected extra argument" in valued.stderr and "(2)" in valued.stderr


def panels(help_text: str) -> dict[str, list[str]]:
    """Panel title -> the options listed in it, in the order ``--help`` prints them."""
    found: dict[str, list[str]] = {}
    title = ""
    for line in help_text.splitlines():
        if line.startswith("╭─ "):
            title = line[3:].split(" ─")[0]
            found[title] = []
        elif line.lstrip("│ *").startswith("--"):  # * marks a required option
            found[title].append(line.lstrip("│ *").split()[0])
    return found


@pytest.mark.parametrize(
    ("command", "first", "later"),
    [
        (
            "bridge",
            ["--config", "--link", "--listen", "--connect", "--baud", "--referee", "--pdn",
             "--trace", "--web", "--verbose"],
            {"Serial line": "--parity", "NULMODEM handshake": "--echo-timeout",
             "TCP clients and security": "--allow"},
        ),
        (
            "engine",
            ["--role", "--link", "--baud", "--verbose"],
            {"NULMODEM handshake": "--start-byte", "Initiator: the games it offers": "--games"},
        ),
        (
            "match",
            ["--games", "--pdn", "--link", "--baud", "--verbose"],
            {"Serial lines and NULMODEM": "--link-a"},
        ),
    ],
)
def test_common_options_come_first_and_details_follow_in_panels(
    command: str, first: list[str], later: dict[str, str]
) -> None:
    result = run(command, "--help")
    assert result.returncode == 0, result.stderr
    found = panels(result.stdout)
    titles = list(found)
    assert titles.index("Options") < min(titles.index(t) for t in later)
    assert set(first) <= set(found["Options"])
    for title, option in later.items():
        assert option in found[title] and option not in found["Options"]


@pytest.mark.parametrize(("columns", "most"), [(100, 80), (80, 95)])
def test_bridge_help_fits_a_screen_or_two(columns: int, most: int) -> None:
    """Issue 24: 131 lines at 100 columns, 158 at 80 (one [env var] line per option, and
    paragraphs that belong in the README)."""
    result = run_in_process("bridge", "--help", columns=columns)
    lines = result.stdout.splitlines()
    assert len(lines) <= most, result.stdout
    assert "[env var:" not in result.stdout and "DXSERIAL_BAUD=2400" in result.stdout
