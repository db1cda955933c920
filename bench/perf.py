"""Performance sections of bench/run.py: ``nulmodem``, ``parsing``, ``movegen``, ``idle``.

Each ``run_*`` function takes run.py's arguments and returns Markdown: a table and one
sentence on the method. Figures are medians over repeated runs; where two things are
compared (dxserial beside dame-rs and pydraughts, a delivery beside the line's physical
minimum), the ratio is formed within one run, so a machine busy with other work moves
both sides alike.

* ``nulmodem``: a MOVE and a 94-byte form-B GAMEREQ delivered over a paced
  :class:`~dxserial.sim.vpair.VirtualPair` between two NULMODEM speakers, against
  the physical minimum (characters + 2) x 2 x 10 bits / baud.
* ``parsing``: parse, encode, NUL framing and the NULMODEM receiver over the messages of
  vectors.json and the Scan game.
* ``movegen``: ``Position.legal_moves()`` beside dame-rs and pydraughts on positions from
  seeded random play, and perft(7) from the start.
* ``idle``: an idle ``dxserial bridge``: CPU over 10 s, wake-ups, memory, descriptors,
  threads; and ``dxserial --version`` start-up time.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import random
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dxserial.testing.peers import NulModemPeer
from dxserial.testing.rig import Bridge

HERE = Path(__file__).resolve().parent

MOVE = b"M0000342900"
GAMEREQ_A = b"R01DXP Client                      W002075A"
GAMEREQ_B = (
    b"R01DXP Client                      W002075B"
    b"Wzzzzzzzzzzzzzzzzzzzzeeeeeeeeeewwwwwwwwwwwwwwwwwwww"
)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Time without the cyclic collector (as timeit does): garbage left by whatever ran
    before (pydraughts' boards) must not be collected on the next library's clock."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def spec_dir() -> Path | None:
    """The protocol reference data the tests use too (tests/data in the repository)."""
    candidate = HERE.parent / "tests" / "data"
    return candidate if candidate.is_dir() else None


def real_messages() -> list[bytes]:
    """The messages of vectors.json and of the Scan game, in file order."""
    spec = spec_dir()
    if spec is None:
        sys.exit("bench: tests/data not found in the repository")
    out = [v["message"].encode("ascii") for v in json.loads((spec / "vectors.json").read_text())]
    for line in (spec / "scan-vs-scan-game.jsonl").read_text().splitlines():
        if line.strip():
            out.append(json.loads(line)["message"].encode("ascii"))
    return out


# ----------------------------------------------------------------------- nulmodem


def _deliver(a: NulModemPeer, b: NulModemPeer, raw: bytes, limit: float = 30.0
             ) -> tuple[float, float]:
    """Send ``raw`` from a to b; seconds until b received it and until a saw the last echo.

    Both ends run in this one select loop (no threads), so no thread switch is timed.
    """
    seen, done = len(b.raw), len(a.delivered)
    t0 = time.monotonic()
    a.send(raw)
    received = delivered = None
    while received is None or delivered is None:
        now = time.monotonic()
        if now - t0 > limit:
            raise RuntimeError(f"no delivery of {raw!r} within {limit:g} s")
        deadlines = [d for d in (a.link.next_deadline(), b.link.next_deadline()) if d is not None]
        wait = max(0.0, min([*deadlines, now + 0.5]) - now)
        ready, _, _ = select.select([a.fd, b.fd], [], [], wait)
        now = time.monotonic()
        for end in (a, b):
            end.service(end.fd in ready)
        if received is None and raw in b.raw[seen:]:
            received = now - t0
        if delivered is None and len(a.delivered) > done:
            delivered = now - t0
    return received, delivered


def _echo_round_trip(a: int, b: int, samples: int = 60) -> float:
    """Median seconds for one byte from a to b and straight back, no protocol involved."""
    times = []
    for _ in range(samples):
        start = time.monotonic()
        os.write(a, b"x")
        for src, dst in ((b, b"y"), (a, b"")):
            while not select.select([src], [], [], 5.0)[0]:
                raise RuntimeError("the virtual pair stopped relaying")
            os.read(src, 16)
            if dst:
                os.write(b, dst)
        times.append(time.monotonic() - start)
    return median(times)


def run_nulmodem(args: argparse.Namespace) -> str:
    from dxserial.sim.vpair import VirtualPair

    deliveries = max(5, 3 * args.repeat)
    rows = []
    for baud in (9600, 115200):
        with tempfile.TemporaryDirectory() as tmp:
            pair = VirtualPair(f"{tmp}/a", f"{tmp}/b", baud=baud, seed=1).start()
            a, b = (NulModemPeer(f"{tmp}/{end}", timeout=5.0, max_attempts=5, seed=seed,
                                 thread=False) for end, seed in (("a", 1), ("b", 2)))
            try:
                rtt = _echo_round_trip(a.fd, b.fd)
                for label, raw in (
                    ("MOVE", MOVE), ("GAMEREQ form A", GAMEREQ_A), ("GAMEREQ form B", GAMEREQ_B)
                ):
                    print(f"bench: nulmodem {label} at {baud} baud ...", file=sys.stderr)
                    _deliver(a, b, raw)  # warm-up
                    times = [_deliver(a, b, raw) for _ in range(deliveries)]
                    floor = (len(raw) + 2) * 2 * 10 / baud
                    got = median([t[0] for t in times])
                    done = median([t[1] for t in times])
                    line = (len(raw) + 2) * rtt
                    rows.append(
                        f"| {label} ({len(raw)} chars) | {baud} | {deliveries} "
                        f"| {floor * 1000:.2f} | {got * 1000:.2f} | {done * 1000:.2f} "
                        f"| **{done / floor:.2f}x** | {line * 1000:.2f} | {done / line:.2f}x "
                        f"| {len(a.problems) + len(b.problems)} |"
                    )
                    a.problems.clear()
                    b.problems.clear()
            finally:
                a.close()
                b.close()
                pair.close()
    return (
        "| message | baud | deliveries | physical minimum ms | received ms (median) "
        "| handshake done ms (median) | done / physical minimum | emulated line floor ms "
        "| done / line floor | retries, problems |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n\nTwo NULMODEM speakers (dxserial's `NulModemLink`, one select loop, real clock) "
        "on the two ends of an in-process `VirtualPair(baud=B)`, which paces each direction at "
        "10 bits per character; one message at a time from end A, timed from `send()` until "
        "B reports it received and until A sees the echo of the end byte. Physical minimum: "
        "(characters + 2) echoed round trips, (n + 2) x 2 x 10 / baud seconds. Emulated line "
        "floor: (n + 2) x the median round trip of one bare byte through the same pair (no "
        "protocol), measured just before. The pair's relay sleeps until each byte is due and "
        "waits out the last 80 µs on the clock; what is left is its own and the reader's "
        "wake-up, some 0.1 ms per byte and direction: little beside a character time at "
        "9600 baud (1.04 ms), more than one at 115200 (87 µs)."
    )


# ----------------------------------------------------------------------- parsing


def _rate(func: Callable[[], int], repeat: int, min_time: float = 0.3) -> float:
    """Median items/s of ``func`` (which returns how many items it handled)."""
    rates = []
    for _ in range(repeat):
        with no_gc():
            count, start = 0, time.perf_counter()
            while (elapsed := time.perf_counter() - start) < min_time:
                count += func()
        rates.append(count / elapsed)
    return median(rates)


def run_parsing(args: argparse.Namespace) -> str:
    from dxserial.protocol.framing import NulFramer, nul_frame
    from dxserial.protocol.messages import encode, parse
    from dxserial.protocol.nulmodem import NulModemLink

    messages = real_messages()
    parsed = [parse(m) for m in messages]
    stream = b"".join(nul_frame(m) for m in messages)
    serial = [bytes([b]) for m in messages for b in b"\x02" + m + b"\x03"]

    def parse_strict() -> int:
        for m in messages:
            parse(m)
        return len(messages)

    def parse_lenient() -> int:
        for m in messages:
            parse(m, strict=False)
        return len(messages)

    def encode_all() -> int:
        for msg in parsed:
            encode(msg)
        return len(parsed)

    def frame_and_split() -> int:
        NulFramer().feed(b"".join(nul_frame(m) for m in messages))
        return len(messages)

    def split_only() -> int:
        return len(NulFramer().feed(stream))

    def nulmodem_receive() -> int:
        link = NulModemLink()
        now = 0.0
        for byte in serial:
            link.receive_data(byte, now)
            link.data_to_send()
            now += 0.002
        return len(link.events())

    rows = [
        ("`parse(raw)` (strict)", parse_strict),
        ("`parse(raw, strict=False)`", parse_lenient),
        ("`encode(message)` (checks by parsing back)", encode_all),
        ("`NulFramer.feed`: split a TCP stream", split_only),
        ("`nul_frame` + `NulFramer.feed`", frame_and_split),
        ("`NulModemLink` receiver, byte by byte with echo", nulmodem_receive),
    ]
    lines = ["| operation | messages/s (median) | µs per message |", "|---|---|---|"]
    for label, func in rows:
        rate = _rate(func, args.repeat)
        lines.append(f"| {label} | {rate:,.0f} | {1e6 / rate:.2f} |")
    total = sum(len(m) for m in messages)
    return "\n".join(lines) + (
        f"\n\nThe {len(messages)} messages of vectors.json and the Scan game ({total} bytes, "
        f"{total / len(messages):.1f} bytes on average) processed in a loop for at least "
        f"0.3 s, {args.repeat} times; median rate."
    )


# ----------------------------------------------------------------------- movegen


def sample_positions(count: int, seed: int = 20240601) -> list[Any]:
    """``count`` positions (side to move has a move) from seeded random games."""
    from dxserial.draughts import Position

    rng = random.Random(seed)
    found: list[Any] = []
    while len(found) < count:
        pos = Position.start()
        for _ in range(rng.randint(20, 160)):
            moves = pos.legal_moves()
            if not moves or len(found) >= count:
                break
            found.append(pos)
            pos = pos.play(rng.choice(moves))
    return found


def run_movegen(args: argparse.Namespace) -> str:
    import dame
    import draughts

    from dxserial.draughts import Position, perft

    positions = sample_positions(2000)
    fens = [p.to_fen() for p in positions]

    def dx_boards() -> list[Any]:
        return [Position(p.white, p.black, p.kings, p.turn) for p in positions]  # no cache

    def dx_run(boards: list[Any]) -> int:
        return sum(len(b.legal_moves()) for b in boards)

    def dame_boards() -> list[Any]:
        return [dame.Board(f) for f in fens]

    def dame_run(boards: list[Any]) -> int:
        return sum(len(b.legal_moves) for b in boards)

    def pyd_boards() -> list[Any]:
        return [draughts.Board(variant="standard", fen=f) for f in fens]

    def pyd_run(boards: list[Any]) -> int:
        return sum(len(b.legal_moves()) for b in boards)

    libs = {
        "dxserial `Position.legal_moves()`": (dx_boards, dx_run, args.repeat),
        "dame-rs 0.2 `Board.legal_moves`": (dame_boards, dame_run, args.repeat),
        "pydraughts 0.6.7 `Board.legal_moves()`": (pyd_boards, pyd_run, min(args.repeat, 3)),
    }
    rates: dict[str, list[float]] = {name: [] for name in libs}
    counts: dict[str, int] = {}
    ratios: dict[str, list[float]] = {name: [] for name in libs}
    for i in range(args.repeat):  # one round = each library once, so load hits all alike
        print(f"bench: movegen round {i + 1} ...", file=sys.stderr, flush=True)
        for name, (make, run, runs) in libs.items():
            if i >= runs:
                continue
            boards = make()
            with no_gc():
                start = time.perf_counter()
                counts[name] = run(boards)
                rates[name].append(len(boards) / (time.perf_counter() - start))
            del boards
        ours = rates["dxserial `Position.legal_moves()`"][-1]
        for name in libs:
            if len(rates[name]) == i + 1:
                ratios[name].append(ours / rates[name][-1])
    lines = [
        "| generator | runs | positions/s (median) | µs per position | moves found "
        "| dxserial's rate / its rate (same round, median) |",
        "|---|---|---|---|---|---|",
    ]
    for name in libs:
        rate = median(rates[name])
        lines.append(
            f"| {name} | {len(rates[name])} | {rate:,.0f} | {1e6 / rate:.1f} | {counts[name]} "
            f"| {median(ratios[name]):.2f}x |"
        )
    start_pos = Position.start()
    leaves: dict[str, int] = {}
    times: dict[str, list[float]] = {"dxserial `perft`": [], "dame-rs `dame.perft`": []}
    perfts: list[tuple[str, Callable[[], int]]] = [
        ("dxserial `perft`", lambda: perft(start_pos, 7)),
        ("dame-rs `dame.perft`", lambda: int(dame.perft(dame.Board(), 7))),
    ]
    for i in range(args.repeat):
        print(f"bench: perft(7) round {i + 1} ...", file=sys.stderr, flush=True)
        for name, func in perfts:
            with no_gc():
                start = time.perf_counter()
                leaves[name] = func()
                times[name].append(time.perf_counter() - start)
    lines += [
        "",
        "| perft(7) from the start | leaves | runs | seconds (median) | leaves/s |",
        "|---|---|---|---|---|",
    ]
    for name in times:
        t, n = median(times[name]), leaves[name]
        lines.append(f"| {name} | {n:,} | {len(times[name])} | {t:.3f} | {n / t:,.0f} |")
    return "\n".join(lines) + (
        f"\n\n{len(positions)} positions from seeded random games (every position of each "
        "game, side to move has a move), each library given its own board objects built "
        "beforehand (dxserial's cache emptied) and timed listing every legal move of every "
        "position (cyclic garbage collector off while timed, as in timeit); rounds take "
        "the libraries in turn and the ratio is formed within a round "
        "(pydraughts, far slower, runs at most 3 rounds). pydraughts finds one move more: "
        "it lists two routes of one king capture as two moves (in "
        "W:WK15,26,36,41,42,43:B1,2,6,8,9,13,16,20,22,33, 15x38 via 24 or 29). perft counts "
        "leaves, bulk-counting the last ply (1,049,442 expected at depth 7)."
    )


# ----------------------------------------------------------------------- idle


def _proc_stat(pid: int) -> tuple[float, dict[str, str]]:
    """CPU seconds (user + system) and the /proc/PID/status fields of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14, 15)
    status = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        status[key] = value.strip()
    return cpu, status


