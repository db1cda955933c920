"""The vocabulary both the rules and DXP use: colours, pieces, the start position.

Kept here, in the rules, so that ``draughts/`` imports nothing of the protocol; the
protocol's messages use the same names (their letters are DXP's: ``W``/``Z``, ``e``/``w``/
``W``/``z``/``Z``).
"""

from __future__ import annotations

import enum


class Colour(enum.StrEnum):
    WHITE = "W"
    BLACK = "Z"

    @property
    def other(self) -> Colour:
        return Colour.BLACK if self is Colour.WHITE else Colour.WHITE


def colour_name(colour: Colour) -> str:
    """``White`` or ``Black``: how a person names a colour."""
    return "White" if colour is Colour.WHITE else "Black"


class Piece(enum.StrEnum):
    EMPTY = "e"
    WHITE_MAN = "w"
    WHITE_KING = "W"
    BLACK_MAN = "z"
    BLACK_KING = "Z"


#: Squares 1..50 at the start: black men on 1..20, white men on 31..50.
START_POSITION: tuple[Piece, ...] = (
    (Piece.BLACK_MAN,) * 20 + (Piece.EMPTY,) * 10 + (Piece.WHITE_MAN,) * 20
)

__all__ = ["START_POSITION", "Colour", "Piece", "colour_name"]
