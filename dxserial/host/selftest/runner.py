"""The line self-test's I/O: probe, round trips and patterns through the transports."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
from collections import deque
from collections.abc import Callable

from dxserial.errors import ConfigError, DxSerialError, PortError
from dxserial.host.selftest.checks import (
    MAX_KEPT,
    PACE,
    PROBE,
    SAMPLE_CHARS,
    Lines,
    SelftestOptions,
    SelftestReport,
    _fit,
    build_patterns,
    compare,
)
from dxserial.transports.base import Port, os_reason
from dxserial.transports.dosbox import DosboxPort
from dxserial.transports.openers import open_serial
from dxserial.transports.serial import SerialSettings

log = logging.getLogger("dxserial.host.selftest")

# ---------------------------------------------------------------------- I/O


class _Inbox:
    """Everything a link delivers, with the arrival time of each chunk."""

    def __init__(self, link: Port) -> None:
        self.link = link
        self.data = bytearray()
        self.dropped = 0
        self.error: BaseException | None = None
        self.stamps: deque[tuple[int, float]] = deque(maxlen=256)  # (length before, time)
        self._changed = asyncio.Event()
        self._loop = asyncio.get_running_loop()

    async def pump(self) -> None:
        try:
            while True:
                chunk = await self.link.read()
                if not chunk:
                    raise PortError(f"{self.link.name}: closed")
                now = self._loop.time()
                self.stamps.append((len(self.data), now))
                room = MAX_KEPT - len(self.data)
                self.data += chunk[:room]
                self.dropped += max(0, len(chunk) - room)
                self._changed.set()
        except (DxSerialError, OSError) as exc:
            self.error = exc
            self._changed.set()

    def arrival(self, index: int) -> float | None:
        """When the byte at ``index`` arrived (its chunk's time)."""
        for start, at in reversed(self.stamps):
            if start <= index:
                return at
        return None

    async def wait(self, ready: Callable[[], bool], deadline: float) -> bool:
        """Until ``ready()`` or ``deadline``; raises the link's error if it broke."""
        while not ready():
            if self.error is not None:
                raise self.error
            left = deadline - self._loop.time()
            if left <= 0:
                return False
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)
        return True

    def longer_than(self, size: int) -> Callable[[], bool]:
        """A condition for :meth:`wait`: more than ``size`` bytes are here."""
        return lambda: len(self.data) > size

    async def settle(self, want: int, gap: float, deadline: float) -> None:
        """Until ``want`` bytes are here, or none came for ``gap`` seconds, or ``deadline``."""
        while len(self.data) < want:
            now = self._loop.time()
            if now >= deadline:
                return
            if not await self.wait(self.longer_than(len(self.data)), min(deadline, now + gap)):
                return

    async def quiet(self, gap: float, deadline: float) -> None:
        """Until nothing has come for ``gap`` seconds (or ``deadline``)."""
        while self._loop.time() < deadline:
            until = min(deadline, self._loop.time() + gap)
            if not await self.wait(self.longer_than(len(self.data)), until):
                return


class _Stalled(Exception):
    """A write did not complete in time (flow control holding it, or a wedged driver)."""


async def _write(link: Port, data: bytes, seconds: float) -> None:
    try:
        await asyncio.wait_for(link.write(data), seconds)
    except TimeoutError:
        raise _Stalled(
            f"writes to {link.name} do not go out ({len(data)} bytes stuck for {seconds:g} s): "
            "flow control is holding them (--rtscts with CTS off? an XOFF received?)"
        ) from None


async def _echo(link: Port, counter: list[int]) -> None:
    """PORT2 in peer mode: send every byte straight back, counting what arrived."""
    while True:
        chunk = await link.read()
        if not chunk:
            return
        counter[0] += len(chunk)
        await link.write(chunk)


def modem_lines(link: Port) -> Lines:
    """CTS/DSR/RI/CD where the port has them; otherwise why not."""
    if isinstance(link, DosboxPort):
        if link.transparent:
            return "not available (DOSBox transparent mode carries no line states)"
        if link.peer_lines is None:
            return "not reported by DOSBox"
        return {"cts": link.peer_lines.rts, "dsr": link.peer_lines.dtr}
    # SerialPort keeps its pyserial port private; reading four status bits is harmless.
    ser = getattr(link, "_serial", None)
    if ser is None:
        return "not available (a socket has no modem lines)"
    try:
        return {"cts": bool(ser.cts), "dsr": bool(ser.dsr), "ri": bool(ser.ri), "cd": bool(ser.cd)}
    except OSError as exc:
        if getattr(exc, "errno", None) in (errno.ENOTTY, errno.EINVAL):
            return "not available (a pseudo-terminal or driver without modem lines)"
        return f"not available ({os_reason(exc)})"


