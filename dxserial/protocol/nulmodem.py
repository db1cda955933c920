"""NULMODEM layer 1: the DXP echo handshake on a serial line, both directions, without I/O.

The caller passes in the bytes read and the current time; it takes out the bytes to write,
the events, and the time at which :meth:`NulModemLink.poll` must be called next.  Each byte
waits for its echo; collisions back off at random; a peer that still sends bytes is never
given up on; bounces, late-echo rings and messages dropped unnoticed are recognised; the
start byte can be learned from the peer.  Why each rule is what it is, and what no echo
handshake can catch: docs/nulmodem.md.
"""

from __future__ import annotations

import enum
import logging
import math
import os
import random
from collections import deque
from dataclasses import dataclass

from dxserial.errors import ConfigError, FramingError, LinkDownError, MessageError
from dxserial.protocol.framing import check_message
from dxserial.protocol.messages import MAX_MESSAGE_LEN, escape, parse

DEFAULT_START = 0x02
DEFAULT_END = 0x03
DEFAULT_MAX_QUEUE = 1024
_STRAY_SAMPLE = 32
_BOUNCE_MEMORY = 8
_BUSY_TIMEOUTS = 4
#: A peer heard from within this many echo timeouts is alive: its queue is kept.
ALIVE_TIMEOUTS = 5
_NAMED_DROPS = 10  # messages named in a LinkDown's text (the event carries them all)


@dataclass(frozen=True)
class MessageReceived:
    """Receiver: a complete message arrived between a start and an end byte."""

    raw: bytes


@dataclass(frozen=True)
class MessageDelivered:
    """Sender: the echo of the end byte came back for this message."""

    raw: bytes


@dataclass(frozen=True)
class LinkProblem:
    """Something the user should know; the link carries on by itself.

    ``noise`` marks garbage on the line (stray bytes, a message dropped for its bytes): a
    line that delivers noise deserves a warning, where collisions and retries are routine.
    """

    error: FramingError
    noise: bool = False
    #: A message the peer may count as delivered although it was dropped here (a cut-off
    #: message that was not sent again; see docs/nulmodem.md).
    lost: bytes | None = None

    @property
    def level(self) -> int:
        """ERROR for a possibly lost message, WARNING for noise, INFO otherwise."""
        if self.lost is not None:
            return logging.ERROR
        return logging.WARNING if self.noise else logging.INFO


@dataclass(frozen=True)
class LinkDown:
    """The peer stopped answering; these messages were not delivered (queue now empty)."""

    error: LinkDownError
    undelivered: tuple[bytes, ...]


#: What either layer-1 link (NULMODEM or NUL frames) reports; one type for both framings.
LinkEvent = MessageReceived | MessageDelivered | LinkProblem | LinkDown


class _Tx(enum.Enum):
    IDLE = "idle"  # nothing in flight
    SENDING = "sending"  # one byte written, waiting for its echo
    WAITING = "waiting"  # an attempt failed; start over at _retry_at


def _is_control(b: int) -> bool:
    """A byte that cannot be message text: candidates for start and end bytes."""
    return 0x01 <= b <= 0x1F or b == 0x7F


def _garbled_copy(raw: bytes, cut: bytes) -> bool:
    """``raw`` differs from ``cut`` in at most two of the characters they both have, and in
    less than half of them (at most half if it is shorter: an end byte garbled in cut it
    short): one message, one of the two copies garbled on the line, not the next one."""
    n = min(len(raw), len(cut))
    wrong = sum(x != y for x, y in zip(raw[:n], cut[:n], strict=True))
    return wrong <= 2 and (2 * wrong < n or (len(raw) < len(cut) and 2 * wrong <= n))


def _not_evidence(raw: bytes) -> str | None:
    """Why a message framed by an unknown start byte proves nothing, or ``None``: only a
    message that parses strictly, and is not a CHAT (any text parses as one), shows a peer."""
    try:
        message = parse(raw, strict=True)
    except MessageError as exc:
        return f"not a DXP message ({exc})"
    if raw[:1] == b"C":
        return f"a CHAT ({type(message).__name__}: any text parses as one) proves no framing"
    return None


def _show(b: int) -> str:
    return f"0x{b:02x} {chr(b)!r}" if 0x20 <= b <= 0x7E else f"0x{b:02x}"


