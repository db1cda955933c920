"""One direction of the virtual pair: faults, pacing at a baud rate, the queue.

Bytes toward an end are queued with absolute deadlines (byte n of a burst due at
``max(arrival, previous delivery) + (n + 1) x 10/baud``, so the relay's own lateness never
accumulates), or, when the two ends' speeds differ, sampled by the UART model
(:mod:`dxserial.sim.uart`).  Faults are drawn per byte from a generator seeded per
direction, so the same seed and byte stream give the same faults however they are chunked.
"""

from __future__ import annotations

import os
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from dxserial.sim.ptyend import PtyEnd
from dxserial.sim.uart import UartLine

#: Bits on the wire per character (start + 8 data + stop).
BITS_PER_CHAR = 10
#: Relay queue per direction before the sender is held back.
QUEUE_LIMIT = 65536
QUEUE_LIMIT_PACED = 4096


@dataclass(frozen=True)
class DirectionStats:
    """Byte counts for one direction.

    ``relayed``: written to the receiving end (corrupted ones included); ``dropped`` and
    ``corrupted``: the faults; ``lost``: discarded because the receiving end was unplugged;
    ``mismatched``: sent while the two ends' speeds differed (what arrived of them is in
    ``relayed``, garbled).
    """

    relayed: int = 0
    dropped: int = 0
    corrupted: int = 0
    lost: int = 0
    mismatched: int = 0


class Lane:
    """One direction: faults on the way in, then either a deadline queue (both ends at one
    speed, or unpaced) or the bit-level UART model (the ends' speeds differ)."""

    def __init__(
        self,
        src: PtyEnd,
        dst: PtyEnd,
        speeds: Callable[[], tuple[int | None, int | None]],
        drop: float,
        corrupt: float,
        seed: int,
    ) -> None:
        self.src, self.dst = src, dst
        self.speeds = speeds  # (sender's speed, receiver's speed), None: unpaced
        self.drop, self.corrupt = drop, corrupt
        self.rng = random.Random(f"{seed}:{src.name}->{dst.name}")
        # Entries [deadline of first byte, bytes, char time]; byte k is due at
        # deadline + k * char time (char time 0: unpaced).
        self.queue: deque[list[float | bytearray]] = deque()
        self.paced_queued = 0
        self.last_due = 0.0  # deadline of the last queued byte
        self.uart: UartLine | None = None  # speeds differ: what the receiver makes of it
        self.garbled = bytearray()  # decoded by the UART model, not yet written
        self.blocked = False  # the receiving pty is full; wait for it to be writable
        self.relayed = self.dropped = self.corrupted = self.lost = self.mismatched = 0

    @property
    def queued(self) -> int:
        """Bytes on their way (for the limit that holds the sender back)."""
        on_wire = self.uart.pending if self.uart is not None else 0
        return self.paced_queued + on_wire + len(self.garbled)

    @property
    def limit(self) -> int:
        tx, rx = self.speeds()
        return QUEUE_LIMIT_PACED if tx or rx else QUEUE_LIMIT

    def stats(self) -> DirectionStats:
        return DirectionStats(
            self.relayed, self.dropped, self.corrupted, self.lost, self.mismatched
        )

    def feed(self, data: bytes, now: float) -> None:
        if self.drop or self.corrupt:
            data = self._faults(data)
        if not data:
            return
        if not self.dst.plugged:
            self.lost += len(data)
            return
        tx, rx = self.speeds()
        if tx is not None and rx is not None and tx != rx:
            self._feed_mismatched(data, now, tx, rx)
            return
        baud = tx or rx
        char_time = BITS_PER_CHAR / baud if baud else 0.0
        if char_time:
            # Absolute deadlines: byte n of a burst is due at first + n * char time, so
            # lateness of the relay thread never accumulates.
            first = max(now, self.last_due, self._uart_free(now)) + char_time
            self.last_due = first + (len(data) - 1) * char_time
        else:
            first = now
        self.paced_queued += len(data)
        if self.queue:
            tail = self.queue[-1]
            tail_first, tail_data, tail_ct = tail
            assert isinstance(tail_first, float) and isinstance(tail_data, bytearray)
            if tail_ct == char_time and (
                not char_time or abs(tail_first + len(tail_data) * char_time - first) < 1e-9
            ):
                tail_data += data
                return
        self.queue.append([first, bytearray(data), char_time])

    def _feed_mismatched(self, data: bytes, now: float, tx: int, rx: int) -> None:
        """The ends disagree on the speed: the receiver samples the sender's bit stream."""
        uart = self.uart
        if uart is None or (uart.tx_baud, uart.rx_baud) != (tx, rx):
            start = max(now, self.last_due, self._uart_free(now))
            if uart is not None and uart.pending:  # a speed changed mid-character
                self.lost += uart.pending
            uart = self.uart = UartLine(tx, rx)
            now = start
        uart.send(data, now)
        self.mismatched += len(data)

    def _uart_free(self, now: float) -> float:
        return self.uart.busy_until if self.uart is not None else now

    def _faults(self, data: bytes) -> bytes:
        """Per byte, in order: maybe drop it; else maybe flip one of its bits."""
        out = bytearray()
        rnd, drop, corrupt = self.rng.random, self.drop, self.corrupt
        for byte in data:
            if drop and rnd() < drop:
                self.dropped += 1
                continue
            if corrupt and rnd() < corrupt:
                byte ^= 1 << self.rng.randrange(8)
                self.corrupted += 1
            out.append(byte)
        return bytes(out)

    def flush(self, now: float) -> None:
        """Write every byte that is due; stop at a full receiver."""
        self.blocked = False
        if self.uart is not None:
            self.garbled += bytes(value for _, value in self.uart.receive(now))
            if self.garbled and not self._write_garbled():
                return
            if not self.uart.pending and self.uart.busy_until <= now:
                self.uart = None
        while self.queue:
            entry = self.queue[0]
            first, data, char_time = entry
            assert isinstance(first, float) and isinstance(data, bytearray)
            assert isinstance(char_time, float)
            if first > now:
                return
            due = min(len(data), int((now - first) / char_time) + 1) if char_time else len(data)
            written = self._write(data[:due])
            self.paced_queued -= written
            del data[:written]
            if char_time:
                entry[0] = first + written * char_time
            if not data:
                self.queue.popleft()
            if written < due:
                self.blocked = True
                return

    def _write(self, data: bytes | bytearray) -> int:
        assert self.dst.master is not None
        try:
            written = os.write(self.dst.master, data)
        except BlockingIOError:
            written = 0
        self.relayed += written
        return written

    def _write_garbled(self) -> bool:
        written = self._write(self.garbled)
        del self.garbled[:written]
        if self.garbled:
            self.blocked = True
            return False
        return True

    def discard(self) -> None:
        """The receiver was unplugged: what was on its way is lost."""
        self.lost += self.queued
        self.queue.clear()
        self.paced_queued = 0
        self.uart = None
        self.garbled.clear()
        self.blocked = False

    def next_deadline(self) -> float | None:
        if self.blocked:
            return None
        times: list[float] = []
        if self.queue:
            first = self.queue[0][0]
            assert isinstance(first, float)
            times.append(first)
        if self.uart is not None:
            due = self.uart.next_deadline()
            times.append(due if due is not None else self.uart.busy_until)
        return min(times) if times else None


__all__ = ["BITS_PER_CHAR", "QUEUE_LIMIT", "QUEUE_LIMIT_PACED", "DirectionStats", "Lane"]
