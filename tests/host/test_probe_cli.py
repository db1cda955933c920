"""``dxserial probe`` end to end: a vpair that honours each end's termios speed, the built-in
engine as a DOS-like peer (its own start/end bytes only, its own speed), then the bridge
command the probe printed plays a whole game with that peer.

    dxserial engine --baud S -- pty B == dxserial vpair --termios == pty A -- dxserial probe
                                                                       \\-- dxserial bridge

The full matrix (3 framings x 3 speeds, NUL, initiators) is tests/host/test_probe.py, on the
UART model with a fake clock; here a few representative peers.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from dxserial.testing.process import Cli
from dxserial.testing.rig import start_vpair

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

FAST = ("--listen", "0.5", "--wait", "0.25", "--answer-wait", "0.6", "--timeout", "60")


def probe(port: str, *extra: str) -> tuple[int, dict[str, object], str]:
    with Cli("probe", port, "--json", *FAST, *extra) as cli:
        line = cli.out.expect("{", timeout=90)
        return cli.wait(timeout=10), json.loads(line), cli.stderr()


def bridge_plays_a_game(command: str, tmp_path: Path) -> None:
    """Run the printed bridge command with a TCP initiator; one whole game must be played."""
    args = shlex.split(command)
    assert args[:2] == ["dxserial", "bridge"]
    with Cli(*args[1:], "--listen", "127.0.0.1:0") as bridge:
        try:
            ready = bridge.out.expect("bridge ready", timeout=20)
        except AssertionError:
            bridge.stop()
            raise AssertionError(bridge.stderr()) from None
        port = re.search(r"listening on 127\.0\.0\.1:(\d+)", ready)
        assert port, ready
        with Cli(
            "engine", f"tcp://127.0.0.1:{port.group(1)}", "--role", "initiator",
            "--games", "1", "--moves", "6", "--depth", "1", "--seed", "3",
        ) as tcp:
            tcp.out.expect("game 1:", timeout=60)
            assert tcp.wait(timeout=30) == 0
        bridge.stop()


PEERS = [
    pytest.param(("nulmodem", "0x02", "0x03", 9600), id="STX-ETX-9600"),
    pytest.param(("nulmodem", "0x1b", "0x1c", 2400), id="ESC-FS-2400"),
    pytest.param(("nulmodem", "0x01", "0x04", 19200), id="SOH-EOT-19200"),
    pytest.param(("nul", "", "", 9600), id="NUL-9600"),
]


@pytest.mark.parametrize("peer", PEERS)
def test_probe_finds_the_peer_and_its_bridge_command_plays_a_game(
    tmp_path: Path, peer: tuple[str, str, str, int]
) -> None:
    link, start, end, speed = peer
    vpair, a, b = start_vpair(tmp_path, "--termios")
    framing = ["--start-byte", start, "--end-byte", end, "--no-learn-start"] if start else []
    with vpair, Cli(
        "engine", b, "--role", "follower", "--link", link, "--baud", str(speed), "--depth", "1",
        *framing,
    ) as engine:
        engine.out.expect("engine ready", timeout=20)
        config = tmp_path / "found.toml"
        code, found, progress = probe(a, "--write-config", str(config))
        assert code == 0, (found, progress)
        assert (found["result"], found["link"], found["baud"]) == ("found", link, speed)
        if start:
            assert (found["start_byte"], found["end_byte"]) == (start, end)
            assert "no game was started" in str(found["engine"])
        else:
            assert found["start_byte"] is None
            assert "a game was started and ended" in str(found["engine"])
        assert "probe: listening at 9600 baud" in progress
        assert f'link = "{link}"' in config.read_text()
        # The engine is ready for a real game: the printed command plays one with it.
        bridge_plays_a_game(str(found["bridge_command"]), tmp_path)
        # The serial engine played that game to its end; the TCP engine's stop code 1 ended
        # that engine's session only, so the serial engine is still there for the next one.
        assert engine.out.expect("game 1:", timeout=10)
        assert engine.proc.poll() is None
        engine.proc.terminate()
        engine.proc.wait(timeout=15)
        # The probe's stray bytes are folded (issue 24: one WARNING per byte, 50+ lines).
        log = engine.stderr()
        assert log.count(" line: ") <= 10, log  # ESC-FS at 2400 baud: 36 before, now 5 + 1
        vpair.stop()


def test_nothing_on_the_line_says_no_engine_answered(tmp_path: Path) -> None:
    vpair, a, _ = start_vpair(tmp_path, "--termios")
    with vpair, Cli("probe", a, "--listen", "0.2", "--wait", "0.1", "--timeout", "3") as cli:
        cli.out.expect(f"not found: no engine answered on {a} within", timeout=30)
        assert cli.out.expect("  tried: ").startswith("  tried: 9600 baud NUL (CHAT); ")
        assert cli.wait(timeout=10) == 1
        assert "probe: 9600 baud: NULMODEM, start bytes 0x02 0x01 0x1b 0x1e" in cli.stderr()
        vpair.stop()
