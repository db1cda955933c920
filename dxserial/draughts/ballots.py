"""Match ballots: the openings 10x10 engine matches are played from, made from the rules.

A 2-move ballot is White's first move and Black's answer: 9 x 9 = 81 positions, each with
White to move, in the order the move generator gives them (White's move, then Black's).
The 2-move list engine authors share (Moby Dam's ``2-move ballots matchfile.fen``) holds 79
of them in this same order: it leaves out 31-27 16-21 and 32-27 16-21, after which White
captures at once (27x16).  The shared 3-move list is a selection (331 of the 447 positions
three plies give), not a rule, so it is read from its file.  docs/ballots.md has the detail.
"""

from __future__ import annotations

from dxserial.draughts.board import Position
from dxserial.draughts.notation import pdn_in

__all__ = ["two_move_ballots"]


def two_move_ballots() -> list[str]:
    """Every 2-move ballot as its PDN moves (``1. 32-28 19-23``), in generator order."""
    start = Position.start()
    out: list[str] = []
    for first in start.legal_moves():
        after = start.play(first)
        for answer in after.legal_moves():
            out.append(f"1. {pdn_in(start, first)} {pdn_in(after, answer)}")
    return out
