"""SOCKET (TCP) layer 1: every DXP message travels as its bytes followed by one NUL.

TCP is a byte stream, so a read can hold half a message or several (real peers put GAMEACC
and the first MOVE in one segment). :class:`NulFramer` keeps the bytes of an unfinished
message and splits on every NUL, without doing any I/O itself. It holds at most ``max_len``
bytes whatever a peer sends, and it reports each frame it throws away as a
:class:`FrameDropped` event instead of raising: one bad frame must not end a session, but
the user must see it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dxserial.errors import ConfigError, FramingError
from dxserial.protocol.messages import MAX_MESSAGE_LEN

SAMPLE_LEN = 256
"""At most this many bytes of a dropped frame are kept in :class:`FrameDropped`."""


@dataclass(frozen=True)
class FrameReceived:
    """One complete message, without its NUL."""

    raw: bytes


@dataclass(frozen=True)
class FrameDropped:
    """A frame that was thrown away, why, and its first bytes (at most ``SAMPLE_LEN``)."""

    error: FramingError
    data: bytes


FramerEvent = FrameReceived | FrameDropped


def check_message(raw: bytes, max_len: int = MAX_MESSAGE_LEN) -> None:
    """Raise :class:`FramingError` unless ``raw`` can travel as one DXP message.

    Both layer-1 links share this rule: 1 to ``max_len`` bytes, each 0x01..0x7f.
    """
    if not raw:
        raise FramingError("empty message: a DXP message has at least one byte")
    if len(raw) > max_len:
        raise FramingError(f"message of {len(raw)} bytes: at most {max_len} can be sent")
    if not raw.isascii() or 0 in raw:
        offset, byte = next((i, b) for i, b in enumerate(raw) if b == 0 or b >= 0x80)
        raise FramingError(
            f"byte 0x{byte:02x} at offset {offset} of the message: only 0x01..0x7f can be sent"
        )


def nul_frame(raw: bytes) -> bytes:
    """The TCP wire bytes of one message: the message and one NUL."""
    check_message(raw)
    return bytes(raw) + b"\x00"


class NulFramer:
    """Splits a NUL-terminated byte stream into messages; any chunking gives the same result.

    A frame longer than ``max_len`` or holding a byte >= 0x80 is reported once, as soon as
    it is seen (a peer that never sends a NUL is still noticed), and everything up to the
    next NUL is skipped without being kept. An empty frame (two NULs in a row) is reported
    too: a well-behaved peer never sends one, so it points at a bug the user should see.
    """

    def __init__(self, max_len: int = MAX_MESSAGE_LEN) -> None:
        if max_len < 1:
            raise ConfigError(f"max_len {max_len}: a frame must be allowed at least 1 byte")
        self._max_len = max_len
        self._buf = bytearray()
        self._skipping = False  # a bad frame was reported; drop bytes up to the next NUL

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held (never more than ``max_len``)."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[FramerEvent]:
        """Take bytes read from the socket; return what they completed or broke."""
        end = len(data) - 1
        if (
            0 < end <= self._max_len
            and not self._buf
            and not self._skipping
            and data.find(b"\x00") == end  # one whole frame, as a DXP dialogue reads
            and data.isascii()
        ):
            return [FrameReceived(bytes(data[:end]))]
        events: list[FramerEvent] = []
        start = 0
        while True:
            nul = data.find(b"\x00", start)
            stop = len(data) if nul < 0 else nul
            if stop > start and not self._skipping:
                self._take(data[start:stop], events)
            if nul < 0:
                return events
            self._end_of_frame(events)
            start = nul + 1

    def close(self) -> list[FramerEvent]:
        """The peer closed the connection: a partial frame is reported, not kept."""
        events: list[FramerEvent] = []
        if self._buf:
            events.append(
                FrameDropped(
                    FramingError(
                        f"peer hung up mid-message: {len(self._buf)} bytes without their "
                        "closing NUL dropped"
                    ),
                    bytes(self._buf[:SAMPLE_LEN]),
                )
            )
        self._buf.clear()
        self._skipping = False
        return events

    def _take(self, piece: bytes, events: list[FramerEvent]) -> None:
        """Add bytes of the current frame (no NUL among them), or drop the frame."""
        held = len(self._buf)
        bad = -1 if piece.isascii() else next(i for i, b in enumerate(piece) if b >= 0x80)
        too_long = held + len(piece) > self._max_len
        if bad < 0 and not too_long:
            self._buf += piece
            return
        if bad >= 0 and held + bad < self._max_len:
            sample = bytes(self._buf) + piece[: bad + 1]
            error = FramingError(
                f"byte 0x{piece[bad]:02x} at offset {held + bad} of the frame: only 0x01..0x7f "
                "may occur: dropped up to the next NUL"
            )
        else:
            sample = bytes(self._buf) + piece[: self._max_len - held + 1]
            error = FramingError(
                f"frame of more than {self._max_len} bytes (no NUL): dropped up to the next NUL"
            )
        events.append(FrameDropped(error, sample[:SAMPLE_LEN]))
        self._buf.clear()
        self._skipping = True

    def _end_of_frame(self, events: list[FramerEvent]) -> None:
        if self._skipping:
            self._skipping = False  # already reported when it went bad
        elif self._buf:
            events.append(FrameReceived(bytes(self._buf)))
            self._buf.clear()
        else:
            events.append(
                FrameDropped(
                    FramingError("empty frame (a NUL with no message before it): ignored"), b""
                )
            )
