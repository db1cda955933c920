"""Legal moves under the FMJD international rules, on sets of squares held in ints.

The functions here take the side to move's pieces (``own``), the opponent's (``opp``), the
set of kings of both, and whether White is to move; they know nothing of :class:`Position`,
so that perft can run on bare ints.  A *raw move* is ``(from, to, captured set, route)``
where the route lists the landing squares (the last one is ``to``).

Captures follow the Turkish strike: captured pieces stay on the board until the move ends,
so they block the path and cannot be jumped twice, while the mover's start square counts as
empty (it may pass over it or come back to it).  Of all capture sequences only those taking
the most pieces are legal, and sequences over the same set of pieces to the same square are
one move (the first route found is kept).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dxserial.draughts.geometry import (
    ALL_SQUARES,
    BIT,
    BLACK_CROWN,
    BLACK_STEPS,
    JUMPS,
    RAYS,
    WHITE_CROWN,
    WHITE_STEPS,
    squares_of,
)

RawMove = tuple[int, int, int, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class LegalMove:
    """One legal move: identified by (from, to, captured squares), as a DXP MOVE is.

    ``route`` is one way to play it (the landing squares, ending with ``to``) and only
    matters for long PDN notation; two moves that differ only in route are equal.
    """

    from_square: int
    to_square: int
    captured: frozenset[int] = frozenset()
    route: tuple[int, ...] = field(default=(), compare=False)
    king: bool = field(default=False, compare=False)
    """The moving piece is a king (like ``route``, not part of equality)."""
    promotes: bool = field(default=False, compare=False)
    """A man that ends this move on the far row and becomes a king."""

    @property
    def is_capture(self) -> bool:
        return bool(self.captured)

    @property
    def key(self) -> tuple[int, int, frozenset[int]]:
        """What names the move in DXP: (from, to, captured set)."""
        return (self.from_square, self.to_square, self.captured)

    def short_pdn(self) -> str:
        """``32-28`` or ``28x19``; see :func:`dxserial.draughts.notation.pdn` for long form."""
        sep = "x" if self.captured else "-"
        return f"{self.from_square}{sep}{self.to_square}"

    def long_pdn(self) -> str:
        """Every landing square: ``47x38x24x13x36`` (a quiet move is written as usual)."""
        if not self.captured:
            return self.short_pdn()
        return "x".join(str(sq) for sq in (self.from_square, *self.route))

    def __str__(self) -> str:
        return self.short_pdn()


def legal_move_from_raw(raw: RawMove, kings: int, white: bool) -> LegalMove:
    """Wrap a raw move for callers outside this module."""
    frm, to, taken, route = raw
    king = bool(kings & BIT[frm])
    crown = WHITE_CROWN if white else BLACK_CROWN
    return LegalMove(
        from_square=frm,
        to_square=to,
        captured=frozenset(squares_of(taken)),
        route=route,
        king=king,
        promotes=not king and bool(crown & BIT[to]),
    )


def generate(own: int, opp: int, kings: int, white: bool) -> list[RawMove]:
    """All legal moves of the side to move: the maximum captures, or else the quiet moves."""
    return captures(own, opp, kings) or quiet_moves(own, opp, kings, white)


def quiet_moves(own: int, opp: int, kings: int, white: bool) -> list[RawMove]:
    """Moves without capture: a man one step forward, a king any distance."""
    free = ALL_SQUARES & ~(own | opp)
    steps = WHITE_STEPS if white else BLACK_STEPS
    out: list[RawMove] = []
    men = own & ~kings
    while men:
        low = men & -men
        men ^= low
        frm = low.bit_length() - 1
        for to in steps[frm]:
            if free & BIT[to]:
                out.append((frm, to, 0, (to,)))
    mine = own & kings
    while mine:
        low = mine & -mine
        mine ^= low
        frm = low.bit_length() - 1
        for ray in RAYS[frm]:
            for to in ray:
                if not free & BIT[to]:
                    break
                out.append((frm, to, 0, (to,)))
    return out


def captures(own: int, opp: int, kings: int) -> list[RawMove]:
    """The legal captures (the most pieces taken), one per (from, to, captured set)."""
    free = ALL_SQUARES & ~(own | opp)
    found: list[RawMove] = []
    pieces = own
    while pieces:
        low = pieces & -pieces
        pieces ^= low
        frm = low.bit_length() - 1
        empty = free | low  # the mover has left its square
        if kings & low:
            _king_jumps(frm, frm, opp, empty, 0, [], found)
            continue
        for over, land in JUMPS[frm]:
            bit = BIT[over]
            if opp & bit and empty & BIT[land]:
                _man_jumps(frm, land, opp, empty, bit, [land], found)
    if not found:
        return found
    most = max(len(raw[3]) for raw in found)
    if len(found) == 1:
        return found
    moves: dict[tuple[int, int, int], RawMove] = {}
    for raw in found:
        if len(raw[3]) == most:
            moves.setdefault((raw[0], raw[1], raw[2]), raw)
    return list(moves.values())


def _man_jumps(
    frm: int, sq: int, opp: int, empty: int, taken: int, path: list[int], out: list[RawMove]
) -> None:
    """Continue a man's capture from ``sq``; record the sequence where it cannot go on."""
    extended = False
    for over, land in JUMPS[sq]:
        bit = BIT[over]
        if opp & bit and not taken & bit and empty & BIT[land]:
            extended = True
            path.append(land)
            _man_jumps(frm, land, opp, empty, taken | bit, path, out)
            path.pop()
    if not extended:
        out.append((frm, sq, taken, tuple(path)))


def _king_jumps(
    frm: int, sq: int, opp: int, empty: int, taken: int, path: list[int], out: list[RawMove]
) -> None:
    """Continue a flying king's capture from ``sq`` (any distance before and after)."""
    extended = False
    for ray in RAYS[sq]:
        n = len(ray)
        i = 0
        while i < n and empty & BIT[ray[i]]:
            i += 1
        if i >= n - 1:
            continue
        bit = BIT[ray[i]]
        # Own pieces and pieces already jumped (still on the board) block the diagonal.
        if not opp & bit or taken & bit:
            continue
        i += 1
        now = taken | bit
        while i < n and empty & BIT[ray[i]]:
            extended = True
            land = ray[i]
            path.append(land)
            _king_jumps(frm, land, opp, empty, now, path, out)
            path.pop()
            i += 1
    if not extended and taken:
        out.append((frm, sq, taken, tuple(path)))


def play(own: int, opp: int, kings: int, white: bool, raw: RawMove) -> tuple[int, int, int]:
    """The position after ``raw``: new (own, opp, kings), the side to move not yet swapped."""
    frm, to, taken, _ = raw
    from_bit = BIT[frm]
    to_bit = BIT[to]
    own = (own & ~from_bit) | to_bit
    if taken:
        opp &= ~taken
        kings &= ~taken
    if kings & from_bit:
        kings = (kings & ~from_bit) | to_bit
    elif to_bit & (WHITE_CROWN if white else BLACK_CROWN):
        kings |= to_bit
    return own, opp, kings
