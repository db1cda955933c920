"""Sessions end to end: engines that start in another order, leave, reconnect or restart.

Real processes only: ``dxserial vpair``, ``dxserial bridge`` and ``dxserial engine`` on
both sides.  Each story runs once with ``--referee warn`` on a NULMODEM line and once
with ``--referee strict`` on a NUL line (the relay's unit tests in test_relay.py cover
every story in both referee modes).  What a user would check afterwards: every game is in
the PDN directory exactly once, no engine that followed the protocol is blamed, each
engine exits as it should, and nothing from an old session reached a new engine.  Scripted
sessions (the closing counts against the trace, a serial port gone past its grace) run in
process in test_bridge_inproc.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import trace_so_far

from dxserial.game.pdn import read_pdn
from dxserial.game.record import GameRecord
from dxserial.testing.peers import DxpClient
from dxserial.testing.process import Cli, wait_until
from dxserial.testing.rig import Rig, RigFactory

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

COMBOS = [("warn", "nulmodem"), ("strict", "nul")]
NAME = "Ghost".ljust(32)
GHOST_REQ = f"R01{NAME}W001003A".encode()  # the serial follower plays White


def start_rig(rig_factory: RigFactory, tmp_path: Path, referee: str, link: str, grace: str) -> Rig:
    return rig_factory(
        bridge_args=(
            "--link", link, "--referee", referee, "--pdn", str(tmp_path / "games"),
            "--peer-grace", grace,
        )
    )


def engine(rig: Rig, side: str, role: str, link: str, seed: int, *extra: str) -> Cli:
    if side == "serial":
        where: tuple[str, ...] = (
            rig.peer_path, "--link", link, "--echo-timeout", "2", "--max-attempts", "1000",
        )
    else:
        where = (f"tcp://127.0.0.1:{rig.port}",)
    proc = Cli(
        "engine", *where, "--role", role, "--seed", str(seed), "--depth", "1",
        "--answer-timeout", "1", *extra,
    )
    proc.out.expect("engine ready", timeout=20)
    return proc


def trace(rig: Rig) -> list[dict[str, Any]]:
    return trace_so_far(rig.trace_path)


def moves_played(rig: Rig) -> int:
    return sum(
        1 for r in trace(rig)
        if r.get("kind") == "message" and r.get("type") == "MOVE" and r["action"] == "queued"
    )


def games(tmp_path: Path) -> list[GameRecord]:
    folder = tmp_path / "games"
    if not folder.exists():
        return []
    return [g for path in sorted(folder.glob("*.pdn")) for g in read_pdn(path)]


def assert_nobody_blamed(rig: Rig) -> None:
    log = rig.log()
    assert "broke the dialogue" not in log
    assert "illegal move" not in log
    assert "Traceback" not in log


def finished(records: list[GameRecord]) -> list[GameRecord]:
    return [g for g in records if g.result != "*"]


def kill_mid_game(rig: Rig, side: str, role: str, link: str, seed: int) -> None:
    """An engine that plays a few moves, then dies without a word (SIGKILL)."""
    with engine(rig, side, role, link, seed, "--games", "1", "--moves", "40") as doomed:
        wait_until(lambda: moves_played(rig) >= 6, timeout=30, what="a few moves")
        doomed.proc.kill()


def assert_one_cut_and_one_finished(rig: Rig, tmp_path: Path) -> None:
    """Both games are recorded exactly once: the cut one with '*', the next one finished."""
    wait_until(lambda: len(games(tmp_path)) == 2, what="both games recorded")
    assert len(finished(games(tmp_path))) == 1
    assert_nobody_blamed(rig)


@pytest.mark.parametrize(("referee", "link"), COMBOS)
def test_a_serial_engine_that_starts_first(
    rig_factory: RigFactory, tmp_path: Path, referee: str, link: str
) -> None:
    rig = start_rig(rig_factory, tmp_path, referee, link, "0.5")
    with engine(rig, "serial", "initiator", link, 1, "--games", "1", "--moves", "3") as serial:
        # Its GAMEREQ waits in the bridge until a TCP engine connects, then is delivered to it.
        wait_until(
            lambda: any(r.get("type") == "GAMEREQ" for r in trace(rig)), timeout=20,
            what="the GAMEREQ queued",
        )
        with engine(rig, "tcp", "follower", link, 2) as tcp:
            assert serial.wait(60) == 0
            assert tcp.wait(30) == 0
    wait_until(lambda: len(games(tmp_path)) == 1, what="the PDN file")
    assert len(finished(games(tmp_path))) == 1
    assert_nobody_blamed(rig)


@pytest.mark.parametrize(("referee", "link"), COMBOS)
def test_messages_for_a_departed_peer_never_reach_the_next_engine(
    rig_factory: RigFactory, tmp_path: Path, referee: str, link: str
) -> None:
    rig = start_rig(rig_factory, tmp_path, referee, link, "0.5")
    with engine(rig, "serial", "follower", link, 3) as serial:
        with DxpClient("127.0.0.1", rig.port) as ghost:
            ghost.send(GHOST_REQ)  # asks for a game and leaves at once
            wait_until(
                lambda: any(r.get("type") == "GAMEREQ" for r in trace(rig)),
                what="the GAMEREQ judged",
            )
        # Before, the serial engine's GAMEACC and first MOVE reached the next engine, which
        # took them for the answer to its own GAMEREQ.
        with engine(rig, "tcp", "initiator", link, 4, "--games", "1", "--moves", "3") as tcp:
            assert tcp.wait(60) == 0, tcp.out.lines
        # It played that game; the TCP engine's stop code 1 ended that engine's session only.
        assert serial.proc.poll() is None
    wait_until(lambda: len(finished(games(tmp_path))) == 1, what="the real game's PDN")
    assert_nobody_blamed(rig)


@pytest.mark.parametrize(("referee", "link"), COMBOS)
def test_a_tcp_engine_that_leaves_mid_game(
    rig_factory: RigFactory, tmp_path: Path, referee: str, link: str
) -> None:
    rig = start_rig(rig_factory, tmp_path, referee, link, "0.5")
    with engine(rig, "serial", "follower", link, 5) as serial:
        kill_mid_game(rig, "tcp", "initiator", link, 6)
        # After the grace period the bridge ends the game towards the serial engine...
        wait_until(lambda: len(games(tmp_path)) == 1, timeout=20, what="the cut game recorded")
        (cut,) = games(tmp_path)
        assert cut.result == "*"
        bridge_said = [
            r for r in trace(rig)
            if r.get("action") == "sent-by-bridge" and r.get("on_behalf_of") == "tcp"
        ]
        assert bridge_said and bridge_said[0]["type"] == "GAMEEND"
        # ...which is ready for the next engine.
        assert serial.proc.poll() is None
        with engine(rig, "tcp", "initiator", link, 7, "--games", "1", "--moves", "3") as tcp2:
            assert tcp2.wait(60) == 0, tcp2.out.lines
        assert serial.proc.poll() is None  # still ready: a stop code 1 ends the TCP session
    assert_one_cut_and_one_finished(rig, tmp_path)


@pytest.mark.parametrize(("referee", "link"), COMBOS)
def test_a_tcp_engine_that_reconnects_within_the_grace_period(
    rig_factory: RigFactory, tmp_path: Path, referee: str, link: str
) -> None:
    rig = start_rig(rig_factory, tmp_path, referee, link, "600")
    with engine(rig, "serial", "follower", link, 8) as serial:
        kill_mid_game(rig, "tcp", "initiator", link, 9)
        # Back at once: its GAMEREQ makes the bridge close the old game, not the 10-minute
        # grace (a game played within the wait below could not have waited for it).
        with engine(rig, "tcp", "initiator", link, 10, "--games", "1", "--moves", "3") as tcp2:
            assert tcp2.wait(60) == 0, tcp2.out.lines
        assert serial.proc.poll() is None  # still ready: a stop code 1 ends the TCP session
    assert "held until the" in rig.log()  # its GAMEREQ waited for the old game's close
    assert_one_cut_and_one_finished(rig, tmp_path)


@pytest.mark.parametrize(("referee", "link"), COMBOS)
def test_a_serial_engine_that_restarts_mid_game(
    rig_factory: RigFactory, tmp_path: Path, referee: str, link: str
) -> None:
    rig = start_rig(rig_factory, tmp_path, referee, link, "0.5")
    with engine(rig, "tcp", "follower", link, 11) as tcp:
        kill_mid_game(rig, "serial", "initiator", link, 12)  # the DOS PC is rebooted
        with engine(rig, "serial", "initiator", link, 13, "--games", "1", "--moves", "3") as s2:
            assert s2.wait(60) == 0, s2.out.lines
        assert tcp.wait(30) == 0  # it played the new game and stopped with it
    assert_one_cut_and_one_finished(rig, tmp_path)
