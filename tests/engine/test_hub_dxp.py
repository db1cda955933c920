"""A Hub engine as a DXP engine: ``dxserial engine ENDPOINT --hub CMD``.

The Hub side is checked sans-I/O (HubClient), with scripted misbehaving engines (HubMover)
and in the player with a fake move source; whole games run through the bridge against a
serial engine, and in ``dxserial match`` as a follower that connects to the director."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from dxserial.draughts import LegalMove, Position
from dxserial.engine.hub_client import Done, Failed, HubClient, Info, Ready
from dxserial.engine.hub_mover import HubMover, hub_name, reversible_tail
from dxserial.engine.mover import MoverFailed
from dxserial.engine.player import Player, PlayerConfig
from dxserial.protocol import hub
from dxserial.protocol.messages import (
    AcceptCode,
    Colour,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    StopCode,
)
from dxserial.protocol.session import Role
from dxserial.testing.process import Cli, free_port
from dxserial.testing.rig import TEST_BRIDGE_ARGS, start_rig, start_serial_engine

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

HUB_ENGINE = f"{sys.executable} -m dxserial hub-engine -q --seed 1 --depth 2"


def ready_client() -> HubClient:
    client = HubClient()
    client.start()
    for text in ('id name="Scan" version=3.1', "param name=book value=true type=bool", "wait"):
        assert client.receive(text) == []
    assert client.initialising
    assert client.receive("Scan is loading its book ...") == []  # chatter while initialising
    assert client.receive("ready") == [Ready("Scan")]
    return client


def test_the_client_asks_for_a_move_and_checks_it() -> None:
    client = ready_client()
    lines = client.think(Position.start(), hub.Level(time=60.0, moves=40))
    assert lines == [
        "pos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww",
        "level moves=40 time=60",
        "go think",
    ]
    assert client.receive("info depth=3 score=0.1") == []
    assert client.receive("some-future-command x=1") == []  # unknown: ignored
    (done,) = client.receive("done move=32-28 ponder=19-23")
    assert isinstance(done, Done) and done.move.key == (32, 28, frozenset())
    assert client.receive('error message="no book"') == [Info("error: no book")]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("done move=32-29", "bad move: illegal move 32-29"),
        ("done move=e2e4", "bad move: 'e2e4' is not a Hub move"),
        ("done", "bad move: 'done': done without move="),
        ('info pv="32-28', "unreadable line"),
        ("ready", "'ready' out of protocol (searching)"),
        ("wait", "'wait' out of protocol"),
    ],
)
def test_an_engine_out_of_protocol_fails_with_one_reason(line: str, says: str) -> None:
    client = ready_client()
    client.think(Position.start(), hub.Level(depth=3))
    (failed,) = client.receive(line)
    assert isinstance(failed, Failed) and says in failed.reason, failed.reason
    assert client.failed and client.receive("done move=32-28") == []


def test_done_without_a_search_is_out_of_protocol() -> None:
    (failed,) = ready_client().receive("done move=32-28")
    assert isinstance(failed, Failed) and "out of protocol (idle)" in failed.reason


def test_pos_carries_the_king_moves_since_the_last_man_move_or_capture() -> None:
    start = Position.from_fen("W:WK50,46:B5,K1")
    king_moves = ["50-22", "1-7", "22-27", "7-29"]
    positions = [start]
    for text in ["46-41", "5-10", *king_moves]:  # a man move each, then only king moves
        positions.append(positions[-1].play(hub.parse_hub_move(positions[-1], text)))
    first, moves = reversible_tail(positions)
    assert first == positions[2] and [hub.format_hub_move(m) for m in moves] == king_moves
    client = ready_client()
    (pos, _level, _go) = client.think(first, hub.Level(depth=2), moves)
    assert pos.endswith('moves="50-22 1-7 22-27 7-29"')
    assert client.position == positions[-1]
    assert reversible_tail([start]) == (start, [])


def test_hub_names_become_dxp_names() -> None:
    assert (
        hub_name('"Scan 3.1 with a very long name indeed, yes"')
        == "Scan 3.1 with a very long name i"[:32]
    )
    assert hub_name("\x01") == ""


# --------------------------------------------------------------------------- processes

FAKE = """
import sys
mode = sys.argv[1]
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "hub" and mode == "mute":
        continue
    if word == "hub":
        print("id name=fake", flush=True)
        print("wait", flush=True)
    elif word == "init":
        print("ready", flush=True)
    elif word == "go":
        if mode == "die":
            sys.exit(3)
        if mode == "illegal":
            print("done move=32-29", flush=True)
        if mode == "garbage":
            print('done move="32-28', flush=True)
        if mode == "stop-late":
            pass  # answers only after stop
        if mode == "chatter":
            print("thinking hard about 32-28", flush=True)
            print("done move=32-28", flush=True)
    elif word == "stop" and mode == "stop-late":
        print("done move=32-28", flush=True)
    elif word == "quit":
        break
