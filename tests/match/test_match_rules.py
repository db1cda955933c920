"""How ``dxserial match`` ends games: an illegal move, a side with no legal move.

Engine B is sometimes the test itself: the match listens (``listen://``) and the test
connects as a badly behaved follower."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from dxserial.game.pdn import read_pdn
from dxserial.protocol.messages import Chat, GameEnd, GameRequest, Move, parse
from dxserial.testing.peers import DxpClient
from dxserial.testing.process import Cli

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


@pytest.fixture
def started() -> Iterator[list[Cli]]:
    procs: list[Cli] = []
    yield procs
    for proc in reversed(procs):
        proc.stop()
        proc.__exit__(None, None, None)


def tcp_engine(procs: list[Cli], *extra: str) -> tuple[Cli, int]:
    engine = Cli("engine", "listen://127.0.0.1:0", "--role", "follower", *extra)
    procs.append(engine)
    match = re.search(r"127\.0\.0\.1:(\d+)", engine.out.expect("engine ready", timeout=20))
    assert match
    return engine, int(match.group(1))


def test_illegal_move_loses_and_out_of_turn_is_not_relayed(
    tmp_path: Path, started: list[Cli]
) -> None:
    engine_a, port_a = tcp_engine(started, "--seed", "1")
    match = Cli(
        "match",
        f"tcp://127.0.0.1:{port_a}",
        "listen://127.0.0.1:0",
        "--games",
        "1",
        "--pdn",
        str(tmp_path / "pdn"),
        "-v",
    )
    started.append(match)
    listening = match.out.expect("engine B: listening on", timeout=20)
    port_b = int(listening.rsplit(":", 1)[1])
    with DxpClient("127.0.0.1", port_b, timeout=20) as b:
        request = parse(b.expect())
        assert isinstance(request, GameRequest) and request.follower_colour.value == "Z"
        b.send(f"A{'Rogue':<32}0".encode())
        b.send(b"K0")  # out of turn (no BACKREQ to answer): dropped, never reaches A
        first = parse(b.expect())
        assert isinstance(first, Move)  # A's first move, relayed
        b.send(b"M0000010700")  # 1-7: 7 holds a black man
        chat = parse(b.expect())
        assert isinstance(chat, Chat) and chat.text.startswith("referee: illegal move 1-7")
        end = parse(b.expect())
        assert isinstance(end, GameEnd)
        assert end.wire == b"E31"  # the absent opponent claims the win; last game: stop
        b.send(b"E00")
        assert match.wait(20) == 0
    match.out.expect("game 1: White dxserial 0.1.0 (A) vs Black Rogue (B)", timeout=20)
    result = match.out.expect("game 1:", timeout=20)
    assert result.startswith("game 1: 2-0 (Black Rogue (B) played an illegal move 1-7: ")
    assert engine_a.out.expect("game 1:") == "game 1: 2-0 (Black resigned)"
    assert engine_a.wait(20) == 0
    log = match.stderr()
    assert "engine B: follower sent BACKACC but there is no BACKREQ to answer (not relayed)" in log
    assert "-> A: K0" not in log
    (record,) = read_pdn(next((tmp_path / "pdn").glob("*.pdn")))
    assert record.result == "2-0"
    assert record.black == "Rogue"
    assert record.violations() and "illegal move 1-7" in record.violations()[0][1]


def test_a_side_with_no_legal_move_loses(tmp_path: Path, started: list[Cli]) -> None:
    strong, port_a = tcp_engine(started, "--seed", "5", "--depth", "3")
    weak, port_b = tcp_engine(started, "--seed", "6", "--depth", "1")
    match = Cli(
        "match",
        f"tcp://127.0.0.1:{port_a}",
        f"tcp://127.0.0.1:{port_b}",
        "--games",
        "1",
        "--moves",
        "150",
        "--pdn",
        str(tmp_path / "pdn"),
    )
    started.append(match)
    assert match.wait(60) == 0
    match.out.expect("game 1: White")
    assert match.out.expect("game 1:").startswith("game 1: 2-0 (Black has no legal move)")
    assert strong.out.expect("game 1:") == "game 1: 2-0 (Black has no legal move)"
    assert weak.out.expect("game 1:") == "game 1: 2-0 (Black has no legal move)"
    assert strong.wait(20) == 0 and weak.wait(20) == 0
    (record,) = read_pdn(next((tmp_path / "pdn").glob("*.pdn")))
    assert record.result == "2-0" and not record.violations()


def test_sigint_while_waiting_for_engines(tmp_path: Path, started: list[Cli]) -> None:
    match = Cli(
        "match", "listen://127.0.0.1:0", "listen://127.0.0.1:0", "--pdn", str(tmp_path / "pdn")
    )
    started.append(match)
    match.out.expect("match:", timeout=20)
    assert match.stop(signal.SIGINT) == 1
    assert "match stopped after 0 game(s): interrupted" in match.stderr()
    assert not (tmp_path / "pdn").exists()  # no game was started, none is recorded
