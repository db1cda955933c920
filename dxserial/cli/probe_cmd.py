"""``dxserial probe PORT``: how does the engine on this line speak DXP, and which bridge works."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import typer

from dxserial.cli.app import app
from dxserial.cli.options import parameters
from dxserial.errors import ConfigError
from dxserial.files import problem
from dxserial.host.probe.prober import Finding, Prober, ProbeSettings
from dxserial.host.probe.runner import ProbeRunner
from dxserial.setting import Setting, checked
from dxserial.transports.schemes import lookup

#: Ports that carry bytes with no line speed: the speed is not probed there.
_NO_SPEED = ("socket", "dosbox")


def _speeds_of(value: Any, flag: str) -> tuple[int, ...]:
    return _speeds(str(value))


def _writable(value: Any, flag: str) -> Path:
    _check_writable(Path(value))
    return Path(value)


_PROBE = ProbeSettings()

#: Every setting of ``dxserial probe``, in the order of its --help; each default the
#: prober's (:class:`ProbeSettings`).
SETTINGS: tuple[Setting, ...] = (
    Setting("port", None, "The engine's serial port, as the bridge takes it: a device, a "
            "'dxserial vpair' end, socket://HOST:PORT, dosbox://HOST:PORT ...", argument=True,
            metavar="PORT"),
    Setting("timeout", _PROBE.timeout, "Give up after this many seconds.", kind=float,
            minimum=0, above=True, show_default=True),
    Setting("listen", _PROBE.listen, "Seconds to listen first: an initiator speaks unasked "
            "(DXP repeats a start byte after 5 s without an echo). 0: ask at once.", kind=float,
            minimum=0, show_default=True),
    Setting("wait", _PROBE.wait, "Seconds to wait for the echo of each byte (NULMODEM).",
            kind=float, minimum=0, above=True, show_default=True),
    Setting("answer_wait", _PROBE.answer_wait, "Seconds to wait for an answer in NUL frames.",
            kind=float, minimum=0, show_default=True),
    Setting("speeds", ",".join(str(s) for s in _PROBE.speeds), "Speeds to try, in this order "
            "(comma-separated).", parse=_speeds_of, show_default=True),
    Setting("as_json", False, "Print the finding as one JSON object.", kind=bool,
            flags=("--json",), show_default=True),
    Setting("write_config", None, "Save what was found as a TOML file for 'dxserial bridge "
            "--config FILE'.", kind=Path, parse=_writable),
)


def probe_command(**given: Any) -> None:
    """Find out how the engine on PORT speaks DXP, and print the bridge command that works.

    Listens first (an initiator speaks unasked), then offers each candidate in turn: NUL
    frames or the NULMODEM echo handshake, start and end bytes (STX/ETX first), and the
    speed (9600 first). A candidate counts only when its echo comes back byte for byte
    or the engine answers with a valid DXP message. The engine is left ready for a game:
    a game offer of its own is answered 'not this game, a next one' (GAMEACC code 2);
    a game it accepts from the probe is ended at once (GAMEEND, stop code 0).

    One progress line per candidate on stderr. Exit code 0 when found; 1 when not found
    or ambiguous (with the evidence), or when stopped by Ctrl-C (with what was found so
    far). On a pseudo-terminal the speed is set with termios: a 'dxserial vpair
    --termios' end honours it.
    """
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    port, as_json, write_config = values["port"], values["as_json"], values["write_config"]
    scheme = lookup(port, endpoints=False)  # an unknown scheme fails here, in one line
    settings = ProbeSettings(
        speeds=values["speeds"],
        vary_speed=scheme is None or scheme.kind not in _NO_SPEED,
        **{key: values[key] for key in ("listen", "wait", "answer_wait", "timeout")},
    )
    started = time.monotonic()
    finding = asyncio.run(_run(port, Prober(settings)))
    elapsed = time.monotonic() - started
    if as_json:
        print(json.dumps(_as_dict(port, finding, elapsed)), flush=True)
    else:
        print(_report(port, finding, elapsed), flush=True)
    if write_config is not None and finding.verdict == "found":
        _write_config(write_config, port, finding)
        if not as_json:
            print(f"saved: {write_config} (dxserial bridge --config {write_config})")
    code = 0 if finding.verdict == "found" and not finding.interrupted else 1
    raise typer.Exit(code)


probe_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("probe")(probe_command)


def _speeds(text: str) -> tuple[int, ...]:
    out: list[int] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            value = int(item)
        except ValueError:
            raise ConfigError(f"--speeds: {item!r} is not a whole number") from None
        if value <= 0:
            raise ConfigError(f"--speeds: {value} is not a positive speed")
        out.append(value)
    if not out:
        raise ConfigError("--speeds: name at least one speed")
    return tuple(dict.fromkeys(out))


async def _run(port: str, prober: Prober) -> Finding:
    def progress(text: str) -> None:
        print(f"probe: {text}", file=sys.stderr, flush=True)

    runner = ProbeRunner(port, prober, progress)
    with runner.driver.signals():
        return await runner.run()


def bridge_command(port: str, finding: Finding) -> list[str]:
    """The ``dxserial bridge`` command line that speaks to the engine as found."""
    args = ["dxserial", "bridge", port, "--link", finding.link or "nulmodem"]
    if finding.speed is not None:
        args += ["--baud", str(finding.speed)]
    if finding.link == "nulmodem" and finding.start is not None and finding.end is not None:
        args += ["--start-byte", f"0x{finding.start:02x}", "--end-byte", f"0x{finding.end:02x}"]
    return args


def _describe(finding: Finding) -> str:
    parts = ["NUL frames" if finding.link == "nul" else "NULMODEM"]
    if finding.start is not None and finding.end is not None:
        parts.append(f"start byte 0x{finding.start:02x}, end byte 0x{finding.end:02x}")
    parts.append(f"{finding.speed} baud" if finding.speed is not None else "speed: any")
    return ", ".join(parts)


def _report(port: str, finding: Finding, elapsed: float) -> str:
    lines: list[str] = []
    stopped = " (stopped by a signal)" if finding.interrupted else ""
    if finding.verdict == "found":
        lines.append(f"found: {_describe(finding)} (in {elapsed:.1f} s){stopped}")
    elif finding.verdict == "ambiguous":
        lines.append(f"ambiguous after {elapsed:.1f} s{stopped}: the evidence does not decide")
    elif not finding.evidence:
        lines.append(f"not found: no engine answered on {port} within {elapsed:.1f} s{stopped}")
    else:
        lines.append(f"not found after {elapsed:.1f} s{stopped}")
    lines += [f"  evidence: {line}" for line in finding.evidence]
    if finding.left:
        lines.append(f"  the engine: {finding.left}")
    if finding.verdict != "found" and finding.tried:
        lines.append("  tried: " + "; ".join(finding.tried))
    if finding.verdict == "found":
        if finding.speed is None:
            lines.append("  (this port carries no line speed: the bridge's --baud does not matter)")
        lines.append("bridge command: " + shlex.join(bridge_command(port, finding)))
    return "\n".join(lines)


def _as_dict(port: str, finding: Finding, elapsed: float) -> dict[str, object]:
    found = finding.verdict == "found"
    return {
        "result": finding.verdict,
        "port": port,
        "link": finding.link,
        "baud": finding.speed,
        "start_byte": f"0x{finding.start:02x}" if finding.start is not None else None,
        "end_byte": f"0x{finding.end:02x}" if finding.end is not None else None,
        "bridge_command": shlex.join(bridge_command(port, finding)) if found else None,
        "engine": finding.left,
        "evidence": list(finding.evidence),
        "tried": list(finding.tried),
        "interrupted": finding.interrupted,
        "seconds": round(elapsed, 2),
    }


def _check_writable(path: Path) -> None:
    """Fail before probing (which may take a minute) when the file cannot be written."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise ConfigError(f"--write-config {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"--write-config {path}: folder {folder} is not writable")


def _write_config(path: Path, port: str, finding: Finding) -> None:
    """The finding in the bridge's config keys (see CONFIG_KEYS in bridge_cmd)."""
    lines = [
        f"# written by dxserial probe: {_describe(finding)}",
        f"port = {json.dumps(port)}",
        f'link = "{finding.link}"',
    ]
    if finding.speed is not None:
        lines.append(f"baud = {finding.speed}")
    if finding.link == "nulmodem" and finding.start is not None and finding.end is not None:
        lines.append(f'start_byte = "0x{finding.start:02x}"')
        lines.append(f'end_byte = "0x{finding.end:02x}"')
    try:
        path.write_text("\n".join(lines) + "\n")
    except OSError as exc:
        raise problem("write", "config file", path, exc, "choose another path") from None
