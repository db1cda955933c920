"""Layer-2 messages: every checked vector, the real game, each error, and round trips."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dxserial.errors import DxSerialError, MessageError
from dxserial.protocol.messages import (
    START_POSITION,
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    Colour,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    Piece,
    StopCode,
    encode,
    escape,
    parse,
)


def test_all_vectors_parse_and_encode_to_the_same_bytes(vectors: list[dict[str, Any]]) -> None:
    assert len(vectors) == 22
    for vector in vectors:
        data = vector["message"].encode("ascii")
        msg = parse(data)
        assert vector["type"] == msg.TYPE
        assert len(data) == vector["length"]
        assert msg.raw == data
        assert encode(msg) == data
        assert msg.raw + b"\x00" == bytes.fromhex(vector["tcp_wire_hex"])


def test_vector_fields_mean_what_the_vectors_say(vectors: list[dict[str, Any]]) -> None:
    by_id = {v["id"]: parse(v["message"].encode()) for v in vectors}
    req = by_id["gamereq_A_scan"]
    assert isinstance(req, GameRequest)
    assert (req.name, req.follower_colour, req.minutes, req.moves) == ("Scan 2.0", Colour.BLACK, 1, 75)
    assert req.position is None and req.start_position == START_POSITION
    kings = by_id["gamereq_B_kings"]
    assert isinstance(kings, GameRequest) and kings.position is not None
    assert kings.position[45] == Piece.WHITE_KING  # square 46
    assert kings.position[49] == Piece.WHITE_MAN
    assert kings.position[36] == Piece.BLACK_MAN
    assert kings.position[2] == Piece.BLACK_KING
    assert kings.moves == 0 and kings.to_move == Colour.WHITE
    assert by_id["gamereq_v02"].fields()["version"] == 2
    spec4 = by_id["move_spec4"]
    assert isinstance(spec4, Move)
    assert (spec4.seconds, spec4.from_square, spec4.to_square) == (12, 5, 25)
    assert spec4.captured == (22, 12, 23, 20)
    acc = by_id["gameacc_spec"]
    assert isinstance(acc, GameAccept)
    assert (acc.name, acc.code) == ("Tornado voor Windows 4.0", AcceptCode.ACCEPT)
    assert by_id["gameend_stop"] == GameEnd(reason=EndReason.NONE, stop=StopCode.STOP)
    assert by_id["backreq_spec"] == BackRequest(move=5, to_move=Colour.BLACK)
    assert by_id["backacc_no"] == BackAccept(code=BackCode.NOT_SUPPORTED)
    assert by_id["chat_spec"] == Chat(text="What do you think about move 35?")


def test_every_message_of_the_real_game_round_trips(scan_game: list[dict[str, str]]) -> None:
    assert len(scan_game) == 159
    for entry in scan_game:
        data = entry["message"].encode("ascii")
        assert encode(parse(data)) == data


NAME = "Scan 2.0".ljust(32)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"M00120X1100", "MOVE: field 'from' at offset 5: '0X' is not a square 01..50"),
        (b"M0012511100", "MOVE: field 'from' at offset 5: '51' is not a square 01..50"),
        (b"M0012060000", "MOVE: field 'to' at offset 7: '00' is not a square 01..50"),
        (b"M00a2061100", "MOVE: field 'seconds' at offset 1: '00a2' is not 4 digits"),
        (b"M0012061121" + b"01" * 21, "MOVE: field 'captured count' at offset 9: '21' is not in 00..20"),
        (b"M001206110205", "MOVE: field 'captured count' at offset 9: 2 captures need 15"),
        (b"M00120611020505", "MOVE: field 'captured' at offset 13: square 05 is captured twice"),
        (b"M0012061101" + b"06", "MOVE: field 'captured' at offset 11: square 06 is the 'from' square"),
        (b"M0012061101" + b"11", "MOVE: field 'captured' at offset 11: square 11 is the 'to' square"),
        (b"M0012061101" + b"55", "MOVE: field 'captured' at offset 11: '55' is not a square"),
        (b"M001206110", "MOVE: length 10: expected 11 + 2 x (captured count)"),
        (b"M00120611000", "MOVE: length 12"),
        (b"E2", "GAMEEND: length 2: expected 3 characters"),
        (b"E40", "GAMEEND: field 'reason' at offset 1: '4' is not one of"),
        (b"E02", "GAMEEND: field 'stop' at offset 2: '2' is not one of"),
        (b"C", "CHAT: length 1"),
        (b"B000W", "BACKREQ: field 'move' at offset 1: '000' is not in 001..999"),
        (b"B005X", "BACKREQ: field 'colour to move' at offset 4: 'X' is not one of"),
        (b"K3", "BACKACC: field 'code' at offset 1: '3' is not one of"),
        (b"K00", "BACKACC: length 3: expected 2 characters"),
        (b"A" + NAME.encode() + b"4", "GAMEACC: field 'code' at offset 33: '4' is not one of"),
        (b"A" + b" Scan".ljust(32) + b"0", "GAMEACC: field 'follower name' at offset 1: a name must"),
        (b"R01" + NAME.encode() + b"X001075A", "GAMEREQ: field 'follower colour' at offset 35"),
        (b"R0x" + NAME.encode() + b"Z001075A", "GAMEREQ: field 'version' at offset 1: '0x'"),
        (b"R01" + NAME.encode() + b"Z001075C", "GAMEREQ: field 'start' at offset 42: 'C' is not"),
        (b"R01" + NAME.encode() + b"Z0010x5A", "GAMEREQ: field 'moves' at offset 39"),
        (b"R01" + NAME.encode() + b"Z001075B", "form 'B' needs a colour and 50 squares"),
        (b"R01" + NAME.encode() + b"Z001075AW" + b"e" * 50, "form 'A' ends here"),
        (b"R01" + NAME.encode() + b"Z001075BWe" + b"q" + b"e" * 48, "GAMEREQ: field 'position' at offset 45"),
        (b"R01" + NAME.encode() + b"Z001075BX" + b"e" * 50, "GAMEREQ: field 'colour to move' at offset 43"),
        (b"X123", "'X' at offset 0 is not a DXP message type"),
        (b"", "empty message"),
        (b"M0012061100\x80", "MOVE: byte 0x80 at offset 11"),
        (b"M00\x0012061100", "MOVE: byte 0x00 at offset 3"),
        (b"C" + b"x" * 127, "message of 128 bytes: at most 127"),
    ],
)
def test_invalid_messages_name_field_offset_and_expectation(data: bytes, expected: str) -> None:
    with pytest.raises(MessageError) as info:
        parse(data)
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_error_carries_structured_position() -> None:
    with pytest.raises(MessageError) as info:
        parse(b"M00120X1100")
    assert (info.value.msg_type, info.value.field, info.value.offset) == ("M", "from", 5)


def test_lenient_mode_accepts_fractional_minutes_with_a_warning() -> None:
    data = b"R01" + b"Moby Dam".ljust(32) + b"Z0.5075A"
    with pytest.raises(MessageError, match="fractional"):
        parse(data)
    msg = parse(data, strict=False)
    assert isinstance(msg, GameRequest) and msg.minutes == 0.5
    assert len(msg.warnings) == 1 and "fractional" in msg.warnings[0]
    assert encode(msg) == data
    assert msg.wire == data


def test_lenient_mode_still_rejects_garbage_minutes() -> None:
    with pytest.raises(MessageError, match="minutes"):
        parse(b"R01" + NAME.encode() + b"Z0.x075A", strict=False)


def test_maximum_chat_and_maximum_capture_are_valid() -> None:
    assert parse(b"C" + b"~" * 126) == Chat(text="~" * 126)
    squares = b"".join(f"{sq:02d}".encode() for sq in range(11, 31))
    move = parse(b"M0000" + b"0510" + b"20" + squares)
    assert isinstance(move, Move) and len(move.captured) == 20


def test_encode_refuses_fields_that_do_not_fit() -> None:
    with pytest.raises(MessageError):
        encode(Move(from_square=51, to_square=1))
    with pytest.raises(MessageError):
        encode(GameAccept(name="x" * 33, code=AcceptCode.ACCEPT))
    with pytest.raises(MessageError):
        encode(Chat(text=""))
    with pytest.raises(MessageError):
        encode(Chat(text="é"))


def test_escape_shows_control_bytes_for_logs() -> None:
    assert escape(b"M00\x00\x9f\\") == "M00\\x00\\x9f\\\\"


# ----------------------------------------------------------------- property tests

squares = st.integers(1, 50)
names = st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=1
).flatmap(
    lambda first: st.text(
        alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=31
    ).map(lambda rest: (first + rest).rstrip(" "))
)


@st.composite
def moves(draw: st.DrawFn) -> Move:
    src = draw(squares)
    dst = draw(squares)
    pool = [sq for sq in range(1, 51) if sq not in (src, dst)]
    captured = draw(st.lists(st.sampled_from(pool), max_size=20, unique=True))
    return Move(seconds=draw(st.integers(0, 9999)), from_square=src, to_square=dst,
                captured=tuple(captured))


messages = st.one_of(
    st.builds(
        GameRequest,
        version=st.integers(1, 99),
        name=names,
        follower_colour=st.sampled_from(Colour),
        minutes=st.integers(0, 999),
        moves=st.integers(0, 999),
    ),
    st.builds(
        GameRequest,
        version=st.integers(1, 99),
        name=names,
        follower_colour=st.sampled_from(Colour),
        minutes=st.integers(0, 999),
        moves=st.integers(0, 999),
        to_move=st.sampled_from(Colour),
        position=st.lists(st.sampled_from(Piece), min_size=50, max_size=50).map(tuple),
    ),
    st.builds(GameAccept, name=names, code=st.sampled_from(AcceptCode)),
    moves(),
    st.builds(GameEnd, reason=st.sampled_from(EndReason), stop=st.sampled_from(StopCode)),
    st.builds(Chat, text=st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=127),
                                 min_size=1, max_size=126)),
    st.builds(BackRequest, move=st.integers(1, 999), to_move=st.sampled_from(Colour)),
    st.builds(BackAccept, code=st.sampled_from(BackCode)),
)


@settings(max_examples=400, deadline=None)
@given(messages)
def test_random_valid_messages_round_trip(msg: Any) -> None:
    data = encode(msg)
    again = parse(data)
    assert again == msg
    assert encode(again) == data


@settings(max_examples=1000, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_raise_only_our_own_errors(data: bytes) -> None:
    try:
        msg = parse(data)
    except DxSerialError:
        return
    assert encode(msg) == data


@settings(max_examples=500, deadline=None)
@given(st.sampled_from("RAMECBK"), st.binary(max_size=130))
def test_random_bodies_after_a_valid_type_letter(letter: str, body: bytes) -> None:
    for strict in (True, False):
        try:
            parse(letter.encode() + body, strict=strict)
        except MessageError as exc:
            assert "\n" not in str(exc)


# The one-step MOVE path must agree with the field-by-field reader on every input: the same
# message (raw bytes included) for a good MOVE, the reader's error for a bad one.
_move_like = st.builds(
    lambda digits, count, extra: b"M" + digits.encode() + (b"%02d" % count) + extra.encode(),
    st.text("0123456789", min_size=6, max_size=8),
    st.integers(0, 21),
    st.text("0123456789", max_size=44),
)


@settings(max_examples=3000, deadline=None)
@given(raw=st.one_of(_move_like, st.binary(max_size=60).map(lambda b: b"M" + b)))
def test_the_quick_move_path_agrees_with_the_field_reader(raw: bytes) -> None:
    from dxserial.protocol.messages import _parse_fields

    try:
        expected: Message | MessageError = _parse_fields(raw, True)
    except MessageError as exc:
        expected = exc
    try:
        got: Message | MessageError = parse(raw)
    except MessageError as exc:
        got = exc
    if isinstance(expected, MessageError):
        assert isinstance(got, MessageError) and str(got) == str(expected)
    else:
        assert got == expected and got.raw == expected.raw == raw and got.warnings == ()


def test_a_capture_move_is_read_the_same_both_ways() -> None:
    from dxserial.protocol.messages import _parse_fields

    raw = b"M00123546022334"  # 12 s, 35 to 46 capturing 23 and 34: fields only, no board
    assert parse(raw) == _parse_fields(raw, True)
    assert parse(raw).captured == (23, 34)
