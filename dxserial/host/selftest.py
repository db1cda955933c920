"""``dxserial selftest``: check a serial line before a match, and say what to fix.

The far end must send back every byte: a loopback plug (TX joined to RX), or a null-modem
cable to a second port that selftest opens itself (``peer``) and echoes from, which tests
both directions of the cable.  Steps:

1. probe: eight 0x55 bytes; nothing back within ``timeout`` is "no echo";
2. round trip: ``samples`` single DXP characters, each sent only after the previous one
   came back.  That is the NULMODEM handshake's price per character;
3. patterns, each checked byte for byte (missing, wrong, extra, first mismatch):
   all 256 byte values (DXP needs only 0x01..0x7F, but the full range exposes 7-bit and
   parity mistakes), NULMODEM-framed DXP messages, both written in small paced pieces;
   then a burst of random bytes in one write, which exposes overruns.

Physical minimum per character: start + data + parity + stop bits at the baud rate.  A
loopback plug brings a character back in one character time (the UART receives what it
sends while sending it); through a peer that echoes, as a NULMODEM receiver does, it
crosses the line twice, so two character times.

The checks (:func:`compare`, :func:`judge`) are pure functions; :func:`run_selftest` does
the I/O through the same transports as the bridge, so it also works on ``socket://`` and
``dosbox://`` ports.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import errno
import logging
import math
import os
import random
import statistics
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dxserial.errors import ConfigError, DxSerialError, PortError
from dxserial.transports.base import ByteLink, os_reason
from dxserial.transports.dosbox import DosboxLink
from dxserial.transports.serial import SerialSettings, open_serial

log = logging.getLogger("dxserial.host.selftest")

#: Probe: 0x55 alternates 0 and 1 bits, the classic pattern for checking a line.
PROBE = b"\x55" * 8
#: Paced patterns go out in pieces of this size, each waited for before the next.
PACE = 32
#: Round-trip samples cycle through these (DXP characters, as the handshake sends them).
SAMPLE_CHARS = b"\x02M0123456789WZe\x03"
#: Bytes the driver swallows when XON/XOFF flow control is on.
FLOW_BYTES = frozenset((0x11, 0x13))
#: Characters in a MOVE message plus S and E: what one move costs in round trips.
MOVE_ROUND_TRIPS = 13
#: Cap on what selftest keeps from a port (a flood of garbage must not eat memory).
MAX_KEPT = 1 << 20


def _name(text: str) -> bytes:
    return text.ljust(32).encode()


#: A few messages framed as NULMODEM sends them (S=0x02, E=0x03, dxserial's defaults).
DXP_SAMPLE = b"".join(
    b"\x02" + message + b"\x03"
    for message in (
        b"R01" + _name("dxserial selftest") + b"Z010075A",
        b"A" + _name("dxserial selftest") + b"0",
        b"M0012321800",
        b"M0005171201",
        b"M0014262117011206",
        b"Cgood luck, have fun",
        b"B001W",
        b"K1",
        b"E20",
    )
)


@dataclass(frozen=True)
class SelftestOptions:
    """How much to send and how long to wait.

    ``count``: pattern bytes in total (all byte values 256, DXP 256, the rest a burst;
    below 768 the three share it).  ``samples``: round-trip measurements.  ``timeout``:
    seconds to wait for the first echo.  ``max_rtt_ms``: fail when the median round trip
    is slower (default: a slow line is a warning only).
    """

    count: int = 2560
    samples: int = 20
    timeout: float = 2.0
    max_rtt_ms: float | None = None

    def __post_init__(self) -> None:
        if self.count < 3:
            raise ConfigError(f"--count must be at least 3, not {self.count}")
        if self.samples < 1:
            raise ConfigError(f"--samples must be at least 1, not {self.samples}")
        if not self.timeout > 0:
            raise ConfigError(f"--timeout must be positive, not {self.timeout}")
        if self.max_rtt_ms is not None and not self.max_rtt_ms > 0:
            raise ConfigError(f"--max-rtt must be positive, not {self.max_rtt_ms}")


# ---------------------------------------------------------------------- pure checks


def bits_per_char(settings: SerialSettings) -> float:
    """Start bit + data bits + parity bit + stop bits."""
    return 1 + settings.bytesize + (0 if settings.parity == "N" else 1) + settings.stopbits


def char_time(settings: SerialSettings) -> float:
    """Seconds one character occupies the line."""
    return bits_per_char(settings) / settings.baudrate


@dataclass
class PatternResult:
    """One pattern compared byte for byte with what came back.

    ``wrong`` bytes arrived in place of a sent byte but differ; ``missing`` never came;
    ``extra`` came but were never sent.  ``first_mismatch`` is the offset in the pattern
    where the two first differ.  The ``bit7_*`` and ``flow_*`` counts feed the verdict.
    """

    name: str
    sent: int
    received: int
    missing: int = 0
    wrong: int = 0
    extra: int = 0
    first_mismatch: int | None = None
    high_sent: int = 0  # sent bytes with bit 7 set
    bit7_cleared: int = 0  # wrong bytes equal to the sent byte without bit 7
    bit7_set: int = 0  # wrong bytes equal to the sent byte with bit 7 added
    flow_sent: int = 0  # 0x11/0x13 sent
    flow_missing: int = 0  # 0x11/0x13 that never came back

    @property
    def errors(self) -> int:
        return self.missing + self.wrong + self.extra

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sent": self.sent,
            "received": self.received,
            "missing": self.missing,
            "wrong": self.wrong,
            "extra": self.extra,
            "first_mismatch": self.first_mismatch,
        }


def compare(name: str, sent: bytes, received: bytes) -> PatternResult:
    """Align what came back with what was sent and count the differences.

    Equal lengths with mostly matching positions are compared position by position
    (that is what bit errors look like); otherwise the two are aligned with difflib, so a
    lost or an extra byte counts once instead of shifting everything after it.
    """
    result = PatternResult(name, len(sent), len(received))
    result.high_sent = sum(1 for b in sent if b & 0x80)
    result.flow_sent = sum(1 for b in sent if b in FLOW_BYTES)
    if sent == received:
        return result
    pairs: list[tuple[int, int]] = []
    lost: list[int] = []
    positional = len(sent) == len(received) and (
        sum(a == b for a, b in zip(sent, received, strict=True)) * 2 >= len(sent)
    )
    if positional:
        pairs = [(a, b) for a, b in zip(sent, received, strict=True) if a != b]
    else:
        matcher = difflib.SequenceMatcher(None, sent, received, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            k = min(i2 - i1, j2 - j1)
            pairs += zip(sent[i1 : i1 + k], received[j1 : j1 + k], strict=True)
            lost += sent[i1 + k : i2]
            result.extra += max(0, (j2 - j1) - (i2 - i1))
    result.wrong = len(pairs)
    result.missing = len(lost)
    result.flow_missing = sum(1 for b in lost if b in FLOW_BYTES)
    result.bit7_cleared = sum(1 for a, b in pairs if a & 0x80 and b == a & 0x7F)
    result.bit7_set = sum(1 for a, b in pairs if not a & 0x80 and b == a | 0x80)
    result.first_mismatch = next(
        (i for i, (a, b) in enumerate(zip(sent, received, strict=False)) if a != b),
        min(len(sent), len(received)),
    )
    return result


@dataclass
class RoundTrip:
    """Per-character round trips, in seconds, and what went wrong with the samples."""

    sent: int = 0
    times: list[float] = field(default_factory=list)
    missing: int = 0
    wrong: int = 0
    extra: int = 0

    @property
    def errors(self) -> int:
        return self.missing + self.wrong + self.extra

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def p90(self) -> float | None:
        if not self.times:
            return None
        ordered = sorted(self.times)
        return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]

    def as_dict(self) -> dict[str, Any]:
        def ms(value: float | None) -> float | None:
            return None if value is None else round(value * 1000, 3)

        return {
            "samples": self.sent,
            "echoed": len(self.times),
            "missing": self.missing,
            "wrong": self.wrong,
            "extra": self.extra,
            "median_ms": ms(self.median),
            "p90_ms": ms(self.p90),
            "min_ms": ms(min(self.times, default=None)),
            "max_ms": ms(max(self.times, default=None)),
        }


#: Modem input lines of one port, or why they cannot be read.
Lines = dict[str, bool] | str


@dataclass
class SelftestReport:
    """Everything measured; :func:`judge` turns it into a verdict."""

    port: str
    settings: SerialSettings
    peer: str | None = None
    timeout: float = 2.0
    max_rtt_ms: float | None = None
    probe_sent: int = 0
    probe_back: bytes = b""
    peer_received: int | None = None  # bytes that reached PORT2 (peer mode)
    round_trip: RoundTrip = field(default_factory=RoundTrip)
    patterns: list[PatternResult] = field(default_factory=list)
    lines: dict[str, Lines] = field(default_factory=dict)
    failure: str | None = None  # the test could not finish: port lost, writes stalled
    latency_timer_ms: int | None = None  # FTDI adapters: from sysfs
    elapsed: float = 0.0

    @property
    def char_time(self) -> float:
        return char_time(self.settings)

    @property
    def physical_min(self) -> float:
        """One character time through a loopback plug; two through an echoing peer."""
        return self.char_time * (2 if self.peer else 1)

    @property
    def no_echo(self) -> bool:
        return self.failure is None and self.probe_sent > 0 and not self.probe_back


@dataclass(frozen=True)
class Verdict:
    """``ok`` decides the exit code; ``summary`` is the last line; ``notes`` go before it."""

    ok: bool
    summary: str
    notes: tuple[str, ...] = ()


def _ms(seconds: float) -> str:
    value = seconds * 1000
    return f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms"


def _first(report: SelftestReport, kind: str) -> str:
    """Where the first pattern with errors of ``kind`` ("wrong", "missing", "extra") broke."""
    for result in report.patterns:
        if getattr(result, kind) and result.first_mismatch is not None:
            return f"first at byte {result.first_mismatch} of {result.name}"
    return "in the round-trip samples"


def judge(report: SelftestReport) -> Verdict:
    """Say in one line what is wrong (or that all is well) and what to do about it."""
    notes = _notes(report)
    rt = report.round_trip
    where = report.peer or report.port
    if report.failure is not None:
        return Verdict(False, f"FAIL: {report.failure}", notes)
    if report.no_echo:
        return Verdict(False, "FAIL: " + _no_echo(report), notes)
    sent = sum(p.sent for p in report.patterns) + rt.sent
    missing = sum(p.missing for p in report.patterns) + rt.missing
    wrong = sum(p.wrong for p in report.patterns) + rt.wrong
    extra = sum(p.extra for p in report.patterns) + rt.extra
    errors = missing + wrong + extra
    high = sum(p.high_sent for p in report.patterns)
    cleared = sum(p.bit7_cleared for p in report.patterns)
    added = sum(p.bit7_set for p in report.patterns)
    flow_sent = sum(p.flow_sent for p in report.patterns)
    flow_missing = sum(p.flow_missing for p in report.patterns)
    burst_missing = sum(p.missing for p in report.patterns if p.name == "burst")
    if errors:
        total = f"{errors} errors in {sent} bytes: {missing} missing, {wrong} wrong, {extra} extra"
        if high and cleared >= 0.9 * high and cleared >= 0.9 * wrong:
            text = (
                f"every byte with bit 7 set came back with bit 7 cleared ({cleared} of "
                f"{high}): 7 data bits or parity set on one side; DXP needs 8N1"
            )
        elif added and added >= 0.9 * wrong:
            text = (
                f"{added} bytes came back with bit 7 set: the two sides disagree on data "
                "bits or parity (mark parity or 7 data bits on one side?); DXP needs 8N1"
            )
        elif flow_sent and flow_missing == flow_sent and missing == flow_missing and not wrong:
            text = (
                "bytes 0x11 and 0x13 never come back: XON/XOFF flow control is on "
                f"somewhere (the far side, or a driver on {where}); turn it off"
            )
        elif burst_missing and burst_missing == missing and not wrong:
            text = (
                f"overrun: {burst_missing} bytes of the {_burst_size(report)}-byte burst "
                "were lost while paced bytes all came back: the receiver cannot keep up; "
                "use a lower baud rate, or --rtscts with a cable that has RTS/CTS"
            )
        elif wrong + missing > 0.5 * sent:
            text = (
                f"most bytes come back wrong or not at all ({wrong} wrong, {missing} missing "
                f"of {sent}): the two ends disagree on baud rate, data bits, parity or stop "
                f"bits (this side: {report.settings}), or the adapter is faulty"
            )
        elif wrong >= missing and wrong >= extra:
            text = (
                f"{wrong} of {sent} bytes arrived corrupted ({_first(report, 'wrong')}): "
                "bit errors from noise on the line; check the cable, its ground and its "
                "length, or try a lower baud rate"
            )
        elif missing >= extra:
            text = (
                f"{missing} of {sent} bytes were lost ({_first(report, 'missing')}): "
                "a loose contact, a flaky adapter or overruns; try a lower baud rate"
            )
        else:
            text = (
                f"{extra} extra bytes came back that were never sent "
                f"({_first(report, 'extra')}): something else writes on the line (a getty "
                "or modem manager on the port? local echo at the far end?)"
            )
        return Verdict(False, f"FAIL: {text}", (*notes, total))
    median = rt.median
    if median is None:  # only when nothing was measured (samples were all lost)
        return Verdict(False, "FAIL: no round trip could be measured", notes)
    rtt = (
        f"round trip median {_ms(median)} at {report.settings.baudrate} baud "
        f"(physical minimum {_ms(report.physical_min)})"
    )
    pattern_bytes = sum(p.sent for p in report.patterns)
    counted = f"{pattern_bytes} bytes + {rt.sent} round trips, 0 errors"
    if report.max_rtt_ms is not None and median * 1000 > report.max_rtt_ms:
        return Verdict(
            False,
            f"FAIL: {rtt} is slower than --max-rtt {report.max_rtt_ms:g} ms: "
            + _latency_advice(report),
            notes,
        )
    if _slow(report, median):
        return Verdict(
            True,
            f"OK but slow: {counted}, {rtt}: {_latency_advice(report)}",
            notes,
        )
    return Verdict(True, f"OK: {counted}, {rtt}", notes)


def _burst_size(report: SelftestReport) -> int:
    return next((p.sent for p in report.patterns if p.name == "burst"), 0)


def _no_echo(report: SelftestReport) -> str:
    wait = f"{report.timeout:g} s"
    if report.peer is not None:
        if not report.peer_received:
            return (
                f"no echo: nothing {report.port} sent reached {report.peer} within {wait}: "
                "TX/RX not crossed (a straight cable where a null-modem one is needed), "
                "wrong port, unplugged, or a baud rate the adapters do not support"
            )
        return (
            f"no echo: {report.peer} received {report.peer_received} bytes but its echo "
            f"never reached {report.port}: the {report.peer} -> {report.port} direction "
            "of the cable is broken"
        )
    return (
        f"no echo within {wait}: TX/RX not crossed or not joined (no loopback plug, or "
        "nothing echoing at the far end), wrong port, or wrong baud"
    )


def _slow(report: SelftestReport, median: float) -> bool:
    """Slower than two line crossings twice over plus 4 ms: an adapter's latency, not the line."""
    return median > 4 * report.char_time + 0.004


