"""Perft: the number of leaf positions of the legal-move tree, the standard rules check.

Moves that differ only in route are one move here (as in the published numbers), and the
last ply is counted without being played ("bulk counting"), which is what makes depth 6
from the start affordable in pure Python.
"""

from __future__ import annotations

from dxserial.draughts.board import Position
from dxserial.draughts.movegen import LegalMove, generate, play
from dxserial.draughts.pieces import Colour


def perft(position: Position, depth: int) -> int:
    """Leaf count of the move tree ``depth`` plies deep (``perft(p, 0) == 1``)."""
    if depth < 0:
        raise ValueError(f"perft depth must be >= 0, not {depth}")
    if depth == 0:
        return 1
    white = position.turn is Colour.WHITE
    own, opp = (position.white, position.black) if white else (position.black, position.white)
    return _perft(own, opp, position.kings, white, depth)


def _perft(own: int, opp: int, kings: int, white: bool, depth: int) -> int:
    moves = generate(own, opp, kings, white)
    if depth == 1:
        return len(moves)
    total = 0
    below = depth - 1
    for raw in moves:
        new_own, new_opp, new_kings = play(own, opp, kings, white, raw)
        total += _perft(new_opp, new_own, new_kings, not white, below)
    return total


def divide(position: Position, depth: int) -> dict[LegalMove, int]:
    """Perft split by first move (``depth`` >= 1): for finding where two generators differ."""
    if depth < 1:
        raise ValueError(f"divide depth must be >= 1, not {depth}")
    return {move: perft(position.play(move), depth - 1) for move in position.legal_moves()}
