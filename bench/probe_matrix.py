#!/usr/bin/env python3
"""``dxserial probe`` against every peer of its issue, with real processes: the long form of
tests/host/test_probe_cli.py (which runs four representative peers).

For each peer: ``dxserial vpair --termios``, the built-in engine on end B with its own start
and end bytes (learning off, as a DOS program that knows only its own) and its own speed, or
speaking NUL frames only; ``dxserial probe`` on end A; then the bridge command the probe
printed, with a TCP initiator that must play a whole game with that peer (which shows the
peer was left ready for a new game).  Plus nothing on the line at all.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from dxserial.testing.process import Cli
from dxserial.testing.rig import Vpair

FAST = ("--listen", "0.5", "--wait", "0.25", "--answer-wait", "0.6")
FRAMINGS = (("STX/ETX", "0x02", "0x03"), ("ESC/FS", "0x1b", "0x1c"), ("SOH/EOT", "0x01", "0x04"))
SPEEDS = (9600, 2400, 19200)


@dataclass
class Row:
    peer: str
    expected: str
    found: str
    seconds: float
    game: str

    @property
    def right(self) -> bool:
        return self.found == self.expected


def _game(command: str) -> str:
    """Run the probe's bridge command with a TCP initiator; what became of one game."""
    args = shlex.split(command)
    with Cli(*args[1:], "--listen", "127.0.0.1:0") as bridge:
        ready = bridge.out.expect("bridge ready", timeout=20)
        port = re.search(r"listening on 127\.0\.0\.1:(\d+)", ready)
        if port is None:
            return "no bridge"
        with Cli("engine", f"tcp://127.0.0.1:{port.group(1)}", "--role", "initiator",
                 "--games", "1", "--moves", "6", "--depth", "1", "--seed", "3") as tcp:
            line = tcp.out.expect("game 1:", timeout=120)
            code = tcp.wait(timeout=30)
        bridge.stop()
    return f"{line.removeprefix('game 1: ')} (exit {code})"


def one(directory: Path, label: str, link: str, start: str, end: str, speed: int,
        timeout: float) -> Row:
    expected = f"{link} {start}/{end} {speed}" if start else f"{link} {speed}"
    framing = ["--start-byte", start, "--end-byte", end, "--no-learn-start"] if start else []
    vpair = Vpair(directory, "--termios")
    with vpair, Cli(
        "engine", vpair.path_b, "--role", "follower", "--link", link, "--baud", str(speed),
        "--depth", "1", *framing,
    ) as engine:
        engine.out.expect("engine ready", timeout=20)
        began = time.monotonic()
        with Cli("probe", vpair.path_a, "--json", *FAST, "--timeout", str(timeout)) as probe:
            found = json.loads(probe.out.expect("{", timeout=timeout + 30))
            probe.wait(timeout=10)
        seconds = time.monotonic() - began
        if found.get("result") != "found":
            return Row(label, expected, str(found.get("result")), seconds, "-")
        got = f"{found['link']} {found['start_byte']}/{found['end_byte']} {found['baud']}"
        if not found["start_byte"]:
            got = f"{found['link']} {found['baud']}"
        game = _game(str(found["bridge_command"]))
        engine.wait(timeout=30)
        vpair.stop()
    return Row(label, expected, got, seconds, game)


def nothing(directory: Path, timeout: float) -> Row:
    vpair = Vpair(directory, "--termios")
    with vpair:
        began = time.monotonic()
        with Cli("probe", vpair.path_a, "--json", *FAST, "--timeout", str(timeout)) as probe:
            found = json.loads(probe.out.expect("{", timeout=timeout + 30))
            probe.wait(timeout=10)
        vpair.stop()
    return Row("nothing on the line", "not found", str(found.get("result")).replace("-", " "),
               time.monotonic() - began, "-")


def run_section(args: argparse.Namespace) -> str:
    timeout = float(getattr(args, "probe_timeout", None) or 60)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        peers = [(f"{name} {speed}", "nulmodem", s, e, speed)
                 for name, s, e in FRAMINGS for speed in SPEEDS]
        peers.append(("NUL frames only 9600", "nul", "", "", 9600))
        for n, (label, link, start, end, speed) in enumerate(peers):
            print(f"bench: probe {label} ...", file=sys.stderr, flush=True)
            folder = Path(tmp) / str(n)
            folder.mkdir()
            rows.append(one(folder, label, link, start, end, speed, timeout))
        folder = Path(tmp) / "none"
        folder.mkdir()
        rows.append(nothing(folder, min(timeout, 10.0)))
    lines = [
        "| peer | expected | probe found | seconds | the printed bridge command then played |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        mark = "" if row.right else " **(wrong)**"
        lines.append(f"| {row.peer} | {row.expected} | {row.found}{mark} | {row.seconds:.1f} "
                     f"| {row.game} |")
    right = sum(row.right for row in rows)
    return "\n".join(lines) + (
        f"\n\n{right} of {len(rows)} right, each within its --timeout ({timeout:g} s). Real "
        "processes: `dxserial vpair --termios` (each end at the speed its side set), the "
        "built-in engine on end B with only its own start/end bytes (`--no-learn-start`) and "
        "its own speed, `dxserial probe --json` on end A; then the bridge command the probe "
        "printed, and a built-in TCP initiator playing a 6-move game through it with that "
        "peer. Found by speed: the probe sets its own end with termios as it would a real port."
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe-timeout", type=float, default=60.0)
    print(run_section(ap.parse_args()))


if __name__ == "__main__":
    main()
