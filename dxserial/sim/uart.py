"""What a UART at one speed makes of bytes sent at another: a bit-level model, without I/O.

Two ends that disagree on the speed do not lose the link quietly: the receiver samples the
sender's bit stream at its own instants and delivers wrong bytes, more or fewer of them.
``dxserial vpair`` uses this model when its two ends run at different speeds, and
``dxserial probe`` to guess a peer's speed from the garbage it reads.  Times are passed in
(:class:`UartLine`).  How the receiver samples (8N1, framing errors, breaks, samples on a
bit boundary): docs/simulators.md.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from dxserial.errors import ConfigError

#: Bits per character on the wire: start + 8 data + stop.
BITS = 10
_EPS = 1e-7  # in bit times: a sample this close to a boundary belongs to the next bit


def _frame_bits(byte: int) -> tuple[int, ...]:
    """Line levels of one character: start (0), data LSB first, stop (1)."""
    return (0, *((byte >> i) & 1 for i in range(8)), 1)


@dataclass(frozen=True)
class _Char:
    """One character on the wire: when its start bit began, and its bits."""

    start: float
    bits: tuple[int, ...]


class UartLine:
    """One direction of a line: a sender at ``tx_baud``, a receiver at ``rx_baud``.

    :meth:`send` puts bytes on the wire at the sender's pace (each starts when the wire is
    free: absolute deadlines, so nothing drifts); :meth:`receive` returns what the receiver
    has decoded by ``now``, with the time each byte was delivered.  Only bits before
    ``now`` are decoded, and bytes sent later start at or after their ``now``, so what
    :meth:`receive` returns is final.
    """

    def __init__(self, tx_baud: int, rx_baud: int) -> None:
        for name, baud in (("sender", tx_baud), ("receiver", rx_baud)):
            if isinstance(baud, bool) or not isinstance(baud, int) or baud <= 0:
                raise ConfigError(f"{name} speed must be a positive whole number, not {baud!r}")
        self.tx_baud = tx_baud
        self.rx_baud = rx_baud
        self._tx_bit = 1.0 / tx_baud
        self._rx_bit = 1.0 / rx_baud
        self._chars: deque[_Char] = deque()
        self._free_at = -math.inf  # when the wire is free for the next character
        self._hunt_from = -math.inf  # the receiver looks for a falling edge from here

    @property
    def char_time(self) -> float:
        """Seconds one character takes on the wire at the sender's speed."""
        return BITS * self._tx_bit

    @property
    def busy_until(self) -> float:
        """When the last character sent so far has left the wire."""
        return self._free_at

    @property
    def pending(self) -> int:
        """Characters on the wire that may still make the receiver deliver a byte."""
        return len(self._chars)

    def send(self, data: bytes, now: float) -> None:
        """Put ``data`` on the wire: the first byte when the wire is free (not before ``now``)."""
        start = max(now, self._free_at)
        for byte in data:
            self._chars.append(_Char(start, _frame_bits(byte)))
            start += self.char_time
        self._free_at = start

    def receive(self, now: float) -> list[tuple[float, int]]:
        """Bytes the receiver has delivered by ``now``: ``(time delivered, value)``."""
        out: list[tuple[float, int]] = []
        while True:
            edge = self._next_edge(self._hunt_from)
            if edge is None:
                break
            stop_at = edge + (BITS - 0.5) * self._rx_bit
            # Only samples strictly before ``now`` are final: a byte sent at ``now`` starts
            # there, and a sample on its first boundary belongs to it.
            final = now - 2 * _EPS * self._tx_bit
            if edge + 0.5 * self._rx_bit >= final:
                break
            if self._level(edge + 0.5 * self._rx_bit):  # false start: a glitch, not a byte
                self._hunt_from = edge + 0.5 * self._rx_bit
                continue
            if stop_at >= final:
                break
            value = 0
            for i in range(8):
                value |= self._level(edge + (1.5 + i) * self._rx_bit) << i
            out.append((stop_at, value))
            self._hunt_from = stop_at
        self._forget()
        return out

    def next_deadline(self) -> float | None:
        """When :meth:`receive` may next have something (``None``: nothing on the wire)."""
        edge = self._next_edge(self._hunt_from)
        if edge is None:
            return None
        return edge + (BITS - 0.5) * self._rx_bit

    # ------------------------------------------------------------------ the wire

    def _level(self, t: float) -> int:
        """The line's level at ``t``: high when idle."""
        for char in self._chars:
            offset = (t - char.start) / self._tx_bit
            if offset < -_EPS:
                return 1  # before this character (and after the previous one): idle
            index = math.floor(offset + _EPS)
            if index < BITS:
                return char.bits[index]
        return 1

    def _next_edge(self, after: float) -> float | None:
        """The first falling edge at or after ``after``."""
        for char in self._chars:
            if char.start + BITS * self._tx_bit <= after:
                continue
            previous = 1  # the wire is high before every start bit
            for i, bit in enumerate(char.bits):
                t = char.start + i * self._tx_bit
                if previous == 1 and bit == 0 and t >= after - _EPS * self._tx_bit:
                    return t
                previous = bit
        return None

    def _forget(self) -> None:
        """Drop characters that can no longer make a byte: with no falling edge left, the
        rest of the wire is idle to the receiver until a new character is sent."""
        if self._next_edge(self._hunt_from) is None:
            self._chars.clear()
            return
        while self._chars and self._chars[0].start + BITS * self._tx_bit <= self._hunt_from:
            self._chars.popleft()


def garble(data: bytes, tx_baud: int, rx_baud: int) -> bytes:
    """What a receiver at ``rx_baud`` reads from ``data`` sent back to back at ``tx_baud``."""
    line = UartLine(tx_baud, rx_baud)
    line.send(data, 0.0)
    # Long enough for the receiver to finish everything (the line stays idle afterwards).
    end = line.busy_until + 2 * BITS / rx_baud
    return bytes(value for _, value in line.receive(end))
