"""DXP MOVE messages against the legal moves: every rejection reason, and a real game."""

from __future__ import annotations

import itertools

import pytest

from dxserial.draughts import IllegalMoveError, Position, Rejection, RulesError
from dxserial.protocol.dxp_moves import (
    describe_dxp_move,
    match_dxp_move,
    position_from_gamereq,
    to_dxp_move,
)
from dxserial.protocol.messages import GameAccept, GameRequest, Move, encode, parse


def _move(frm: int, to: int, *captured: int) -> Move:
    return Move(from_square=frm, to_square=to, captured=captured)


def _reject(fen: str, msg: Move) -> IllegalMoveError:
    with pytest.raises(IllegalMoveError) as info:
        match_dxp_move(Position.from_fen(fen), msg)
    assert isinstance(info.value, RulesError)
    assert "\n" not in str(info.value)
    return info.value


def test_matching_ignores_captured_order_and_seconds() -> None:
    pos = Position.from_fen("W:WK48:B7,8,31,34,K42,44")
    move = match_dxp_move(
        pos, Move(seconds=17, from_square=48, to_square=50, captured=(44, 8, 7, 34))
    )
    assert move.captured == {7, 8, 34, 44}
    assert to_dxp_move(move, seconds=3) == Move(
        seconds=3, from_square=48, to_square=50, captured=(7, 8, 34, 44)
    )
    assert encode(to_dxp_move(move)) == b"M0000485004070834" + b"44"


def test_each_of_two_same_square_captures_is_named_exactly() -> None:
    pos = Position.from_fen("W:WK4:B13,20,32,37")
    first = match_dxp_move(pos, _move(4, 15, 13, 20, 32))
    second = match_dxp_move(pos, _move(4, 15, 37, 20, 13))
    assert first != second
    assert {first.captured, second.captured} == {m.captured for m in pos.legal_moves()}


def test_no_own_piece_on_the_from_square() -> None:
    err = _reject("W:W31-50:B1-20", _move(25, 20))
    assert err.reason is Rejection.NO_PIECE
    assert "no White piece on square 25 (it is empty)" in str(err)
    err = _reject("W:W31-50:B1-20", _move(20, 25))
    assert err.reason is Rejection.NO_PIECE
    assert "black man" in str(err)
    err = _reject("B:W31-50:B1-20", _move(32, 28))
    assert "no Black piece on square 32 (it holds a white man)" in str(err)


def test_quiet_move_when_a_capture_is_compulsory() -> None:
    err = _reject("W:W26,45:B12,K21,31,32", _move(45, 40))
    assert err.reason is Rejection.CAPTURE_COMPULSORY
    assert str(err) == "illegal move 45-40: a capture of 2 pieces is compulsory"
    err = _reject("W:W28,32:B23", _move(32, 27))
    assert str(err).endswith("a capture of 1 piece is compulsory")


def test_fewer_pieces_than_the_maximum_capture() -> None:
    err = _reject("W:W15:B8,19,20", _move(15, 24, 20))
    assert err.reason is Rejection.TOO_FEW_CAPTURED
    assert "captures 1 piece, but a capture of 3 pieces is compulsory" in str(err)
    err = _reject("W:WK48:B7,8,31,34,K42,44", _move(48, 26, 42, 31))
    assert err.reason is Rejection.TOO_FEW_CAPTURED


def test_no_such_capture() -> None:
    err = _reject("W:W28,32:B23", _move(28, 19, 22))
    assert err.reason is Rejection.NO_SUCH_CAPTURE
    assert "no such capture (from 28: 28x19 over 23)" in str(err)
    err = _reject("W:W28,32:B23", _move(28, 10, 23, 14))
    assert "captures 2 pieces, but at most 1 piece can be taken" in str(err)
    err = _reject("W:W31-50:B1-20", _move(32, 23, 28))
    assert err.reason is Rejection.NO_SUCH_CAPTURE
    assert "no capture is possible" in str(err)
    err = _reject("W:W28,32:B23", _move(32, 14, 23))
    assert "the piece on 32 cannot capture 1 piece" in str(err)
    err = _reject("W:W28,32:B23", _move(28, 19, 23, 23))
    assert "listed twice" in str(err)


def test_no_such_move() -> None:
    err = _reject("W:W31-50:B1-20", _move(32, 26))
    assert err.reason is Rejection.NO_SUCH_MOVE
    assert str(err) == "illegal move 32-26: no such move (from 32: 32-27, 32-28)"
    err = _reject("W:W31-50:B1-20", _move(46, 41))
    assert "the piece on 46 cannot move" in str(err)


def test_describe() -> None:
    assert describe_dxp_move(_move(32, 28)) == "32-28"
    assert describe_dxp_move(_move(28, 19, 23)) == "28x19 over 23"


def test_scan_game_replays_to_the_end(scan_game: list[dict[str, str]]) -> None:
    """The first 152 messages: GAMEREQ, GAMEACC, then 150 MOVEs, all legal, in order."""
    messages = [parse(entry["message"].encode("ascii")) for entry in scan_game[:152]]
    request = messages[0]
    assert isinstance(request, GameRequest)
    assert isinstance(messages[1], GameAccept)
    pos = position_from_gamereq(request)
    assert pos == Position.start()
    # The follower plays Black, so the initiator moves first, then strictly alternating.
    movers = [entry["from"] for entry in scan_game[2:152]]
    assert movers[0] == "initiator"
    assert all(a != b for a, b in itertools.pairwise(movers))
    played = 0
    for msg in messages[2:]:
        assert isinstance(msg, Move)
        matches = [
            m
            for m in pos.legal_moves()
            if (m.from_square, m.to_square, m.captured)
            == (msg.from_square, msg.to_square, frozenset(msg.captured))
        ]
        assert len(matches) == 1, (played, msg)
        move = match_dxp_move(pos, msg)
        assert move == matches[0]
        # Writing the move back gives the same message up to the order of captured squares.
        back = to_dxp_move(move, seconds=msg.seconds)
        assert (back.from_square, back.to_square, sorted(back.captured)) == (
            msg.from_square,
            msg.to_square,
            sorted(msg.captured),
        )
        pos = pos.play(move)
        played += 1
    assert played == 150
    assert pos.to_fen() == "W:WK7:BK6,35"
    assert not pos.is_lost()
