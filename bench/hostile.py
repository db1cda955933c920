#!/usr/bin/env python3
"""Hostile TCP clients against a running bridge, one attack at a time, loopback only.

``python3 bench/hostile.py`` prints a Markdown table; bench/run.py gets the same text from
:func:`section` (the ``hostile`` section).

For each attack a fresh rig is started as a user would start it (the harness of
dxserial.testing): ``dxserial vpair``, ``dxserial bridge`` on end A
(listening on 127.0.0.1 only) and the built-in engine as NULMODEM follower on end B. The
attack runs against the bridge's TCP port; then the attackers are gone and a legitimate
game is tried: the built-in engine as TCP initiator plays ``--games 1 --moves 3 --depth
1`` and must exit 0. Reported per attack: whether the bridge is still running after the
attack and after the game, the game's exit code, the bridge's VmRSS and open descriptors
before the attack and after it (attackers gone), and the log lines it wrote meanwhile.

Every loop is bounded in count and in time (:data:`ATTACK_LIMIT` per attack, socket
timeouts on every call), and nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from soak import Engine

from dxserial.testing.rig import Bridge, Vpair

#: No attack runs longer than this (seconds), whatever its counts say.
ATTACK_LIMIT = 90.0
#: The legitimate game after an attack must end within this (seconds).
GAME_LIMIT = 120.0
HOST = "127.0.0.1"
_MIB = 1024.0


@dataclass
class Outcome:
    attack: str
    alive_after_attack: bool
    game_exit: int | None  # None: did not finish in GAME_LIMIT
    alive_after_game: bool
    rss_before_kib: int
    rss_after_kib: int
    fds_before: int
    fds_after: int
    log_lines: int
    note: str


class Attack:
    """One hostile behaviour; ``run`` returns a short note of what happened."""

    def __init__(self, name: str, run: Callable[[int, float], str]) -> None:
        self.name = name
        self.run = run


def _connect(port: int, timeout: float = 5.0) -> socket.socket:
    sock = socket.create_connection((HOST, port), timeout=timeout)
    sock.settimeout(timeout)
    return sock


def _send_all(sock: socket.socket, data: bytes, deadline: float) -> int:
    """Send what the bridge takes before ``deadline``; returns the bytes sent."""
    sent = 0
    view = memoryview(data)
    while sent < len(data) and time.monotonic() < deadline:
        try:
            sent += sock.send(view[sent : sent + 65536])
        except TimeoutError:
            continue
        except OSError:
            break
    return sent


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether the bridge has closed this connection (reads what it sent meanwhile)."""
    sock.settimeout(0.5)
    try:
        for _ in range(1000):  # bounded: at most ~64 MB of whatever the bridge sent
            if not sock.recv(65536):
                return True
    except TimeoutError:
        return False
    except OSError:
        return True
    return False


def random_megabyte(port: int, deadline: float) -> str:
    data = random.Random(1).randbytes(1024 * 1024)
    with _connect(port) as sock:
        sent = _send_all(sock, data, deadline)
    return f"{sent} of {len(data)} bytes taken"


def control_byte_messages(port: int, deadline: float) -> str:
    data = b"".join(b"Chello\x01world %d\x00" % n for n in range(10_000))
    with _connect(port) as sock:
        sent = _send_all(sock, data, deadline)
    return f"{sent} of {len(data)} bytes taken"


def huge_frames(port: int, deadline: float) -> str:
    frame = b"C" + b"x" * 99_998 + b"\x00"  # 100,000 bytes with its NUL
    with _connect(port) as sock:
        sent = _send_all(sock, frame * 10, deadline)
    return f"{sent // len(frame)} of 10 frames taken"


def many_clients(port: int, deadline: float) -> str:
    socks: list[socket.socket] = []
    refused = 0
    try:
        for _ in range(200):
            if time.monotonic() > deadline:
                break
            try:
                socks.append(_connect(port))
            except OSError:
                refused += 1
        for n, sock in enumerate(socks):
            with contextlib.suppress(OSError):
                sock.sendall(b"Cclient %d\x00" % n)
        closed = sum(_closed_by_peer(sock) for sock in socks[:20])
    finally:
        for sock in socks:
            sock.close()
    return (f"{len(socks)} connected at once, {refused} refused; {closed} of the first 20 "
            "closed by the bridge")


def reconnects(port: int, deadline: float) -> str:
    done = 0
    for n in range(500):
        if time.monotonic() > deadline:
            break
        try:
            with _connect(port) as sock:
                sock.sendall(b"Creconnect %d\x00" % n)
            done += 1
        except OSError:
            pass
    return f"{done} of 500 connect/send/close cycles"


def silent_client(port: int, deadline: float) -> str:
    with _connect(port) as sock:
        until = min(deadline, time.monotonic() + 30.0)
        closed = False
        while not closed and time.monotonic() < until:  # bounded by the 30 s
            closed = _closed_by_peer(sock)
    return "closed by the bridge" if closed else "kept open for 30 s"


def half_message(port: int, deadline: float) -> str:
    with _connect(port) as sock:
        sock.sendall(b"M00003229")  # half a MOVE, no NUL
        until = min(deadline, time.monotonic() + 15.0)
        closed = False
        while not closed and time.monotonic() < until:  # bounded by the 15 s stall
            closed = _closed_by_peer(sock)
    return "closed by the bridge" if closed else "kept open through a 15 s stall"


