"""``rfc2217://``: a serial engine on another host's adapter, exported by a real ser2net.

The "other host" is a `dxserial vpair` end that ser2net exports on 127.0.0.1; the built-in
engine sits on the pair's other end and speaks NULMODEM, as a DOS engine on a PC would.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dxserial.errors import PortError
from dxserial.game.pdn import read_pdn
from dxserial.testing.process import Cli, wait_until
from dxserial.testing.rig import start_serial_engine
from dxserial.testing.ser2net import SER2NET_MISSING, Ser2net
from dxserial.transports.openers import open_serial

pytestmark = [pytest.mark.skipif(SER2NET_MISSING is not None, reason=str(SER2NET_MISSING)), pytest.mark.e2e]


@pytest.fixture
def exported(tmp_path: Path) -> Iterator[tuple[Ser2net, list[Cli]]]:
    """ser2net exporting end A of a vpair whose end B has the built-in engine."""
    vpair, engine, a = start_serial_engine(tmp_path, 5)
    ser2net = Ser2net(tmp_path, a)
    procs = [vpair, engine]
    try:
        yield ser2net, procs
    finally:
        for proc in reversed(procs):
            proc.stop()
            proc.__exit__(None, None, None)
        ser2net.close()


def bridge_and_player(tmp_path: Path, url: str, moves: int, procs: list[Cli]) -> tuple[Cli, Cli]:
    bridge = Cli(
        "bridge", url, "--listen", "127.0.0.1:0", "--pdn", str(tmp_path / "pdn"),
        "--echo-timeout", "2", "--max-attempts", "1000", "--serial-grace", "30",
        "--trace", str(tmp_path / "trace.jsonl"),
    )
    procs.append(bridge)
    ready = bridge.out.expect("bridge ready", timeout=20)
    port = re.search(r"listening on 127\.0\.0\.1:(\d+)", ready)
    assert port, ready
    player = Cli(
        "engine", f"tcp://127.0.0.1:{port.group(1)}", "--role", "initiator", "--games", "1",
        "--moves", str(moves), "--depth", "1", "--seed", "9",
    )
    procs.append(player)
    return bridge, player


def moves_relayed(tmp_path: Path) -> int:
    trace = tmp_path / "trace.jsonl"
    if not trace.exists():
        return 0
    return trace.read_text().count('"type": "MOVE"') + trace.read_text().count('"type":"MOVE"')


def test_a_whole_nulmodem_game_through_ser2net(tmp_path: Path, exported: tuple[Ser2net, list[Cli]]) -> None:
    ser2net, procs = exported
    bridge, player = bridge_and_player(tmp_path, ser2net.url, 10, procs)
    assert player.wait(60) == 0, player.stderr()
    # The bridge's writer thread writes the PDN file after the game; a bridge that stopped
    # cleanly has written it (read it only then: under load it came after the player's exit).
    assert bridge.stop() == 0
    (path,) = (tmp_path / "pdn").glob("*.pdn")
    (record,) = read_pdn(path)
    assert record.result in ("2-0", "1-1", "0-2") and record.plies > 0 and not record.violations()


def test_the_bridge_survives_a_ser2net_restart_mid_game(tmp_path: Path, exported: tuple[Ser2net, list[Cli]]) -> None:
    ser2net, procs = exported
    bridge, player = bridge_and_player(tmp_path, ser2net.url, 16, procs)
    wait_until(lambda: moves_relayed(tmp_path) >= 4, timeout=30, what="a few moves")
    ser2net.stop()  # the remote host's ser2net dies mid-game ...
    ser2net.start()  # ... and comes back on the same port
    assert player.wait(90) == 0, player.stderr()
    assert bridge.stop() == 0  # then its PDN file is written (see the test above)
    (path,) = (tmp_path / "pdn").glob("*.pdn")
    (record,) = read_pdn(path)
    assert record.result in ("2-0", "1-1", "0-2"), record.termination
    assert record.plies > 4
    log = bridge.stderr()
    assert "rfc2217://127.0.0.1" in log and "lost" in log, log  # it noticed, and came back


async def test_nothing_listening_is_one_line(tmp_path: Path) -> None:
    from dxserial.testing.process import free_port

    with pytest.raises(PortError, match=r"connection refused — is ser2net"):
        await open_serial(f"rfc2217://127.0.0.1:{free_port()}")
