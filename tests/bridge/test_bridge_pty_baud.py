"""``bridge --baud`` on a pseudo-terminal: said once, not accepted silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from dxserial.testing.process import Cli
from dxserial.testing.rig import start_vpair

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

PTY_NOTE = "is a pseudo-terminal: 2400 baud ({where}) paces nothing by itself; the program on"


def bridge_log(port: str, *extra: str) -> str:
    """Start a bridge on ``port``, wait until it is ready, stop it; return its log."""
    with Cli("bridge", port, "--listen", "127.0.0.1:0", *extra) as bridge:
        bridge.out.expect("bridge ready", timeout=20)
        assert bridge.stop() == 0
        return bridge.stderr()


@pytest.mark.parametrize("how", ["option", "config"])
def test_an_explicit_baud_on_a_pty_is_logged_once(tmp_path: Path, how: str) -> None:
    vpair, a, _ = start_vpair(tmp_path)
    with vpair:
        if how == "option":
            log = bridge_log(a, "--baud", "2400")
            where = "--baud"
        else:
            (tmp_path / "rig.toml").write_text("baud = 2400\n")
            log = bridge_log(a, "--config", str(tmp_path / "rig.toml"))
            where = f"'baud' in {tmp_path / 'rig.toml'}"  # issue 38 point 3: not "--baud"
        note = PTY_NOTE.format(where=where)
        # Issue 38 point 3: a note (INFO), not a warning that the pty "ignores" the speed,
        # which a vpair --termios follows.
        assert [line for line in log.splitlines() if note in line and " INFO " in line] != []
        assert "ignores" not in log
        assert log.count("pseudo-terminal") == 1
        vpair.stop()


def test_the_default_speed_on_a_pty_says_nothing(tmp_path: Path) -> None:
    vpair, a, _ = start_vpair(tmp_path)
    with vpair:
        assert "pseudo-terminal" not in bridge_log(a)
        vpair.stop()


def test_only_ptys_count_as_pseudo_terminals(tmp_path: Path) -> None:
    from dxserial.transports.serial import is_pseudo_terminal

    vpair, a, _ = start_vpair(tmp_path)
    with vpair:
        assert is_pseudo_terminal(a)  # a symlink to /dev/pts/N
        vpair.stop()
    for port in ("/dev/null", str(tmp_path), "socket://127.0.0.1:5555", str(tmp_path / "nope")):
        assert not is_pseudo_terminal(port)
