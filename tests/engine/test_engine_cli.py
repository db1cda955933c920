"""``dxserial engine`` as a process: on a virtual serial pair (NULMODEM) and on TCP.

The other side is the test itself, thinking with its own in-memory :class:`Player` and
talking through the stand-in engines of ``dxserial.testing.peers``.
"""

from __future__ import annotations

import re
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import FOL, INI, run_in_process

from dxserial.engine.player import Player, PlayerConfig
from dxserial.protocol.framing import FrameReceived, NulFramer, nul_frame
from dxserial.protocol.messages import Chat, GameAccept, Move, parse
from dxserial.testing.peers import DxpClient, NulModemPeer
from dxserial.testing.process import Cli

pytestmark = pytest.mark.e2e

GAMEREQ_Z = f"R01{'Tester':<32}Z005075A".encode()  # the follower plays Black


@pytest.fixture
def vpair(tmp_path: Path) -> Iterator[tuple[str, str]]:
    a, b = str(tmp_path / "ttyA"), str(tmp_path / "ttyB")
    with Cli("vpair", a, b) as proc:
        proc.out.expect("vpair ready", timeout=20)
        yield a, b
        proc.stop()


def listening_port(line: str) -> int:
    match = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    assert match, line
    return int(match.group(1))


def test_follower_on_nulmodem_plays_a_game_to_the_end(vpair: tuple[str, str]) -> None:
    a, b = vpair
    args = ("engine", b, "--role", "follower", "--link", "nulmodem", "--seed", "1", "-v")
    with Cli(*args, "--echo-timeout", "2", "--max-attempts", "1000") as engine:
        engine.out.expect("engine ready: follower, serial port", timeout=20)
        with NulModemPeer(a, seed=1) as peer:
            tester = Player(PlayerConfig(role=INI, games=1, moves=4, seed=7, name="Tester"))
            outgoing = tester.start()
            received = []
            while True:
                for msg in outgoing:
                    peer.send(msg.wire)
                if tester.done:
                    break
                raw = peer.expect(timeout=20)
                received.append(raw)
                outgoing = tester.receive(parse(raw))
            assert isinstance(parse(received[0]), GameAccept)
            assert sum(isinstance(parse(r), Move) for r in received) == 4
            line = engine.out.expect("game 1:", timeout=20)
            assert line == "game 1: 1-1 (draw: move limit reached)"
            assert engine.wait(20) == 0
        assert "in  R01Tester" in engine.stderr()


def test_initiator_on_listen_offers_games_and_stops(tmp_path: Path) -> None:
    args = ("engine", "listen://127.0.0.1:0", "--role", "initiator", "--games", "2")
    with Cli(*args, "--moves", "6", "--time", "3", "--colour", "Z", "--seed", "3") as engine:
        port = listening_port(engine.out.expect("engine ready: initiator", timeout=20))
        with DxpClient("127.0.0.1", port, timeout=20) as client:
            tester = Player(PlayerConfig(role=FOL, seed=4, name="Tester"))
            first = client.expect()
            assert first.startswith(b"R01dxserial") and first.endswith(b"Z003006A")
            for reply in tester.receive(parse(first)):
                client.send(reply.wire)
            while not tester.done:
                for reply in tester.receive(parse(client.expect())):
                    client.send(reply.wire)
            assert engine.wait(20) == 0
        assert engine.out.expect("game 1:") == "game 1: 1-1 (draw: move limit reached)"
        assert engine.out.expect("game 2:") == "game 2: 1-1 (draw: move limit reached)"


def test_lost_link_exits_1() -> None:
    with Cli("engine", "listen://127.0.0.1:0", "--role", "follower") as engine:
        port = listening_port(engine.out.expect("engine ready", timeout=20))
        with DxpClient("127.0.0.1", port) as client:
            client.send(GAMEREQ_Z)
            assert client.expect().startswith(b"Adxserial")
        assert engine.wait(20) == 1
        assert "link lost: the peer closed the connection" in engine.stderr()


