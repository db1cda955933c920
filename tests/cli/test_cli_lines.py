"""Lines that said something untrue or unreadable (issue 24, item 6)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dxserial.testing.peers import DxpClient, NulModemPeer
from dxserial.testing.rig import Bridge, Vpair, read_counts

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

NAME = "Probe".ljust(32)
GAMEREQ = f"R01{NAME}Z001075A".encode()
GAMEACC = f"A{NAME}0".encode()


def test_sigint_mid_game_says_what_the_bridge_does(tmp_path: Path) -> None:
    """It said the TCP peer 'went away (closed)' (the bridge closed it) and promised to
    close the game towards the serial engine in 3 s, then exited."""
    with Vpair(tmp_path) as vpair, NulModemPeer(vpair.path_b, seed=1) as peer:
        bridge = Bridge(tmp_path, vpair.path_a, "--echo-timeout", "2", trace=False)
        with bridge, DxpClient("127.0.0.1", bridge.port) as client:
            client.send(GAMEREQ)
            assert peer.expect() == GAMEREQ
            peer.send(GAMEACC)
            assert client.expect() == GAMEACC
            assert bridge.stop(signal.SIGINT) == 0
        log = bridge.log()
        assert "went away" not in log and "closes the game" not in log, log
        assert "closed the connection of TCP peer 127.0.0.1:" in log
        # The last line is a readable count, not a dict.
        last = log.strip().splitlines()[-1]
        assert "bridge stopped: serial->tcp 1, tcp->serial 1, queued 2," in last, last
        assert read_counts(log)["delivered"] == 2


def test_a_taken_port_is_one_line_without_counts(tmp_path: Path) -> None:
    with Vpair(tmp_path) as vpair, socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for argv in (["--listen", f"127.0.0.1:{port}"],
                     ["--listen", "127.0.0.1:0", "--web", f"127.0.0.1:{port}"]):
            result = subprocess.run(
                [sys.executable, "-m", "dxserial", "bridge", vpair.path_a, *argv],
                capture_output=True, text=True, timeout=60,
            )
            assert result.returncode == 1
            # Was: the counts as a dict, then the error (or asyncio's raw text for --web).
            assert "bridge stopped" not in result.stderr, result.stderr
            errors = [line for line in result.stderr.splitlines() if "error" in line]
            assert len(errors) == 1 and errors[0] == result.stderr.splitlines()[-1]
            assert errors[0].startswith("dxserial: error: cannot listen on ")
            assert f"127.0.0.1:{port}: address already in use" in errors[0]


# Ctrl-C 20-50 ms after start lands while typer imports: simulated at exactly that point.
_CTRL_C_WHILE_IMPORTING = """\
import builtins, runpy, sys
real = builtins.__import__
def interrupted(name, *args, **kwargs):
    if name == "typer":
        raise KeyboardInterrupt
    return real(name, *args, **kwargs)
builtins.__import__ = interrupted
sys.argv = ["dxserial", "--version"]
runpy.run_module("dxserial", run_name="__main__")
"""


def test_ctrl_c_while_importing_prints_no_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _CTRL_C_WHILE_IMPORTING], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 130
    assert result.stderr == ""


def test_a_closed_pipe_is_no_traceback() -> None:
    """`dxserial ... | head`: with the app run outside click's standalone mode, main()
    handles the broken pipe itself (simulated where the output is written)."""
    code = (
        "import sys, typer\n"
        "def gone(*args, **kwargs): raise BrokenPipeError(32, 'Broken pipe')\n"
        "typer.echo = gone\n"
        "sys.argv = ['dxserial', 'tournament', '--keys']\n"
        "from dxserial.cli import main\n"
        "main()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and result.stderr == ""
