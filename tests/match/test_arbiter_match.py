"""``dxserial match`` as an arbiter: FMJD's draw rules, the director's clock, false claims.

Engine A is the built-in engine; engine B a stand-in (dxserial.testing.arbiter_standins) that
connects to the match's ``listen://`` endpoint and breaks or stretches one rule."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pdn_check import both_read

from dxserial.game.pdn import read_pdn
from dxserial.protocol.messages import Chat, EndReason, GameEnd
from dxserial.testing.arbiter_standins import Choice, StandIn, first_quiet_king_move, shuttle
from dxserial.testing.peers import DxpClient
from dxserial.testing.process import Cli

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

FORCED_REPETITION = "W:WK46,31,32,37:BK47,K3,21,22,23,26,27,28,36,38,43"


@pytest.fixture
def started() -> Iterator[list[Cli]]:
    procs: list[Cli] = []
    yield procs
    for proc in reversed(procs):
        proc.stop()
        proc.__exit__(None, None, None)


def play(
    started: list[Cli], tmp_path: Path, *args: str, choose: Choice = first_quiet_king_move,
    think: float = 0.0, engine_args: tuple[str, ...] = (),
) -> tuple[StandIn, GameEnd, Cli]:
    """One game: the built-in engine (A, White) against a stand-in (B, Black)."""
    engine = Cli(
        "engine", "listen://127.0.0.1:0", "--role", "follower", "--seed", "1", *engine_args
    )
    started.append(engine)
    port_a = re.search(r"127\.0\.0\.1:(\d+)", engine.out.expect("engine ready", timeout=20))
    assert port_a
    match = Cli(
        "match", f"tcp://127.0.0.1:{port_a.group(1)}", "listen://127.0.0.1:0",
        "--games", "1", "--pdn", str(tmp_path / "pdn"), *args,
    )
    started.append(match)
    listening = match.out.expect("engine B: listening on", timeout=20)
    with DxpClient("127.0.0.1", int(listening.rsplit(":", 1)[1]), timeout=20) as client:
        stand_in = StandIn(client, choose, think=think)
        end = stand_in.play(timeout=20)
        assert match.wait(20) == 0
    return stand_in, end, match


def result_line(match: Cli) -> str:
    match.out.expect("game 1: White ", timeout=20)
    return match.out.expect("game 1: ", timeout=20)


def chats(stand_in: StandIn) -> list[str]:
    return [m.text for m in stand_in.seen if isinstance(m, Chat)]


def test_king_shuffling_ends_by_the_five_move_rule_at_the_latest(
    tmp_path: Path, started: list[Cli]
) -> None:
    stand_in, end, match = play(started, tmp_path, "--opening", "W:WK46,K47:BK3")
    (path,) = (tmp_path / "pdn").glob("*.pdn")
    (record,) = read_pdn(path)
    both_read(path)  # a FEN start, a draw by rule: pydraughts reads it
    assert record.plies <= 10  # 5 moves each at most
    assert record.termination in result_line(match)
    if record.result == "1-1":  # the 5-move rule, or a repetition before it
        assert re.fullmatch(
            r"draw by (the 5-move rule|threefold repetition) \(FMJD Annex 1, art. 6\)",
            record.termination,
        )
        assert end.reason is EndReason.DRAW
        assert any(text.startswith(f"referee: {record.termination}") for text in chats(stand_in))
    else:  # the built-in engine caught the king: a result the position allows
        assert record.result == "2-0" and "no legal move" in record.termination


def test_forced_repetition_ends_by_threefold_repetition(
    tmp_path: Path, started: list[Cli]
) -> None:
    stand_in, end, match = play(
        started, tmp_path, "--opening", FORCED_REPETITION, choose=shuttle(3, 9)
    )
    assert result_line(match) == (
        "game 1: 1-1 (draw by threefold repetition (FMJD Annex 1, art. 6))"
        f" -> {next((tmp_path / 'pdn').glob('*.pdn'))}"
    )
    (path,) = (tmp_path / "pdn").glob("*.pdn")
    (record,) = read_pdn(path)
    assert record.plies == 8 and record.result == "1-1"
    both_read(path)
    assert end.wire == b"E21"
    assert any("for the third time" in text for text in chats(stand_in))


def test_a_stand_in_that_thinks_past_its_time_loses_on_time(
    tmp_path: Path, started: list[Cli]
) -> None:
    stand_in, end, match = play(
        started, tmp_path, "--time-control", "1s", "--clock-margin", "0.1", think=1.6,
        engine_args=("--depth", "1"),  # White's one move is well inside its second
    )
    line = result_line(match)
    assert line.startswith("game 1: 2-0 (Black Stand-in (B) lost on time (1 s for the game")
    assert end.reason is EndReason.WIN  # on behalf of White, who won on time
    assert any("lost on time" in text for text in chats(stand_in))
    (path,) = (tmp_path / "pdn").glob("*.pdn")
    (record,) = read_pdn(path)
    assert record.result == "2-0" and "lost on time" in record.termination
    assert record.tags["TimeControl"] == "1"  # the director's clock: 1 s for the game
    # White's one move carries the director's clock (both sides' time left); the engine's
    # "0 s" agrees with what it was charged to the second, so no [%emt].
    assert "1. " in path.read_text() and "{[%clock w0:00:01 B0:00:01]} 2-0" in path.read_text()
    both_read(path)  # a loss on time, as pydraughts reads it


def test_a_false_win_claim_is_recorded_and_scored_as_a_loss(
    tmp_path: Path, started: list[Cli]
) -> None:
    stand_in, end, match = play(
        started, tmp_path, "--pdn-notes", choose=lambda position, ply: EndReason.WIN
    )
    assert result_line(match).startswith(
        "game 1: 2-0 (Black Stand-in (B) claimed the win, false claim: White can still move;"
        " scored as a loss)"
    )
    assert end.wire == b"E01"  # the director's answer to the claim
    assert any("false claim" in text for text in chats(stand_in))
    (path,) = (tmp_path / "pdn").glob("*.pdn")
    (record,) = read_pdn(path)
    assert record.result == "2-0" and "false claim" in record.termination
    # --pdn-notes: the clock as prose beside White's move, no clock commands.
    assert any(t.startswith("clock: ") and "engine says 0 s" in t for t in record.comments[1])
    assert "[%clock" not in path.read_text()
    both_read(path)


def test_draw_rules_off_leave_the_move_limit(tmp_path: Path, started: list[Cli]) -> None:
    _, _, match = play(
        started, tmp_path, "--opening", FORCED_REPETITION, "--draw-rules", "off",
        "--moves", "6", choose=shuttle(3, 9),  # --moves: the old name of --max-moves
    )
    assert result_line(match).startswith("game 1: 1-1 (draw: move limit of 6 moves reached)")
