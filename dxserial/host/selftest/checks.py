"""The line self-test's pure parts: options, patterns, comparing and judging (no I/O)."""

from __future__ import annotations

import difflib
import logging
import math
import random
import statistics
from dataclasses import dataclass, field
from typing import Any

from dxserial.errors import ConfigError
from dxserial.transports.serial import SerialSettings

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
    if report.failure is not None:
        return Verdict(False, f"FAIL: {report.failure}", notes)
    if report.no_echo:
        return Verdict(False, "FAIL: " + _no_echo(report), notes)
    failed = _errors_verdict(report, notes)
    if failed is not None:
        return failed
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


def _errors_verdict(report: SelftestReport, notes: tuple[str, ...]) -> Verdict | None:
    """The FAIL verdict when bytes went missing, wrong or extra: the likeliest cause first."""
    rt = report.round_trip
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
    if not errors:
        return None
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
            f"somewhere (the far side, or a driver on {report.peer or report.port}); turn it off"
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
