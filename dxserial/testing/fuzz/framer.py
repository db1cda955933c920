"""Fuzz target ``framer``: random byte streams in random chunks through :class:`NulFramer`
(see :mod:`dxserial.testing.fuzz`)."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from dxserial.errors import FramingError
from dxserial.protocol.framing import (
    SAMPLE_LEN,
    FrameDropped,
    FrameReceived,
    NulFramer,
    check_message,
)
from dxserial.testing.fuzz.registry import fuzz_target, one_line


@st.composite
def framer_streams(draw: st.DrawFn) -> bytes:
    kinds = st.sampled_from(("message", "message", "empty", "overlong", "high", "binary"))
    frames: list[bytes] = []
    for kind in draw(st.lists(kinds, max_size=12)):
        if kind == "message":
            frames.append(bytes(draw(st.lists(st.integers(1, 127), min_size=1, max_size=140))))
        elif kind == "empty":
            frames.append(b"")
        elif kind == "overlong":
            frames.append(bytes([draw(st.integers(1, 255))]) * draw(st.integers(100, 5000)))
        elif kind == "high":
            head = bytes(draw(st.lists(st.integers(1, 127), max_size=140)))
            frames.append(head + bytes([draw(st.integers(0x80, 0xFF))]) + draw(st.binary()))
        else:
            frames.append(draw(st.binary(max_size=60)))
    stream = b"\x00".join(frames)
    return stream + (b"\x00" if draw(st.booleans()) else b"")


def reference_split(stream: bytes, max_len: int) -> tuple[list[bytes | None], bytes]:
    """The plain model: each NUL ends a frame; a frame is good if 1..max_len bytes < 0x80.

    Returns the frames in order (``None`` for one the framer must drop) and the unfinished
    tail (a bad tail is reported at once, so it is in the list as ``None`` too).
    """
    *frames, tail = stream.split(b"\x00")
    out: list[bytes | None] = [f if 0 < len(f) <= max_len and f.isascii() else None
                               for f in frames]
    if tail and not (len(tail) <= max_len and tail.isascii()):
        out.append(None)
    return out, tail


@fuzz_target(
    "framer",
    "NulFramer on random streams (NULs, bytes >= 0x80, overlong runs) in random chunks, "
    "against a reference split",
    examples=250,
    stream=framer_streams(),
    cuts=st.lists(st.integers(0, 20_000), max_size=30),
    max_len=st.one_of(st.just(127), st.integers(1, 200)),
)
def fuzz_framer(stream: bytes, cuts: list[int], max_len: int) -> None:
    framer = NulFramer(max_len=max_len)
    events: list[FrameReceived | FrameDropped] = []
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    for a, b in itertools.pairwise(points):
        events += framer.feed(stream[a:b])
        assert framer.pending <= max_len
        partial = stream[:b].rsplit(b"\x00", 1)[-1]
        good = len(partial) <= max_len and partial.isascii()
        assert framer.pending == (len(partial) if good else 0)
    expected, tail = reference_split(stream, max_len)
    assert len(events) == len(expected), (events, expected)
    pieces = stream.split(b"\x00")
    for event, want, piece in zip(events, expected, pieces, strict=False):
        assert isinstance(event, FrameReceived | FrameDropped)
        if want is None:
            assert isinstance(event, FrameDropped), (event, piece)
            assert isinstance(event.error, FramingError)
            one_line(str(event.error))
            assert len(event.data) <= SAMPLE_LEN and piece.startswith(event.data)
        else:
            assert event == FrameReceived(want)
    for piece in pieces[:-1]:  # check_message and the framer agree on every frame
        try:
            check_message(piece, max_len)
            assert piece in [e.raw for e in events if isinstance(e, FrameReceived)]
        except FramingError as exc:
            one_line(str(exc))
    closing = framer.close()
    assert framer.pending == 0
    if tail and not (len(tail) <= max_len and tail.isascii()):
        assert closing == []  # already reported when it went bad
    elif tail:
        assert len(closing) == 1 and isinstance(closing[0], FrameDropped)
        assert closing[0].data == tail[:SAMPLE_LEN]
    else:
        assert closing == []