def test_illegal_move_is_told_the_game_ended_and_the_next_game_played() -> None:
    with Cli("engine", "listen://127.0.0.1:0", "--role", "follower") as engine:
        port = listening_port(engine.out.expect("engine ready", timeout=20))
        with DxpClient("127.0.0.1", port) as client:
            client.send(GAMEREQ_Z)
            client.expect()
            client.send(b"M0000051000")  # no white piece on 5
            chat = parse(client.expect())
            assert isinstance(chat, Chat) and "illegal move 5-10" in chat.text
            assert client.expect() == b"E00"  # the engine ends the game ...
            client.send(b"E00")
            client.send(GAMEREQ_Z)  # ... and takes the next one
            assert client.expect().startswith(b"Adxserial")
            client.send(b"E01")  # we are White: we end game 2 and the session
            assert client.expect() == b"E00"
            assert engine.wait(20) == 0
        assert engine.out.expect("game 1:").startswith("game 1: * (abandoned: initiator played")
        assert engine.out.expect("game 2:") == "game 2: * (no result: White ended the game)"


def test_a_peer_that_keeps_breaking_the_protocol_is_given_up_on() -> None:
    with Cli("engine", "listen://127.0.0.1:0", "--role", "follower") as engine:
        port = listening_port(engine.out.expect("engine ready", timeout=20))
        with DxpClient("127.0.0.1", port) as client:
            for raw in (b"M0000322800", b"M0000312700", b"Mxx", b"M0000332900", b"B001W"):
                client.send(raw)
            assert isinstance(parse(client.expect()), Chat)
            assert client.expect() == b"E00"
            farewell = parse(client.expect())
            assert isinstance(farewell, Chat) and "giving up after 5" in farewell.text
            assert engine.wait(20) == 1
        err = engine.stderr().strip().splitlines()
        assert err[-1].startswith(
            "dxserial: error: protocol failure: initiator broke the protocol 5 times in a row, "
            "last: "
        )


def test_sigterm_after_a_finished_game_exits_0() -> None:
    with Cli("engine", "listen://127.0.0.1:0", "--role", "follower") as engine:
        port = listening_port(engine.out.expect("engine ready", timeout=20))
        with DxpClient("127.0.0.1", port) as client:
            client.send(f"R01{'Tester':<32}Z005001A".encode())  # one move each, then a draw
            assert client.expect().startswith(b"A")
            client.send(b"M0000322800")
            assert client.expect().startswith(b"M")
            client.send(b"E20")  # we are White, to move at the limit: a draw
            assert client.expect() == b"E00"
            assert engine.out.expect("game 1:") == "game 1: 1-1 (draw: move limit reached)"
            assert engine.stop(signal.SIGTERM) == 0


def test_sigterm_during_the_first_game_exits_1() -> None:
    with Cli("engine", "listen://127.0.0.1:0", "--role", "follower") as engine:
        port = listening_port(engine.out.expect("engine ready", timeout=20))
        with DxpClient("127.0.0.1", port) as client:
            client.send(f"R01{'Tester':<32}W005075A".encode())  # the engine is White ...
            assert client.expect().startswith(b"A")
            assert client.expect().startswith(b"M")  # ... and moves; now it is our move
            assert engine.stop(signal.SIGTERM) == 1
        assert engine.stderr().strip().splitlines()[-1] == (
            "dxserial: error: stopped during game 1, before any game was played to its end"
        )


def test_sigint_while_waiting_for_a_peer_exits_1() -> None:
    """A script must be able to tell 'played nothing' from success."""
    with Cli("engine", "listen://127.0.0.1:0", "--role", "follower") as engine:
        engine.out.expect("engine ready", timeout=20)
        assert engine.stop(signal.SIGINT) == 1
        assert engine.stderr().strip().splitlines()[-1] == (
            "dxserial: error: stopped before any game was played"
        )


