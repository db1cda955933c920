"""FMJD's draw rules, each from a position built for it (dxserial.draughts.draw_rules)."""

from __future__ import annotations

import pytest

from dxserial.draughts import LegalMove, Position, parse_pdn_move
from dxserial.draughts.draw_rules import Draw, DrawCounter, DrawRule, endgame_rule


def play(fen: str, moves: str) -> tuple[list[Position], list[Draw | None]]:
    """The positions after each move of ``moves`` and what the counter said after each."""
    position = Position.from_fen(fen)
    positions, verdicts = [position], []
    counter = DrawCounter(position)
    for text in moves.split():
        position = position.play(parse_pdn_move(position, text))
        positions.append(position)
        verdicts.append(counter.play(position))
    return positions, verdicts


def first_draw(verdicts: list[Draw | None]) -> tuple[int, DrawRule] | None:
    """(plies played, rule) of the first draw."""
    for ply, verdict in enumerate(verdicts, 1):
        if verdict is not None:
            return ply, verdict.rule
    return None


def _hangs(position: Position, move: LegalMove) -> bool:
    return any(m.captured for m in position.play(move).legal_moves())


def walk(
    fen: str, *, hang_at: int | None = None, limit: int = 80
) -> tuple[int, DrawRule, list[LegalMove]]:
    """King moves into positions not seen before, neither side leaving a piece en prise,
    except at ply ``hang_at`` where the mover leaves one to be taken (and it is).
    Returns (plies, rule, moves) at the first draw."""
    position = Position.from_fen(fen)
    counter, seen, played = DrawCounter(position), {position}, []
    for ply in range(1, limit + 1):
        options = list(position.legal_moves())
        if not any(m.captured for m in options):
            wanted = ply == hang_at
            quiet = [m for m in options if m.king and _hangs(position, m) == wanted]
            options = quiet or options
        fresh = [m for m in options if position.play(m) not in seen]
        move = (fresh or options)[0]
        position = position.play(move)
        seen.add(position)
        played.append(move)
        draw = counter.play(position)
        if draw is not None:
            return ply, draw.rule, played
    raise AssertionError(f"no draw in {limit} plies from {fen}")


def test_king_against_two_kings_is_drawn_after_five_moves_each() -> None:
    line = "46-41 3-8 41-36 8-2 36-31 2-7 31-26 7-1 26-21"
    _, verdicts = play("W:WK46,K47:BK3", line)
    assert first_draw(verdicts) is None  # 9 plies: Black's fifth move still to come
    _, verdicts = play("W:WK46,K47:BK3", f"{line} 1-6")
    assert first_draw(verdicts) == (10, DrawRule.FIVE)
    assert verdicts[-1] is not None and "5-move rule" in verdicts[-1].text


def test_repetition_twice_is_no_draw_the_third_time_is() -> None:
    # Men on both sides keep the endgame counts out; the start position comes back after
    # 4 plies (the second time: no draw) and after 8 (the third time).
    fen = "W:WK46,16,26:BK4,25,35"
    loop = "46-41 4-9 41-46 9-4"
    _, verdicts = play(fen, loop)
    assert first_draw(verdicts) is None
    _, verdicts = play(fen, f"{loop} {loop}")
    assert first_draw(verdicts) == (8, DrawRule.REPETITION)


def test_same_squares_with_the_other_side_to_move_is_another_position() -> None:
    # A king triangle (46-41-37-46) puts the squares back with Black to move: never three
    # times with the same side to move within these 10 plies.
    fen = "W:WK46,16,26:BK4,25,35"
    _, verdicts = play(fen, "46-41 4-9 41-37 9-4 37-46 4-9 46-41 9-4 41-37 4-9")
    assert first_draw(verdicts) is None


def test_twenty_five_moves_each_of_kings_only() -> None:
    plies, rule, moves = walk("W:WK46,K50,16,26:BK4,K1,25,35")
    assert (plies, rule) == (50, DrawRule.KINGS_ONLY)
    assert all(m.king and not m.captured for m in moves)


def test_a_man_move_sets_the_king_count_back() -> None:
    positions, _ = play("W:WK46,16,26:BK4,25,35", "46-41 4-9 41-46 9-4 16-11")
    counter = DrawCounter.replay(positions[:5])
    assert counter.counts[str(DrawRule.KINGS_ONLY)] == 4
    counter.play(positions[5])
    assert counter.counts[str(DrawRule.KINGS_ONLY)] == 0


