"""Events of an unattended rig, end to end: real processes on a virtual null-modem pair.

The serial engine is the long-lived party: a bridge killed and started again, a TCP engine
that ends with stop code 1, or a serial engine that dies with its port left open must never
leave the rig stuck."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dxserial.testing.peers import DxpClient
from dxserial.testing.process import Cli, wait_until
from dxserial.testing.rig import TEST_BRIDGE_ARGS, Bridge, start_serial_engine, start_vpair

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


def moves(bridge: Bridge) -> int:
    count = 0
    for line in bridge.trace_path.read_text().splitlines():
        if '"type":"MOVE"' in line and '"queued"' in line:
            count += 1
    return count


def tcp_engine(port: int, seed: int, *extra: str) -> Cli:
    """A TCP initiator that waits 10 s before it sends an unanswered GAMEREQ again: a bridge
    that first ends the serial engine's old game over NULMODEM can take longer than 1 s, and
    the repeat is a warning (the engine's, not the bridge's) these tests count."""
    proc = Cli("engine", f"tcp://127.0.0.1:{port}", "--role", "initiator", "--depth", "1",
               "--seed", str(seed), "--answer-timeout", "10", *extra)
    proc.out.expect("engine ready", timeout=20)
    return proc


def test_a_bridge_killed_mid_game_and_started_again_leaves_the_serial_engine_playable(
    tmp_path: Path,
) -> None:
    vpair, serial, end_a = start_serial_engine(tmp_path, 21)
    first, second = tmp_path / "run1", tmp_path / "run2"
    first.mkdir()
    second.mkdir()
    with vpair, serial:
        with Bridge(first, end_a, *TEST_BRIDGE_ARGS, serial_check=True) as bridge, tcp_engine(
            bridge.port, 22, "--games", "1", "--moves", "40"
        ):
            wait_until(lambda: moves(bridge) >= 6, timeout=30, what="a few moves")
            bridge.proc.kill()  # SIGKILL, as a crash; systemd's Restart= starts it again
            bridge.proc.wait(10)
        with Bridge(second, end_a, *TEST_BRIDGE_ARGS, serial_check=True) as bridge:
            with tcp_engine(bridge.port, 23, "--games", "1", "--moves", "3") as tcp:
                assert tcp.wait(60) == 0, tcp.out.lines  # a whole game, then stop code 1
            assert "ending game left open by the previous run (state file" in bridge.log()
            assert serial.proc.poll() is None  # the stop ended the TCP engine's session only
            with tcp_engine(bridge.port, 24, "--games", "1", "--moves", "3") as tcp:
                assert tcp.wait(60) == 0, tcp.out.lines  # and the next TCP engine plays too
            assert [x for x in bridge.log().splitlines() if " WARNING " in x] == []


def test_a_serial_engine_killed_with_its_port_open_is_ended_towards_tcp_within_the_grace(
    tmp_path: Path,
) -> None:
    vpair, end_a, end_b = start_vpair(tmp_path)
    req = f"R01{'Probe'.ljust(32)}Z001075A".encode()  # the TCP initiator plays White
    with vpair, Cli("engine", end_b, "--role", "follower", "--link", "nulmodem",
                    "--echo-timeout", "0.3", "--depth", "1") as serial:
        serial.out.expect("engine ready", timeout=20)
        with Bridge(tmp_path, end_a, "--echo-timeout", "0.3", "--max-attempts", "2",
                    "--serial-grace", "1") as bridge, DxpClient("127.0.0.1", bridge.port) as tcp:
            tcp.send(req)
            assert tcp.expect().startswith(b"A")
            tcp.send(b"M0000322800")
            assert tcp.expect().startswith(b"M")  # Black answered: the engine is alive
            serial.proc.kill()  # the old PC crashed; its port stays open on the bridge's side
            serial.proc.wait(10)
            tcp.send(b"M0000373200")  # for an engine that will never echo it
            assert tcp.expect(timeout=20) == b"E00"  # on its behalf: Black was to move
            # Given up by --serial-grace (1 s) after the link's timeout, not by anything else.
            assert "silent for 1 s more" in bridge.log()
        said = [json.loads(line) for line in bridge.trace_path.read_text().splitlines()
                if '"sent-by-bridge"' in line]  # read once the bridge has stopped: all written
        assert said and said[-1]["on_behalf_of"] == "serial", said


def test_with_its_record_lost_a_restarted_bridge_learns_of_the_old_game_from_the_engine(
    tmp_path: Path,
) -> None:
    """The state file gone with the bridge (another folder, a wiped disk): the first
    GAMEREQ goes out at once, and the serial engine's answer to it is the evidence."""
    vpair, serial, end_a = start_serial_engine(tmp_path, 25)
    first, second = tmp_path / "run1", tmp_path / "run2"
    first.mkdir()
    second.mkdir()
    with vpair, serial:
        with Bridge(first, end_a, *TEST_BRIDGE_ARGS, "--state-dir", str(first / "state"),
                    serial_check=True) as bridge, tcp_engine(
            bridge.port, 26, "--games", "1", "--moves", "40"
        ):
            wait_until(lambda: moves(bridge) >= 6, timeout=30, what="a few moves")
            bridge.proc.kill()
            bridge.proc.wait(10)
        with Bridge(second, end_a, *TEST_BRIDGE_ARGS, "--state-dir", str(second / "state"),
                    serial_check=True) as bridge, tcp_engine(
            bridge.port, 27, "--games", "1", "--moves", "3"
        ) as tcp:
            assert tcp.wait(60) == 0, tcp.out.lines
    said = [json.loads(line) for line in bridge.trace_path.read_text().splitlines()
            if '"sent-by-bridge"' in line]  # read once the bridge has stopped: all written
    # Its move of the old game (sent again by its NULMODEM link) or its answer to the
    # GAMEREQ, whichever comes first, is the evidence the bridge names.
    assert said and said[0]["raw"].startswith("E"), said
    assert re.search(r"with no game open here|where its GAMEACC should come",
                     str(said[0]["why"])), said
