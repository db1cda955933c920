"""The NUL framer (SOCKET layer 1): any chunking, bounded memory, every drop reported."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dxserial.errors import ConfigError, FramingError
from dxserial.protocol.framing import (
    FrameDropped,
    FrameReceived,
    FramerEvent,
    NulFramer,
    nul_frame,
)


def feed_in_chunks(framer: NulFramer, data: bytes, sizes: list[int]) -> list[FramerEvent]:
    events: list[FramerEvent] = []
    i = 0
    k = 0
    while i < len(data):
        n = sizes[k % len(sizes)] if sizes else len(data)
        events += framer.feed(data[i : i + n])
        assert framer.pending <= 127
        i += n
        k += 1
    return events


def received(events: list[FramerEvent]) -> list[bytes]:
    return [e.raw for e in events if isinstance(e, FrameReceived)]


def dropped(events: list[FramerEvent]) -> list[FrameDropped]:
    return [e for e in events if isinstance(e, FrameDropped)]


# ---------------------------------------------------------------- real traffic


def test_nul_frame_matches_captured_wire_bytes(vectors: list[dict[str, Any]]) -> None:
    for v in vectors:
        assert nul_frame(v["message"].encode("ascii")) == bytes.fromhex(v["tcp_wire_hex"]), v["id"]


@pytest.mark.parametrize("seed", range(5))
def test_scan_game_in_random_chunks(scan_game: list[dict[str, str]], seed: int) -> None:
    messages = [m["message"].encode("ascii") for m in scan_game]
    assert len(messages) == 159
    stream = b"".join(nul_frame(m) for m in messages)
    rng = random.Random(seed)
    sizes = [rng.randint(1, 300) for _ in range(200)]
    framer = NulFramer()
    events = feed_in_chunks(framer, stream, sizes)
    assert received(events) == messages
    assert dropped(events) == []
    assert framer.pending == 0
    assert framer.close() == []


def test_scan_game_byte_by_byte(scan_game: list[dict[str, str]]) -> None:
    messages = [m["message"].encode("ascii") for m in scan_game]
    stream = b"".join(nul_frame(m) for m in messages)
    framer = NulFramer()
    events = feed_in_chunks(framer, stream, [1])
    assert received(events) == messages
    assert framer.pending == 0


def test_two_messages_in_one_segment() -> None:
    # GAMEACC + first MOVE in one TCP segment, as real peers send them.
    framer = NulFramer()
    events = framer.feed(b"AScan 2.0                        0\x00M0000342900\x00M00")
    assert received(events) == [b"AScan 2.0                        0", b"M0000342900"]
    assert framer.pending == 3
    assert received(framer.feed(b"01\x00")) == [b"M0001"]


# ---------------------------------------------------------------- bad frames


def test_longest_message_passes() -> None:
    framer = NulFramer()
    assert framer.feed(b"C" * 127 + b"\x00") == [FrameReceived(b"C" * 127)]


def test_overlong_frame_reported_once_then_next_frame_fine() -> None:
    framer = NulFramer()
    events = feed_in_chunks(framer, b"C" * 1000 + b"\x00K1\x00", [7])
    drops = dropped(events)
    assert len(drops) == 1
    assert str(drops[0].error) == (
        "frame of more than 127 bytes (no NUL): dropped up to the next NUL"
    )
    assert drops[0].data == b"C" * 128
    assert received(events) == [b"K1"]
    assert events[-1] == FrameReceived(b"K1")


def test_overlong_frame_reported_before_any_nul_arrives() -> None:
    # A peer that streams garbage without a NUL is noticed, and memory stays bounded.
    framer = NulFramer()
    events = framer.feed(b"x" * 128)
    assert len(dropped(events)) == 1
    for _ in range(100):
        assert framer.feed(b"y" * 10_000) == []
        assert framer.pending == 0


def test_byte_above_0x7f_drops_the_frame() -> None:
    framer = NulFramer()
    events = framer.feed(b"M0001\x9f1100\x00K1\x00")
    assert len(events) == 2
    drop = events[0]
    assert isinstance(drop, FrameDropped)
    assert str(drop.error) == (
        "byte 0x9f at offset 5 of the frame: only 0x01..0x7f may occur: dropped up to the next NUL"
    )
    assert drop.data == b"M0001\x9f"
    assert events[1] == FrameReceived(b"K1")


def test_high_byte_offset_counts_across_chunks() -> None:
    framer = NulFramer()
    assert framer.feed(b"M00") == []
    events = framer.feed(b"01\xff")
    assert len(events) == 1
    assert "byte 0xff at offset 5 of the frame" in str(dropped(events)[0].error)


def test_empty_frame_is_reported() -> None:
    framer = NulFramer()
    events = framer.feed(b"K1\x00\x00K2\x00")
    assert received(events) == [b"K1", b"K2"]
    assert isinstance(events[1], FrameDropped)
    assert "empty frame" in str(events[1].error)
    assert events[1].data == b""
    assert len(dropped(NulFramer().feed(b"\x00"))) == 1


def test_hang_up_mid_message() -> None:
    framer = NulFramer()
    assert framer.feed(b"K1\x00M00") == [FrameReceived(b"K1")]
    events = framer.close()
    assert len(events) == 1
    assert isinstance(events[0], FrameDropped)
    assert str(events[0].error).startswith("peer hung up mid-message: 3 bytes")
    assert events[0].data == b"M00"
    assert framer.pending == 0
    assert framer.close() == []
    # the framer is clean again after close
    assert framer.feed(b"K2\x00") == [FrameReceived(b"K2")]


def test_custom_max_len() -> None:
    framer = NulFramer(max_len=3)
    assert received(framer.feed(b"E00\x00")) == [b"E00"]
    events = framer.feed(b"K100\x00")
    assert "more than 3 bytes" in str(dropped(events)[0].error)
    with pytest.raises(ConfigError):
        NulFramer(max_len=0)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"", "empty message"),
        (b"C" * 128, "message of 128 bytes: at most 127"),
        (b"C\x00x", "byte 0x00 at offset 1"),
        (b"Cab\x80", "byte 0x80 at offset 3"),
    ],
)
def test_nul_frame_refuses(raw: bytes, text: str) -> None:
    with pytest.raises(FramingError, match=text):
        nul_frame(raw)


def test_nul_frame_appends_one_nul() -> None:
    assert nul_frame(b"K1") == b"K1\x00"
    assert nul_frame(b"C" * 127) == b"C" * 127 + b"\x00"


# ---------------------------------------------------------------- properties


def model(data: bytes, max_len: int) -> tuple[list[tuple[str, bytes]], int]:
    """What the framer must report for ``data``: kinds in order, and the bytes pending."""

    def good(piece: bytes) -> bool:
        return 0 < len(piece) <= max_len and piece.isascii()

    *complete, tail = data.split(b"\x00")
    out = [("R", p) if good(p) else ("D", b"") for p in complete]
    if tail and not good(tail):
        out.append(("D", b""))
        return out, 0
    return out, len(tail)


def kinds(events: list[FramerEvent]) -> list[tuple[str, bytes]]:
    return [("R", e.raw) if isinstance(e, FrameReceived) else ("D", b"") for e in events]


# Mostly message-like bytes, with NULs and high bytes common enough to matter.
stream_bytes = st.lists(
    st.one_of(
        st.sampled_from([0x00, 0x00, 0x41, 0x30, 0x80, 0xFF]),
        st.integers(0, 255),
    ),
    max_size=600,
).map(bytes)


@settings(max_examples=200, deadline=None)
@given(
    data=stream_bytes,
    max_len=st.sampled_from([1, 5, 127]),
    sizes=st.lists(st.integers(1, 64), min_size=1, max_size=20),
)
def test_framer_matches_model_for_any_chunking(data: bytes, max_len: int, sizes: list[int]) -> None:
    framer = NulFramer(max_len=max_len)
    events: list[FramerEvent] = []
    i = 0
    k = 0
    while i < len(data):
        n = sizes[k % len(sizes)]
        events += framer.feed(data[i : i + n])
        assert framer.pending <= max_len
        i += n
        k += 1
    expected, pending = model(data, max_len)
    assert kinds(events) == expected
    assert framer.pending == pending
    for e in events:
        if isinstance(e, FrameDropped):
            assert len(e.data) <= 256
            assert "\n" not in str(e.error)
    assert len(framer.close()) == (1 if pending else 0)
    assert framer.pending == 0
