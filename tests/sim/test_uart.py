"""The UART model: what a receiver at one speed reads from a sender at another (fake clock)."""

from __future__ import annotations

import pytest

from dxserial.errors import ConfigError
from dxserial.sim.uart import UartLine, garble

ALL_BYTES = bytes(range(256))
MESSAGE = b"\x02R01dxserial probe\x03"


@pytest.mark.parametrize("baud", [1200, 2400, 9600, 19200, 115200])
def test_one_speed_delivers_every_byte_unchanged(baud: int) -> None:
    assert garble(ALL_BYTES, baud, baud) == ALL_BYTES


def test_a_small_clock_difference_is_tolerated_as_by_a_real_uart() -> None:
    # 2 % off: the stop bit's sample is 0.19 bit times away from its middle.
    assert garble(ALL_BYTES, 9600, 9792) == ALL_BYTES
    assert garble(ALL_BYTES, 9600, 9408) == ALL_BYTES


@pytest.mark.parametrize(("tx", "rx"), [(9600, 2400), (2400, 9600), (9600, 19200), (19200, 9600)])
def test_different_speeds_garble_what_arrives(tx: int, rx: int) -> None:
    got = garble(MESSAGE, tx, rx)
    assert got != MESSAGE
    if rx < tx:  # a slow receiver reads fewer bytes than were sent
        assert len(got) < len(MESSAGE)
    else:  # a fast receiver takes every low bit for a start bit: more bytes
        assert len(got) > len(MESSAGE)


def test_a_receiver_four_times_faster_sees_each_start_bit_as_a_byte() -> None:
    # 0xff sent at 2400 is one low bit (the start bit) 4 receiver bits long, then high:
    # at 9600 the receiver reads start + 3 low data bits + 5 high ones: 0b11111000.
    assert garble(b"\xff", 2400, 9600) == b"\xf8"
    # 0x00 sent at 2400: 9 low bits = 36 receiver bits: a framing error, delivered as
    # sampled (0x00) as Linux does on a raw tty; the line stays low past the stop bit's
    # sample, so no new falling edge and no second byte.
    assert garble(b"\x00", 2400, 9600) == b"\x00"


def test_a_receiver_slower_than_the_start_bit_sees_a_false_start() -> None:
    # At 19200 -> 2400 the start bit lasts 1/8 of a receiver bit: gone by the middle
    # of the start bit, so a byte of all ones leaves nothing at all.
    assert garble(b"\xff", 19200, 2400) == b""


def test_bytes_are_delivered_at_the_stop_bits_sample_and_never_before() -> None:
    line = UartLine(9600, 9600)
    line.send(b"AB", 10.0)
    char = 10 / 9600
    assert line.receive(10.0 + 9 * char / 10) == []  # not yet: the stop bit is not sampled
    first = line.receive(10.0 + char)
    assert [value for _, value in first] == [ord("A")]
    assert first[0][0] == pytest.approx(10.0 + 9.5 / 9600)
    assert line.next_deadline() == pytest.approx(10.0 + char + 9.5 / 9600)
    assert [value for _, value in line.receive(11.0)] == [ord("B")]
    assert line.pending == 0 and line.next_deadline() is None


def test_bytes_sent_while_the_wire_is_busy_queue_behind_at_absolute_deadlines() -> None:
    line = UartLine(2400, 2400)
    line.send(b"x" * 10, 0.0)
    line.send(b"y", 0.001)  # the wire is busy until 10 character times
    assert line.busy_until == pytest.approx(11 * 10 / 2400)
    times = [t for t, _ in line.receive(1.0)]
    assert times[-1] == pytest.approx(10 * 10 / 2400 + 9.5 / 2400)


def test_chunks_decode_like_one_burst() -> None:
    whole = garble(MESSAGE, 9600, 2400)
    line = UartLine(9600, 2400)
    got = bytearray()
    t = 0.0
    for byte in MESSAGE:
        line.send(bytes([byte]), t)
        t += 10 / 9600  # back to back, one byte per call
        got += bytes(v for _, v in line.receive(t))
    got += bytes(v for _, v in line.receive(t + 1.0))
    assert bytes(got) == whole


def test_speeds_must_be_positive_whole_numbers() -> None:
    with pytest.raises(ConfigError):
        UartLine(0, 9600)
    with pytest.raises(ConfigError):
        UartLine(9600, True)