def _latency_advice(report: SelftestReport) -> str:
    timer = report.latency_timer_ms
    if timer is not None and timer > 1:
        return (
            f"this FTDI adapter's latency timer is {timer} ms; set it to 1 ms (see dxserial udev)"
        )
    return "set the FTDI latency timer to 1 ms (see dxserial udev), or use a faster adapter"


def _notes(report: SelftestReport) -> tuple[str, ...]:
    notes: list[str] = []
    median = report.round_trip.median
    if median is not None:
        if median < report.physical_min:
            notes.append(
                f"round trip is shorter than {report.settings.baudrate} baud allows: a "
                "virtual port (pty, socket) that does not pace the line"
            )
        notes.append(
            f"NULMODEM cost: a MOVE (11 characters + S + E) takes about {MOVE_ROUND_TRIPS} "
            f"round trips = {_ms(MOVE_ROUND_TRIPS * median)}"
        )
    if report.settings.rtscts:
        for port, lines in report.lines.items():
            if isinstance(lines, dict) and lines.get("cts") is False:
                notes.append(
                    f"{port}: CTS is off and --rtscts is on: the port sends nothing until "
                    "the other side raises RTS (check the cable's handshake wires)"
                )
    return tuple(notes)


# ---------------------------------------------------------------------- patterns


