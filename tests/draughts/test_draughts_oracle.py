"""Our move generator against an independent one (dame-rs, a Rust engine) on random play.

Both sides name a move by (from, to, captured set), as DXP does, so the sets of legal moves
must be equal in every position.  The positions come from seeded random games, from the
start and from random placements with many kings (where the hard cases live).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from dxserial.draughts import Position, perft
from dxserial.draughts.geometry import BIT
from dxserial.protocol.messages import Colour

dame = pytest.importorskip("dame")

Key = tuple[int, int, frozenset[int]]


def _dame_keys(board: dame.Board) -> set[Key]:
    return {(m.from_square, m.to_square, frozenset(m.captured)) for m in board.legal_moves}


def _random_position(rng: random.Random) -> Position:
    """Random pieces, often kings; no man on its own crowning row (dame-rs refuses those)."""
    count = rng.randint(2, 24)
    squares = rng.sample(range(1, 51), count)
    white = black = kings = 0
    king_share = rng.choice((0.0, 0.3, 0.7, 1.0))
    for sq in squares:
        is_white = rng.random() < 0.5
        king = rng.random() < king_share
        if not king and ((is_white and sq <= 5) or (not is_white and sq >= 46)):
            king = True
        if is_white:
            white |= BIT[sq]
        else:
            black |= BIT[sq]
        if king:
            kings |= BIT[sq]
    return Position(white, black, kings, rng.choice((Colour.WHITE, Colour.BLACK)))


def _play_out(pos: Position, rng: random.Random, plies: int, seen: Counter[str]) -> None:
    """Play random moves, comparing with dame-rs at every position; ``seen`` counts kinds.

    dame-rs gets a fresh board from our FEN each ply: its boards apply the draw rules
    (repetition, 25/16/5 moves) to the moves pushed and then list no moves, while this
    test is about move generation alone.
    """
    for _ in range(plies):
        board = dame.Board(pos.to_fen())
        moves = pos.legal_moves()
        ours = {m.key for m in moves}
        assert ours == _dame_keys(board), pos.to_fen()
        assert len(ours) == len(moves), pos.to_fen()
        seen["positions"] += 1
        if not moves:
            break
        seen[f"captures of {min(len(moves[0].captured), 3)}"] += 1
        seen["king captures"] += any(m.king and m.captured for m in moves)
        seen["same from and to"] += len({(m.from_square, m.to_square) for m in moves}) < len(moves)
        move = rng.choice(moves)
        (theirs,) = [
            m
            for m in board.legal_moves
            if (m.from_square, m.to_square, frozenset(m.captured)) == move.key
        ]
        board.push(theirs)
        pos = pos.play(move)
        assert pos.to_fen() == board.fen()


def test_random_games_from_the_start() -> None:
    rng = random.Random(20240601)
    seen: Counter[str] = Counter()
    for _ in range(200):
        _play_out(Position.start(), rng, 200, seen)
    assert seen["positions"] >= 15000
    assert seen["captures of 3"] > 100
    assert seen["king captures"] > 100


def test_random_positions_with_kings() -> None:
    rng = random.Random(7)
    seen: Counter[str] = Counter()
    for _ in range(2000):
        _play_out(_random_position(rng), rng, 25, seen)
    assert seen["positions"] >= 25000
    assert seen["king captures"] > 5000
    assert seen["same from and to"] > 10


def test_perft_agrees_on_random_positions() -> None:
    rng = random.Random(99)
    for _ in range(40):
        pos = _random_position(rng)
        assert perft(pos, 3) == dame.perft(dame.Board(pos.to_fen()), 3), pos.to_fen()