def _switches(status: dict[str, str]) -> int:
    return int(status["voluntary_ctxt_switches"]) + int(status["nonvoluntary_ctxt_switches"])


def _startup(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return median(times)


def _import_times(*argv: str) -> list[tuple[int, int, str]]:
    """(cumulative µs, depth, module) of each import of one ``python -X importtime`` run."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, check=False
    )
    found = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            name = parts[2].rstrip()
            depth = (len(name) - len(name.lstrip()) - 1) // 2
            found.append((int(parts[1]), depth, name.strip()))
    return found


def _largest_imports(count: int = 6) -> str:
    """The costliest modules ``dxserial --version`` imports beyond the bare interpreter's
    (one level below the top-level imports)."""
    bare = {name for _, _, name in _import_times("-c", "pass")}
    found = sorted(
        (us, name)
        for us, depth, name in _import_times("-m", "dxserial", "--version")
        if depth == 1 and name not in bare
    )[::-1]
    return ", ".join(f"`{name}` {us / 1000:.0f} ms" for us, name in found[:count])


def run_idle(args: argparse.Namespace) -> str:
    from dxserial.sim.vpair import VirtualPair

    window = 10.0
    with (
        tempfile.TemporaryDirectory() as tmp,
        VirtualPair(f"{tmp}/a", f"{tmp}/b"),
        contextlib.closing(Bridge(Path(tmp), f"{tmp}/a", trace=False)) as proc,
    ):
        print(f"bench: idle bridge, {window:g} s ...", file=sys.stderr, flush=True)
        time.sleep(1.0)  # let start-up work finish
        cpu0, st0 = _proc_stat(proc.pid)
        time.sleep(window)
        cpu1, st1 = _proc_stat(proc.pid)
        fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
    cpu_ms = (cpu1 - cpu0) * 1000
    wakeups = _switches(st1) - _switches(st0)
    runs = max(10, 2 * args.repeat)
    print("bench: start-up times ...", file=sys.stderr, flush=True)
    bare = _startup([sys.executable, "-c", "pass"], runs)
    typer_only = _startup([sys.executable, "-c", "import typer"], runs)
    module = _startup([sys.executable, "-m", "dxserial", "--version"], runs)
    script = shutil.which("dxserial")
    console = _startup([script, "--version"], runs) if script else None
    lines = [
        "| idle `dxserial bridge` (NULMODEM link on a VirtualPair end, listening on "
        "127.0.0.1:0) | value |",
        "|---|---|",
        f"| CPU time used in {window:g} s (user + system) | {cpu_ms:.0f} ms "
        f"({cpu_ms / window / 10:.2f} % of one core) |",
        f"| context switches in {window:g} s (wake-ups) | {wakeups} |",
        f"| resident memory (VmRSS) | {st1['VmRSS']} (peak {st1['VmHWM']}) |",
        f"| open file descriptors | {fds} |",
        f"| threads | {st1['Threads']} |",
        "",
        f"| start-up ({runs} runs) | median ms | vs bare interpreter |",
        "|---|---|---|",
        f"| `python -c pass` (bare interpreter) | {bare * 1000:.0f} | 1.00x |",
        f"| `python -c 'import typer'` (the floor for a typer CLI) | {typer_only * 1000:.0f} "
        f"| {typer_only / bare:.2f}x |",
        f"| `python -m dxserial --version` | {module * 1000:.0f} | {module / bare:.2f}x |",
    ]
    if console is not None:
        lines.append(
            f"| `dxserial --version` (console script) | {console * 1000:.0f} "
            f"| {console / bare:.2f}x |"
        )
    imports = _largest_imports()
    return "\n".join(lines) + (
        f"\n\nThe bridge runs as `python -m dxserial bridge` with no engine on either side; "
        f"utime + stime from /proc/PID/stat and the context-switch counters from "
        f"/proc/PID/status are read 1 s after `bridge ready` and again {window:g} s later "
        "(one run: an integral over the window). Start-up: wall time of each command, median. "
        "Largest imports behind `--version` (cumulative, one `python -X importtime` run, "
        f"which inflates them): {imports}."
    )
