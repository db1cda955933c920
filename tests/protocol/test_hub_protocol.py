"""Hub protocol lines, positions and moves (dxserial.protocol.hub), checked against pydraughts."""

from __future__ import annotations

import random

import pytest
from draughts import Board

from dxserial.draughts import Position
from dxserial.protocol import hub
from dxserial.protocol.messages import Move


def test_a_line_with_quoted_values_and_flags_reads_back_the_same() -> None:
    text = 'info depth=21 mean-depth=20.8 score=-0.01 pv="32-28 17-22 28x17x22" x'
    parsed = hub.parse_line(text)
    assert parsed.command == "info"
    assert parsed.get("pv") == "32-28 17-22 28x17x22"
    assert parsed.has("x") and parsed.get("x") == ""
    assert hub.format_line(parsed) == text
    assert hub.parse_line(hub.format_line(parsed)) == parsed


@pytest.mark.parametrize(
    ("built", "wire"),
    [
        (hub.line("hub"), "hub"),
        (hub.line("id", name="dxserial hub", version="1.0"), 'id name="dxserial hub" version=1.0'),
        (hub.line("param", name="depth", value=3, type="int"), "param name=depth value=3 type=int"),
        (hub.line("wait"), "wait"),
        (hub.line("init"), "init"),
        (hub.line("ready"), "ready"),
        (hub.line("go", "think"), "go think"),
        (hub.line("go", "ponder"), "go ponder"),
        (hub.line("go", "analyze"), "go analyze"),
        (hub.line("done", move="32-28", ponder="17-22"), "done move=32-28 ponder=17-22"),
        (hub.line("stop"), "stop"),
        (hub.line("ping"), "ping"),
        (hub.line("pong"), "pong"),
        (hub.line("ponder-hit"), "ponder-hit"),
        (hub.line("new-game"), "new-game"),
        (hub.line("quit"), "quit"),
        (hub.line("error", message='a "b" = c'), "error message=\"a 'b' = c\""),
        (hub.info_line({"depth": 3, "text": "a=b"}), "info depth=3 text=a:b"),
        (hub.Level(move_time=1.5).to_line(), "level move-time=1.5"),
        (hub.Level(depth=4).to_line(), "level depth=4"),
        (hub.Level(nodes=100000).to_line(), "level nodes=100000"),
        (hub.Level(time=291.587, moves=9).to_line(), "level moves=9 time=291.587"),
        (hub.Level(time=60, inc=2).to_line(), "level time=60 inc=2"),
        (hub.Level(infinite=True).to_line(), "level infinite"),
    ],
)
def test_every_command_and_answer_is_written_as_the_protocol_shows(
    built: hub.HubLine, wire: str
) -> None:
    assert hub.format_line(built) == wire
    assert hub.format_line(hub.parse_line(wire)) == wire


def test_level_forms_are_read_with_their_numbers() -> None:
    assert hub.parse_level(hub.parse_line("level depth=7")) == hub.Level(depth=7)
    assert hub.parse_level(hub.parse_line("level nodes=5000")) == hub.Level(nodes=5000)
    assert hub.parse_level(hub.parse_line("level move-time=0.5")).budget() == 0.5
    clock = hub.parse_level(hub.parse_line("level moves=9 time=90 inc=1"))
    assert (clock.moves, clock.time, clock.inc) == (9, 90.0, 1.0)
    assert clock.budget() == pytest.approx(11.0)
    assert hub.parse_level(hub.parse_line("level infinite")).budget() is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty line"),
        ("   ", "empty line"),
        ("=oops", "not a Hub command"),
        ('pos pos="Wbbb', "cannot read the arguments"),
        ('go x="a"b', "cannot read the arguments"),
        ("go \x01think", "control character"),
        ("x" * (hub.MAX_LINE + 1), r"more than \d+ characters"),
    ],
)
def test_garbage_lines_give_one_clear_error(text: str, says: str) -> None:
    with pytest.raises(hub.HubError, match=says):
        hub.parse_line(text)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("level", "no depth=, nodes=, move-time=, time= or infinite"),
        ("level time=soon", "is not a number"),
        ("level move-time=-1", "must be >= 0"),
        ("level time=nan", "must be >= 0"),
        ("pos moves=32-28", "pos= is missing"),
        ("pos pos=Wbbb", "not 51"),
        ("pos pos=X" + "e" * 50, "not W or B"),
        ("pos pos=W" + "z" * 50, "is not one of w b W B e"),
        ("pos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww moves=32-29", "no such move"),
        ("pos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww moves=e4", "not a Hub move"),
        ("done", "done without move="),
    ],
)
def test_commands_with_bad_arguments_give_one_clear_error(text: str, says: str) -> None:
    parsed = hub.parse_line(text)
    with pytest.raises(hub.HubError, match=says):
        if parsed.command == "level":
            hub.parse_level(parsed)
        elif parsed.command == "pos":
            hub.parse_pos(parsed)
        else:
            hub.parse_done(parsed)


def test_positions_go_to_and_from_the_board() -> None:
    start = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"
    assert hub.parse_position(start) == Position.start()
    assert hub.format_position(Position.start()) == start
    odd = Position.from_fen("B:WK47,33:B12-14,K3")
    assert hub.parse_position(hub.format_position(odd)) == odd
    assert hub.format_position(odd)[0] == "B"
    assert hub.format_position(odd)[3] == "B"  # the black king on 3


def test_pos_with_moves_plays_them_and_writes_them_back() -> None:
    text = (
        'pos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww moves="32-28 19-23 28x19x23"'
    )
    pos = hub.parse_pos(hub.parse_line(text))
    assert len(pos.moves) == 3 and pos.position.turn.value == "Z"
    assert hub.format_line(hub.pos_line(pos.start, pos.moves)) == text


def test_moves_map_onto_dxp_move_fields_one_to_one() -> None:
    msg = hub.to_dxp("28x19x23", seconds=3)
    assert msg == Move(seconds=3, from_square=28, to_square=19, captured=(23,))
    assert hub.hub_move_of_dxp(msg) == "28x19x23"
    assert hub.split_hub_move("32-28") == (32, 28, ())
    for bad in ("32-28x23", "28x19", "3228", "32--28"):
        with pytest.raises(hub.HubError, match=r"Hub move|captured squares"):
            hub.split_hub_move(bad)


def test_every_legal_move_is_written_as_pydraughts_writes_it() -> None:
    """Random games: our Hub text of each legal move equals pydraughts' hub_move (as sets
    of from, to and captured squares), and reads back to the same move."""
    rng = random.Random(23)
    for _ in range(2):
        board, position = Board(), Position.start()
        for _ply in range(70):
            theirs = {_key(m.hub_move) for m in board.legal_moves()}
            ours = {_key(hub.format_hub_move(m)): m for m in position.legal_moves()}
            assert set(ours) == theirs, position.to_fen()
            if not ours:
                break
            for text_key, move in ours.items():
                assert hub.parse_hub_move(position, hub.format_hub_move(move)) == move, text_key
            pick = rng.choice(sorted(ours))
            move = ours[pick]
            board.push(_pydraughts_move(board, hub.format_hub_move(move)))
            position = position.play(move)
            assert hub.format_position(position) == board._game.get_fen()


def _key(text: str) -> tuple[int, int, frozenset[int]]:
    frm, to, captured = hub.split_hub_move(text)
    return frm, to, frozenset(captured)


def _pydraughts_move(board: Board, text: str) -> object:
    for move in board.legal_moves():
        if _key(move.hub_move) == _key(text):
            return move
    raise AssertionError(f"pydraughts has no move {text}")