def test_a_capture_sets_the_king_count_back() -> None:
    positions, _ = play("W:WK46,16,26:BK4,25,35", "46-41 4-9 41-46 9-14 46x5")
    assert DrawCounter.replay(positions).counts[str(DrawRule.KINGS_ONLY)] == 0


def test_sixteen_moves_each_with_three_kings_against_one() -> None:
    plies, rule, _ = walk("W:WK46,K47,K48:BK3")
    assert (plies, rule) == (32, DrawRule.SIXTEEN)


@pytest.mark.parametrize(("hang_at", "capture_ply"), [(11, 12), (19, 20), (27, 28)])
def test_a_capture_in_the_middle_of_a_sixteen_move_count(hang_at: int, capture_ply: int) -> None:
    """Three kings against one; Black's king takes a king at ``capture_ply``: two kings
    against one, the 5-move configuration.  Its count starts there (10 plies); the 16-move
    count runs on and stays the maximum: the draw comes when the first of them runs out."""
    plies, rule, moves = walk("W:WK46,K47,K48:BK3", hang_at=hang_at)
    assert moves[capture_ply - 1].captured and not any(
        m.captured for i, m in enumerate(moves) if i != capture_ply - 1
    )
    expected = min(capture_ply + 10, 32)
    assert plies == expected
    assert rule is (DrawRule.FIVE if capture_ply + 10 < 32 else DrawRule.SIXTEEN)


def test_a_man_move_inside_the_sixteen_move_count_does_not_restart_it() -> None:
    positions, _ = play("W:WK46,30,31:BK3", "30-24 3-8 24-20 8-3")
    assert DrawCounter.replay(positions).counts[str(DrawRule.SIXTEEN)] == 4


@pytest.mark.parametrize(
    ("fen", "rule"),
    [
        ("W:WK46,K47,K48:BK3", DrawRule.SIXTEEN),
        ("W:WK46,K47,30:BK3", DrawRule.SIXTEEN),
        ("W:WK46,30,31:BK3", DrawRule.SIXTEEN),
        ("B:WK3:BK46,K47,20", DrawRule.SIXTEEN),
        ("W:WK46,K47:BK3", DrawRule.FIVE),
        ("W:WK46,30:BK3", DrawRule.FIVE),
        ("W:WK46:BK3", DrawRule.FIVE),
        ("W:W30,31,32:BK3", None),  # three men: no king on the strong side
        ("W:WK46,K47,K48,K49:BK3", None),  # four pieces
        ("W:WK46,K47:B3", None),  # the lone piece is a man
        ("W:WK46,K47:BK3,K4", None),
    ],
)
def test_which_endgame_count_the_material_stands_under(fen: str, rule: DrawRule | None) -> None:
    assert endgame_rule(Position.from_fen(fen)) is rule


def test_would_draw_looks_ahead_without_playing() -> None:
    positions, _ = play("W:WK46,16,26:BK4,25,35", "46-41 4-9 41-46 9-4 46-41 4-9 41-46")
    counter = DrawCounter.replay(positions)
    last = positions[-1]
    back = last.play(parse_pdn_move(last, "9-4"))
    seen = counter.would_draw(back)
    assert seen is not None and seen.rule is DrawRule.REPETITION
    assert counter.draw is None


# --------------------------------------------------------------------------- pydraughts


@pytest.mark.parametrize(
    "fen", ["W:WK46,K47:BK3", "W:WK46,K47,K48:BK3", "W:WK46:BK3", "W:WK46,K50,16,26:BK4,K1,25,35"]
)
def test_pydraughts_agrees_on_king_only_walks(fen: str) -> None:
    """On walks of king moves without captures pydraughts' verdict (``Game.is_draw``) and
    ours agree ply for ply.  (It counts the endgame rules from the last capture or man
    move, the start here; with a man move inside a 16-move count the two differ.)"""
    game = pytest.importorskip("draughts.core.game")
    plies, _, moves = walk(fen)
    theirs = game.Game(variant="standard", fen=fen)
    for ply, move in enumerate(moves, 1):
        theirs.move([move.from_square, move.to_square])
        assert theirs.is_draw() == (ply == plies), ply
