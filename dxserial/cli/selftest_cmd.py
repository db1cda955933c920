"""``dxserial selftest``: check a port with a loopback plug or a null-modem cable to another."""

from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Any

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import configure_logging
from dxserial.cli.options import parameters
from dxserial.errors import DxSerialError
from dxserial.host.selftest import (
    SelftestOptions,
    format_report,
    judge,
    report_dict,
    run_selftest,
)
from dxserial.line_settings import SERIAL_LINE
from dxserial.setting import Setting, checked
from dxserial.transports.serial import SerialSettings

_OPTIONS = SelftestOptions()

#: Every setting of ``dxserial selftest``, in the order of its --help; the serial line's are
#: :mod:`dxserial.line_settings`', the others' defaults :class:`SelftestOptions`'.
SETTINGS: tuple[Setting, ...] = (
    Setting("port", None, "Port to test: a device (/dev/ttyUSB0), a vpair end, "
            "socket://HOST:PORT or dosbox://HOST:PORT.  Without --peer its far end must echo: a "
            "loopback plug (TX joined to RX) or a program that sends every byte back.",
            argument=True),
    Setting("peer", None, "Second port at the other end of a null-modem cable: selftest writes "
            "on PORT, echoes back from PORT2 and reads on PORT, so both directions are tested.",
            metavar="PORT2"),
    *(dataclasses.replace(one, panel=None) for one in SERIAL_LINE[:6]),
    Setting("count", _OPTIONS.count, "Pattern bytes in all: 256 byte values, 256 of DXP "
            "messages, the rest in one burst (below 768 the three share it).", kind=int,
            show_default=True),
    Setting("samples", _OPTIONS.samples, "Round-trip measurements, one character at a time.",
            kind=int, show_default=True),
    Setting("timeout", _OPTIONS.timeout, "Seconds to wait for the first echo before saying 'no "
            "echo'.", kind=float, show_default=True),
    Setting("max_rtt", _OPTIONS.max_rtt_ms, "Fail when the median round trip is slower than MS "
            "milliseconds (default: a slow line is only a warning).", kind=float, metavar="MS"),
    Setting("as_json", False, "One JSON object on stdout, for scripts.", kind=bool,
            flags=("--json",), show_default=True),
    Setting("verbose", 0, "Log (-vv: debug).", kind=int, flags=("--verbose", "-v"), count=True,
            show_default=True),
)


def selftest_command(**given: Any) -> None:
    """Check a serial line before a match: every byte, the round trip per character, the
    modem lines, and a verdict saying what to fix.

    Exit status 0 when the line is fit for DXP, 1 when it is not (the reason is the last
    line), 2 for a usage error.
    """
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    port, as_json = values["port"], values["as_json"]
    configure_logging(values["verbose"], quiet=values["verbose"] == 0)
    try:
        settings = SerialSettings(
            baudrate=values["baud"],
            **{one.key: values[one.key] for one in SERIAL_LINE[1:6]},
        )
        options = SelftestOptions(count=values["count"], samples=values["samples"],
                                  timeout=values["timeout"], max_rtt_ms=values["max_rtt"])
        report = runtime.run(run_selftest(port, settings, peer=values["peer"], options=options))
    except DxSerialError as exc:
        if not as_json:
            raise
        typer.echo(json.dumps({"ok": False, "verdict": f"FAIL: {exc}", "port": port}))
        raise typer.Exit(1) from None
    verdict = judge(report)
    if as_json:
        typer.echo(json.dumps(report_dict(report, verdict)))
    else:
        for line in format_report(report, verdict):
            typer.echo(line)
    raise typer.Exit(0 if verdict.ok else 1)


selftest_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("selftest")(selftest_command)
