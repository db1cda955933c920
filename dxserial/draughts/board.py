"""A position (50 squares + side to move), read from and written to PDN FEN and DXP.

The position is immutable and hashable (a referee keeps positions to spot repetitions);
playing a move returns a new one.  Pieces are held as three sets of squares in ints
(White's, Black's, and the kings of both) because that is what move generation works on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from dxserial.draughts import diagram
from dxserial.draughts.errors import FenError, IllegalMoveError, Rejection
from dxserial.draughts.geometry import ALL_SQUARES, BIT, NUM_SQUARES, SQUARES, squares_of
from dxserial.draughts.movegen import LegalMove, RawMove, generate, legal_move_from_raw, play
from dxserial.draughts.pieces import START_POSITION, Colour, Piece

START_FEN = "W:W31-50:B1-20"

_ITEM = re.compile(r"(K?)(\d+)(?:-(\d+))?", re.IGNORECASE)


@dataclass(frozen=True)
class Position:
    """Where the pieces stand and whose turn it is.

    ``white`` and ``black`` are sets of squares (bit ``sq`` set for a piece on ``sq``);
    ``kings`` marks which of those pieces are kings.
    """

    white: int
    black: int
    kings: int
    turn: Colour = Colour.WHITE

    def __post_init__(self) -> None:
        if self.white & self.black:
            raise FenError(f"squares {_listing(self.white & self.black)} hold two pieces")
        if (self.white | self.black) & ~ALL_SQUARES:
            raise FenError("a piece stands outside squares 1..50")
        if self.kings & ~(self.white | self.black):
            raise FenError(
                f"kings on empty squares {_listing(self.kings & ~self.white & ~self.black)}"
            )

    # ------------------------------------------------------------------ constructors

    @classmethod
    def start(cls) -> Position:
        """The normal start: black men on 1..20, white men on 31..50, White to move."""
        return cls.from_dxp(START_POSITION, Colour.WHITE)

    @classmethod
    def from_dxp(cls, pieces: Sequence[Piece] | str, to_move: Colour = Colour.WHITE) -> Position:
        """From a DXP position: 50 ``Piece`` values or the 50-character string (``e w W z Z``)."""
        if len(pieces) != NUM_SQUARES:
            raise FenError(f"a DXP position has 50 squares, not {len(pieces)}")
        white = black = kings = 0
        for sq, value in zip(SQUARES, pieces, strict=True):
            try:
                piece = Piece(value)
            except ValueError:
                raise FenError(
                    f"DXP position: {value!r} on square {sq} is not one of e, w, W, z, Z"
                ) from None
            if piece in (Piece.WHITE_MAN, Piece.WHITE_KING):
                white |= BIT[sq]
            elif piece in (Piece.BLACK_MAN, Piece.BLACK_KING):
                black |= BIT[sq]
            if piece in (Piece.WHITE_KING, Piece.BLACK_KING):
                kings |= BIT[sq]
        return cls(white, black, kings, Colour(to_move))

    @classmethod
    def from_fen(cls, text: str) -> Position:
        """From a PDN FEN such as ``W:W31-50:B1-20`` or ``B:WK47,33:B12-14``.

        Side to move first, then the W and B fields in either order (a missing field means
        no pieces), ``K`` before a king's square, ranges ``a-b``; surrounding quotes and
        whitespace and a trailing ``.`` are tolerated.
        """
        return _parse_fen(text)

    # ------------------------------------------------------------------ output

    def to_fen(self) -> str:
        """Canonical PDN FEN: side, White's squares, Black's squares, ascending, no ranges."""
        side = "W" if self.turn is Colour.WHITE else "B"
        return f"{side}:W{self._fen_field(self.white)}:B{self._fen_field(self.black)}"

    def _fen_field(self, bits: int) -> str:
        return ",".join(("K" if self.kings & BIT[sq] else "") + str(sq) for sq in squares_of(bits))

    def to_dxp_position(self) -> str:
        """The 50-character position string of a form-B GAMEREQ."""
        return "".join(piece.value for piece in self.pieces())

    def pieces(self) -> tuple[Piece, ...]:
        """Squares 1..50 as DXP ``Piece`` values (the layout of ``GameRequest.position``)."""
        return tuple(self.piece_at(sq) for sq in SQUARES)

    def piece_at(self, square: int) -> Piece:
        bit = BIT[square]
        king = bool(self.kings & bit)
        if self.white & bit:
            return Piece.WHITE_KING if king else Piece.WHITE_MAN
        if self.black & bit:
            return Piece.BLACK_KING if king else Piece.BLACK_MAN
        return Piece.EMPTY

    def render(self, *, numbers: bool = False) -> str:
        """A text diagram for terminals; see :func:`dxserial.draughts.diagram.render`."""
        return diagram.render(self.pieces(), self.turn, numbers=numbers)

    def __str__(self) -> str:
        return self.to_fen()

    # ------------------------------------------------------------------ rules

    @property
    def _own_opp(self) -> tuple[int, int]:
        if self.turn is Colour.WHITE:
            return self.white, self.black
        return self.black, self.white

    @cached_property
    def _raw_moves(self) -> list[RawMove]:
        own, opp = self._own_opp
        return generate(own, opp, self.kings, self.turn is Colour.WHITE)

    @cached_property
    def _moves(self) -> tuple[LegalMove, ...]:
        white = self.turn is Colour.WHITE
        return tuple(legal_move_from_raw(raw, self.kings, white) for raw in self._raw_moves)

    def legal_moves(self) -> tuple[LegalMove, ...]:
        """Every legal move; empty means the side to move has lost (FMJD rules)."""
        return self._moves

    def max_capture(self) -> int:
        """How many pieces the side to move must capture (0: no capture possible)."""
        raws = self._raw_moves
        return raws[0][2].bit_count() if raws else 0

    def is_lost(self) -> bool:
        """The side to move has no legal move (no pieces, or all blocked) and so has lost."""
        return not self._raw_moves

    def find_move(
        self, from_square: int, to_square: int, captured: Iterable[int]
    ) -> LegalMove | None:
        """The legal move with these squares and captured set, or ``None``.

        Only that one move is built: a referee looks up one move per position, and building
        every legal move took a third of its time per message.
        """
        raw = self._find_raw(from_square, to_square, captured)
        if raw is None:
            return None
        return legal_move_from_raw(raw, self.kings, self.turn is Colour.WHITE)

    def _find_raw(
        self, from_square: int, to_square: int, captured: Iterable[int]
    ) -> RawMove | None:
        taken = 0
        for square in captured:
            if not 1 <= square <= NUM_SQUARES:
                return None
            taken |= BIT[square]
        for raw in self._raw_moves:
            if raw[0] == from_square and raw[1] == to_square and raw[2] == taken:
                return raw
        return None

    def needs_long_pdn(self, move: LegalMove) -> bool:
        """Another legal move shares ``move``'s from and to squares (other pieces taken), so
        PDN must write every landing square (see :func:`dxserial.draughts.notation.pdn`)."""
        taken = sum(BIT[square] for square in move.captured)
        return any(
            raw[0] == move.from_square and raw[1] == move.to_square and raw[2] != taken
            for raw in self._raw_moves
        )

    def play(self, move: LegalMove) -> Position:
        """The position after ``move``, which must be one of :meth:`legal_moves`.

        Only (from, to, captured) of ``move`` are looked at, so a move built by hand works.
        """
        raw = self._find_raw(move.from_square, move.to_square, move.captured)
        if raw is None:
            raise IllegalMoveError(
                f"{move.long_pdn()} is not a legal move in {self.to_fen()}",
                reason=Rejection.NO_SUCH_MOVE,
            )
        own, opp = self._own_opp
        white = self.turn is Colour.WHITE
        own, opp, kings = play(own, opp, self.kings, white, raw)
        if white:
            return Position(own, opp, kings, Colour.BLACK)
        return Position(opp, own, kings, Colour.WHITE)


def _listing(bits: int) -> str:
    return ",".join(str(sq) for sq in squares_of(bits))


def _parse_fen(text: str) -> Position:
    def fail(what: str) -> FenError:
        return FenError(f"FEN {text.strip()!r}: {what}")

    body = text.strip().strip('"').strip()
    if body.endswith("."):
        body = body[:-1].rstrip()
    parts = [part.strip() for part in body.split(":")]
    if not parts[0]:
        raise fail("empty: expected a side to move (W or B) first")
    side = parts[0].upper()
    if side not in ("W", "B"):
        raise fail(f"{parts[0]!r} is not a side to move (W or B)")
    sets: dict[str, tuple[int, int]] = {}
    seen = 0
    for part in parts[1:]:
        colour = part[:1].upper()
        if colour not in ("W", "B"):
            raise fail(f"field {part!r} does not start with W or B")
        if colour in sets:
            raise fail(f"field {part!r}: a second {colour} field")
        pieces = kings = 0
        items = part[1:].strip()
        for item in items.split(",") if items else []:
            match = _ITEM.fullmatch(item.strip())
            if match is None:
                raise fail(f"{item.strip()!r} in field {part!r} is not a square, K square or range")
            first = int(match[2])
            last = int(match[3]) if match[3] else first
            for sq in (first, last):
                if not 1 <= sq <= NUM_SQUARES:
                    raise fail(f"{item.strip()!r}: square {sq} is not in 1..50")
            if last < first:
                raise fail(f"{item.strip()!r}: the range runs backwards")
            for sq in range(first, last + 1):
                if seen & BIT[sq]:
                    raise fail(f"{item.strip()!r}: square {sq} is given twice")
                seen |= BIT[sq]
                pieces |= BIT[sq]
                if match[1]:
                    kings |= BIT[sq]
        sets[colour] = (pieces, kings)
    white, white_kings = sets.get("W", (0, 0))
    black, black_kings = sets.get("B", (0, 0))
    turn = Colour.WHITE if side == "W" else Colour.BLACK
    return Position(white, black, white_kings | black_kings, turn)
