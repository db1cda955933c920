"""A compact text board for terminals (``dxserial moves --board``, demos, replays).

Plain ASCII so it survives any terminal, log or serial console: 10 rows seen from White,
light squares blank, an empty dark square ``.`` (or its number), pieces as in the DXP
position string (``w``/``W`` White man/king, ``z``/``Z`` Black man/king).
"""

from __future__ import annotations

from collections.abc import Sequence

from dxserial.draughts.geometry import square_at
from dxserial.draughts.pieces import Colour, Piece

LEGEND = "w/W white man/king, z/Z black man/king"


def render(pieces: Sequence[Piece], turn: Colour | None = None, *, numbers: bool = False) -> str:
    """The board as 12 lines (frame included), then the legend and the side to move.

    ``pieces`` holds squares 1..50 in order; ``numbers`` writes each empty dark square's
    number instead of ``.``, which helps when reading PDN moves off the board.
    """
    width = 3
    lines = ["+" + "-" * (10 * width) + "+"]
    for row in range(10):
        cells: list[str] = []
        for col in range(10):
            sq = square_at(row, col)
            if not sq:
                cells.append(" " * width)
                continue
            piece = pieces[sq - 1]
            if piece is Piece.EMPTY:
                cells.append(f"{sq:>{width - 1}} " if numbers else " . ")
            else:
                cells.append(f" {piece.value} ")
        first = row * 5 + 1
        lines.append("|" + "".join(cells) + f"|  {first:>2}-{first + 4:>2}")
    lines.append(lines[0])
    lines.append(LEGEND)
    if turn is not None:
        lines.append(f"{'White' if turn is Colour.WHITE else 'Black'} to move")
    return "\n".join(lines)
