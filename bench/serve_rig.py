"""``dxserial serve`` as a lab runs it: 16 lines on ``dxserial vpair`` cables, a built-in
engine on both ends of every line, a game on every line at once; one line's cable end
unplugged and replugged, one line removed and one added by SIGHUP while the others play.

This process holds the cables (:class:`~dxserial.sim.vpair.VirtualPair`, end B of each) and
the engines (the followers on end B, the initiators over TCP); ``dxserial serve`` is a
process of its own on every end A.  At the end every PDN is replayed and each line's
closing counts (its log line) are checked against the daemon's status.

    python3 bench/serve_rig.py [--lines 16] [--moves 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dxserial.engine.player import Player, PlayerConfig
from dxserial.engine.runner import EngineRunner, RunResult
from dxserial.game.replay import load_games
from dxserial.protocol.links import NulModemSettings
from dxserial.protocol.session import Role
from dxserial.serve.status import read_status
from dxserial.sim.vpair import VirtualPair
from dxserial.testing.rig import read_counts
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions, parse_engine_endpoint

ECHO = 2.0  # NULMODEM echo timeout: 33 engines and 17 cables share this process


def rig_text(tmp: Path, pairs: dict[str, VirtualPair]) -> str:
    out = [f'status = "{tmp}/serve.sock"', "[defaults]", f"echo_timeout = {ECHO}",
           "max_attempts = 1000", f'pdn = "{tmp}/games/{{line}}"']
    for name, pair in pairs.items():
        out += [f"[lines.{name}]", f'port = "{pair.path_a}"', 'listen = "127.0.0.1:0"']
    return "\n".join(out) + "\n"


def follower(pair: VirtualPair, seed: int, name: str) -> EngineRunner:
    options = LinkOptions(link="nulmodem", nulmodem=NulModemSettings(timeout=ECHO,
                                                                      max_attempts=1000))
    return EngineRunner(
        Player(PlayerConfig(role=Role.FOLLOWER, depth=1, seed=seed, name=f"serial-{name}")),
        EngineEndpoint(parse_engine_endpoint(pair.path_b), options), on_line=lambda _l: None)


async def status(sock: Path) -> dict[str, dict[str, Any]]:
    answer = await asyncio.to_thread(read_status, sock)
    return {row["line"]: row for row in answer["lines"]}


async def until(check: Any, what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not await check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


async def run(lines: int, moves: int, *, keep: bool = False) -> dict[str, Any]:
    """The run in a folder of its own, removed after a run with no problem (``keep``: not);
    a run that failed leaves it, named in the report as ``log``, to be looked at."""
    tmp = Path(tempfile.mkdtemp(prefix="dxserial-serve-rig-"))
    report = await _run(tmp, lines, moves)
    report["folder"] = str(tmp)
    if not report["problems"] and not keep:
        shutil.rmtree(tmp, ignore_errors=True)
        report["log"] = "(removed: no problem)"
    return report


async def _run(tmp: Path, lines: int, moves: int) -> dict[str, Any]:
    names = [f"line{i:02d}" for i in range(lines)]
    unplugged, removed, added = names[0], names[1], f"line{lines:02d}"
    pairs = {n: VirtualPair(str(tmp / f"{n}A"), str(tmp / f"{n}B")).start()
             for n in [*names, added]}
    followers = {n: follower(pairs[n], i + 1, n) for i, n in enumerate(pairs)}
    serial_tasks = [asyncio.create_task(r.run()) for r in followers.values()]
    rig = tmp / "rig.toml"
    rig.write_text(rig_text(tmp, {n: pairs[n] for n in names}))
    sock = tmp / "serve.sock"
    log = tmp / "serve.log"
    started = time.monotonic()
    with log.open("w") as err:
        serve = subprocess.Popen([sys.executable, "-m", "dxserial", "serve", str(rig)],
                                 stdout=subprocess.DEVNULL, stderr=err)
    try:
        async def all_running(which: list[str]) -> bool:
            if not sock.exists():
                return False
            rows = await status(sock)
            return all(rows.get(n, {}).get("state") == "running" for n in which)

        await until(lambda: all_running(names), "every line running")
        rows = await status(sock)

        async def play(name: str, port: str, seed: int) -> RunResult:
            runner = EngineRunner(
                Player(PlayerConfig(role=Role.INITIATOR, depth=1, seed=seed, games=1,
                                    moves=moves, name=f"tcp-{name}")),
                EngineEndpoint(parse_engine_endpoint(f"tcp://{port}")), on_line=lambda _l: None)
            return await asyncio.wait_for(runner.run(), 600)

        games = {n: asyncio.create_task(play(n, rows[n]["listen"], 100 + i))
                 for i, n in enumerate(names)}

        async def moving() -> bool:
            rows = await status(sock)
            return all(rows[n]["moves"] >= 4 for n in names)

        await until(moving, "every game under way")
        since = {n: (await status(sock))[n]["since"] for n in names}
        pairs[unplugged].unplug("a")

        async def lost() -> bool:
            return bool((await status(sock))[unplugged]["state"] == "port lost")

        await until(lost, "the unplugged line's port lost")
        pairs[unplugged].replug("a")
        await until(lambda: all_running([unplugged]), "the unplugged line back")
        rig.write_text(rig_text(tmp, {n: pairs[n] for n in [*names, added] if n != removed}))
        serve.send_signal(signal.SIGHUP)
        await until(lambda: all_running([added]), "the added line running")
        rows = await status(sock)
        assert removed not in rows, "the removed line is still served"
        extra = await play(added, rows[added]["listen"], 999)
        results = {n: await task for n, task in games.items()}

        async def settled() -> bool:  # the last GAMEEND echoed: nothing in flight
            rows = await status(sock)
            return all(r["counts"]["delivered"] == r["counts"]["queued"]
                       + r["counts"]["sent-by-bridge"] for r in rows.values())

        await until(settled, "every line's last message delivered", 30)
        final = await status(sock)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)
        for runner in followers.values():
            runner.stop()
        _done, waiting = await asyncio.wait(serial_tasks, timeout=5)
        for task in waiting:
            task.cancel()
        await asyncio.gather(*serial_tasks, return_exceptions=True)
        for pair in pairs.values():
            pair.close()
    elapsed = time.monotonic() - started
    text = log.read_text()
    report: dict[str, Any] = {"lines": lines, "seconds": round(elapsed, 1), "problems": []}
    problems: list[str] = report["problems"]
    played = [n for n in names if n != removed] + [added]
    for name in played:
        result = extra if name == added else results[name]
        if result.code != 0:
            problems.append(f"{name}: the TCP engine ended with {result}")
        pdns = sorted((tmp / "games" / name).glob("*.pdn"))
        replayed = [g for p in pdns for g in load_games(p, False)[0]]
        if len(replayed) != 1 or replayed[0].violations or not replayed[0].result:
            problems.append(f"{name}: {len(replayed)} game(s) replayed, "
                            f"{sum(g.violations for g in replayed)} violation(s)")
        closing = re.findall(rf"\[{name}\] (bridge stopped: .*)$", text, re.MULTILINE)
        if len(closing) != 1:
            problems.append(f"{name}: {len(closing)} closing line(s)")
            continue
        counts = read_counts(closing[0])  # the line's last word; the status may lag it
        if any(final[name]["counts"][k] > counts[k] for k in counts):
            problems.append(f"{name}: status {final[name]['counts']} beyond the closing "
                            f"line's {counts}")
        if counts["delivered"] != counts["queued"] + counts["sent-by-bridge"] or counts["lost"]:
            problems.append(f"{name}: counts do not add up: {counts}")
        if name not in (unplugged, added) and (
            final[name]["since"] != since[name] or final[name]["starts"] != 1
        ):
            problems.append(f"{name}: was touched ({final[name]})")
    report["games"] = len(played)
    report["messages"] = sum(
        sum(read_counts(c)[k] for k in ("serial->tcp", "tcp->serial"))
        for c in re.findall(r"\] (bridge stopped: .*)$", text, re.MULTILINE))
    report["unplugged line"] = unplugged
    report["removed, added"] = [removed, added]
    report["log"] = str(log)
    return report


def section(lines: int = 16, moves: int = 30) -> str:
    """The RESULTS.md section (bench/run.py --only serve-rig)."""
    report = asyncio.run(run(lines, moves))
    verdict = "every check held" if not report["problems"] else "; ".join(report["problems"])
    return "\n".join([
        "| lines | games played | messages carried | wall time s | result |",
        "|---|---|---|---|---|",
        f"| {lines} | {report['games']} | {report['messages']} | {report['seconds']} | "
        f"{verdict} |",
        "",
        f"{lines} lines on `dxserial vpair` cables (in this process), a built-in follower on "
        f"every end B, `dxserial serve` (a process of its own, NULMODEM, echo timeout "
        f"{ECHO:g} s) on every end A, a built-in initiator over TCP on every line: a game of "
        f"{moves} moves on every line at once. While they play, line "
        f"{report['unplugged line']}'s end A is unplugged and replugged, and SIGHUP after "
        f"the file changed removes {report['removed, added'][0]} and adds "
        f"{report['removed, added'][1]}, which plays a game of its own. Checked: every TCP "
        "engine exits 0, every line's PDN replays with no violation, each line's closing "
        "counts (its log line, named) hold its status, delivered = queued + sent-by-bridge, "
        "nothing lost, and the lines not unplugged, removed or added were never restarted "
        "(same start time, one start).",
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lines", type=int, default=16)
    ap.add_argument("--moves", type=int, default=30)
    ap.add_argument("--keep", action="store_true", help="keep the run's folder (log, PDN)")
    args = ap.parse_args()
    report = asyncio.run(run(args.lines, args.moves, keep=args.keep))
    print(json.dumps(report, indent=2))
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
