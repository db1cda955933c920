"""Name fields as real engines write them: read leniently where the rest of the message is
unambiguous (each reading named in the message's warnings), refused by a strict parse."""

from __future__ import annotations

import pytest

from dxserial.errors import MessageError
from dxserial.protocol.messages import (
    NORMALISED,
    AcceptCode,
    Colour,
    GameAccept,
    GameRequest,
    parse,
)

START = "zzzzzzzzzzzzzzzzzzzzeeeeeeeeeewwwwwwwwwwwwwwwwwwww"


@pytest.mark.parametrize(
    ("raw", "name", "code"),
    [
        (b"A" + b"Wide client".ljust(40) + b"0", "Wide client", AcceptCode.ACCEPT),  # offset 41
        (b"A" + b"Short" + b"2", "Short", AcceptCode.REFUSE_THIS_GAME),
    ],
)
def test_a_gameacc_name_of_another_width_or_padding(raw: bytes, name: str, code: AcceptCode) -> None:
    msg = parse(raw, strict=False)
    assert isinstance(msg, GameAccept) and (msg.name, msg.code) == (name, code)
    assert msg.wire == raw and msg.warnings and msg.warnings[-1].endswith(NORMALISED)
    with pytest.raises(MessageError):
        parse(raw)  # strict: the page's layout only


@pytest.mark.parametrize("tail", ["W001075A", f"Z000000BW{START}"])
def test_a_gamereq_name_of_another_width_both_forms(tail: str) -> None:
    raw = ("R01" + "Forty wide".ljust(40) + tail).encode()
    msg = parse(raw, strict=False)
    assert isinstance(msg, GameRequest) and msg.name == "Forty wide" and msg.wire == raw
    assert msg.follower_colour in (Colour.WHITE, Colour.BLACK)
    assert msg.minutes in (0, 1) and msg.moves in (0, 75)  # minutes and moves 000 read too
    with pytest.raises(MessageError):
        parse(raw)


def test_a_name_padded_with_zeros_is_read_as_padded_unless_strict() -> None:
    raw = b"A" + b"Zero pad".ljust(32, b"0") + b"0"
    msg = parse(raw, strict=False)
    assert isinstance(msg, GameAccept) and msg.name == "Zero pad" and msg.wire == raw
    assert msg.warnings[-1].endswith(NORMALISED)
    strict = parse(raw)  # the layout allows it: a strict reading keeps every character
    assert isinstance(strict, GameAccept) and strict.name == "Zero pad".ljust(32, "0")


def test_a_name_that_ends_in_a_few_zeros_is_a_name() -> None:
    raw = b"A" + b"Engine 1000".ljust(32) + b"0"
    msg = parse(raw, strict=False)
    assert isinstance(msg, GameAccept) and msg.name == "Engine 1000" and not msg.warnings
