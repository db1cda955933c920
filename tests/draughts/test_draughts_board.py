"""Positions: PDN FEN in and out, DXP position strings, GAMEREQ, the text diagram."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dxserial.draughts import START_FEN, FenError, Position, RulesError
from dxserial.draughts.geometry import BIT, RAYS, between, row_col, square_at
from dxserial.errors import DxSerialError
from dxserial.protocol.dxp_moves import position_from_gamereq
from dxserial.protocol.messages import START_POSITION, Colour, GameRequest, Piece, parse

START_DXP = "z" * 20 + "e" * 10 + "w" * 20


def test_geometry_matches_the_dxp_numbering() -> None:
    assert row_col(1) == (0, 1)
    assert row_col(5) == (0, 9)
    assert row_col(46) == (9, 0)
    assert all(square_at(*row_col(sq)) == sq for sq in range(1, 51))
    assert square_at(0, 0) == 0
    # Square 46's long diagonal runs up to square 5.
    assert RAYS[46][1] == (41, 37, 32, 28, 23, 19, 14, 10, 5)
    assert between(46, 5) == (41, 37, 32, 28, 23, 19, 14, 10)
    assert between(46, 47) is None


def test_start_position() -> None:
    start = Position.start()
    assert start.turn is Colour.WHITE
    assert start.to_dxp_position() == START_DXP
    assert start.pieces() == START_POSITION
    assert start == Position.from_fen(START_FEN)
    assert start.to_fen() == "W:W" + ",".join(map(str, range(31, 51))) + ":B" + ",".join(
        map(str, range(1, 21))
    )


@pytest.mark.parametrize(
    "text",
    [
        "W:W31-50:B1-20",
        "W:B1-20:W31-50",
        " W:W31-50:B1-20. ",
        "W:W31-50:B1-20.",
        '"W:W31-50:B1-20"',
        "W : W31-50 : B1-20",
        "w:w31-50:b1-20",
        "W:W31-40,41,42-50:B1-5,6-20",
    ],
)
def test_fen_variants_read_the_same(text: str) -> None:
    assert Position.from_fen(text) == Position.start()


def test_fen_kings_sides_and_missing_fields() -> None:
    pos = Position.from_fen("B:WK47,33:BK1-3,12")
    assert pos.turn is Colour.BLACK
    assert pos.piece_at(47) is Piece.WHITE_KING
    assert pos.piece_at(33) is Piece.WHITE_MAN
    assert [pos.piece_at(sq) for sq in (1, 2, 3)] == [Piece.BLACK_KING] * 3
    assert pos.piece_at(12) is Piece.BLACK_MAN
    assert pos.to_fen() == "B:W33,K47:BK1,K2,K3,12"
    lone = Position.from_fen("W:W28")
    assert lone.black == 0
    assert lone.to_fen() == "W:W28:B"
    assert Position.from_fen("W:W28:B") == lone
    assert str(lone) == "W:W28:B"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("", "empty"),
        ("X:W31-50:B1-20", "'X'"),
        ("W:W31-51:B1-20", "square 51"),
        ("W:W0:B1", "square 0"),
        ("W:W31-50:B1-20:B21", "second B field"),
        ("W:W31-50:Q1-20", "'Q1-20'"),
        ("W:W31,a:B1", "'a'"),
        ("W:W31,:B1", "''"),
        ("W:W20-11", "backwards"),
        ("W:W31-50:B1-20,31", "square 31 is given twice"),
        ("W:W31,31", "square 31 is given twice"),
        ("W:WK", "'K'"),
    ],
)
def test_bad_fen_is_one_line_naming_the_bad_part(text: str, names: str) -> None:
    with pytest.raises(FenError) as info:
        Position.from_fen(text)
    message = str(info.value)
    assert names in message
    assert "\n" not in message
    assert isinstance(info.value, RulesError)
    assert isinstance(info.value, DxSerialError)


def test_dxp_position_round_trip_and_errors() -> None:
    text = "e" * 3 + "Z" + "z" * 5 + "e" * 36 + "W" + "w" * 4
    pos = Position.from_dxp(text, Colour.BLACK)
    assert pos.to_dxp_position() == text
    assert pos.turn is Colour.BLACK
    assert pos.piece_at(4) is Piece.BLACK_KING
    assert pos.piece_at(46) is Piece.WHITE_KING
    assert Position.from_dxp(pos.pieces(), Colour.BLACK) == pos
    with pytest.raises(FenError, match="50 squares"):
        Position.from_dxp("e" * 49)
    with pytest.raises(FenError, match="square 7"):
        Position.from_dxp("e" * 6 + "x" + "e" * 43)


def test_from_gamereq_form_a_and_b() -> None:
    form_a = parse(b"R01Scan 2.0                        Z001075A")
    assert isinstance(form_a, GameRequest)
    assert position_from_gamereq(form_a) == Position.start()
    body = "e" * 10 + "z" + "e" * 29 + "W" + "e" * 9
    form_b = parse(b"R01pydraughts                      W000000BZ" + body.encode())
    assert isinstance(form_b, GameRequest)
    pos = position_from_gamereq(form_b)
    assert pos.turn is Colour.BLACK
    assert pos.to_fen() == "B:WK41:B11"


def test_inconsistent_sets_are_rejected() -> None:
    with pytest.raises(FenError, match="two pieces"):
        Position(BIT[3], BIT[3], 0)
    with pytest.raises(FenError, match="kings on empty"):
        Position(BIT[3], 0, BIT[4])


@st.composite
def positions(draw: st.DrawFn) -> Position:
    squares = draw(st.lists(st.integers(1, 50), unique=True, max_size=40))
    colours = draw(st.lists(st.booleans(), min_size=len(squares), max_size=len(squares)))
    crowned = draw(st.lists(st.booleans(), min_size=len(squares), max_size=len(squares)))
    white = sum(BIT[sq] for sq, c in zip(squares, colours, strict=True) if c)
    black = sum(BIT[sq] for sq, c in zip(squares, colours, strict=True) if not c)
    kings = sum(BIT[sq] for sq, k in zip(squares, crowned, strict=True) if k)
    turn = draw(st.sampled_from(Colour))
    return Position(white, black, kings, turn)


@given(positions())
def test_fen_and_dxp_round_trip(pos: Position) -> None:
    assert Position.from_fen(pos.to_fen()) == pos
    assert Position.from_dxp(pos.to_dxp_position(), pos.turn) == pos
    assert hash(Position.from_fen(pos.to_fen())) == hash(pos)


def test_render_shows_pieces_legend_and_side() -> None:
    pos = Position.from_fen("B:WK46,33:B1,K50")
    text = pos.render()
    lines = text.splitlines()
    assert len(lines) == 14  # frame, 10 rows, frame, legend, side to move
    assert lines[1].startswith("|    z ")  # square 1 sits in the second column
    assert " W " in lines[10] and lines[10].startswith("| W ")
    assert lines[10].rstrip().endswith("46-50")
    assert lines[10].startswith("| W     .     .     .     Z    |")
    assert " w " in lines[7]
    assert "w/W white man/king, z/Z black man/king" in text
    assert lines[-1] == "Black to move"
    numbered = pos.render(numbers=True)
    assert "28" in numbered.splitlines()[6]
    assert all(len(line) == len(lines[1]) for line in lines[1:11])