def _check_settings(
    start: int, end: int, timeout: float, backoff: float, counts: tuple[int, int, int]
) -> None:
    """A link's settings, checked before it is made: one line for what is wrong."""
    for name, value in (("start", start), ("end", end)):
        if not 0x01 <= value <= 0xFF:
            raise ConfigError(f"{name} byte {value}: must be 0x01..0xff")
    if start == end:
        raise ConfigError(f"start and end byte are both 0x{start:02x}: they must differ")
    if not timeout > 0 or not backoff >= 0:
        raise ConfigError(f"timeout {timeout} and backoff {backoff}: must be > 0 and >= 0")
    if min(counts) < 1:
        raise ConfigError("max_attempts, max_len and max_queue must be at least 1")


class NulModemLink:
    """Both directions of the echo handshake on one serial line (docs/nulmodem.md)."""

    def __init__(
        self,
        *,
        start: int = DEFAULT_START,
        end: int = DEFAULT_END,
        timeout: float = 5.0,
        max_attempts: int = 5,
        max_len: int = MAX_MESSAGE_LEN,
        learn_start: bool = True,
        rng: random.Random | None = None,
        backoff: float = 0.5,
        max_queue: int = DEFAULT_MAX_QUEUE,
    ) -> None:
        _check_settings(start, end, timeout, backoff, (max_attempts, max_len, max_queue))
        self._start = start
        self._end = end
        self._timeout = timeout
        self._max_attempts = max_attempts
        self._max_len = max_len
        self._learn = learn_start
        self._rng = rng if rng is not None else random.Random(os.urandom(16))
        self._backoff = backoff
        self._max_queue = max_queue

        self._send_start = start  # framing of our own messages (may follow the peer's)
        self._send_end = end
        self._learned_start: int | None = None
        self._learning = learn_start  # until the first message from the peer is delivered

        self._rx_start: int | None = None  # start byte of the message being received
        self._rx_buf = bytearray()
        self._rx_deadline = 0.0
        self._rx_spoiled: str | None = None  # why the message being received will be dropped
        # The last message dropped here that the peer may count delivered, and why (see
        # docs/nulmodem.md): settled by the next message delivered.
        self._cut: tuple[bytes, str] | None = None
        self._busy_since = 0.0  # start of the current run of echoes without progress
        self._last_rx_at = -math.inf  # last byte echoed as a receiver (-inf: progress made)
        self._busy_bytes = 0  # bytes echoed in that run
        self._recent_received: deque[bytes] = deque(maxlen=4)  # a ring only repeats these
        self._deaf_until = -math.inf  # receiver duty suspended until then (see _receive)
        self._framing_echoes: list[tuple[int, float]] = []  # for telling a bounce
        self._echo_written = False  # all echoes handed out by data_to_send
        self._strays = bytearray()  # first bytes of a run of stray bytes, for one report
        self._stray_count = 0

        self._queue: deque[bytes] = deque()
        self._current: bytes | None = None
        self._frame = b""
        self._pos = 0
        self._tx = _Tx.IDLE
        self._echo_deadline = 0.0
        self._retry_at = 0.0
        self._failures = 0
        self._refused: bytes | None = None  # our pending message once refused from the peer
        self._last_heard = -math.inf  # last byte from the peer: a sign of life
        self._now = -math.inf

        self._finishing = False  # stopping: the frame in progress ends, none starts
        # After a reopen, a message whose end byte was written (the peer may have it) waits
        # one timeout for the peer's answer before it is sent again (docs/nulmodem.md).
        self._hold_pending = False
        self._hold_until = -math.inf

        self._out = bytearray()
        self._events: list[LinkEvent] = []

    # ------------------------------------------------------------------ public API

    def check(self, raw: bytes) -> None:
        """Raise :class:`FramingError` if this line cannot carry ``raw`` (queue aside).

        A caller asks before it counts a message as sent: a referee must not see a move
        that the line would refuse.
        """
        check_message(raw, self._max_len)
        for i, b in enumerate(raw):
            if b in (self._start, self._end) or (self._learn and _is_control(b)):
                raise FramingError(
                    f"byte {_show(b)} at offset {i} of the message: it would be read as "
                    "a start or end byte on the serial line"
                )

    def send(self, raw: bytes, now: float, *, checked: bool = False) -> None:
        """Queue one message (FIFO). Raises :class:`FramingError` if it cannot be sent
        (``checked``: the caller asked :meth:`check` already)."""
        raw = bytes(raw)
        if not checked:
            self.check(raw)
        if self.queued >= self._max_queue:
            raise FramingError(
                f"send queue full: {self.queued} messages wait for the serial line; "
                "is the engine answering?",
                side="local",
            )
        self._queue.append(raw)
        self._tick(now)
        self._try_start(now)

    def receive_data(self, data: bytes, now: float) -> None:
        """Bytes read from the line. Timers that expired before ``now`` fire first."""
        self._tick(now)
        if data:
            self._last_heard = now
        for b in data:
            self._on_byte(b, now)
        self._flush_strays()
        self._try_start(now)

    def poll(self, now: float) -> None:
        """Fire expired timers; call at or after :meth:`next_deadline`."""
        self._tick(now)
        self._try_start(now)

    def data_to_send(self) -> bytes:
        """Drain the bytes to write to the line now."""
        out = bytes(self._out)
        self._out.clear()
        self._echo_written = True
        return out

    def events(self) -> list[LinkEvent]:
        """Drain what happened since the last call."""
        out, self._events = self._events, []
        return out

    def next_deadline(self) -> float | None:
        """When :meth:`poll` must be called next, or ``None`` if no timer runs."""
        times: list[float] = []
        if self._rx_start is not None:
            times.append(self._rx_deadline)
        if self._tx is _Tx.SENDING:
            times.append(self._echo_deadline)
        elif self._rx_start is None and self._tx is _Tx.WAITING:
            times.append(self._retry_at)
        elif self._rx_start is None and self._queue:
            # due at once (after reset), or when the hold after a reopen ends
            times.append(max(self._now, self._hold_until))
        return min(times) if times else None

    def reset(self) -> None:
        """After the port was reopened: drop partial state; queued messages stay.

        The message in flight goes back to the front of the queue and is sent again from
        its start byte; if its end byte had been written, only after one timeout (the peer may
        have it: its answer comes first).  The framing learned from the peer is kept.
        """
        if self._current is not None:
            ended = self._tx is _Tx.SENDING and self._pos == len(self._frame) - 1
            self._hold_pending = ended
            self._queue.appendleft(self._current)
            self._current = None
        self._tx = _Tx.IDLE
        self._failures = 0
        self._rx_idle()
        self._cut = self._refused = None
        self._out.clear()
        self._strays.clear()
        self._stray_count = 0
        self._framing_echoes.clear()
        self._deaf_until = -math.inf

    def confirm_written(self) -> bool:
        """Nothing to do: a message is delivered when the echo of its end byte comes back."""
        return False

    def close_input(self) -> None:
        """The line closed: a message half received is abandoned (reported as dropped)."""
        if self._rx_start is not None:
            self._problem(
                f"the line closed {len(self._rx_buf)} byte(s) into a message; dropped"
            )
            self._rx_idle()

    @property
    def retransmits(self) -> bool:
        """Yes: the handshake starts a message over until its end byte is echoed."""
        return True

    def clear(self) -> list[bytes]:
        """Forget every message not yet delivered (its engine is gone); return them.

        The message in flight is abandoned where it stands; what the peer had already
        echoed of it is its own business.
        """
        dropped = ([self._current] if self._current is not None else []) + list(self._queue)
        self._queue.clear()
        self._current = None
        self.reset()
        self._hold_pending, self._hold_until = False, -math.inf
        return dropped

    @property
    def queued(self) -> int:
        """Messages not yet delivered, including the one in flight."""
        return len(self._queue) + (self._current is not None)

    @property
    def pending(self) -> int:
        """Bytes of a partly received message held (never more than ``max_len``)."""
        return len(self._rx_buf)

    @property
    def idle(self) -> bool:
        """Nothing queued, nothing in flight, not mid-receive, nothing left to write."""
        return self.queued == 0 and self._rx_start is None and not self._out

    def withdraw(self, raw: bytes) -> bool:
        """Stop sending ``raw`` (the one in flight or the first queued): the caller knows
        the peer has it (it answered it), though its last echo never came back.  A frame of
        it under way is abandoned where it stands (the peer's receiver drops the part)."""
        if self._current == raw:
            self._current = self._refused = None
            self._tx = _Tx.IDLE
            self._failures = 0
            self._try_start(self._now)
            return True
        if raw in self._queue:
            first = self._queue[0] == raw
            self._queue.remove(raw)
            if first:  # the one held after a reopen: the next goes at once
                self._hold_pending, self._hold_until = False, -math.inf
                self._try_start(self._now)
            return True
        return False

    def finish_frame(self) -> None:
        """The program stops: the frame in progress (either way) may end; no other starts,
        and a failed one is not started over (docs/bridge.md, "A stop never cuts a frame")."""
        self._finishing = True

    @property
    def mid_frame(self) -> bool:
        """A frame is under way on the line: ours sent in part, or the peer's received in part."""
        return self._tx is _Tx.SENDING or self._rx_start is not None

    @property
    def framing(self) -> tuple[int, int]:
        """The start and end bytes our own messages are sent with now."""
        return self._send_start, self._send_end

    # ------------------------------------------------------------------ timers

    def _tick(self, now: float) -> None:
        self._now = now
        if self._tx is _Tx.SENDING and now >= self._echo_deadline:
            b = self._frame[self._pos]
            if self._pos == 0 and (self._send_start, self._send_end) != (self._start, self._end):
                self._unlearn()
            self._fail(
                now,
                f"no echo of {_show(b)} (byte {self._pos + 1} of {len(self._frame)}) within "
                f"{self._timeout:g} s",
                delay=0.0,
            )
        if self._rx_start is not None and now >= self._rx_deadline:
            self._problem(
                f"peer silent for {self._timeout:g} s in the middle of a message: "
                f"{len(self._rx_buf)} characters dropped",
                noise=self._unconfirmed(),
            )
            self._rx_idle()

    # ------------------------------------------------------------------ sender

    def _try_start(self, now: float) -> None:
        """Start (or start over) the next message if the line is ours to use."""
        if self._tx is _Tx.SENDING or self._rx_start is not None or self._finishing:
            return
        if self._hold_pending and self._queue:
            self._hold_pending = False
            self._hold_until = now + self._timeout
            self._problem(
                f"'{escape(self._queue[0])}' had all its bytes written when the port was lost: "
                f"the peer may have it; sent again in {self._timeout:g} s unless it answers"
            )
        if now < self._hold_until:
            return
        if self._current is None:
            if not self._queue:
                return
            self._current = self._queue.popleft()
        elif now < self._retry_at:
            return
        self._frame = bytes([self._send_start]) + self._current + bytes([self._send_end])
        self._pos = 0
        self._tx = _Tx.SENDING
        self._framing_echoes.clear()  # from now on, what comes in is our echo
        self._last_rx_at = -math.inf  # we are sending: no ring of echoes runs through us
        self._write_next(now)

    def _write_next(self, now: float) -> None:
        self._out.append(self._frame[self._pos])
        self._echo_deadline = now + self._timeout

    def _on_echo(self, b: int, now: float) -> bool:
        """Handle ``b`` as the echo we wait for; True if it must also be received."""
        expected = self._frame[self._pos]
        if b == expected:
            self._pos += 1
            if self._pos < len(self._frame):
                self._write_next(now)
                return False
            assert self._current is not None
            self._events.append(MessageDelivered(self._current))
            self._current = self._refused = None
            self._tx = _Tx.IDLE
            self._failures = 0
            return False
        starts = b in (self._start, self._learned_start)
        what = (
            "the peer began a message of its own; receiving it first"
            if starts
            else "noise, or both ends sending at once"
        )
        self._fail(
            now,
            f"wrong echo of byte {self._pos + 1} of {len(self._frame)} ({_show(expected)}): "
            f"got {_show(b)} ({what})",
            delay=self._rng.uniform(0.1 * self._backoff, self._backoff),
        )
        return starts

    def _fail(self, now: float, reason: str, *, delay: float) -> None:
        """One attempt failed: start over after ``delay``; past ``max_attempts``, back off
        further while the peer shows signs of life and give up only when it is silent."""
        assert self._current is not None
        self._failures += 1
        message = escape(self._current)
        silent = now - self._last_heard
        if self._failures >= self._max_attempts and silent >= ALIVE_TIMEOUTS * self._timeout:
            self._link_down(reason, silent)
            return
        if self._failures >= self._max_attempts:
            step = min(
                self._timeout,
                max(self._backoff, self._timeout / 10) * 2 ** (self._failures - self._max_attempts),
            )
            delay = max(delay, self._rng.uniform(step / 2, step))
            count = (
                f"attempt {self._failures} failed (past {self._max_attempts}, but the peer "
                f"spoke {silent:.2f} s ago: keeping {self.queued} queued message(s))"
            )
        else:
            count = f"attempt {self._failures} of {self._max_attempts} failed"
        self._tx = _Tx.WAITING
        self._retry_at = now + delay
        when = f" in {delay:.2f} s" if delay > 0 else ""
        self._problem(
            f"sending '{message}': {reason}; {count}, starting over from the start byte{when}"
        )

    def _link_down(self, reason: str, silent: float) -> None:
        """Report the peer gone, naming every message that will not be delivered."""
        assert self._current is not None
        undelivered = (self._current, *self._queue)
        named = ", ".join(f"'{escape(raw)}'" for raw in undelivered[:_NAMED_DROPS])
        more = len(undelivered) - _NAMED_DROPS
        heard = ("nothing heard from it: is it running, at this speed? dxserial probe finds "
                 "the speed and bytes it answers to" if math.isinf(silent)
                 else f"silent for {silent:.1f} s")
        self._events.append(
            LinkDown(
                LinkDownError(
                    f"NULMODEM peer not answering ({heard}): message '{escape(self._current)}' "
                    f"failed {self._failures} times in a row (last: {reason}); "
                    f"{len(undelivered)} message(s) not delivered: {named}"
                    + (f" and {more} more" if more > 0 else "")
                ),
                undelivered,
            )
        )
        self._queue.clear()
        self._current = None
        self._tx = _Tx.IDLE
        self._failures = 0

    # ------------------------------------------------------------------ receiver

    def _on_byte(self, b: int, now: float) -> None:
        if self._tx is _Tx.SENDING and not self._on_echo(b, now):
            return
        self._receive(b, now)

    def _receive(self, b: int, now: float) -> None:
        """Receiver duty: echo ``b`` if it belongs to a message, and collect the message."""
        if now < self._deaf_until:
            return
        if self._rx_start is not None and self._unconfirmed() and not self._echo_written:
            # A handshaking peer sends no byte before the echo of the one before it was
            # written: a frame on an unknown start byte that runs ahead of our echoes is noise.
            self._noise_frame(bytes([self._rx_start]) + bytes(self._rx_buf))
            if b not in (self._start, self._learned_start):
                self._stray(b)
                return
        idle = self._rx_start is None
        starts = b in (self._start, self._learned_start, self._rx_start) or (
            self._learning and _is_control(b) and b != self._end and self._may_learn_start()
        )
        if idle and not starts:
            self._stray(b)
            return
        self._flush_strays()
        if starts and self._is_bounce(b, now):
            self._problem(
                f"start byte {_show(b)} came straight back after we echoed it: not echoed "
                "again, so two receivers cannot pass it back and forth for ever"
            )
            return
        if starts and self._is_own_frame():
            self._problem(
                f"start byte {_show(b)} in the middle of '{escape(bytes(self._rx_buf))}', the "
                "start of our own message: not echoed (our late echoes passed round?)"
            )
            self._rx_idle()
            return
        ends = not starts and (b == self._end or (self._rx_start != self._start and _is_control(b)))
        if ends and self._current is not None and bytes(self._rx_buf) == self._current:
            if self._refused != self._current:
                self._refused = self._current
                self._problem(
                    f"end byte {_show(b)} after '{escape(self._current)}', our own message not "
                    "yet delivered: not echoed, message dropped (our late echoes passed round? "
                    "a peer that sent the same gets no echo and sends it again)"
                )
                self._rx_idle()
                return
            self._problem(
                f"'{escape(self._current)}', the same as our own message not yet delivered, "
                "came again: taken for the peer's (unless our late echoes passed round twice)",
                noise=True,
            )
        if now - self._last_rx_at >= self._timeout / 4:
            self._busy_since = now
            self._busy_bytes = 0
        self._last_rx_at = now
        self._busy_bytes += 1
        # A ring runs long *and* carries more than any one message can: a slow line that
        # takes longer than 4 x timeout over one genuine message is never cut off.
        if (
            now - self._busy_since >= _BUSY_TIMEOUTS * self._timeout
            and self._busy_bytes > 2 * (self._max_len + 2)
        ):
            self._problem(
                f"echoing for {_BUSY_TIMEOUTS * self._timeout:g} s and {self._busy_bytes} "
                "bytes without a pause or a new message (two ends echoing each other?): "
                f"ignoring the line for {self._timeout:g} s"
            )
            self._rx_idle()
            self._deaf_until = now + self._timeout
            self._busy_since = self._deaf_until
            self._busy_bytes = 0
            return
        assert starts or self._rx_start is not None
        self._echo(b, now, framing=starts or ends)
        if starts:
            self._begin(b, now)
        elif ends:
            self._complete(b)
        elif len(self._rx_buf) >= self._max_len:
            self._overflow()
        else:
            self._rx_deadline = now + self._timeout
            if self._rx_spoiled is None and (b == 0 or b >= 0x80):
                self._rx_spoiled = (
                    f"byte 0x{b:02x} at offset {len(self._rx_buf)}: only 0x01..0x7f may occur"
                )
            self._rx_buf.append(b)

    def _echo(self, b: int, now: float, *, framing: bool) -> None:
        """Write ``b`` back; remember start and end bytes echoed since the last character."""
        self._out.append(b)
        self._echo_written = False
        if not framing:
            self._framing_echoes.clear()
            return
        if len(self._framing_echoes) >= _BOUNCE_MEMORY:
            del self._framing_echoes[0]
        self._framing_echoes.append((b, now))

    def _is_bounce(self, b: int, now: float) -> bool:
        """``b`` repeats a start or end byte we echoed (and wrote) moments ago, with no
        message character echoed since: what comes back when two ends both echo."""
        window = self._timeout / 2
        return self._echo_written and any(
            x == b and now - t <= window for x, t in self._framing_echoes
        )

    def _is_own_frame(self) -> bool:
        """The message being received so far is the start of our own pending one."""
        return (
            self._current is not None
            and bool(self._rx_buf)
            and self._current.startswith(bytes(self._rx_buf))
        )

    def _stray(self, b: int) -> None:
        """A byte outside any message: reported (a run as one event), never echoed."""
        if len(self._strays) < _STRAY_SAMPLE:
            self._strays.append(b)
        self._stray_count += 1

    def _unlearn(self) -> None:
        """Not even our start byte came back: the framing learned does not hold; the next
        attempt uses the configured one (docs/nulmodem.md)."""
        self._problem(
            f"no echo of our start byte 0x{self._send_start:02x}, learned from the peer: back "
            f"to the configured framing 0x{self._start:02x}/0x{self._end:02x}"
        )
        self._send_start, self._send_end = self._start, self._end
        self._learned_start = None
        self._learning = self._learn

    def _unconfirmed(self) -> bool:
        """The message being received began with a start byte not (yet) known."""
        return self._rx_start not in (self._start, self._learned_start)

    def _noise_frame(self, data: bytes) -> None:
        """A frame begun on an unknown start byte turned out to be noise: counted as strays."""
        self._rx_idle()
        for b in data:
            self._stray(b)

    def _may_learn_start(self) -> bool:
        """An unknown control byte starts a message only on an idle line, or right after
        an unconfirmed or learned start byte (then it replaces it)."""
        return self._rx_start is None or (self._rx_start != self._start and not self._rx_buf)

    def _begin(self, b: int, now: float) -> None:
        if self._rx_start is not None:
            self._problem(
                f"start byte {_show(b)} in the middle of a message: starting over, "
                f"{len(self._rx_buf)} characters dropped"
            )
            if self._rx_buf and self._rx_spoiled is None:
                self._cut = (bytes(self._rx_buf), "cut off by a start byte")
        elif b not in (self._start, self._learned_start):
            self._problem(
                f"control byte {_show(b)} on an idle line: echoed as a possible start byte "
                f"(configured: 0x{self._start:02x}); learned only if a whole DXP message "
                "follows, echo by echo",
                noise=True,  # until a whole message proves it: one line per burst, not each
            )
        self._rx_start = b
        self._rx_buf.clear()
        self._rx_spoiled = None
        self._rx_deadline = now + self._timeout

    def _complete(self, end: int) -> None:
        start = self._rx_start
        raw = bytes(self._rx_buf)
        spoiled = self._rx_spoiled
        self._rx_idle()
        assert start is not None
        if not raw:
            self._problem(f"empty message (end byte {_show(end)} right after the start byte)")
            return
        if spoiled is not None:
            self._problem(f"message '{escape(raw)}' dropped: {spoiled}", noise=True)
            self._cut = (raw, f"dropped for its {spoiled.split(':')[0]}")
            return
        if start not in (self._start, self._learned_start):
            why = _not_evidence(raw)
            if why is not None:
                self._problem(
                    f"message '{escape(raw)}' between start byte 0x{start:02x} and end byte "
                    f"0x{end:02x} dropped: {why}, more likely noise; framing not learned",
                    noise=True,
                )
                return
        self._learning = False  # the peer's framing is known now
        self._failures = 0  # the peer is alive: earlier failures were collisions or noise
        if (start, end) != (self._send_start, self._send_end):
            if start != self._start:
                self._learned_start = start
            self._send_start, self._send_end = start, end
            self._problem(
                f"the peer frames its messages with start byte 0x{start:02x} and end byte "
                f"0x{end:02x}: our messages now use the same"
            )
        if raw not in self._recent_received:
            self._last_rx_at = -math.inf  # a new message is progress; a ring only repeats
        self._recent_received.append(raw)
        if self._cut is not None:
            self._settle_cut(raw, *self._cut)
        self._events.append(MessageReceived(raw))

    def _settle_cut(self, raw: bytes, cut: bytes, how: str) -> None:
        """A message dropped here is followed by ``raw``: the same one sent again (maybe
        garbled), or else the peer counted the dropped one delivered: report it lost."""
        self._cut = None
        # A restart's start byte garbled on its way in lands at the end as a character.
        starts = (self._start, self._learned_start or self._start)
        near_start = {s ^ (1 << bit) for s in starts for bit in range(8)}
        end = len(cut)
        while end > 1 and cut[end - 1] in near_start:
            end -= 1
        kept = cut[:end]
        if raw.startswith(kept[:-1]) or _garbled_copy(raw, kept):
            return
        self._events.append(
            LinkProblem(
                FramingError(
                    f"message '{escape(cut)}' was {how} and not sent again (next came "
                    f"'{escape(raw[:40])}'): the peer counts it delivered if its echoes came "
                    "back right (a start or end byte, or a character, garbled both ways)"
                ),
                lost=cut,
            )
        )

    def _overflow(self) -> None:
        hint = next(
            (
                f"; control byte 0x{c:02x} seen at offset {i}: is that the peer's end byte?"
                for i, c in enumerate(self._rx_buf)
                if _is_control(c)
            ),
            "",
        )
        self._problem(
            f"more than {self._max_len} characters without the end byte "
            f"0x{self._end:02x}: message dropped, waiting for the next start byte{hint}",
            noise=True,
        )
        self._rx_idle()

    def _rx_idle(self) -> None:
        self._rx_start = None
        self._rx_buf.clear()
        self._rx_spoiled = None

    def _flush_strays(self) -> None:
        """Report a run of stray bytes as one event, not one per byte."""
        if self._stray_count:
            n = self._stray_count
            more = "..." if n > len(self._strays) else ""
            self._problem(
                f"{n} stray byte{'s' if n > 1 else ''} '{escape(bytes(self._strays))}{more}' "
                f"while waiting for the start byte 0x{self._start:02x}: not echoed, not delivered"
                " (line noise, or a sender at another speed: dxserial probe finds its speed)",
                noise=True,
            )
            self._strays.clear()
            self._stray_count = 0

    def _problem(self, text: str, *, noise: bool = False) -> None:
        self._events.append(LinkProblem(FramingError(text), noise=noise))
