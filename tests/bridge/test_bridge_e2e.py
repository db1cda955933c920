"""``dxserial bridge`` end to end: real processes, a virtual null-modem pair, real TCP.

    NulModemPeer --pty B == dxserial vpair == pty A-- dxserial bridge --TCP-- DxpClient

Every test reads like a dialogue between a DOS-era engine on the serial line and an engine
on TCP, and checks what each side receives byte for byte.  The session rules (invalid
messages, turns, second clients, hang-ups, floods) run in process in test_bridge_inproc.py.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.protocol.framing import nul_frame
from dxserial.testing.fdio import read_exactly, write_all
from dxserial.testing.peers import DxpClient, NulModemPeer
from dxserial.testing.process import Cli, wait_until
from dxserial.testing.rig import Rig, RigFactory, start_vpair

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

NAME = "Probe".ljust(32)
GAMEREQ = f"R01{NAME}Z001075A".encode()
GAMEACC = f"A{NAME}0".encode()


def play_game(
    messages: list[dict[str, str]], peer: NulModemPeer, client: DxpClient, serial_role: str
) -> None:
    """Each message goes from its sender's engine and must arrive unchanged at the other."""
    for entry in messages:
        raw = entry["message"].encode("ascii")
        if entry["from"] == serial_role:
            peer.send(raw)
            assert client.expect() == raw
        else:
            client.send(raw)
            assert peer.expect() == raw


def test_whole_game_serial_initiator(rig: Rig, scan_game: list[dict[str, str]]) -> None:
    with NulModemPeer(rig.peer_path, seed=1) as peer, DxpClient("127.0.0.1", rig.port) as client:
        play_game(scan_game, peer, client, serial_role="initiator")

    def of(action: str) -> list[dict[str, object]]:
        return [r for r in rig.trace() if r["kind"] == "message" and r["action"] == action]

    # Each message is traced as queued on arrival, then delivered when its engine got it.
    wait_until(lambda: len(of("delivered")) == len(scan_game), what="every delivery traced")
    queued = of("queued")
    assert len(queued) == len(scan_game)
    assert all("error" not in r for r in queued)
    assert [r["id"] for r in of("delivered")] == [r["id"] for r in queued]


def test_whole_game_tcp_initiator(rig: Rig, scan_game: list[dict[str, str]]) -> None:
    with NulModemPeer(rig.peer_path, seed=2) as peer, DxpClient("127.0.0.1", rig.port) as client:
        play_game(scan_game, peer, client, serial_role="follower")
    assert "broke the dialogue" not in rig.log()


def test_nul_link_on_the_serial_line(rig_factory: RigFactory, scan_game: list[dict[str, str]]) -> None:
    rig = rig_factory(bridge_args=("--link", "nul"))
    fd = os.open(rig.peer_path, os.O_RDWR | os.O_NOCTTY)
    try:
        with DxpClient("127.0.0.1", rig.port) as client:
            for entry in scan_game[:20]:
                raw = entry["message"].encode()
                if entry["from"] == "initiator":
                    write_all(fd, nul_frame(raw))
                    assert client.expect() == raw
                else:
                    client.send(raw)
                    assert read_exactly(fd, len(raw) + 1) == nul_frame(raw)
    finally:
        os.close(fd)


def test_sigterm_exits_zero_and_says_so(rig: Rig) -> None:
    rig.bridge.proc.send_signal(signal.SIGTERM)
    assert rig.bridge.wait(10) == 0
    assert "bridge stopped" in rig.log()
    assert "Traceback" not in rig.log()


def test_missing_port_is_a_one_line_error(tmp_path: Path) -> None:
    result = run_in_process("bridge", tmp_path / "nope", "--listen", "127.0.0.1:0")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "nope" in lines[0], result.stderr


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_both_event_loops_carry_a_game(
    loop: str, rig_factory: RigFactory, scan_game: list[dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    if loop == "uvloop":
        pytest.importorskip("uvloop")
    monkeypatch.setenv("DXSERIAL_LOOP", loop)
    rig = rig_factory()
    with NulModemPeer(rig.peer_path, seed=7) as peer, DxpClient("127.0.0.1", rig.port) as client:
        play_game(scan_game[:30], peer, client, serial_role="initiator")
    assert f"event loop: {loop}" in rig.log()


def test_the_ready_line_is_printed_once(rig: Rig) -> None:
    assert "bridge ready" not in "\n".join(
        x for x in rig.log().splitlines() if " INFO " in x
    )  # on stdout only (the rig read it there); the log has it at debug level


def test_connect_mode_an_engine_that_ended_its_session_is_not_a_warning(tmp_path: Path) -> None:
    vpair, a, b = start_vpair(tmp_path)
    log_path = tmp_path / "bridge.log"
    with vpair, Cli(
        "engine", b, "--role", "follower", "--link", "nulmodem", "--depth", "1",
        "--echo-timeout", "2", "--max-attempts", "1000",
    ) as serial, Cli(
        "engine", "listen://127.0.0.1:0", "--role", "initiator", "--games", "1", "--moves", "2",
        "--depth", "1",
    ) as tcp:
        serial.out.expect("engine ready", timeout=20)
        port = re.search(r"127\.0\.0\.1:(\d+)", tcp.out.expect("engine ready", timeout=20))
        assert port is not None
        with log_path.open("w") as log:
            bridge = subprocess.Popen(
                [sys.executable, "-m", "dxserial", "bridge", a, "--connect",
                 f"127.0.0.1:{port.group(1)}", "--echo-timeout", "2"],
                stdout=subprocess.DEVNULL, stderr=log, text=True,
            )
            try:
                assert tcp.wait(60) == 0  # one game, then stop code 1: the session is over
                wait_until(lambda: "ended the session" in log_path.read_text(), timeout=20,
                           what="the bridge noticing the engine is gone")
            finally:
                bridge.terminate()
                bridge.wait(20)
        vpair.stop()
    text = log_path.read_text()
    assert "INFO the TCP engine ended the session (stop code 1)" in text
    assert " WARNING " not in text
