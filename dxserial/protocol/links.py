"""One interface over both layer-1 links, so the bridge treats a serial line alike
whether its engine speaks the NULMODEM echo handshake or NUL-terminated frames.

:class:`NulLink` gives NUL framing the shape of
:class:`~dxserial.protocol.nulmodem.NulModemLink`: messages go in with ``send``, bytes
come out of ``data_to_send``, and what happened comes out of ``events``.  A NUL frame
counts as delivered once it has been handed to the transport; frames handed out but
not confirmed written go back to the front of the queue on ``reset`` (a port that
vanished mid-write), so reopening the port loses nothing.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal, Protocol

from dxserial.errors import FramingError
from dxserial.protocol.framing import FrameDropped, FrameReceived, NulFramer, check_message
from dxserial.protocol.nulmodem import (
    DEFAULT_MAX_QUEUE,
    LinkEvent,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
    NulModemLink,
)

LinkKind = Literal["nulmodem", "nul"]


@dataclass(frozen=True)
class NulModemSettings:
    """The echo handshake's parameters (see ``dxserial.protocol.nulmodem``)."""

    start: int = 0x02
    end: int = 0x03
    timeout: float = 5.0
    max_attempts: int = 5
    learn_start: bool = True  # False: only these bytes, as a DOS program that knows no other


class Layer1Link(Protocol):
    """What the bridge needs from a layer-1 link; clock values are in seconds."""

    def check(self, raw: bytes) -> None: ...
    def send(self, raw: bytes, now: float, *, checked: bool = False) -> None: ...
    def receive_data(self, data: bytes, now: float) -> None: ...
    def poll(self, now: float) -> None: ...
    def data_to_send(self) -> bytes: ...
    def events(self) -> list[LinkEvent]: ...
    def next_deadline(self) -> float | None: ...
    def reset(self) -> None: ...
    def clear(self) -> list[bytes]: ...
    def confirm_written(self) -> bool: ...
    def close_input(self) -> None: ...

    @property
    def retransmits(self) -> bool:
        """True when the link itself sends a message again until it is delivered."""
        ...

    @property
    def queued(self) -> int: ...

    @property
    def idle(self) -> bool: ...


class NulLink:
    """NUL-terminated frames with the NULMODEM link's interface (no echo, no timer)."""

    def __init__(self, *, max_len: int = 127, max_queue: int = DEFAULT_MAX_QUEUE) -> None:
        self._max_len = max_len
        self._framer = NulFramer(max_len=max_len)
        self._queue: deque[bytes] = deque()
        self._handed_out: list[bytes] = []
        self._events: list[LinkEvent] = []
        self._max_queue = max_queue

    def check(self, raw: bytes) -> None:
        """Raise :class:`FramingError` if ``raw`` cannot be framed (queue aside)."""
        check_message(raw)

    def send(self, raw: bytes, now: float, *, checked: bool = False) -> None:
        if not checked:  # else the caller asked check() already
            check_message(raw)  # data_to_send() only adds the NUL
        if len(self._queue) >= self._max_queue:
            raise FramingError(f"send queue full ({self._max_queue} messages)")
        self._queue.append(raw)

    def receive_data(self, data: bytes, now: float) -> None:
        for event in self._framer.feed(data):
            if isinstance(event, FrameReceived):
                self._events.append(MessageReceived(event.raw))
            elif isinstance(event, FrameDropped):
                self._events.append(LinkProblem(event.error, noise=True))

    def poll(self, now: float) -> None:
        """Nothing times out on a NUL link."""

    def data_to_send(self) -> bytes:
        """The next queued frame, one at a time so every message gets its own write.

        It counts as delivered once :meth:`confirm_written` is called.
        """
        if self._handed_out:
            self._confirm()
        if not self._queue:
            return b""
        raw = self._queue.popleft()
        self._handed_out.append(raw)
        return raw + b"\x00"

    def confirm_written(self) -> bool:
        """The bytes last handed out were written: report their messages delivered.

        ``True`` when that produced events (the caller must hand them out).
        """
        if not self._handed_out:
            return False
        self._confirm()
        return True

    def _confirm(self) -> None:
        for raw in self._handed_out:
            self._events.append(MessageDelivered(raw))
        self._handed_out.clear()

    def events(self) -> list[LinkEvent]:
        out, self._events = self._events, []
        return out

    def next_deadline(self) -> float | None:
        return None

    def reset(self) -> None:
        """After a lost port: frames not confirmed written are sent again, first."""
        self._queue.extendleft(reversed(self._handed_out))
        self._handed_out.clear()
        self._framer = NulFramer(max_len=self._max_len)

    def clear(self) -> list[bytes]:
        """Forget every frame not yet written (its peer is gone); return them."""
        dropped = self._handed_out + list(self._queue)
        self._handed_out = []
        self._queue.clear()
        return dropped

    def close_input(self) -> None:
        """The line closed: a partial frame is reported, not kept."""
        for event in self._framer.close():
            if isinstance(event, FrameDropped):
                self._events.append(LinkProblem(event.error))

    @property
    def retransmits(self) -> bool:
        """No: a NUL frame is written once; repeating is the engine's business."""
        return False

    @property
    def queued(self) -> int:
        return len(self._queue) + len(self._handed_out)

    @property
    def idle(self) -> bool:
        return not self._queue and not self._handed_out and self._framer.pending == 0


def make_link(
    kind: LinkKind,
    nulmodem: NulModemSettings | None = None,
    *,
    max_queue: int = DEFAULT_MAX_QUEUE,
) -> Layer1Link:
    """The one place a layer-1 link is built from settings (bridge, engine, match)."""
    if kind == "nul":
        return NulLink(max_queue=max_queue)
    nm = nulmodem or NulModemSettings()
    return NulModemLink(
        start=nm.start,
        end=nm.end,
        timeout=nm.timeout,
        max_attempts=nm.max_attempts,
        learn_start=nm.learn_start,
        max_queue=max_queue,
    )


__all__ = [
    "Layer1Link",
    "LinkKind",
    "NulLink",
    "NulModemLink",
    "NulModemSettings",
    "make_link",
]