"""


@pytest.fixture
def fake(tmp_path: Path) -> str:
    path = tmp_path / "fake_hub.py"
    path.write_text(FAKE)
    return f"{sys.executable} {path}"


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("die", "the Hub engine ended (exit status 3) during its move"),
        ("illegal", "broke the protocol: bad move: illegal move 32-29"),
        ("garbage", "broke the protocol: unreadable line"),
        ("silent", "gave no move in 0.2 s, nor 0.2 s after 'stop'"),
    ],
)
def test_a_hub_engine_that_gives_no_legal_move_fails_in_one_line(
    fake: str, mode: str, says: str
) -> None:
    mover = HubMover(f"{fake} {mode}", max_wait=0.2, grace=0.2)
    try:
        assert mover.start() == "fake"
        with pytest.raises(MoverFailed, match=re.escape(says)):
            mover.choose(1, [Position.start()], seconds_left=None, moves_left=None)
    finally:
        mover.close()


def test_lines_the_protocol_does_not_know_are_ignored(fake: str) -> None:
    mover = HubMover(f"{fake} chatter", max_wait=5.0)
    try:
        mover.start()
        move = mover.choose(1, [Position.start()], seconds_left=None, moves_left=None)
        assert move.key == (32, 28, frozenset())
    finally:
        mover.close()


def test_stop_at_the_deadline_still_takes_the_engines_move(fake: str) -> None:
    mover = HubMover(f"{fake} stop-late", max_wait=0.1, grace=2.0)
    try:
        mover.start()
        move = mover.choose(1, [Position.start()], seconds_left=None, moves_left=None)
        assert move.key == (32, 28, frozenset())
    finally:
        assert mover.close() == 0


def test_an_engine_that_never_finishes_the_handshake_is_one_line(fake: str) -> None:
    mover = HubMover(f"{fake} mute", start_timeout=0.2)
    try:
        with pytest.raises(
            MoverFailed, match=r"did not finish the handshake \(hub, init\) in 0.2 s"
        ):
            mover.start()
    finally:
        mover.close()


def test_a_command_that_cannot_start_is_one_line() -> None:
    mover = HubMover("/nonexistent/scan hub")
    with pytest.raises(MoverFailed, match="cannot start the Hub engine '/nonexistent/scan hub'"):
        mover.start()


# --------------------------------------------------------------------------- the player


class _Source:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.asked: list[tuple[int, float | None, int | None]] = []

    def choose(
        self,
        game: int,
        positions: Sequence[Position],
        *,
        seconds_left: float | None,
        moves_left: int | None,
        cancel: threading.Event | None = None,
    ) -> LegalMove:
        self.asked.append((game, seconds_left, moves_left))
        if self.fail:
            raise MoverFailed("the Hub engine exited (code 9) during its move")
        return positions[-1].legal_moves()[0]


def test_the_player_gives_its_move_source_the_gamereqs_clock() -> None:
    source = _Source()
    now = [100.0]
    player = Player(PlayerConfig(role=Role.FOLLOWER), clock=lambda: now[0], mover=source)
    request = GameRequest(name="peer", follower_colour=Colour.WHITE, minutes=2, moves=40)
    out = player.receive(request)
    assert isinstance(out[0], GameAccept) and out[0].code is AcceptCode.ACCEPT
    assert len(out) == 2  # and our first move, from the source
    assert source.asked == [(1, 120.0, 40)]


def test_a_failed_move_source_ends_the_game_with_gameend_and_the_session() -> None:
    player = Player(PlayerConfig(role=Role.FOLLOWER), mover=_Source(fail=True))
    out = player.receive(GameRequest(name="peer", follower_colour=Colour.WHITE, minutes=2, moves=0))
    assert out[-1] == GameEnd(reason=EndReason.NONE, stop=StopCode.STOP)
    assert not player.ok and "exited (code 9)" in (player.outcome or "")
    assert player.receive(GameEnd(reason=EndReason.NONE, stop=StopCode.STOP)) == []
    assert player.done


# --------------------------------------------------------------------------- whole games


def test_a_hub_engine_plays_a_whole_game_through_the_bridge_against_a_serial_engine(
    tmp_path: Path,
) -> None:
    rig = start_rig(tmp_path, bridge_args=(*TEST_BRIDGE_ARGS, "--pass-stop"))
    try:
        with Cli(
            "engine",
            rig.peer_path,
            "--role",
            "follower",
            "--seed",
            "4",
            "--depth",
            "2",
            "--echo-timeout",
            "0.5",
            "--max-attempts",
            "1000",
        ) as serial:
            serial.out.expect("engine ready", timeout=20)
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "dxserial",
                    "engine",
                    f"tcp://127.0.0.1:{rig.port}",
                    "--role",
                    "initiator",
                    "--games",
                    "1",
                    "--time",
                    "0",
                    "--moves",
                    "30",
                    "--hub",
                    HUB_ENGINE,
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert result.returncode == 0, result.stdout + result.stderr
            assert re.search(r"game 1: (2-0|1-1|0-2) ", result.stdout), result.stdout
            assert serial.wait(20) == 0
            # The Hub engine's 'id name=' is our name in the GAMEREQ.
            assert re.search(r"playing White against dxserial$", serial.stderr(), re.M)
    finally:
        counts = rig.close()
    assert counts.get("violations") == 0, counts


def test_match_plays_a_hub_follower_that_connects_to_the_director(tmp_path: Path) -> None:
    vpair, serial, end = start_serial_engine(tmp_path, 6, "--depth", "2")
    port = free_port()
    with (
        vpair,
        serial,
        Cli(
            "match",
            f"listen://127.0.0.1:{port}",
            end,
            "--games",
            "2",
            "--time",
            "0",
            "--moves",
            "20",
            "--pdn",
            str(tmp_path / "pdn"),
            "--echo-timeout",
            "0.5",
            "--max-attempts",
            "1000",
        ) as match,
        Cli(
            "engine",
            f"tcp://127.0.0.1:{port}",
            "--role",
            "follower",
            "--hub",
            HUB_ENGINE,
        ) as follower,
    ):
        assert match.wait(120) == 0, match.stderr()
        assert follower.wait(20) == 0
        lines = match.out.drain()
        match_err = match.stderr()
    results = [line for line in lines if re.match(r"game \d: (2-0|1-1|0-2)", line)]
    assert len(results) == 2, (lines, match_err)


def hub_initiator(
    end: str, hub: str, *extra: str, timeout: float, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``dxserial engine END --role initiator --hub HUB``: one game against the serial
    engine at ``end``, no clock; its exit status and output."""
    return subprocess.run(
        [sys.executable, "-m", "dxserial", "engine", end, "--role", "initiator", "--games",
         "1", "--time", "0", "--echo-timeout", "2", *extra, "--hub", hub],
        capture_output=True, text=True, timeout=timeout, cwd=cwd,
    )


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("die", "the Hub engine ended (exit status 3) during its move"),
        ("illegal", "the Hub engine broke the protocol: bad move: illegal move 32-29"),
    ],
)
def test_a_hub_engine_that_dies_or_plays_an_illegal_move_is_one_line_under_q(
    tmp_path: Path, fake: str, mode: str, says: str
) -> None:
    vpair, serial, end = start_serial_engine(tmp_path, 6, "--depth", "2")
    with vpair, serial:
        result = hub_initiator(end, f"{fake} {mode}", "--colour", "Z", "-q", timeout=60)
        assert result.returncode == 1
        (line,) = result.stderr.splitlines()  # no ERROR record beside the result line
        assert line.startswith(f"dxserial: error: session ended: {says}"), result.stderr
        serial.out.expect("game 1: *", timeout=20)
        assert serial.wait(20) == 0  # our GAMEEND had stop code 1: it stopped cleanly


def test_a_silent_hub_engine_is_reported_in_seconds_a_person_reads(fake: str) -> None:
    mover = HubMover(f"{fake} silent", grace=0.2)
    try:
        mover.start()
        with pytest.raises(MoverFailed, match=r"gave no move in 0\.3 s, nor 0\.2 s after"):
            mover.choose(1, [Position.start()], seconds_left=0.29996, moves_left=None)
    finally:
        mover.close()


SCAN = os.environ.get("DXSERIAL_SCAN", "")


@pytest.mark.skipif(
    not SCAN, reason="set DXSERIAL_SCAN to a Scan 3.x binary (its scan.ini and data/ beside it)"
)
def test_scan_in_hub_mode_plays_a_serial_engine(tmp_path: Path) -> None:
    vpair, serial, end = start_serial_engine(tmp_path, 8, "--depth", "2")
    with vpair, serial:
        result = hub_initiator(
            end, f"{SCAN} hub", "--moves", "30", timeout=120, cwd=Path(SCAN).parent
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert re.search(r"game 1: (2-0|1-1|0-2) ", result.stdout), result.stdout
        assert serial.wait(20) == 0
