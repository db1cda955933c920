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
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from types import TracebackType

from dxserial.errors import ConfigError, PortError
from dxserial.sim.lane import DirectionStats, Lane
from dxserial.sim.ptyend import End, PtyEnd, check_path, termios_speed
from dxserial.wirelog import enabled as wire_enabled
from dxserial.wirelog import log_bytes

log = logging.getLogger("dxserial.sim.vpair")

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
class PairStats:
    """Both directions, named by where bytes go."""

    a_to_b: DirectionStats
    b_to_a: DirectionStats

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {"a_to_b": asdict(self.a_to_b), "b_to_a": asdict(self.b_to_a)}


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
        self._ends = {"a": PtyEnd("a", self.path_a), "b": PtyEnd("b", self.path_b)}
        a, b = self._ends["a"], self._ends["b"]
        self._lanes = (
            Lane(a, b, lambda: (self.speed("a"), self.speed("b")), drop, corrupt, self.seed),
            Lane(b, a, lambda: (self.speed("b"), self.speed("a")), drop, corrupt, self.seed),
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
            check_path(end.path)
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

    def noise(self, end: End, data: bytes) -> None:
        """``data`` reaches ``end`` as if the line carried it (a PC powering up, a cable
        plugged in): paced and faulted like any byte on its way there."""
        lane = self._lanes[1] if end == "a" else self._lanes[0]
        payload = bytes(data)

        def inject() -> None:
            with self._lock:
                lane.feed(payload, time.monotonic())

        self._call(inject)

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
        return termios_speed(self._end(end))

    @property
    def stats(self) -> PairStats:
        """Bytes relayed, dropped, corrupted and lost so far, per direction."""
        with self._lock:
            return PairStats(self._lanes[0].stats(), self._lanes[1].stats())

    # ------------------------------------------------------------------ relay thread

    def _end(self, end: End) -> PtyEnd:
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

    def _do_unplug(self, end: PtyEnd) -> None:
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

    def _do_replug(self, end: PtyEnd) -> None:
        if end.plugged:
            return
        if os.path.lexists(end.path):
            check_path(end.path)
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
        wanted: dict[int, tuple[int, PtyEnd]] = {}
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

    def _read_from(self, end: PtyEnd) -> None:
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


__all__ = ["PairStats", "VirtualPair"]