def build_patterns(count: int, settings: SerialSettings) -> list[tuple[str, bytes, bool]]:
    """``(name, bytes, paced)`` for the three patterns, ``count`` bytes in all.

    Bytes the line cannot carry at these settings are left out or masked: 0x11/0x13 with
    XON/XOFF on, bit 7 (and up) with fewer than 8 data bits.
    """
    if count >= 768:
        n_all = n_dxp = 256
    else:
        n_all = n_dxp = count // 3
    n_burst = count - n_all - n_dxp
    all_bytes = bytes((i * 256) // n_all for i in range(n_all))
    dxp = (DXP_SAMPLE * (n_dxp // len(DXP_SAMPLE) + 1))[:n_dxp]
    burst = random.Random(0xD8).randbytes(n_burst)
    patterns = [("all-bytes", all_bytes, True), ("dxp", dxp, True), ("burst", burst, False)]
    return [(name, _fit(data, settings), paced) for name, data, paced in patterns]


def _fit(data: bytes, settings: SerialSettings) -> bytes:
    mask = (1 << settings.bytesize) - 1
    out = bytes(b & mask for b in data)
    if settings.xonxoff:
        out = bytes(b for b in out if b not in FLOW_BYTES)
    return out


# ---------------------------------------------------------------------- I/O


class _Inbox:
    """Everything a link delivers, with the arrival time of each chunk."""

    def __init__(self, link: ByteLink) -> None:
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


async def _write(link: ByteLink, data: bytes, seconds: float) -> None:
    try:
        await asyncio.wait_for(link.write(data), seconds)
    except TimeoutError:
        raise _Stalled(
            f"writes to {link.name} do not go out ({len(data)} bytes stuck for {seconds:g} s): "
            "flow control is holding them (--rtscts with CTS off? an XOFF received?)"
        ) from None


async def _echo(link: ByteLink, counter: list[int]) -> None:
    """PORT2 in peer mode: send every byte straight back, counting what arrived."""
    while True:
        chunk = await link.read()
        if not chunk:
            return
        counter[0] += len(chunk)
        await link.write(chunk)


def modem_lines(link: ByteLink) -> Lines:
    """CTS/DSR/RI/CD where the port has them; otherwise why not."""
    if isinstance(link, DosboxLink):
        if link.transparent:
            return "not available (DOSBox transparent mode carries no line states)"
        if link.peer_lines is None:
            return "not reported by DOSBox"
        return {"cts": link.peer_lines.rts, "dsr": link.peer_lines.dtr}
    # SerialLink keeps its pyserial port private; reading four status bits is harmless.
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
    other: ByteLink | None = None
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
    report: SelftestReport, link: ByteLink, inbox: _Inbox, options: SelftestOptions
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


# ---------------------------------------------------------------------- output


def describe_lines(lines: Lines) -> str:
    if isinstance(lines, str):
        return lines
    return ", ".join(f"{name.upper()} {'on' if on else 'off'}" for name, on in lines.items())


def format_report(report: SelftestReport, verdict: Verdict) -> list[str]:
    """Lines for a person; the verdict is last."""
    s = report.settings
    how = (
        f"{report.port} -> {report.peer} (echoed back by {report.peer})"
        if report.peer
        else f"{report.port} (loopback: the far end echoes)"
    )
    out = [f"selftest {how} at {s}, {bits_per_char(s):g} bits per character"]
    for port, lines in report.lines.items():
        out.append(f"modem lines {port}: {describe_lines(lines)}")
    if report.probe_sent:
        out.append(f"probe: {report.probe_sent} sent, {len(report.probe_back)} came back")
    if report.peer_received is not None:
        out.append(f"{report.peer} received {report.peer_received} bytes")
    rt = report.round_trip
    if rt.sent:
        minimum = f"physical minimum {_ms(report.physical_min)}"
        if not report.peer:
            minimum += f" for a loopback plug, {_ms(2 * report.char_time)} through an echoing peer"
        if rt.times:
            median, p90 = rt.median or 0.0, rt.p90 or 0.0
            out.append(
                f"round trip: {len(rt.times)} of {rt.sent} samples, median {_ms(median)}, "
                f"p90 {_ms(p90)}, min {_ms(min(rt.times))}, max {_ms(max(rt.times))} "
                f"({minimum})"
            )
        if rt.errors:
            out.append(
                f"round trip errors: {rt.missing} missing, {rt.wrong} wrong, {rt.extra} extra"
            )
    for p in report.patterns:
        line = (
            f"{p.name}: {p.sent} sent, {p.received} back, {p.missing} missing, "
            f"{p.wrong} wrong, {p.extra} extra"
        )
        if p.first_mismatch is not None:
            line += f"; first mismatch at byte {p.first_mismatch}"
        out.append(line)
    out += [f"note: {note}" for note in verdict.notes]
    out.append(verdict.summary)
    return out


def report_dict(report: SelftestReport, verdict: Verdict) -> dict[str, Any]:
    """The same for scripts (``--json``)."""
    return {
        "ok": verdict.ok,
        "verdict": verdict.summary,
        "notes": list(verdict.notes),
        "port": report.port,
        "peer": report.peer,
        "mode": "peer" if report.peer else "loopback",
        "settings": str(report.settings),
        "baud": report.settings.baudrate,
        "bits_per_char": bits_per_char(report.settings),
        "physical_min_ms": round(report.physical_min * 1000, 3),
        "probe": {"sent": report.probe_sent, "back": len(report.probe_back)},
        "peer_received": report.peer_received,
        "round_trip": report.round_trip.as_dict(),
        "patterns": [p.as_dict() for p in report.patterns],
        "modem_lines": report.lines,
        "latency_timer_ms": report.latency_timer_ms,
        "failure": report.failure,
        "elapsed_s": round(report.elapsed, 3),
    }
