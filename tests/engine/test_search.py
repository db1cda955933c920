"""The small engine: legal, forced captures, a won man at depth 2, speed, determinism."""

from __future__ import annotations

import random
import threading
import time

from dxserial.draughts import LegalMove, Position, parse_pdn_move
from dxserial.engine.search import (
    KING,
    MAN,
    MAX_DEPTH,
    SearchCancelled,
    choose_move,
    evaluate,
    search,
)


def test_start_position_gives_a_legal_move() -> None:
    position = Position.start()
    move = choose_move(position, depth=3)
    assert move is not None and move in position.legal_moves()


def test_depth_4_is_quick_on_the_start_position() -> None:
    # CPU time, not the wall clock: on a loaded machine the process waits for a CPU, and
    # that is not the search's time (about 0.03 s of CPU here).
    began = time.process_time()
    assert choose_move(Position.start(), depth=4) is not None
    assert time.process_time() - began < 1.0


def test_takes_the_only_capture() -> None:
    position = Position.from_fen("W:W28,32,46:B23,1")
    move = choose_move(position, depth=3)
    assert move is not None and move.short_pdn() == "28x19"


def test_takes_the_maximum_capture() -> None:
    position = Position.from_fen("W:W15,45:B8,19,20,1")
    move = choose_move(position, depth=2)
    assert move is not None and move.short_pdn() == "15x2" and move.captured == {8, 19, 20}


def test_wins_a_man_at_depth_2() -> None:
    # 34-29 attacks the man on 24 from two sides: 24-30 runs into 25x34, anything else 29x20.
    position = Position.from_fen("W:W25,33,34:B11,24,26")
    move = choose_move(position, depth=2)
    assert move is not None and move.short_pdn() == "34-29"
    scored = search(position, depth=2)
    assert scored[0][0] == move and scored[0][1] > MAN // 2
    assert scored[1][1] < scored[0][1] - MAN // 2
    # Whatever Black does, White is a man up after its capture.
    after = position.play(move)
    for reply in after.legal_moves():
        then = after.play(reply)
        capture = choose_move(then, depth=1)
        assert capture is not None and capture.captured
        assert evaluate(then.play(capture)) < -MAN // 2  # Black to move, a man down


def test_black_to_move_is_searched_from_blacks_side() -> None:
    position = Position.from_fen("B:W27,28:B22,1")
    move = choose_move(position, depth=2)
    assert move is not None and move.short_pdn() in ("22x31", "22x33")


def test_none_when_no_legal_move() -> None:
    assert choose_move(Position.from_fen("W:W:B1")) is None  # no pieces left
    blocked = Position.from_fen("W:W46:B41,37")  # the man cannot step or jump
    assert blocked.legal_moves() == ()
    assert choose_move(blocked, depth=3) is None


def test_evaluate_counts_material_from_the_side_to_move() -> None:
    position = Position.from_fen("W:WK28,32:B19")
    assert KING - MAN // 2 < evaluate(position) < KING + MAN // 2  # king + man - man
    assert evaluate(Position.from_fen("B:WK28,32:B19")) == -evaluate(position)


def test_same_seed_same_game() -> None:
    def game(seed: int) -> list[str]:
        rng = random.Random(seed)
        position = Position.start()
        moves: list[str] = []
        for _ in range(16):
            move = choose_move(position, depth=2, rng=rng)
            if move is None:
                break
            moves.append(move.short_pdn())
            position = position.play(move)
        return moves

    assert game(7) == game(7)
    assert choose_move(Position.start(), depth=2) == choose_move(Position.start(), depth=2)
    seen = {
        str(choose_move(Position.start(), depth=1, rng=random.Random(seed))) for seed in range(20)
    }
    assert len(seen) > 1  # the rng really breaks ties


def test_prefers_a_quick_win() -> None:
    # White can take Black's last man at once.
    position = Position.from_fen("W:W33,K50:B28,1")
    move = choose_move(position, depth=4)
    assert move is not None and move.short_pdn() == "33x22"
    after = position.play(parse_pdn_move(position, "33x22"))
    assert after.legal_moves()  # the man on 1 still moves: the search still has to win it


def test_a_deep_search_plays_a_legal_move_once_its_time_is_up() -> None:
    """Depth 10 would take minutes; past the deadline the last finished pass decides."""
    ticks = iter(range(1_000_000))
    position = Position.from_fen(
        "W:W31,32,33,34,35,36,37,38,39,40,41,42,43,44,45:B6,7,8,9,10,11,12,13,14,15,16,17,18,19,20"
    )
    move = choose_move(position, depth=MAX_DEPTH, deadline=3.0, clock=lambda: next(ticks))
    assert move is not None and move in position.legal_moves()


def test_a_search_that_is_not_cut_short_plays_the_plain_move() -> None:
    for seed in range(5):
        plain = choose_move(Position.start(), depth=3, rng=random.Random(seed))
        timed = choose_move(
            Position.start(), depth=3, rng=random.Random(seed), deadline=1e12, clock=lambda: 0.0
        )
        assert plain == timed


def test_cancel_stops_a_deep_search_from_another_thread() -> None:
    cancel = threading.Event()
    outcome: list[BaseException | LegalMove | None] = []

    def think() -> None:
        try:
            outcome.append(choose_move(Position.start(), depth=MAX_DEPTH, cancel=cancel))
        except SearchCancelled as exc:
            outcome.append(exc)

    worker = threading.Thread(target=think)
    worker.start()
    cancel.set()
    worker.join(30)
    assert not worker.is_alive(), "the search ignored the cancel flag"
    assert len(outcome) == 1 and isinstance(outcome[0], SearchCancelled)
