"""Fuzz target ``parser``: :func:`~dxserial.protocol.messages.parse` on arbitrary,
near-valid, field-mutated and mutated real messages (see :mod:`dxserial.testing.fuzz`)."""

from __future__ import annotations

from hypothesis import strategies as st

from dxserial.errors import MessageError
from dxserial.protocol.messages import MESSAGE_TYPES, NORMALISED, Message, encode, parse
from dxserial.testing.fuzz.registry import fuzz_target, one_line
from dxserial.testing.fuzz.samples import SEEDS, any_message, game_requests

_INTERESTING = b"\x00\x01\x02\x03\x09\x0a\x0d\x1b\x7f\x80\xff 0123456789.-+eEwWzZABCKMRx"
_interesting_bytes = st.one_of(st.sampled_from(_INTERESTING), st.integers(0, 255))


@st.composite
def mutated_messages(draw: st.DrawFn) -> bytes:
    """A real (or field-built) message with a few byte-level mutations."""
    base = draw(st.one_of(st.sampled_from(SEEDS), any_message.map(encode)))
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(
            ("flip", "replace", "replace", "insert", "delete", "cut", "splice", "repeat")
        ))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "replace" and data:
            data[pos] = draw(_interesting_bytes)
        elif op == "insert":
            data[pos:pos] = bytes([draw(_interesting_bytes)]) * draw(st.integers(1, 3))
        elif op == "delete" and data:
            del data[pos : pos + draw(st.integers(1, 3))]
        elif op == "cut":
            del data[pos:]
        elif op == "splice":
            other = draw(st.sampled_from(SEEDS))
            data[pos:] = other[draw(st.integers(0, len(other))) :]
        elif op == "repeat":
            data += data[pos:]
    return bytes(data)


_LENGTHS = {
    "R": (42, 43, 44, 93, 94, 95),
    "A": (33, 34, 35),
    "M": tuple(range(9, 54)),
    "E": (2, 3, 4),
    "C": (1, 2, 3, 126, 127, 128),
    "B": (4, 5, 6),
    "K": (1, 2, 3),
}
_field_chars = st.one_of(
    st.sampled_from(b"0123456789"), st.sampled_from(b" .WZABezw"), st.integers(1, 127)
)


@st.composite
def typed_messages(draw: st.DrawFn) -> bytes:
    """A type letter and a body of about the right length, mostly digits and field letters."""
    kind = draw(st.sampled_from(sorted(_LENGTHS)))
    n = draw(st.sampled_from(_LENGTHS[kind]))
    body = draw(st.lists(_field_chars, min_size=n - 1, max_size=n - 1))
    return kind.encode() + bytes(body)


_FIELDS = {  # [start, end) of each fixed field after the type letter
    "R": ((1, 3), (3, 35), (35, 36), (36, 39), (39, 42), (42, 43), (43, 44), (44, 94)),
    "A": ((1, 33), (33, 34)),
    "M": ((1, 5), (5, 7), (7, 9), (9, 11), *((11 + 2 * i, 13 + 2 * i) for i in range(20))),
    "E": ((1, 2), (2, 3)),
    "C": (),
    "B": ((1, 4), (4, 5)),
    "K": ((1, 2),),
}
_field_alphabets = st.sampled_from(["0123456789.", "0123456789 .-+eWZABewz\x01\x7f"])


@st.composite
def field_mutations(draw: st.DrawFn) -> bytes:
    """A valid message (a GAMEREQ half the time) with one field overwritten in place by
    characters of the same count, often digits and a dot: number-like but not numbers."""
    data = bytearray(encode(draw(st.one_of(game_requests(), any_message))))
    spans = [(a, b) for a, b in _FIELDS[chr(data[0])] if b <= len(data)]
    if spans:
        a, b = draw(st.sampled_from(spans))
        text = draw(st.text(draw(_field_alphabets), min_size=b - a, max_size=b - a))
        data[a:b] = text.encode("ascii")
    return bytes(data)


parser_inputs = st.one_of(
    st.binary(max_size=200), mutated_messages(), mutated_messages(), typed_messages(),
    field_mutations(),
)


def check_parse(data: bytes, strict: bool) -> Message | None:
    try:
        msg = parse(data, strict=strict)
    except MessageError as exc:
        one_line(str(exc))
        assert exc.offset is None or 0 <= exc.offset <= len(data), (exc.offset, len(data))
        assert exc.msg_type is None or (data and exc.msg_type == chr(data[0]))
        return None
    assert type(msg) is MESSAGE_TYPES[chr(data[0])]
    assert msg.raw == data and msg.wire == data
    for warning in msg.warnings:
        one_line(warning)
    again = encode(msg)
    if any(w.endswith(NORMALISED) for w in msg.warnings):  # a dialect: the normal layout
        assert parse(again, strict=False) == msg, (again, data)
        return msg
    assert again == data, (again, data)
    assert parse(again, strict=strict) == msg
    return msg


@fuzz_target(
    "parser",
    "parse() strict and lenient on arbitrary bytes, near-valid messages, overwritten "
    "fields and byte mutations of the vectors and the Scan game",
    examples=700,
    data=parser_inputs,
)
def fuzz_parser(data: bytes) -> None:
    strict = check_parse(data, strict=True)
    lenient = check_parse(data, strict=False)
    if strict is not None:
        assert strict.warnings == ()
        if lenient != strict:  # only a dialect's reading may differ, and it says so
            # (a name padded with '0' is a valid name strictly, and no name leniently)
            assert lenient is not None
            assert any(w.endswith(NORMALISED) for w in lenient.warnings), (lenient, strict)
    elif lenient is not None:
        assert lenient.warnings, "accepted leniently without a warning, yet refused strictly"
