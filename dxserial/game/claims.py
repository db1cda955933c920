"""Whether the position bears out an engine's GAMEEND claim: reason 2 (draw) or 3 (I win).

DXP lets only the side to move start a GAMEEND, and says nothing of checking it; an
arbiter does.  A draw claim is borne out when a draw rule is met (FMJD's, see
:mod:`dxserial.draughts.draw_rules`, or the GAMEREQ's move limit, which DXP lets either
side end the game on), or when one of the claimant's legal moves would meet one (as a
player may claim a repetition with the move that makes it).  A win claim by the side to
move is borne out when the opponent, were it to move, would have no legal move (no
pieces left, or all blocked).  Sans-I/O and free of DXP: the referee asks, and words the
result.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dxserial.draughts import Position
from dxserial.draughts.draw_rules import DrawCounter
from dxserial.draughts.pieces import Colour, colour_name

__all__ = ["ClaimCheck", "check_draw_claim", "check_win_claim"]


@dataclass(frozen=True)
class ClaimCheck:
    """``founded`` is None when the position is not known (nothing to check it on)."""

    founded: bool | None
    grounds: str

    @property
    def text(self) -> str:
        if self.founded is None:
            return f"not checked: {self.grounds}"
        return ("borne out: " if self.founded else "false claim: ") + self.grounds

    #: the position it was checked in (for a log line or a PDN comment)
    fen: str = ""


def check_draw_claim(
    position: Position, counter: DrawCounter, *, plies: int, move_limit: int
) -> ClaimCheck:
    """A GAMEEND reason 2 by the side to move in ``position``."""
    fen = position.to_fen()
    if counter.draw is not None:
        return ClaimCheck(True, str(counter.draw.rule), fen)
    if move_limit and plies >= 2 * move_limit:
        return ClaimCheck(True, f"move limit of {move_limit} moves", fen)
    for move in position.legal_moves():
        draw = counter.would_draw(position.play(move))
        if draw is not None:
            return ClaimCheck(True, f"{draw.rule} by its next move", fen)
    return ClaimCheck(False, "no draw rule met", fen)


def check_win_claim(position: Position, claimant: Colour) -> ClaimCheck:
    """A GAMEEND reason 3 by ``claimant``."""
    opponent = claimant.other
    as_if = position if position.turn is opponent else replace(position, turn=opponent)
    if as_if.is_lost():
        return ClaimCheck(True, f"{colour_name(opponent)} has no legal move", position.to_fen())
    return ClaimCheck(False, f"{colour_name(opponent)} can still move", position.to_fen())
