"""PDN move notation: ``32-28``, ``28x19``, and the long form only where it is needed.

Short notation names a move by from and to; where two legal moves share both (different
captured pieces), PDN 3.0 writes every landing square (``47x38x24x13x36``).  Reading goes
the other way and accepts both forms, and a long form that lists only some landing squares.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from dxserial.draughts.board import Position
from dxserial.draughts.errors import IllegalMoveError, Rejection
from dxserial.draughts.geometry import BIT, between
from dxserial.draughts.movegen import LegalMove
from dxserial.draughts.pieces import Colour

_MOVE = re.compile(r"\d{1,2}(?:[-x:]\d{1,2})+")


def pdn(move: LegalMove, legal_moves: Iterable[LegalMove]) -> str:
    """``move`` in PDN: short, or long when another of ``legal_moves`` has the same from/to."""
    for other in legal_moves:
        if (
            other.from_square == move.from_square
            and other.to_square == move.to_square
            and other.captured != move.captured
        ):
            return move.long_pdn()
    return move.short_pdn()


def pdn_in(position: Position, move: LegalMove) -> str:
    """:func:`pdn` for a legal move of ``position``, without building its other moves."""
    return move.long_pdn() if position.needs_long_pdn(move) else move.short_pdn()


def pdn_moves(position: Position) -> list[tuple[LegalMove, str]]:
    """Every legal move of ``position`` with its PDN text, sorted by the text's squares."""
    moves = position.legal_moves()
    named = [(move, pdn(move, moves)) for move in moves]
    return sorted(named, key=lambda item: (item[0].from_square, item[0].to_square, item[1]))


def parse_pdn_move(position: Position, text: str) -> LegalMove:
    """The legal move that PDN ``text`` names in ``position``.

    Raises :class:`IllegalMoveError` if the text is not a move, names no legal move, or
    names several (a short form where the long form is needed).
    """
    cleaned = text.strip()
    if not _MOVE.fullmatch(cleaned):
        raise IllegalMoveError(
            f"{text!r} is not a PDN move such as 32-28 or 28x19", reason=Rejection.BAD_NOTATION
        )
    squares = [int(part) for part in re.split(r"[-x:]", cleaned)]
    moves = position.legal_moves()
    candidates = [m for m in moves if m.from_square == squares[0] and m.to_square == squares[-1]]
    if len(squares) > 2 and len(candidates) > 1:
        captured = _route_captures(position, squares)
        if captured is not None:
            candidates = [m for m in candidates if m.captured == captured]
        else:
            candidates = [m for m in candidates if _in_order(squares[1:-1], m.route)]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise IllegalMoveError(
            f"{cleaned}: no such legal move in {position.to_fen()}", reason=Rejection.NO_SUCH_MOVE
        )
    options = ", ".join(m.long_pdn() for m in candidates)
    raise IllegalMoveError(
        f"{cleaned} is ambiguous: write one of {options}", reason=Rejection.AMBIGUOUS
    )


def _route_captures(position: Position, squares: list[int]) -> frozenset[int] | None:
    """The pieces a full capture route jumps, or ``None`` if it is not one jump per leg."""
    opp = position.black if position.turn is Colour.WHITE else position.white
    taken: set[int] = set()
    for a, b in itertools.pairwise(squares):
        path = between(a, b)
        if path is None:
            return None
        jumped = [sq for sq in path if opp & BIT[sq]]
        if len(jumped) != 1 or jumped[0] in taken:
            return None
        taken.add(jumped[0])
    return frozenset(taken)


def _in_order(wanted: list[int], route: tuple[int, ...]) -> bool:
    it = iter(route)
    return all(sq in it for sq in wanted)
