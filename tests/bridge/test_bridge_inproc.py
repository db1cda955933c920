"""The bridge's sessions in process: the bridge in a thread of this process on an
in-process cable (:mod:`dxserial.sim.memory`), a NULMODEM engine on the cable's other end,
real TCP clients on 127.0.0.1.

    LoopPeer -- cable end b == cable end a -- Bridge --TCP-- DxpClient

Every test reads like a dialogue between a DOS-era engine on the serial line and an engine
on TCP, and checks what each side receives byte for byte; test_bridge_e2e.py runs whole
games the same way through ``dxserial vpair`` and ``dxserial bridge`` processes.
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import trace_so_far

from dxserial.game.pdn import read_pdn
from dxserial.testing.inproc import BridgeThread
from dxserial.testing.peers import DxpClient
from dxserial.testing.process import wait_until
from dxserial.testing.rig import read_counts
from dxserial.transports.access import parse_networks

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

NAME = "Probe".ljust(32)
GAMEREQ = f"R01{NAME}Z001075A".encode()
GAMEACC = f"A{NAME}0".encode()

CableRigs = Callable[..., BridgeThread]


def test_invalid_messages_are_dropped_and_logged(cable_rig: BridgeThread) -> None:
    rig, peer = cable_rig, cable_rig.peer
    with DxpClient("127.0.0.1", rig.port) as client:
        peer.send(GAMEREQ)
        assert client.expect() == GAMEREQ
        # garbage from TCP: a byte >= 0x80 inside a frame, an unknown type, an overlong frame
        client.send_bytes(b"M0012\x9f61100\x00")
        client.send(b"X123")
        client.send_bytes(b"C" + b"y" * 300 + b"\x00")
        client.send(GAMEACC)
        assert peer.expect() == GAMEACC  # the next valid message, nothing before it
        # garbage from the serial side
        peer.send(b"M00120X1100")
        peer.send(b"M0000342900")
        assert client.expect() == b"M0000342900"
    log = rig.log()
    assert "tcp->serial: byte 0x9f" in log
    assert "tcp->serial: invalid message 'X123' dropped" in log
    assert "frame of more than 127 bytes" in log
    assert "serial->tcp: invalid message 'M00120X1100' dropped: MOVE: field 'from' at offset 5" in log
    assert rig.running


def test_on_invalid_forward_passes_them_through(cable_rig_factory: CableRigs) -> None:
    rig = cable_rig_factory(on_invalid="forward", seed=4)
    with DxpClient("127.0.0.1", rig.port) as client:
        rig.peer.send(b"M00120X1100")
        assert client.expect() == b"M00120X1100"
    assert "invalid message 'M00120X1100' forwarded" in rig.log()


@pytest.mark.parametrize("referee", ["warn", "off"])
def test_out_of_turn_is_logged_and_forwarded(cable_rig_factory: CableRigs, referee: str) -> None:
    rig = cable_rig_factory(referee=referee, seed=5)
    peer = rig.peer
    with DxpClient("127.0.0.1", rig.port) as client:
        peer.send(GAMEREQ)
        assert client.expect() == GAMEREQ
        client.send(GAMEACC)
        assert peer.expect() == GAMEACC
        client.send(b"M0000202400")  # the follower is Black: not its turn
        assert peer.expect() == b"M0000202400"
    wait_until(lambda: "broke the dialogue" in rig.log(), what="a dialogue violation logged")
    assert "the tcp engine broke the dialogue" in rig.log()


def test_second_client_is_refused_and_first_keeps_working(cable_rig: BridgeThread) -> None:
    rig, peer = cable_rig, cable_rig.peer
    with DxpClient("127.0.0.1", rig.port) as first:
        second = DxpClient("127.0.0.1", rig.port)
        try:
            told = second.expect()  # told why in DXP, then closed by the bridge
            assert told.startswith(b"Cdxserial bridge: busy: another engine is connected since ")
            assert second.closed_by_peer(timeout=10)
        finally:
            second.close()
        peer.send(GAMEREQ)
        assert first.expect() == GAMEREQ
    assert "refused TCP client" in rig.log()


def test_kick_old_replaces_the_first_client(cable_rig_factory: CableRigs) -> None:
    rig = cable_rig_factory(kick_old=True, seed=7)
    peer = rig.peer
    with DxpClient("127.0.0.1", rig.port) as first:
        first.send(b"Chello")
        assert peer.expect() == b"Chello"
        with DxpClient("127.0.0.1", rig.port) as second:
            wait_until(lambda: "replaces" in rig.log(), what="the replacement logged")
            peer.send(GAMEREQ)
            assert second.expect() == GAMEREQ


def test_client_hangs_up_mid_message_and_next_client_plays_on(cable_rig: BridgeThread) -> None:
    rig, peer = cable_rig, cable_rig.peer
    with DxpClient("127.0.0.1", rig.port) as client:
        client.send_bytes(b"M00003429")  # no NUL: cut off
    wait_until(lambda: "went away" in rig.log(), what="the hang-up logged")
    # a message from the serial engine while nobody is connected waits for the next peer
    peer.send(b"Cstill there?")
    peer.wait_delivered(1)
    with DxpClient("127.0.0.1", rig.port) as client:
        assert client.expect() == b"Cstill there?"
        client.send(b"Cyes")
        assert peer.expect() == b"Cyes"
    log = rig.log()
    assert "hung up mid-message" in log or "peer hung up" in log
    assert rig.running


def test_a_client_that_reconnects_at_once_is_not_refused(cable_rig: BridgeThread) -> None:
    rig, peer = cable_rig, cable_rig.peer
    for n in range(10):
        with DxpClient("127.0.0.1", rig.port) as client:
            client.send(f"Cround {n}".encode())
            assert peer.expect() == f"Cround {n}".encode()
    assert "refused TCP client" not in rig.log()


def test_a_flood_of_messages_the_line_cannot_carry_gives_a_few_log_lines(
    cable_rig: BridgeThread,
) -> None:
    rig, peer = cable_rig, cable_rig.peer
    with DxpClient("127.0.0.1", rig.port) as client:
        for n in range(300):
            client.send(f"Cline {n}\nand more".encode())  # a newline cannot cross NULMODEM
        client.send(b"Cthe end")
        assert peer.expect() == b"Cthe end"
        for _ in range(300):
            assert client.expect().startswith(b"Cdxserial: your last message cannot cross")
    rig.stop()
    lines = rig.log().splitlines()
    told = [x for x in lines if "cannot cross" in x and " DEBUG " not in x]
    assert len(told) < 60  # each kind shown a few times, then counted: not 900 lines
    assert any("280 more 'cannot cross tcp->serial' lines" in x for x in lines)


# ----------------------------------------------------------------------- who may connect


def refusal(port: int) -> bytes:
    """Everything a refused client receives before the bridge closes its connection."""
    got = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.settimeout(10)
        while chunk := sock.recv(4096):
            got += chunk
    return got


def test_a_client_outside_allow_is_refused_with_a_log_line(cable_rig_factory: CableRigs) -> None:
    rig = cable_rig_factory(allow=parse_networks("10.0.0.0/8,192.168.0.0/16"))
    # Told why, in DXP, then closed.
    assert refusal(rig.port) == b"Cdxserial bridge: not allowed: your address is not in this bridge's --allow\0"
    assert refusal(rig.port).startswith(b"Cdxserial bridge: not allowed")
    wait_until(lambda: "not in --allow" in rig.log(), what="the refusal logged")
    assert rig.log().count("WARNING refused TCP client 127.0.0.1:") == 1  # once per address
    assert rig.running


def test_a_client_inside_allow_plays(cable_rig_factory: CableRigs) -> None:
    rig = cable_rig_factory(allow=parse_networks("127.0.0.0/8"))
    with DxpClient("127.0.0.1", rig.port) as client:
        client.send(b"Chello")
        assert rig.peer.expect() == b"Chello"


def test_console_chat_is_blocked_when_asked(cable_rig_factory: CableRigs) -> None:
    rig = cable_rig_factory(block_console=True, seed=2)
    with DxpClient("127.0.0.1", rig.port) as client:
        client.send(b"Cconsole rm -rf /")
        client.send(b"Cjust talking")
        assert rig.peer.expect() == b"Cjust talking"
    assert "CHAT 'Cconsole rm -rf /' blocked" in rig.log()


def test_console_chat_passes_on_loopback_by_default(cable_rig: BridgeThread) -> None:
    with DxpClient("127.0.0.1", cable_rig.port) as client:
        client.send(b"Cconsole status")
        assert cable_rig.peer.expect() == b"Cconsole status"


# ----------------------------------------------------------------------- what it tells


def traced(rig: BridgeThread) -> list[dict[str, Any]]:
    return trace_so_far(rig.trace_path)


def test_the_trace_and_the_closing_counts_tell_the_same_story(cable_rig: BridgeThread) -> None:
    rig = cable_rig  # NULMODEM, and an engine that never reads: nothing is echoed
    rig.peer.pause()
    with DxpClient("127.0.0.1", rig.port) as client:
        client.send(b"Cline one\nline two")  # a control byte cannot cross a NULMODEM line
        reply = client.expect()
        assert reply.startswith(b"Cdxserial: your last message cannot cross")
        client.send(b"Chello")
        client.send(b"Cis anyone there?")
        wait_until(lambda: sum(r.get("action") == "queued" for r in traced(rig)) == 2,
                   what="two messages queued")
    closing = rig.stop()
    log = rig.log()
    # Queued is not delivered: both are named as lost when the bridge stops.
    assert "'Chello' NOT delivered" in log and "'Cis anyone there?' NOT delivered" in log
    counts = read_counts(log)
    assert counts == closing  # the last line says what the bridge counted
    told = Counter(r["action"] for r in traced(rig) if r["kind"] == "message")
    for action in ("queued", "delivered", "dropped", "lost", "sent-by-bridge"):
        assert counts[action] == told[action], action
    assert counts["lost"] == 2 and counts["dropped"] == 1
    dropped = next(r for r in traced(rig) if r.get("action") == "dropped")
    assert dropped["reason"] == "cannot-cross"


def test_a_serial_port_gone_longer_than_its_grace_ends_the_game_towards_tcp(
    cable_rig_factory: CableRigs, tmp_path: Path
) -> None:
    games_dir = tmp_path / "games"
    games_dir.mkdir(mode=0o700)
    rig = cable_rig_factory(serial_grace=0.5, pdn=games_dir, seed=9)
    peer = rig.peer
    req = f"R01{'Probe'.ljust(32)}Z005075A".encode()  # the TCP initiator plays White
    acc = f"A{'Old PC'.ljust(32)}0".encode()
    with DxpClient("127.0.0.1", rig.port) as client:
        client.send(req)
        assert peer.expect() == req
        peer.send(acc)
        assert client.expect() == acc
        client.send(b"M0000322800")
        assert peer.expect() == b"M0000322800"
        rig.call(rig.run.cable.unplug)  # the adapter is pulled and stays away
        client.send(b"Cstill there?")
        # Black (the serial engine) was to move: the bridge ends the game on its behalf.
        assert client.expect() == b"E00"
        client.send(b"E00")
        wait_until(lambda: any(games_dir.glob("*.pdn")), what="the record")  # not its .tmp
        assert "'Cstill there?' NOT delivered" in rig.log()
        rig.call(rig.run.cable.replug)
        wait_until(lambda: "is back" in rig.log(), what="the port back")
        client.send(req)  # a new session on the serial side: a clean start
        assert peer.expect() == req
    (record,) = [g for path in sorted(games_dir.glob("*.pdn")) for g in read_pdn(path)]
    assert record.result == "*"
    log = rig.log()
    assert "broke the dialogue" not in log and "illegal move" not in log
    assert "Traceback" not in log
