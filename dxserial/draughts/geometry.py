"""The 50 dark squares of the 10x10 board and their diagonals, computed once at import.

Squares are numbered 1..50 as in DXP: square 1 is the top-left dark square seen from White,
46 is White's bottom-left corner, White men move towards row 0 (squares 1..5).  Move
generation only looks things up in the tables below (no arithmetic on coordinates), because
that is what keeps pure-Python perft fast.  A set of squares is an ``int`` with bit ``sq``
set for each square (bit 0 is unused).
"""

from __future__ import annotations

NUM_SQUARES = 50
SQUARES = range(1, NUM_SQUARES + 1)

# Directions as (row step, column step); White's forward ones come first.
UP_LEFT, UP_RIGHT, DOWN_LEFT, DOWN_RIGHT = 0, 1, 2, 3
DIRECTIONS: tuple[tuple[int, int], ...] = ((-1, -1), (-1, 1), (1, -1), (1, 1))


def row_col(square: int) -> tuple[int, int]:
    """Row 0..9 (0 = Black's back row) and column 0..9 (0 = White's left) of ``square``."""
    row, index = divmod(square - 1, 5)
    return row, 2 * index + (1 if row % 2 == 0 else 0)


def square_at(row: int, col: int) -> int:
    """The square number at (row, col), or 0 for a light square or a point off the board."""
    if not (0 <= row < 10 and 0 <= col < 10) or (row + col) % 2 == 0:
        return 0
    return row * 5 + col // 2 + 1


def _ray(square: int, direction: int) -> tuple[int, ...]:
    drow, dcol = DIRECTIONS[direction]
    row, col = row_col(square)
    out: list[int] = []
    while True:
        row, col = row + drow, col + dcol
        nxt = square_at(row, col)
        if not nxt:
            return tuple(out)
        out.append(nxt)


BIT: tuple[int, ...] = tuple(1 << sq for sq in range(NUM_SQUARES + 1))
ALL_SQUARES: int = sum(BIT[sq] for sq in SQUARES)

# RAYS[sq][direction]: the squares from ``sq`` (exclusive) to the edge along that diagonal.
RAYS: tuple[tuple[tuple[int, ...], ...], ...] = (
    (),
    *(tuple(_ray(sq, d) for d in range(4)) for sq in SQUARES),
)

# JUMPS[sq]: (jumped square, landing square) for a man's capture in each direction that fits.
JUMPS: tuple[tuple[tuple[int, int], ...], ...] = (
    (),
    *(tuple((ray[0], ray[1]) for ray in RAYS[sq] if len(ray) >= 2) for sq in SQUARES),
)

# A man's forward steps, per colour.
WHITE_STEPS: tuple[tuple[int, ...], ...] = (
    (),
    *(tuple(RAYS[sq][d][0] for d in (UP_LEFT, UP_RIGHT) if RAYS[sq][d]) for sq in SQUARES),
)
BLACK_STEPS: tuple[tuple[int, ...], ...] = (
    (),
    *(tuple(RAYS[sq][d][0] for d in (DOWN_LEFT, DOWN_RIGHT) if RAYS[sq][d]) for sq in SQUARES),
)

# Where each colour's men are crowned.
WHITE_CROWN: int = sum(BIT[sq] for sq in range(1, 6))
BLACK_CROWN: int = sum(BIT[sq] for sq in range(46, 51))


def between(a: int, b: int) -> tuple[int, ...] | None:
    """The squares strictly between ``a`` and ``b`` if they share a diagonal, else ``None``."""
    for ray in RAYS[a]:
        if b in ray:
            return ray[: ray.index(b)]
    return None


def squares_of(bits: int) -> list[int]:
    """The square numbers in a set of squares, ascending."""
    out: list[int] = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out
