"""The bridge at the line's worst (issue 36): noise on an idle line, a TCP engine that
leaves before the serial engine's answer, a silent client holding the only slot.

Each test reads as a dialogue between the serial engine on an in-process cable and an engine
on TCP (tests/bridge/test_bridge_inproc.py has the rig); docs/bridge.md has the rules they hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dxserial.sim.memory import delayed
from dxserial.testing.inproc import BridgeThread
from dxserial.testing.peers import DxpClient
from dxserial.testing.process import wait_until

NAME = "Probe".ljust(32)
GAMEREQ = f"R01{NAME}Z001075A".encode()
GAMEACC = f"A{NAME}0".encode()
NOISE = b"\x07CL\x03"  # a PC powering up: what made 0x07 the start byte for good


@pytest.mark.e2e  # TCP on 127.0.0.1
def test_noise_on_an_idle_line_is_neither_a_message_nor_the_framing(
    cable_rig: BridgeThread,
) -> None:
    rig = cable_rig
    with DxpClient("127.0.0.1", rig.port) as client:
        rig.call(lambda: rig.run.cable.send("b", NOISE))
        wait_until(lambda: "0x07" in rig.log(), what="the noise seen")
        client.send(GAMEREQ)
        assert rig.peer.expect() == GAMEREQ  # framed with STX: the engine heard it
        rig.peer.send(GAMEACC)
        assert client.expect() == GAMEACC  # no CHAT 'L' before it
    assert "taking it as the peer's start byte" not in rig.log()
    assert not [r for r in rig.trace() if r.get("raw") == "CL"]


# ----------------------------------------------------------------------- one slot (point 11)


def test_a_silent_client_holds_the_slot_only_so_long_and_never_mid_game() -> None:
    """The rule on a fake clock (bridge/machine.py): nothing heard for ``silent_slot`` s
    with no game open is the evidence that lets the next client in."""
    from dxserial.bridge.judge import SERIAL, TCP
    from dxserial.bridge.machine import BridgeMachine
    from dxserial.bridge.relay import Relay

    machine = BridgeMachine(Relay(), port="memory://x", serial_grace=3.0, silent_slot=60.0)
    machine.joined(TCP, 100.0, "127.0.0.1:5000")
    assert machine.silent_holder(159.0) is None
    assert machine.silent_holder(160.0) == "it has sent nothing for 60 s with no game open"
    machine.receive(TCP, b"Chello", 150.0)  # a word resets it
    assert machine.silent_holder(200.0) is None
    machine.receive(TCP, GAMEREQ, 200.0)  # a game open: the engine may think for ever
    assert machine.relay.judge.game_open
    assert machine.silent_holder(1000.0) is None
    machine.receive(SERIAL, GAMEACC, 1000.0)
    assert machine.silent_holder(2000.0) is None


@pytest.mark.e2e  # TCP on 127.0.0.1
def test_a_silent_client_gives_the_slot_up_and_is_told_why(cable_rig_factory: Any) -> None:
    rig = cable_rig_factory(silent_slot=0.05)
    with DxpClient("127.0.0.1", rig.port) as silent:
        wait_until(lambda: "tcp engine 127.0.0.1" in rig.log(), what="the first client in")
        for _ in range(200):  # the next engine tries again while it is told busy
            second = DxpClient("127.0.0.1", rig.port)
            wait_until(lambda c=second: c.eof.is_set() or "replaces 127.0.0.1" in rig.log(),  # type: ignore[misc]
                       what="the second client refused or let in")
            if not second.eof.is_set():
                break
            assert second.expect().startswith(b"Cdxserial bridge: busy: ")
            second.close()
        with second:
            told = silent.expect()
            assert told.startswith(b"Cdxserial bridge: replaced by another engine: it has sent")
            assert silent.closed_by_peer(timeout=10)
            second.send(GAMEREQ)
            assert rig.peer.expect() == GAMEREQ
    assert "with no game open)" in rig.log()


@pytest.mark.e2e  # TCP on 127.0.0.1
def test_mid_game_the_next_client_is_refused_busy_in_words_and_in_the_log(
    cable_rig_factory: Any,
) -> None:
    rig = cable_rig_factory(silent_slot=0.001)
    with DxpClient("127.0.0.1", rig.port) as first:
        first.send(GAMEREQ)
        assert rig.peer.expect() == GAMEREQ
        rig.peer.send(GAMEACC)
        assert first.expect() == GAMEACC
        with DxpClient("127.0.0.1", rig.port) as second:
            assert second.expect().startswith(b"Cdxserial bridge: busy: ")
            assert second.closed_by_peer(timeout=10)
        assert "refused TCP client 127.0.0.1:" in rig.log()
        assert ": busy, 127.0.0.1:" in rig.log()


# ----------------------------------------------------------------------- a stop (point 14)


@pytest.mark.e2e  # TCP on 127.0.0.1
def test_a_stop_right_after_a_message_is_queued_never_cuts_its_frame(
    tmp_path: Path,
) -> None:
    """A line slower than the stop's grace: the frame under way still ends whole."""
    rig = BridgeThread(tmp_path, shutdown_grace=0.02,
                       cable_args={"a_to_b": delayed(0.04)})  # each byte 40 ms to the engine
    try:
        with DxpClient("127.0.0.1", rig.port) as client:
            client.send(b"Cthe last words of a game")
            wait_until(lambda: rig.run.cable.written["a"] > 0, what="the frame begun")
            rig.stop()
        assert rig.peer.expect(timeout=5) == b"Cthe last words of a game"
    finally:
        rig.stop()