def test_sigint_during_a_deep_search_is_obeyed() -> None:
    """The search runs in a thread; a signal cancels it and the engine ends the game."""
    args = ("engine", "listen://127.0.0.1:0", "--role", "follower", "--depth", "10")
    with Cli(*args) as engine:
        port = listening_port(engine.out.expect("engine ready", timeout=20))
        with DxpClient("127.0.0.1", port) as client:
            # 999 minutes: the clock allows ~50 minutes for this move, so only the signal
            # can end the search.
            client.send(f"R01{'Tester':<32}Z999075A".encode())
            assert client.expect().startswith(b"A")
            client.send(b"M0000322800")  # the engine, Black, starts thinking at depth 10
            assert engine.stop(signal.SIGINT) == 1
            assert client.expect() == b"E01"  # it was its move: it ends the game and stops


def test_unanswered_gamereq_is_hinted_and_repeated_on_tcp() -> None:
    args = ("engine", "listen://127.0.0.1:0", "--role", "initiator", "--answer-timeout", "0.2")
    with Cli(*args) as engine:
        port = listening_port(engine.out.expect("engine ready", timeout=20))
        with DxpClient("127.0.0.1", port) as client:
            first = client.expect()
            assert first.startswith(b"R01")
            assert client.expect() == first  # nothing answered: the GAMEREQ comes again
            assert engine.stop(signal.SIGTERM) == 1
        err = engine.stderr()
    hint = (
        f"nothing answered on the connection to 127.0.0.1:{port} after 0.2 s: is the other "
        "side running, and on the same link type? (GAMEREQ sent again)"
    )
    assert hint in err
    assert err.strip().splitlines()[-1] == "dxserial: error: stopped before any game was played"


def test_initiator_connects_to_tcp_and_plays_a_follower() -> None:
    """``tcp://`` connects to a listening engine: here a bare socket server in the test."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        server.settimeout(20)
        args = ("engine", f"tcp://127.0.0.1:{port}", "--role", "initiator", "--games", "1")
        with Cli(*args, "--moves", "3") as engine:
            conn, _ = server.accept()
            with conn:
                conn.settimeout(20)
                tester = Player(PlayerConfig(role=FOL, seed=9))
                framer = NulFramer()
                while not tester.done:
                    data = conn.recv(4096)
                    assert data, "the engine hung up"
                    for event in framer.feed(data):
                        assert isinstance(event, FrameReceived)
                        for reply in tester.receive(parse(event.raw)):
                            conn.sendall(nul_frame(reply.wire))
                assert engine.wait(20) == 0
            assert engine.out.expect("engine ready: initiator, connecting to 127.0.0.1:")
            assert engine.out.expect("game 1:") == "game 1: 1-1 (draw: move limit reached)"


def test_a_depth_beyond_the_bound_is_refused_in_one_line() -> None:
    done = run_in_process("engine", "listen://127.0.0.1:0", "--role", "follower", "--depth", "11")
    assert done.returncode == 2
    err = done.stderr.strip().splitlines()
    assert err == [
        "dxserial: error: --depth 11: must be 1..10 (each ply multiplies the search time by 3 to 5)"
    ]


@pytest.mark.e2e
def test_a_speed_mismatch_names_the_speed_and_the_probe(tmp_path: Path) -> None:
    """Issue 38 point 17: two engines at 9600 and 2400 baud on a vpair; what each says
    suggests the speed and `dxserial probe`."""
    from dxserial.testing.rig import start_vpair

    vpair, a, b = start_vpair(tmp_path, "--baud-a", "9600", "--baud-b", "2400")
    with vpair, Cli("engine", b, "--role", "follower", "--baud", "2400") as follower:
        # The unanswered GAMEREQ is said after 1 s, well before the link gives up (2 x 2 s).
        with Cli("engine", a, "--role", "initiator", "--answer-timeout", "1",
                 "--echo-timeout", "2", "--max-attempts", "2") as initiator:
            code = initiator.proc.wait(60)
            said = initiator.stderr()
        assert code == 1
        assert f"nothing answered on {a} after 1 s: is the other side running, at the same " \
               f"speed, link type and start and end bytes? (dxserial probe {a} finds" in said
        assert said.strip().splitlines()[-1].startswith("dxserial: error: link lost")
        assert "at this speed? dxserial probe finds the speed" in said.strip().splitlines()[-1]
        follower.stop()
        assert "a sender at another speed: dxserial probe finds its speed" in follower.stderr()
        vpair.stop()
