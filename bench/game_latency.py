"""How long a real game's messages take through the bridge, beside ser2net.

The shared harness times one MOVE that no game allows, over and over.  Here the Scan game
(tests/data/scan-vs-scan-game.jsonl) is played through each bridge, every message legal
and in its turn: the initiator's from the serial end (a pty this process holds), the
follower's over TCP.  Each message is timed from its write on one side until its whole
frame has arrived on the other: a one-way forwarding delay, with dxserial's referee
judging every move on the board (after the forward, under its default ``warn``).

Bridges: ser2net (``sendon='\\x00'``, the reference), the transport floor
(bench/transport_floor.py) and ``dxserial bridge --link nul``.  Rounds take them in turn;
each ratio is formed within a round.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tty
from pathlib import Path

from tables import median_row  # bench/tables.py

from dxserial.testing.process import free_port, listening, stop_process, wait_until

HERE = Path(__file__).resolve().parent
GAME = HERE.parent / "tests" / "data" / "scan-vs-scan-game.jsonl"


def _game() -> list[tuple[bool, bytes]]:
    """(sent from the serial end?, message) for each message of the file's first game, up to
    and including its GAMEEND exchange (the file goes on into a second game, unfinished: a
    repeat would be a restart mid-game, which the bridge answers by closing that game)."""
    out = []
    for line in GAME.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            out.append((rec["from"] == "initiator", rec["message"].encode("ascii")))
    ends = [i for i, (_, raw) in enumerate(out) if raw.startswith(b"E")]
    return out[: ends[1] + 1]


def _read_frame(fd: int, limit: float = 5.0) -> bytes:
    """Read one NUL-terminated frame from a socket's or a pty master's fd."""
    data = b""
    deadline = time.monotonic() + limit
    while not data.endswith(b"\0"):
        if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            raise TimeoutError(f"no whole frame within {limit:g} s (got {data!r})")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise ConnectionError("the bridge closed")
        data += chunk
    return data


#: ``bench/run.py --baseline DIR``: the checkout whose bridge runs as BASELINE_KIND.
BASELINE_ENV = "DXSERIAL_BENCH_BASELINE"
BASELINE_KIND = "baseline: dxserial bridge --link nul"


def _bridge_command(kind: str, path: str, port: int, tmp: str) -> list[str]:
    if kind == "ser2net":
        config = Path(tmp) / f"ser2net-{port}.yaml"
        config.write_text(
            "%YAML 1.1\n---\nconnection: &bench\n"
            f"  accepter: tcp,127.0.0.1,{port}\n"
            f"  connector: serialdev,{path},115200n81,local\n"
            "  options:\n    kickolduser: true\n    sendon: '\\x00'\n"
        )
        return [shutil.which("ser2net") or "ser2net", "-d", "-u", "-c", str(config),
                "-P", str(Path(tmp) / f"ser2net-{port}.pid")]
    if kind == "transport floor":
        return [sys.executable, str(HERE / "transport_floor.py"), path, str(port)]
    command = [sys.executable, "-m", "dxserial", "bridge", path, "--link", "nul",
               "--listen", f"127.0.0.1:{port}", "-q"]
    if kind == BASELINE_KIND:  # a main from before issue 29 spoke first: its check off
        # -P: the current folder (say this checkout) must not come before PYTHONPATH.
        return ["env", f"PYTHONPATH={os.environ[BASELINE_ENV]}", sys.executable, "-P",
                *command[1:], "--no-serial-check"]
    return [*command, "--state-dir", str(Path(tmp) / "state")]  # not the user's


def play_once(kind: str, games: int, pause: float) -> dict[str, list[float]]:
    """Play the game ``games`` times through one fresh bridge, ``pause`` seconds between
    messages (an engine's thinking); one-way delays in µs."""
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    port = free_port()
    delays: dict[str, list[float]] = {"serial->tcp": [], "tcp->serial": []}
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            _bridge_command(kind, path, port, tmp),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            text=True,
        )
        wait_until(lambda: listening(port), 10.0, f"{kind} listening")
        client = socket.create_connection(("127.0.0.1", port))
        try:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # ser2net opens the device only when a client connects, and nothing tells when
            # it has: a bench, not a test, so a pause will do.
            time.sleep(0.5)
            for _ in range(games):
                for from_serial, raw in _game():
                    frame = raw + b"\0"
                    if pause:
                        time.sleep(pause)
                    start = time.perf_counter()
                    if from_serial:
                        os.write(master, frame)
                        got = _read_frame(client.fileno())
                    else:
                        client.sendall(frame)
                        got = _read_frame(master)
                    took = (time.perf_counter() - start) * 1e6
                    if got != frame:
                        raise AssertionError(f"{kind}: sent {frame!r}, got {got!r}")
                    delays["serial->tcp" if from_serial else "tcp->serial"].append(took)
        finally:
            client.close()
            stop_process(proc)
            os.close(master)
            os.close(slave)
    return delays


#: Between messages in the "thinking" run: far less than any engine takes for a move, more
#: than the bridge needs to judge one.
PAUSE = 0.002


def run_section(rounds: int, games: int = 3) -> str:
    kinds = ["transport floor", "dxserial bridge --link nul"]
    if shutil.which("ser2net"):
        kinds.insert(0, "ser2net")
    runs = [("back to back", 0.0), (f"{PAUSE * 1000:g} ms between messages", PAUSE)]
    rows: dict[tuple[str, str], dict[str, list[float]]] = {}
    messages = len(_game())
    for round_no in range(rounds):
        for run, pause in runs:
            this: dict[str, float] = {}
            for kind in kinds:
                print(f"bench: game round {round_no + 1}, {run}: {kind} ...", file=sys.stderr,
                      flush=True)
                delays = play_once(kind, games, pause)
                row = rows.setdefault((run, kind), {"all": [], "ratio": []})
                this[kind] = statistics.median(delays["serial->tcp"] + delays["tcp->serial"])
                row["all"].append(this[kind])
                for direction, values in delays.items():
                    row.setdefault(direction, []).append(statistics.median(values))
            for kind in kinds:
                if "ser2net" in this:
                    rows[(run, kind)]["ratio"].append(this[kind] / this["ser2net"])
    lines = [
        "| messages sent | bridge | rounds | one-way median µs | serial->tcp µs "
        "| tcp->serial µs | vs ser2net |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        median_row([run, kind], row, ["all", "serial->tcp", "tcp->serial"], 0)
        for (run, kind), row in rows.items()
    ]
    return "\n".join(lines) + (
        f"\n\nThe Scan game's first game ({messages} messages, every one legal and in turn) "
        f"played {games} times through a fresh bridge per round and run: the initiator's "
        "messages written to a pty this process holds (the bridge's serial end), the "
        "follower's sent over TCP; each timed from its write until its whole frame arrived "
        "on the other side. dxserial judges every move on the board (referee `warn`: after "
        "the forward). Back to back, the next message arrives while the bridge still judges "
        "the last one, so judging counts; with a pause (engines think between moves), it "
        "does not. Medians over all messages of a run, then over rounds; ratios within a "
        "round."
    )


if __name__ == "__main__":
    print(run_section(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
