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

from dxserial.host.selftest.checks import (
    DXP_SAMPLE,
    FLOW_BYTES,
    MAX_KEPT,
    MOVE_ROUND_TRIPS,
    PACE,
    PROBE,
    SAMPLE_CHARS,
    Lines,
    PatternResult,
    RoundTrip,
    SelftestOptions,
    SelftestReport,
    Verdict,
    bits_per_char,
    build_patterns,
    char_time,
    compare,
    judge,
)
from dxserial.host.selftest.report import (
    describe_lines,
    format_report,
    report_dict,
)
from dxserial.host.selftest.runner import (
    latency_timer,
    modem_lines,
    run_selftest,
)

__all__ = [
    "DXP_SAMPLE",
    "FLOW_BYTES",
    "MAX_KEPT",
    "MOVE_ROUND_TRIPS",
    "PACE",
    "PROBE",
    "SAMPLE_CHARS",
    "Lines",
    "PatternResult",
    "RoundTrip",
    "SelftestOptions",
    "SelftestReport",
    "Verdict",
    "bits_per_char",
    "build_patterns",
    "char_time",
    "compare",
    "describe_lines",
    "format_report",
    "judge",
    "latency_timer",
    "modem_lines",
    "report_dict",
    "run_selftest",
]
