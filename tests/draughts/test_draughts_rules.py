"""The FMJD rules: every rulebook position of DRAUGHTS.md, promotion, ambiguity, perft."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dxserial.draughts import (
    IllegalMoveError,
    LegalMove,
    Position,
    Rejection,
    divide,
    parse_pdn_move,
    pdn,
    pdn_in,
    pdn_moves,
    perft,
)
from dxserial.protocol.messages import Colour, Piece

# (what it shows, FEN, the complete set of legal moves) — the table of DRAUGHTS.md.
RULEBOOK = [
    ("man steps", "W:W28", {"28-22", "28-23"}),
    ("man captures", "W:W28,32:B23", {"28x19"}),
    ("man captures backwards", "W:W35:B30,K40", {"35x24", "35x44"}),
    ("flying king capture, any landing", "W:WK46:B23", {"46x19", "46x14", "46x10", "46x5"}),
    ("capture must continue", "W:W15:B8,19,20", {"15x2"}),
    ("king picks the landing that continues", "W:WK47:B9,12,33", {"47x17", "47x21", "47x26"}),
    ("maximum number of pieces, not value", "W:WK48:B7,8,31,34,K42,44", {"48x50"}),
    ("kings do not count extra", "W:W26:B12,K21,31,32", {"26x8", "26x28"}),
    ("Turkish strike: captured pieces block", "B:W27,28,38,39,42:BK25", {"25x33"}),
    ("no promotion when passing the far row", "W:W15:B9,10", {"15x13"}),
    ("promotion at the end of a capture", "W:W12:B8", {"12x3"}),
    ("man loop back to its own square", "W:W33:B18,19,28,29", {"33x33"}),
]


@pytest.mark.parametrize(("what", "fen", "expected"), RULEBOOK, ids=[r[0] for r in RULEBOOK])
def test_rulebook_position(what: str, fen: str, expected: set[str]) -> None:
    pos = Position.from_fen(fen)
    names = [text for _, text in pdn_moves(pos)]
    assert len(names) == len(set(names))
    assert set(names) == expected


def test_rulebook_table_in_the_spec_is_covered(spec_dir: Path) -> None:
    """Every row of the spec's rulebook table is in RULEBOOK, with the same moves."""
    text = (spec_dir / "DRAUGHTS.md").read_text()
    section = text.split("## Rulebook positions", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\|[^|]*\| `([^`]+)` \| ([^|]+)\|$", section, re.MULTILINE)
    assert len(rows) == len(RULEBOOK)
    ours = {fen: moves for _, fen, moves in RULEBOOK}
    for fen, moves in rows:
        listed = {m.strip() for m in re.sub(r"\(.*?\)", "", moves).split(",")}
        assert ours[fen] == listed, fen


def _only(fen: str) -> tuple[Position, LegalMove]:
    pos = Position.from_fen(fen)
    (move,) = pos.legal_moves()
    return pos, move


def test_capture_details_of_the_rulebook() -> None:
    _, move = _only("W:W15:B8,19,20")
    assert move.captured == {8, 19, 20}
    _, move = _only("W:WK48:B7,8,31,34,K42,44")
    assert move.captured == {7, 8, 34, 44}
    pos, move = _only("B:W27,28,38,39,42:BK25")
    assert move.captured == {27, 28, 39, 42}  # 38 cannot be reached past the blocking 42
    assert pos.play(move).to_fen() == "W:W38:BK33"
    pos, move = _only("W:W33:B18,19,28,29")
    assert move.captured == {18, 19, 28, 29}
    assert move.from_square == move.to_square == 33
    after = pos.play(move)
    assert after.to_fen() == "B:W33:B"
    assert after.is_lost()
    kings_equal = Position.from_fen("W:W26:B12,K21,31,32")
    assert {m.captured for m in kings_equal.legal_moves()} == {
        frozenset({12, 21}),
        frozenset({31, 32}),
    }


def test_no_promotion_when_passing_the_far_row() -> None:
    pos, move = _only("W:W15:B9,10")
    assert not move.promotes
    assert pos.play(move).piece_at(13) is Piece.WHITE_MAN
    assert move.route == (4, 13)


def test_promotion_at_the_end_of_a_capture_and_a_step() -> None:
    pos, move = _only("W:W12:B8")
    assert move.promotes
    assert pos.play(move).piece_at(3) is Piece.WHITE_KING
    pos, move = _only("W:W15:B8,19,20")
    assert pos.play(move).piece_at(2) is Piece.WHITE_KING
    black = Position.from_fen("B:W43:B38")
    (move,) = black.legal_moves()
    assert move.to_square == 49 and move.promotes
    assert black.play(move).piece_at(49) is Piece.BLACK_KING
    step = Position.from_fen("B:W50:B41")
    after = {m.to_square: step.play(m).piece_at(m.to_square) for m in step.legal_moves()}
    assert after == {46: Piece.BLACK_KING, 47: Piece.BLACK_KING}
    king = Position.from_fen("W:WK8:B50")
    assert all(not m.promotes for m in king.legal_moves())


def test_men_do_not_step_backwards_and_kings_fly() -> None:
    pos = Position.from_fen("W:W28,K46:B")
    by_piece: dict[int, set[int]] = {}
    for move in pos.legal_moves():
        by_piece.setdefault(move.from_square, set()).add(move.to_square)
    assert by_piece[28] == {22, 23}
    assert by_piece[46] == {41, 37, 32}  # stops before its own man on 28
    black = Position.from_fen("B:W:B23")
    assert {m.to_square for m in black.legal_moves()} == {28, 29}


def test_two_moves_with_the_same_from_and_to() -> None:
    pos = Position.from_fen("W:WK4:B13,20,32,37")
    moves = pos.legal_moves()
    assert len(moves) == 2
    assert {m.short_pdn() for m in moves} == {"4x15"}
    assert {m.captured for m in moves} == {frozenset({13, 20, 32}), frozenset({13, 20, 37})}
    for move in moves:
        text = pdn(move, moves)
        assert text.startswith("4x") and text.endswith("x15") and text != "4x15"
        assert parse_pdn_move(pos, text) == move
    with pytest.raises(IllegalMoveError) as info:
        parse_pdn_move(pos, "4x15")
    assert info.value.reason is Rejection.AMBIGUOUS


def test_long_form_only_where_needed() -> None:
    pos = Position.from_fen("W:WK47:B14,19,29,31,42")
    assert {text for _, text in pdn_moves(pos)} == {"47x38x24x13x36", "47x38x20x9x36"}
    for move, text in pdn_moves(pos):
        assert parse_pdn_move(pos, text) == move
    over19 = parse_pdn_move(pos, "47x38x24x13x36")
    assert over19.captured == {19, 29, 31, 42}
    # A long form that names only the landing square that tells the two apart.
    assert parse_pdn_move(pos, "47x24x36") == over19
    # Elsewhere the short form is used.
    assert {text for _, text in pdn_moves(Position.from_fen("W:WK46:B23"))} == {
        "46x19",
        "46x14",
        "46x10",
        "46x5",
    }


def test_parse_pdn_move_errors() -> None:
    start = Position.start()
    assert parse_pdn_move(start, " 32-28 ").to_square == 28
    with pytest.raises(IllegalMoveError) as info:
        parse_pdn_move(start, "32-29")
    assert info.value.reason is Rejection.NO_SUCH_MOVE
    with pytest.raises(IllegalMoveError) as info:
        parse_pdn_move(start, "e2e4")
    assert info.value.reason is Rejection.BAD_NOTATION


def test_routes_are_merged_into_one_move() -> None:
    # K40 takes 34 landing on 29 or 23, then 7 to square 1: two routes, one move.
    pos = Position.from_fen("W:WK40:B7,34,42")
    assert {(m.to_square, m.captured) for m in pos.legal_moves()} == {
        (1, frozenset({7, 34})),
        (47, frozenset({34, 42})),
    }
    # Round a square of four pieces clockwise or anticlockwise: still one move each.
    loop = Position.from_fen("W:WK31:B22,23,39,40,42")
    assert sorted(m.to_square for m in loop.legal_moves()) == [26, 27, 31, 36, 37]
    (man_loop,) = Position.from_fen("W:W33:B18,19,28,29").legal_moves()
    assert man_loop.route in ((22, 13, 24, 33), (24, 13, 22, 33))


def test_a_played_move_must_be_legal_here() -> None:
    pos = Position.from_fen("W:W28,32:B23")
    with pytest.raises(IllegalMoveError):
        pos.play(LegalMove(32, 27))
    (move,) = pos.legal_moves()
    after = pos.play(move)
    assert after.turn is Colour.BLACK
    assert after.to_fen() == "B:W19,32:B"


def test_no_moves_means_lost() -> None:
    assert Position.from_fen("W:W:B1").is_lost()
    blocked = Position.from_fen("W:W46:B41,37")
    assert blocked.legal_moves() == ()
    assert blocked.is_lost()
    assert not Position.start().is_lost()
    assert Position.start().max_capture() == 0


PERFT = [
    ("start", "W:W31-50:B1-20", [9, 81, 658, 4265, 27117, 167140]),
    (
        "Woldouby",
        "W:B12,13,14,16,18,19,21,23,24,26:W25,27,28,30,32,33,34,35,37,38",
        [6, 12, 30, 73, 215, 590, 1944, 6269],
    ),
    (
        "all kings",
        "W:WK31,K32,K33,K34,K35,K36,K37,K38,K39,K40,K41,K42,K43,K44,K45,K46,K47,K48,K49,K50"
        ":BK1,K2,K3,K4,K5,K6,K7,K8,K9,K10,K11,K12,K13,K14,K15,K16,K17,K18,K19,K20",
        [17, 79, 352, 1399, 7062],
    ),
]


@pytest.mark.parametrize(("name", "fen", "counts"), PERFT, ids=[p[0] for p in PERFT])
def test_published_perft(name: str, fen: str, counts: list[int]) -> None:
    pos = Position.from_fen(fen)
    assert [perft(pos, depth) for depth in range(1, len(counts) + 1)] == counts


def test_perft_edges_and_divide() -> None:
    start = Position.start()
    assert perft(start, 0) == 1
    with pytest.raises(ValueError):
        perft(start, -1)
    split = divide(start, 3)
    assert len(split) == 9
    assert sum(split.values()) == 658
    # Two moves from 47 to 36 count twice.
    assert perft(Position.from_fen("W:WK47:B14,19,29,31,42"), 1) == 2


def test_a_hand_built_move_plays_like_the_legal_one() -> None:
    pos = Position.from_fen("W:W12:B8")
    after = pos.play(LegalMove(12, 3, frozenset({8})))
    assert after.piece_at(3) is Piece.WHITE_KING


def _positions_to_check() -> list[Position]:
    """The rulebook's positions, the perft ones and two plies deep from each: captures,
    kings, promotions, merged routes and the two-moves-same-squares case among them."""
    roots = [Position.from_fen(fen) for _, fen, _ in RULEBOOK]
    roots += [Position.from_fen(fen) for _, fen, _ in PERFT]
    roots += [Position.from_fen("W:WK47:B14,19,29,31,42"), Position.from_fen("W:WK40:B7,34,42")]
    seen = list(roots)
    for root in roots:
        for move in root.legal_moves():
            child = root.play(move)
            seen.append(child)
            seen.extend(child.play(reply) for reply in child.legal_moves()[:3])
    return seen


def test_one_move_lookups_agree_with_the_full_list() -> None:
    # The referee asks a position for one move (find_move), whether PDN needs the long
    # form (pdn_in), the maximum capture and whether it is lost, without building every
    # legal move: each must answer as the full list does.
    for pos in _positions_to_check():
        moves = pos.legal_moves()
        assert pos.is_lost() == (not moves)
        assert pos.max_capture() == max((len(m.captured) for m in moves), default=0)
        for move in moves:
            found = pos.find_move(move.from_square, move.to_square, move.captured)
            assert found == move and found.route == move.route
            assert found.king == move.king and found.promotes == move.promotes
            assert pdn_in(pos, move) == pdn(move, moves)
        froms = {m.from_square for m in moves} or {1}
        for frm in froms:
            for to in (1, 23, 50):
                for captured in (frozenset(), frozenset({23}), frozenset({0, 51})):
                    expected = next(
                        (m for m in moves
                         if (m.from_square, m.to_square, m.captured) == (frm, to, captured)),
                        None,
                    )
                    assert pos.find_move(frm, to, captured) == expected
