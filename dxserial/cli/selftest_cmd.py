"""``dxserial selftest``: check a port with a loopback plug or a null-modem cable to another."""

from __future__ import annotations

import json

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import configure_logging
from dxserial.cli.options import (
    baud_option,
    bytesize_option,
    parity_option,
    rtscts_option,
    stopbits_option,
    xonxoff_option,
)
from dxserial.errors import DxSerialError
from dxserial.host.selftest import (
    SelftestOptions,
    format_report,
    judge,
    report_dict,
    run_selftest,
)
from dxserial.transports.serial import SerialSettings


@app.command("selftest")
def selftest_command(
    port: str = typer.Argument(
        ...,
        help="Port to test: a device (/dev/ttyUSB0), a vpair end, socket://HOST:PORT or "
        "dosbox://HOST:PORT.  Without --peer its far end must echo: a loopback plug (TX "
        "joined to RX) or a program that sends every byte back.",
        show_default=False,
    ),
    peer: str | None = typer.Option(
        None,
        "--peer",
        metavar="PORT2",
        help="Second port at the other end of a null-modem cable: selftest writes on PORT, "
        "echoes back from PORT2 and reads on PORT, so both directions are tested.",
        show_default=False,
    ),
    baud: int = baud_option(),
    bytesize: int = bytesize_option(None),
    parity: str = parity_option(None),
    stopbits: float = stopbits_option(None),
    rtscts: bool = rtscts_option(None),
    xonxoff: bool = xonxoff_option(None),
    count: int = typer.Option(
        2560,
        "--count",
        help="Pattern bytes in all: 256 byte values, 256 of DXP messages, the rest in one "
        "burst (below 768 the three share it).",
    ),
    samples: int = typer.Option(
        20, "--samples", help="Round-trip measurements, one character at a time."
    ),
    timeout: float = typer.Option(
        2.0, "--timeout", help="Seconds to wait for the first echo before saying 'no echo'."
    ),
    max_rtt: float | None = typer.Option(
        None,
        "--max-rtt",
        metavar="MS",
        help="Fail when the median round trip is slower than MS milliseconds "
        "(default: a slow line is only a warning).",
        show_default=False,
    ),
    as_json: bool = typer.Option(False, "--json", help="One JSON object on stdout, for scripts."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="Log (-vv: debug)."),
) -> None:
    """Check a serial line before a match: every byte, the round trip per character, the
    modem lines, and a verdict saying what to fix.

    Exit status 0 when the line is fit for DXP, 1 when it is not (the reason is the last
    line), 2 for a usage error.
    """
    configure_logging(verbose, quiet=verbose == 0)
    try:
        settings = SerialSettings(
            baudrate=baud,
            bytesize=bytesize,
            parity=parity.upper(),
            stopbits=stopbits,
            rtscts=rtscts,
            xonxoff=xonxoff,
        )
        options = SelftestOptions(count=count, samples=samples, timeout=timeout, max_rtt_ms=max_rtt)
        report = runtime.run(run_selftest(port, settings, peer=peer, options=options))
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
