"""The line self-test's report: lines for a person and a dictionary for --json."""

from __future__ import annotations

from typing import Any

from dxserial.host.selftest.checks import (
    Lines,
    SelftestReport,
    Verdict,
    _ms,
    bits_per_char,
)

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
