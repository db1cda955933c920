"""DXP and the rules meet here: a GAMEREQ's position, MOVEs matched against the legal moves,
and legal moves written as MOVEs.

A MOVE carries from, to and the captured squares (in any order) but no route; under the
international rules that names at most one legal move.  When it names none, the error says
why in the words a referee would use, and ``reason`` classifies it.
"""

from __future__ import annotations

from dxserial.draughts.board import Position
from dxserial.draughts.errors import IllegalMoveError, Rejection
from dxserial.draughts.movegen import LegalMove
from dxserial.protocol.messages import Colour, GameRequest, Move, Piece, colour_name

_OWN = {
    Colour.WHITE: (Piece.WHITE_MAN, Piece.WHITE_KING),
    Colour.BLACK: (Piece.BLACK_MAN, Piece.BLACK_KING),
}
_PIECE_NAMES = {
    Piece.EMPTY: "it is empty",
    Piece.WHITE_MAN: "it holds a white man",
    Piece.WHITE_KING: "it holds a white king",
    Piece.BLACK_MAN: "it holds a black man",
    Piece.BLACK_KING: "it holds a black king",
}


def position_from_gamereq(msg: GameRequest) -> Position:
    """The position a GAMEREQ starts from (form A: the normal start; form B: its own)."""
    return Position.from_dxp(msg.start_position, msg.first_to_move)


def _pieces(n: int) -> str:
    return f"{n} piece" if n == 1 else f"{n} pieces"


def describe_dxp_move(msg: Move) -> str:
    """``32-28`` or ``28x19 over 23``: a MOVE as a person reads it (captured as sent)."""
    if not msg.captured:
        return f"{msg.from_square}-{msg.to_square}"
    over = ",".join(str(sq) for sq in msg.captured)
    return f"{msg.from_square}x{msg.to_square} over {over}"


def match_dxp_move(position: Position, msg: Move) -> LegalMove:
    """The one legal move that ``msg`` names (same from, to and captured set).

    Raises :class:`IllegalMoveError` saying why there is none: no own piece on the from
    square, a quiet move when a capture is compulsory, fewer pieces than the maximum
    capture, or no such capture / move.
    """
    frm, to, captured = msg.from_square, msg.to_square, frozenset(msg.captured)

    def reject(why: str, reason: Rejection) -> IllegalMoveError:
        return IllegalMoveError(f"illegal move {describe_dxp_move(msg)}: {why}", reason=reason)

    side = colour_name(position.turn)
    if not 1 <= frm <= 50 or position.piece_at(frm) not in _OWN[position.turn]:
        what = _PIECE_NAMES[position.piece_at(frm)] if 1 <= frm <= 50 else "no such square"
        raise reject(f"no {side} piece on square {frm} ({what})", Rejection.NO_PIECE)
    if len(captured) != len(msg.captured):
        raise reject("a square is listed twice among the captured", Rejection.NO_SUCH_CAPTURE)
    most = position.max_capture()
    if most and not captured:
        raise reject(f"a capture of {_pieces(most)} is compulsory", Rejection.CAPTURE_COMPULSORY)
    if captured and len(captured) < most:
        raise reject(
            f"captures {_pieces(len(captured))}, but a capture of {_pieces(most)} is compulsory"
            " (maximum capture)",
            Rejection.TOO_FEW_CAPTURED,
        )
    found = position.find_move(frm, to, captured)
    if found is not None:
        return found
    moves = position.legal_moves()  # only to say why there is none
    from_here = [m for m in moves if m.from_square == frm]
    if captured:
        if not most:
            why = "no capture is possible in this position"
        elif len(captured) > most:
            why = f"captures {_pieces(len(captured))}, but at most {_pieces(most)} can be taken"
        elif from_here:
            legal = "; ".join(_with_captures(m) for m in from_here)
            why = f"no such capture (from {frm}: {legal})"
        else:
            why = f"no such capture: the piece on {frm} cannot capture {_pieces(most)}"
        raise reject(why, Rejection.NO_SUCH_CAPTURE)
    if from_here:
        why = f"no such move (from {frm}: {', '.join(m.short_pdn() for m in from_here)})"
    else:
        why = f"no such move: the piece on {frm} cannot move"
    raise reject(why, Rejection.NO_SUCH_MOVE)


def _with_captures(move: LegalMove) -> str:
    return f"{move.short_pdn()} over {','.join(str(sq) for sq in sorted(move.captured))}"


def to_dxp_move(move: LegalMove, seconds: int = 0) -> Move:
    """The MOVE message an engine sends for ``move`` (captured squares in ascending order)."""
    return Move(
        seconds=seconds,
        from_square=move.from_square,
        to_square=move.to_square,
        captured=tuple(sorted(move.captured)),
    )
