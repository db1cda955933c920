"""The bridge on a bad line: dropped and corrupted bytes, and a serial end unplugged mid-game.

Whatever the line does, every message must arrive exactly once and intact.  On the TCP
side that is the bridge's job alone (it drops NULMODEM repeats); on the serial side the
receiving engine sees NULMODEM repeats and drops them by its dialogue state, as a real
engine would, so the test peer does the same and counts them.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
from pathlib import Path

import pytest

from dxserial.errors import DuplicateMessageError
from dxserial.protocol.framing import nul_frame
from dxserial.protocol.messages import Chat, parse
from dxserial.protocol.session import Role, Session
from dxserial.sim.memory import faulty
from dxserial.testing.fdio import write_all
from dxserial.testing.inproc import bridge_on_cable, nulmodem_peer
from dxserial.testing.peers import DxpClient, NulModemPeer
from dxserial.testing.process import wait_until
from dxserial.testing.rig import RigFactory

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

#: The echo timeout in process (the cable answers within a pass of the loop).
ECHO_TIMEOUT = 0.1


class SerialEngine:
    """The NULMODEM peer with the dialogue state a real engine keeps."""

    def __init__(self, peer: NulModemPeer, role: Role) -> None:
        self.peer = peer
        self.session = Session(role)
        self.last: bytes | None = None
        self.repeats = 0

    def send(self, raw: bytes) -> None:
        self.session.send(parse(raw))
        self.peer.send(raw)

    def expect(self) -> bytes:
        while True:
            raw = self.peer.expect()
            msg = parse(raw)
            if isinstance(msg, Chat) and raw == self.last:
                self.repeats += 1
                continue
            self.last = raw
            try:
                self.session.receive(msg)
            except DuplicateMessageError:
                self.repeats += 1
                continue
            return raw


def play(messages: list[dict[str, str]], engine: SerialEngine, client: DxpClient,
         serial_role: str) -> None:
    for entry in messages:
        raw = entry["message"].encode("ascii")
        if entry["from"] == serial_role:
            engine.send(raw)
            assert client.expect() == raw
        else:
            client.send(raw)
            assert engine.expect() == raw


def finish_with_sentinels(engine: SerialEngine, client: DxpClient) -> None:
    """Nothing extra is still on its way: the next thing each side gets is the sentinel."""
    engine.peer.send(b"Csentinel from serial")
    assert client.expect() == b"Csentinel from serial"
    client.send(b"Csentinel from tcp")
    assert engine.expect() == b"Csentinel from tcp"


async def test_drop_and_corrupt_one_percent(tmp_path: Path,
                                           scan_game: list[dict[str, str]]) -> None:
    """In process: the bridge on an in-process cable that drops and corrupts 1 % of the
    bytes each way, a NULMODEM engine on its other end."""
    line = {"a_to_b": faulty(0.01, 0.01, seed=11), "b_to_a": faulty(0.01, 0.01, seed=12)}
    async with bridge_on_cable(tmp_path, echo_timeout=ECHO_TIMEOUT, max_attempts=1000,
                               cable_args=line) as run:
        peer = nulmodem_peer(run.cable.open("b"), timeout=ECHO_TIMEOUT, max_attempts=1000,
                             seed=5, backoff=0.1)
        with DxpClient("127.0.0.1", run.port, timeout=60) as client:
            engine = SerialEngine(peer, Role.INITIATOR)
            # the long form: bench/faults.py
            await asyncio.to_thread(play, scan_game[:60], engine, client, "initiator")
            await asyncio.to_thread(finish_with_sentinels, engine, client)
        peer.close()
    log = run.log()
    assert "NOT delivered" not in log
    # the line really was bad: the handshake had to repeat itself
    assert "serial line:" in log


def test_unplug_and_replug_mid_game_loses_nothing(rig_factory: RigFactory, scan_game: list[dict[str, str]]) -> None:
    rig = rig_factory()
    with NulModemPeer(rig.peer_path, timeout=0.3, seed=6) as peer, \
            DxpClient("127.0.0.1", rig.port) as client:
        engine = SerialEngine(peer, Role.FOLLOWER)
        play(scan_game[:20], engine, client, serial_role="follower")
        # the USB adapter on the bridge's side is pulled
        rig.vpair.send("unplug a")
        rig.vpair.out.expect("unplugged a")
        # The whole line, not its first word: a loaded machine may show a line half written.
        wait_until(lambda: "TCP side stays up" in rig.log(), what="the bridge noticing the loss")
        (line,) = [x for x in rig.log().splitlines() if "TCP side stays up" in x]
        assert line.count(rig.serial_path) == 1, line  # one clear line: the port named once
        assert f"serial port {rig.serial_path} lost: " in line
        assert not Path(rig.serial_path).exists()
        # the TCP engine moves meanwhile: the bridge keeps the message
        raw = scan_game[20]["message"].encode()
        assert scan_game[20]["from"] == "initiator"
        client.send(raw)
        wait_until(
            lambda: any(
                '"action":"queued"' in line and raw.decode() in line
                for line in rig.trace_path.read_text().splitlines()
            ),
            what="the move reaching the bridge",
        )
        rig.vpair.send("replug a")
        rig.vpair.out.expect("replugged a")
        assert engine.expect() == raw
        play(scan_game[21:60], engine, client, serial_role="follower")
        finish_with_sentinels(engine, client)
    log = rig.log()
    assert "is back" in log
    assert "NOT delivered" not in log
    assert rig.bridge.proc.poll() is None


def test_a_client_that_resets_with_messages_unread_is_told_about(rig_factory: RigFactory) -> None:
    rig = rig_factory(bridge_args=("--link", "nul"))
    fd = os.open(rig.peer_path, os.O_RDWR | os.O_NOCTTY)
    try:
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.connect(("127.0.0.1", rig.port))
        wait_until(lambda: "connected (session 1)" in rig.log(), what="the client noticed")
        chats = [f"Cnumber {n:04d} ".encode() + b"x" * 60 for n in range(400)]
        write_all(fd, b"".join(nul_frame(c) for c in chats))  # the client reads none of them
        wait_until(lambda: rig.trace_path.read_text().count('"action":"delivered"') == 400,
                   what="all 400 written to the socket")
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()  # a reset: whatever its machine had not taken is gone
        wait_until(lambda: "possibly" in rig.log(), what="the loss reported")

        def traced() -> bool:
            lines = rig.trace_path.read_text().splitlines()
            return any('"action":"lost"' in x and "Cnumber 0399" in x for x in lines)

        wait_until(traced, what="the last message's loss in the trace")
    finally:
        os.close(fd)
    assert "never acknowledged by its machine" in rig.log()
    lost = [
        json.loads(line) for line in rig.trace_path.read_text().splitlines()
        if '"action":"lost"' in line
    ]
    assert 0 < len(lost) < 400  # the client's machine took a few before it reset
    assert lost[-1]["raw"].startswith("Cnumber 0399 ")  # each one is named in the trace
    assert all(r["error"].startswith("possibly: ") for r in lost)