ATTACKS = [
    Attack("1 MiB of random bytes", random_megabyte),
    Attack("10,000 messages with a control byte", control_byte_messages),
    Attack("10 frames of 100,000 bytes", huge_frames),
    Attack("200 simultaneous clients", many_clients),
    Attack("500 reconnects", reconnects),
    Attack("connects, silent for 30 s", silent_client),
    Attack("half a message, then a 15 s stall", half_message),
]


def _log_lines(bridge: Bridge) -> int:
    return len(bridge.log().splitlines())


def _settle(bridge: Bridge, fds: int, limit: float = 30.0) -> None:
    """Wait (bounded) until the bridge has closed what the attackers left and its log has
    been still for a second: it may still be working through what it read."""
    until = time.monotonic() + limit
    lines, still_since = _log_lines(bridge), time.monotonic()
    while time.monotonic() < until and bridge.proc.poll() is None:
        now_lines = _log_lines(bridge)
        if now_lines != lines:
            lines, still_since = now_lines, time.monotonic()
        elif bridge.fds() <= fds and time.monotonic() - still_since >= 1.0:
            return
        time.sleep(0.1)


def run_attack(attack: Attack, baud: int = 115200) -> Outcome:
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dxhostile-")))
        vpair = Vpair(directory, "--baud", str(baud))
        stack.callback(vpair.close)
        bridge = Bridge(directory, vpair.path_a, "--baud", str(baud), trace=False)
        stack.callback(bridge.shutdown)
        follower = Engine(directory, "follower", vpair.path_b, "--role", "follower",
                          "--baud", str(baud), "--depth", "1", "--seed", "1")
        stack.callback(follower.close)
        rss_before = bridge.status().get("VmRSS", 0)
        fds_before = bridge.fds()
        lines_before = _log_lines(bridge)
        try:
            note = attack.run(bridge.port, time.monotonic() + ATTACK_LIMIT)
        except OSError as exc:
            note = f"attack ended: {exc}"
        alive = bridge.proc.poll() is None
        if alive:
            _settle(bridge, fds_before)
        rss_after = bridge.status().get("VmRSS", 0)
        fds_after = bridge.fds() if alive else 0
        log_lines = _log_lines(bridge) - lines_before
        game_exit: int | None = None
        if alive:
            try:
                initiator = Engine(directory, "initiator", f"tcp://{HOST}:{bridge.port}",
                                   "--role", "initiator", "--games", "1", "--moves", "3",
                                   "--depth", "1", "--seed", "2")
            except AssertionError as exc:
                note += f"; initiator did not start: {exc}"
            else:
                stack.callback(initiator.close)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    game_exit = initiator.proc.wait(GAME_LIMIT)
        return Outcome(attack.name, alive, game_exit, bridge.proc.poll() is None, rss_before,
                       rss_after, fds_before, fds_after, log_lines, note)


def table(outcomes: list[Outcome]) -> str:
    rows = [
        "| attack | bridge alive after attack / after game | next game (exit code) "
        "| RSS before → after MiB | fds before → after | log lines | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        game = "not finished" if o.game_exit is None else (
            "played (0)" if o.game_exit == 0 else f"failed ({o.game_exit})")
        rows.append(
            f"| {o.attack} | {'yes' if o.alive_after_attack else 'NO'} / "
            f"{'yes' if o.alive_after_game else 'NO'} | {game} "
            f"| {o.rss_before_kib / _MIB:.1f} → {o.rss_after_kib / _MIB:.1f} "
            f"| {o.fds_before} → {o.fds_after} | {o.log_lines} | {o.note} |"
        )
    return "\n".join(rows)


NOTES = (
    "Each attack gets a fresh rig: `dxserial vpair --baud 115200`, `dxserial bridge` on end A "
    "(listening on 127.0.0.1, default settings, no trace), the built-in engine as NULMODEM "
    "follower on end B. *After*: once the attackers have closed their sockets, the "
    "descriptors are back and the log has been still for 1 s (at most 30 s). *Next game*: "
    "`dxserial engine tcp://127.0.0.1:PORT --role initiator --games 1 --moves 3 --depth 1` "
    f"exits 0 within {GAME_LIMIT:.0f} s. *Log lines*: lines the bridge wrote to stderr from "
    "the start of the attack until then (default level, flood guard on). A client that "
    "closes while the bridge's replies lie unread in its socket resets the connection, so "
    "the bridge may not read all it was sent: 'bytes taken' counts what the kernel accepted."
)


def section(args: argparse.Namespace | None = None) -> str:
    """The run as Markdown, for bench/run.py."""
    outcomes = []
    for attack in ATTACKS:
        print(f"hostile: {attack.name} ...", file=sys.stderr, flush=True)
        outcomes.append(run_attack(attack))
    return table(outcomes) + "\n\n" + NOTES


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", help="run the attacks whose name contains this")
    args = ap.parse_args()
    chosen = [a for a in ATTACKS if not args.only or any(w in a.name for w in args.only)]
    outcomes = []
    for attack in chosen:
        print(f"hostile: {attack.name} ...", file=sys.stderr, flush=True)
        outcomes.append(run_attack(attack))
    print(table(outcomes))
    return 0 if all(o.alive_after_game and o.game_exit == 0 for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