def latency_timer(port: str) -> int | None:
    """An FTDI adapter's latency timer in ms (Linux sysfs), or ``None``."""
    if "://" in port:
        return None
    name = os.path.basename(os.path.realpath(port))
    path = f"/sys/bus/usb-serial/devices/{name}/latency_timer"
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


async def run_selftest(
    port: str,
    settings: SerialSettings | None = None,
    *,
    peer: str | None = None,
    options: SelftestOptions | None = None,
) -> SelftestReport:
    """Open ``port`` (and ``peer``), run every check, close them; never raises for a bad
    line (that is in the report), only for a port that cannot be opened."""
    settings = settings or SerialSettings()
    options = options or SelftestOptions()
    if peer is not None and os.path.realpath(peer) == os.path.realpath(port):
        raise ConfigError(f"--peer must be another port than {port}")
    report = SelftestReport(
        port, settings, peer=peer, timeout=options.timeout, max_rtt_ms=options.max_rtt_ms
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    link = await open_serial(port, settings)
    other: Port | None = None
    tasks: list[asyncio.Task[None]] = []
    try:
        if peer is not None:
            other = await open_serial(peer, settings)
        inbox = _Inbox(link)
        tasks.append(asyncio.create_task(inbox.pump(), name="selftest-read"))
        counter = [0]
        if other is not None:
            tasks.append(asyncio.create_task(_echo(other, counter), name="selftest-echo"))
        try:
            await _exercise(report, link, inbox, options)
        except _Stalled as exc:
            report.failure = str(exc)
        except (DxSerialError, OSError) as exc:
            report.failure = f"port lost during the test: {exc}"
        if other is not None:
            report.peer_received = counter[0]
            echo = tasks[-1]
            if echo.done() and not echo.cancelled() and echo.exception() is not None:
                report.failure = report.failure or f"{peer}: {echo.exception()}"
        if inbox.dropped:
            report.failure = report.failure or (
                f"more than {MAX_KEPT} bytes came back for far fewer sent: "
                "something floods the line"
            )
        report.lines[port] = modem_lines(link)
        if other is not None and peer is not None:
            report.lines[peer] = modem_lines(other)
        report.latency_timer_ms = latency_timer(port)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for each in (link, other):
            if each is not None:
                await each.close()
    report.elapsed = loop.time() - started
    return report


async def _exercise(
    report: SelftestReport, link: Port, inbox: _Inbox, options: SelftestOptions
) -> None:
    loop = asyncio.get_running_loop()
    ct = report.char_time
    gap = max(0.25, 30 * ct)  # silence that means "nothing more is coming"

    def write_time(n: int) -> float:
        return options.timeout + 3 * n * ct

    # 1. probe
    report.probe_sent = len(PROBE)
    start = len(inbox.data)
    await _write(link, PROBE, write_time(len(PROBE)))
    if not await inbox.wait(inbox.longer_than(start), loop.time() + options.timeout):
        return
    await inbox.settle(start + len(PROBE), gap, loop.time() + write_time(len(PROBE)))
    await inbox.quiet(min(gap, 0.05 + 4 * ct), loop.time() + gap)
    report.probe_back = bytes(inbox.data[start:])

    # 2. round trip, one character at a time
    rt = report.round_trip
    chars = _fit(SAMPLE_CHARS, report.settings) or b"M"
    phase = len(inbox.data)
    for i in range(options.samples):
        char = chars[i % len(chars)]
        base = len(inbox.data)
        t0 = loop.time()
        await _write(link, bytes((char,)), write_time(1))
        rt.sent += 1
        if not await inbox.wait(inbox.longer_than(base), t0 + gap):
            rt.missing += 1
            continue
        arrived = inbox.arrival(base)
        rt.times.append((arrived if arrived is not None else loop.time()) - t0)
        if inbox.data[base] != char:
            rt.wrong += 1
    tail = max(0.05, 4 * ct + 2 * (rt.median or 0.0))
    await inbox.quiet(tail, loop.time() + gap)
    rt.extra = max(0, len(inbox.data) - phase - len(rt.times))

    # 3. patterns
    for name, data, paced in build_patterns(options.count, report.settings):
        start = len(inbox.data)
        pieces = [data[i : i + PACE] for i in range(0, len(data), PACE)] if paced else [data]
        sent = 0
        for piece in pieces:
            await _write(link, piece, write_time(len(piece)))
            sent += len(piece)
            await inbox.settle(start + sent, gap, loop.time() + write_time(len(piece)))
        await inbox.quiet(tail, loop.time() + gap)
        report.patterns.append(compare(name, data, bytes(inbox.data[start:])))