# --------------------------------------- a serial engine given up, and back (point 2)

M1, M2, M3 = b"M0000322800", b"M0000172100", b"M0000373200"


@pytest.mark.e2e  # TCP on 127.0.0.1
def test_a_serial_engine_replugged_after_the_grace_first_gets_the_end_of_its_old_game(
    cable_rig_factory: Any,
) -> None:
    rig = cable_rig_factory(serial_check=True, serial_grace=0.3, peer_grace=0.3)
    peer = rig.peer
    with DxpClient("127.0.0.1", rig.port) as client:
        client.send(GAMEREQ)  # the serial engine plays Black
        assert peer.expect() == GAMEREQ
        peer.send(GAMEACC)
        assert client.expect() == GAMEACC
        client.send(M1)
        assert peer.expect() == M1
        peer.send(M2)
        assert client.expect() == M2
        rig.call(rig.run.cable.unplug)  # mid-game, for longer than the grace
        wait_until(lambda: any(r.get("kind") == "session" and r.get("action") == "left"
                               and r.get("side") == "serial" for r in rig.trace()),
                   what="the serial engine given up")
        client.send(M3)  # White's move, for an engine that is gone
        assert client.expect() == b"E00"  # the bridge ends the game on its behalf
        client.send(b"E00")
        client.send(GAMEREQ)  # the next game, held for the serial engine
        wait_until(lambda: "keeping messages until one connects" in rig.log(),
                   what="the GAMEREQ held")
        rig.call(rig.run.cable.replug)
        assert peer.expect() == b"E00"  # the end of its old game, before anything else
        peer.send(b"E00")  # its answer: consumed
        assert peer.expect() == GAMEREQ
        peer.send(GAMEACC)
        assert client.expect() == GAMEACC  # not the serial engine's E00 first
    assert "given up" in rig.log()


def test_noise_is_logged_once_per_burst_then_summed_up() -> None:
    """Random bytes for a few seconds came as a log line per read; one burst is one line
    and a count (bridge/machine.py, fake clock)."""
    import logging

    from dxserial.bridge.judge import SERIAL
    from dxserial.bridge.machine import BridgeMachine
    from dxserial.bridge.relay import Relay
    from dxserial.drive.actions import Log
    from dxserial.errors import FramingError
    from dxserial.protocol.nulmodem import LinkProblem

    machine = BridgeMachine(Relay(), port="memory://x", serial_grace=3.0)
    noise = LinkProblem(FramingError("3 stray bytes 'abc'"), noise=True)
    logged: list[Log] = []
    for k in range(50):  # 50 reads, 0.1 s apart
        logged += [a for a in machine.line_problem(SERIAL, noise, 10.0 + k * 0.1)
                   if isinstance(a, Log) and a.level >= logging.INFO]
    assert len(logged) == 1 and "one burst" in logged[0].text
    deadline = machine.next_deadline()
    assert deadline is not None and abs(deadline - (14.9 + 1.0)) < 1e-9
    over = [a for a in machine.poll(deadline) if isinstance(a, Log)]
    assert [a.text for a in over] == [
        "serial line: noise burst over: 49 more noise report(s) in 4.9 s after the first, "
        "none delivered"
    ]
    assert machine.next_deadline() is None
