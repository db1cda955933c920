"""A virtual null-modem cable: two pseudo-terminals joined by a relay thread.

Each end is a pty whose slave side is published as a symlink (``/tmp/x/a -> /dev/pts/7``),
so any program opens it like a serial port.  The relay copies what is written on end A to
end B and back, optionally paced at a baud rate, with reproducible drop and bit-flip
faults, and can "unplug" an end the way a USB adapter is pulled out.  What it keeps for an
end no program has open, what unplugging does, how speeds are paced and faults drawn:
docs/simulators.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import selectors
import termios
import threading
import time
import tty
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import Literal

from dxserial.errors import ConfigError, PortError
from dxserial.sim.uart import UartLine
from dxserial.wirelog import enabled as wire_enabled
from dxserial.wirelog import log_bytes

log = logging.getLogger("dxserial.sim.vpair")

End = Literal["a", "b"]
#: Bits on the wire per character (start + 8 data + stop).
BITS_PER_CHAR = 10
#: Relay queue per direction before the sender is held back.
QUEUE_LIMIT = 65536
QUEUE_LIMIT_PACED = 4096
_COMMAND_TIMEOUT = 10.0


#: Below this, the relay sleeps instead of waiting in the selector (epoll rounds up to ms).
_SELECT_RESOLUTION = 0.002
#: A sleep ends some 35 µs late here even with 1 µs timer slack: the last stretch before a
#: byte is due is waited out on the clock instead (only while a byte is due: idle is idle).
_SPIN = 80e-6


def _sleep_until(deadline: float) -> None:
    """Return at ``deadline`` (monotonic clock), not a scheduler's wake-up late.

    Only a wait of more than twice ``_SPIN`` ends on the clock, so the relay spins at most
    ~8 % of a character time at 9600 baud; at 115200 (87 µs a character) it just sleeps.
    """
    rest = deadline - time.monotonic()
    if rest <= 2 * _SPIN:
        time.sleep(max(rest, 0.0))
        return
    time.sleep(rest - _SPIN)
    while time.monotonic() < deadline:
        time.sleep(0)  # lets other threads of this process have the interpreter


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


@dataclass(frozen=True)
class PairStats:
    """Both directions, named by where bytes go."""

    a_to_b: DirectionStats
    b_to_a: DirectionStats

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {"a_to_b": asdict(self.a_to_b), "b_to_a": asdict(self.b_to_a)}


class _End:
    """One pty: master fd (the relay's side), a held slave fd, the published link."""

    def __init__(self, name: End, path: str) -> None:
        self.name = name
        self.path = path
        self.master: int | None = None
        self.slave: int | None = None
        self.device: str | None = None

    @property
    def plugged(self) -> bool:
        return self.master is not None

    def plug(self) -> None:
        master, slave = os.openpty()
        try:
            tty.setraw(slave)  # no echo, no CR/LF translation, 8 bits, no flow control
            os.set_blocking(master, False)
            device = os.ttyname(slave)
            _publish(device, self.path)
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        self.master, self.slave, self.device = master, slave, device

    def unplug(self) -> None:
        """Link first (so nobody opens a dying pty), then the pty itself."""
        if self.device is not None:
            _unpublish(self.device, self.path)
        for fd in (self.master, self.slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.master = self.slave = self.device = None


class _Lane:
    """One direction: faults on the way in, then either a deadline queue (both ends at one
    speed, or unpaced) or the bit-level UART model (the ends' speeds differ)."""

    def __init__(
        self,
        src: _End,
        dst: _End,
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


class VirtualPair:
    """Two ptys joined like a null-modem cable, published at ``path_a`` and ``path_b``.

    Usable from sync and async code alike: the relay runs in a daemon thread and every
    method returns when its effect is done (after ``unplug("a")`` the link is gone and a
    program holding the pty sees the hang-up).
    """

    def __init__(
        self,
        path_a: str,
        path_b: str,
        *,
        baud: int | None = None,
        baud_a: int | None = None,
        baud_b: int | None = None,
        termios_speed: bool = False,
        drop: float = 0.0,
        corrupt: float = 0.0,
        seed: int | None = None,
    ) -> None:
        for speed in (baud, baud_a, baud_b):
            if speed is not None and (isinstance(speed, bool) or speed <= 0):
                raise ConfigError(f"baud rate must be a positive whole number, not {speed!r}")
        for name, value in (("drop", drop), ("corrupt", corrupt)):
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name} probability must be between 0 and 1, not {value!r}")
        self.path_a = os.path.abspath(path_a)
        self.path_b = os.path.abspath(path_b)
        if self.path_a == self.path_b:
            raise ConfigError(f"the two ends need different paths, both are {self.path_a}")
        self.baud = baud
        self.baud_a = baud_a
        self.baud_b = baud_b
        self.termios_speed = termios_speed
        self.drop = drop
        self.corrupt = corrupt
        #: The seed actually used (drawn at random when none was given).
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**32)
        self._ends = {"a": _End("a", self.path_a), "b": _End("b", self.path_b)}
        a, b = self._ends["a"], self._ends["b"]
        self._lanes = (
            _Lane(a, b, lambda: (self.speed("a"), self.speed("b")), drop, corrupt, self.seed),
            _Lane(b, a, lambda: (self.speed("b"), self.speed("a")), drop, corrupt, self.seed),
        )
        self._lock = threading.Lock()  # guards counters for a consistent snapshot
        self._commands: deque[Callable[[], None]] = deque()
        self._thread: threading.Thread | None = None
        self._sel: selectors.BaseSelector | None = None
        self._registered: dict[int, int] = {}  # fd -> event mask, as the selector has it
        self._wake_r = self._wake_w = -1
        self._stop = False
        self._started = False
        self._closed = False

    # ------------------------------------------------------------------ public API

    def start(self) -> VirtualPair:
        """Create both ptys, publish their links, start relaying.  Returns ``self``."""
        if self._started:
            return self
        for end in self._ends.values():
            _check_path(end.path)
        try:
            for end in self._ends.values():
                end.plug()
        except BaseException:
            for end in self._ends.values():
                end.unplug()
            raise
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._wake_r, selectors.EVENT_READ)
        self._started = True
        self._thread = threading.Thread(target=self._run, name="vpair-relay", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop relaying, close both ptys and remove their links.  Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self._thread is not None and self._thread.is_alive():
            self._stop = True
            self._wake()
            self._thread.join(_COMMAND_TIMEOUT)
        for end in self._ends.values():
            end.unplug()
        if self._sel is not None:
            self._sel.close()
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def __enter__(self) -> VirtualPair:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def path(self, end: End) -> str:
        """Where ``end`` is published (absolute)."""
        return self._end(end).path

    def device(self, end: End) -> str | None:
        """The pty behind ``end`` (``/dev/pts/N``), or ``None`` while unplugged."""
        return self._end(end).device

    def plugged(self, end: End) -> bool:
        return self._end(end).plugged

    def unplug(self, end: End) -> None:
        """Pull ``end`` out: its link disappears, a program holding it sees a hang-up."""
        target = self._end(end)
        self._call(lambda: self._do_unplug(target))

    def replug(self, end: End) -> None:
        """Plug ``end`` back in: a new pty behind the same path.  No-op if plugged."""
        target = self._end(end)
        self._call(lambda: self._do_replug(target))

    def toggle(self, end: End) -> bool:
        """Unplug ``end`` if plugged, else replug it; returns whether it is now plugged."""
        if self.plugged(end):
            self.unplug(end)
            return False
        self.replug(end)
        return True

    def speed(self, end: End) -> int | None:
        """The speed end ``end`` runs at now (``None``: unpaced).

        Its own ``baud_a``/``baud_b`` first, then ``baud``, then (``termios_speed``) the
        speed the program on that end set on its pty with tcsetattr (pyserial does on
        open); a speed termios cannot name (a custom one) leaves the end unpaced.
        """
        own = self.baud_a if end == "a" else self.baud_b
        if own is not None:
            return own
        if self.baud is not None:
            return self.baud
        if not self.termios_speed:
            return None
        return _termios_speed(self._end(end))

    @property
    def stats(self) -> PairStats:
        """Bytes relayed, dropped, corrupted and lost so far, per direction."""
        with self._lock:
            return PairStats(self._lanes[0].stats(), self._lanes[1].stats())

    # ------------------------------------------------------------------ relay thread

    def _end(self, end: End) -> _End:
        if end not in self._ends:
            raise ConfigError(f"end must be 'a' or 'b', not {end!r}")
        return self._ends[end]

    def _call(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` in the relay thread (or here if it is not running) and wait for it."""
        if self._closed or not self._started:
            raise PortError("virtual pair is not running (call start() first)")
        thread = self._thread
        if thread is None or not thread.is_alive():
            fn()
            return
        done = threading.Event()
        errors: list[BaseException] = []

        def command() -> None:
            try:
                fn()
            except BaseException as exc:
                errors.append(exc)
            finally:
                done.set()

        self._commands.append(command)
        self._wake()
        if not done.wait(_COMMAND_TIMEOUT):
            raise PortError("virtual pair relay did not answer")
        if errors:
            raise errors[0]

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"!")

    def _do_unplug(self, end: _End) -> None:
        if not end.plugged:
            return
        with self._lock:
            for lane in self._lanes:
                if lane.dst is end:
                    lane.discard()
        if end.master is not None and end.master in self._registered:
            # Before the fd is closed: a reused fd number must not look registered.
            assert self._sel is not None
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.unregister(end.master)
            del self._registered[end.master]
        end.unplug()
        log.debug("unplugged %s (%s)", end.name, end.path)

    def _do_replug(self, end: _End) -> None:
        if end.plugged:
            return
        if os.path.lexists(end.path):
            _check_path(end.path)
        end.plug()
        log.debug("replugged %s: %s -> %s", end.name, end.path, end.device)

    def _run(self) -> None:
        _tight_timers()
        try:
            self._relay()
        except Exception:
            log.exception("virtual pair relay failed")

    def _relay(self) -> None:
        sel = self._sel
        assert sel is not None
        while not self._stop:
            while self._commands:
                self._commands.popleft()()
            now = time.monotonic()
            with self._lock:
                for lane in self._lanes:
                    if lane.dst.plugged:
                        lane.flush(now)
            self._update_interest(sel, self._registered)
            timeout = self._timeout(now)
            if timeout is not None and timeout < _SELECT_RESOLUTION:
                # The selector waits in whole milliseconds, rounded up: more than a character
                # time at 9600 baud.  Look for input without waiting, then sleep the rest
                # (nanosecond clock) so a byte leaves on time.
                events = sel.select(0)
                if not events:
                    _sleep_until(now + timeout)
                    continue
            else:
                if timeout is not None:
                    timeout -= _SELECT_RESOLUTION / 2  # wake early; the rest is slept
                events = sel.select(timeout)
            for key, mask in events:
                if key.fd == self._wake_r:
                    with contextlib.suppress(BlockingIOError):
                        os.read(self._wake_r, 4096)
                elif mask & selectors.EVENT_READ:
                    self._read_from(key.data)

    def _update_interest(self, sel: selectors.BaseSelector, registered: dict[int, int]) -> None:
        """Read an end unless its lane is full; watch for writability while blocked."""
        wanted: dict[int, tuple[int, _End]] = {}
        for lane in self._lanes:
            if lane.src.master is not None and lane.queued < lane.limit:
                mask, _ = wanted.get(lane.src.master, (0, lane.src))
                wanted[lane.src.master] = (mask | selectors.EVENT_READ, lane.src)
            if lane.blocked and lane.dst.master is not None:
                mask, _ = wanted.get(lane.dst.master, (0, lane.dst))
                wanted[lane.dst.master] = (mask | selectors.EVENT_WRITE, lane.dst)
        for fd in list(registered):
            if fd not in wanted:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    sel.unregister(fd)
                del registered[fd]
        for fd, (mask, end) in wanted.items():
            if fd not in registered:
                sel.register(fd, mask, end)
            elif registered[fd] != mask:
                sel.modify(fd, mask, end)
            registered[fd] = mask

    def _timeout(self, now: float) -> float | None:
        deadlines = [d for d in (lane.next_deadline() for lane in self._lanes) if d is not None]
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - now)

    def _read_from(self, end: _End) -> None:
        if end.master is None:
            return
        lane = self._lanes[0] if end.name == "a" else self._lanes[1]
        try:
            data = os.read(end.master, lane.limit)
        except BlockingIOError:
            return
        except OSError as exc:
            data = b""
            log.warning("end %s (%s): %s; unplugging it", end.name, end.path, exc)
        if not data:
            # Only possible if our own slave fd was hung up (e.g. by vhangup()).
            self._do_unplug(end)
            return
        if wire_enabled():  # -v: each chunk as it crosses, like socat -v
            log_bytes(f"{end.name}->{'b' if end.name == 'a' else 'a'}", data)
        with self._lock:
            lane.feed(data, time.monotonic())


_SPEEDS = {
    getattr(termios, f"B{n}"): n
    for n in (
        50,
        75,
        110,
        134,
        150,
        200,
        300,
        600,
        1200,
        1800,
        2400,
        4800,
        9600,
        19200,
        38400,
        57600,
        115200,
        230400,
        460800,
        500000,
        576000,
        921600,
        1000000,
    )
    if hasattr(termios, f"B{n}")
}


def _termios_speed(end: _End) -> int | None:
    """The output speed set on ``end``'s pty (shared by every fd of it, ours included)."""
    fd = end.slave
    if fd is None:
        return None
    try:
        code = termios.tcgetattr(fd)[5]
    except (termios.error, OSError):
        return None
    return _SPEEDS.get(code)


def _tight_timers() -> None:
    """Ask Linux to wake this thread on time (timer slack 1 µs instead of 50 µs).

    Best effort: elsewhere, or without ctypes, sleeps are simply a little late.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(29, 1000, 0, 0, 0)  # PR_SET_TIMERSLACK, in nanoseconds
    except (OSError, AttributeError):
        pass


def _check_path(path: str) -> None:
    """A link may go where nothing is, or replace an old link to a pty (ours, earlier)."""
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise ConfigError(f"cannot create {path}: directory {directory} does not exist")
    if os.path.lexists(path) and not _is_pty_link(path):
        raise ConfigError(
            f"cannot create {path}: it exists and is not a link to a pseudo-terminal; "
            "remove it or choose another path"
        )


def _is_pty_link(path: str) -> bool:
    return os.path.islink(path) and os.readlink(path).startswith("/dev/pts/")


def _publish(device: str, path: str) -> None:
    """Point ``path`` at ``device`` atomically (a program never sees it half made)."""
    tmp = f"{path}.vpair-{os.getpid()}-{threading.get_ident()}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    try:
        os.symlink(device, tmp)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ConfigError(f"cannot create {path}: {exc.strerror or exc}") from None


def _unpublish(device: str, path: str) -> None:
    """Remove ``path`` if it is still our link (never someone else's file)."""
    with contextlib.suppress(OSError):
        if os.readlink(path) == device:
            os.unlink(path)
