#!/usr/bin/env python3
"""Games per hour of a tournament on a Dask cluster of 1, 2 and 4 workers on this machine,
beside the same tournament played here (``concurrency`` 1 and 2): is the director the
bottleneck?  ``python3 bench/cluster_rate.py`` prints the table; bench/run.py ``--only
cluster`` writes it into RESULTS.md.

Each run is a real ``dxserial tournament`` process; the cluster rows have a real
``dask scheduler`` and ``dask worker`` processes (one thread each: one game at a time)
on 127.0.0.1.  Games are short (the built-in engine at depth 1, a move limit), so what
is measured is the cost around a game: starting its two engine processes, the task's
round trip, the director's recording.  The director's CPU time (its own, from wait4) per
game says how many games a second one director could serve.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dxserial.testing.cluster import DaskRig

ENGINE = [sys.executable, "-m", "dxserial", "engine"]


def _file(folder: Path, cluster: str | None, concurrency: int, rounds: int, moves: int) -> Path:
    tables = []
    for name, speaks, where in (("a", "dxp-server", "listen"), ("b", "dxp-client", "tcp"),
                                ("c", "dxp-server", "listen"), ("d", "dxp-client", "tcp")):
        argv = [*ENGINE, f"{where}://127.0.0.1:{{port}}", "--role", "follower", "--depth", "1"]
        tables.append(f'[engines.{name}]\ncommand = {json.dumps(argv)}\nspeaks = "{speaks}"\n')
    top = f"moves = {moves}\nminutes = 1\nmove_timeout = 20\nrounds = {rounds}\n"
    top += f"concurrency = {concurrency}\n"
    if cluster:
        top += f'cluster = "{cluster}"\n'
    path = folder / "bench.toml"
    path.write_text(top + "".join(tables))
    return path


def _tournament(file: Path) -> tuple[float, float, int]:
    """Wall seconds, the director's own CPU seconds, games recorded."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "dxserial", "tournament", str(file), "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"tournament failed ({proc.returncode}): {err[-500:]}")
    state = json.loads((file.parent / "games" / "tournament-state.json").read_text())
    return wall, usage.ru_utime + usage.ru_stime, len(state["games"])


def measure(workers: int | None, concurrency: int, rounds: int, moves: int) -> dict[str, float]:
    """One run: on ``workers`` Dask workers (None: here, at ``concurrency``)."""
    with tempfile.TemporaryDirectory(prefix="dxserial-bench-cluster-") as tmp:
        folder = Path(tmp)
        if workers is None:
            wall, cpu, games = _tournament(_file(folder, None, concurrency, rounds, moves))
        else:
            with DaskRig(folder / "rig") as rig:
                for n in range(workers):
                    rig.add_worker(f"w{n + 1}")
                wall, cpu, games = _tournament(_file(folder, rig.address, 1, rounds, moves))
    return {"wall": wall, "cpu": cpu, "games": games}


CONFIGS = (("here, concurrency 1", None, 1), ("here, concurrency 2", None, 2),
           ("cluster, 1 worker", 1, 1), ("cluster, 2 workers", 2, 1),
           ("cluster, 4 workers", 4, 1))


def run(repeat: int, rounds: int, moves: int) -> str:
    rows = ["| where the games run | games | wall s | games per hour | director CPU s per game |",
            "|---|---|---|---|---|"]
    for label, workers, concurrency in CONFIGS:
        runs = [measure(workers, concurrency, rounds, moves) for _ in range(repeat)]
        wall = statistics.median(r["wall"] for r in runs)
        cpu = statistics.median(r["cpu"] / r["games"] for r in runs)
        games = int(runs[0]["games"])
        note = " (engines included)" if workers is None else ""
        rows.append(f"| {label} | {games} | {wall:.1f} | {games / wall * 3600:.0f} | "
                    f"{cpu:.3f}{note} |")
        print(rows[-1], file=sys.stderr)
    load = os.getloadavg()[0]
    return "\n".join(rows) + (
        f"\n\nA round robin of 4 built-in engines (depth 1, `moves = {moves}`), {rounds} "
        f"round(s), every engine a command: played here, the director starts each engine "
        f"once and keeps it from game to game; on a worker each game starts its two engines "
        f"and stops them after it (about a second of Python start-up each on this machine, "
        f"most of a game this short); wall time of the whole "
        f"`dxserial tournament` process (start-up, connecting to the scheduler included), "
        f"median of {repeat} run(s); workers `--nthreads 1 --no-nanny` on this 2-core "
        f"machine, so 4 workers run 8 engine processes on 2 cores. Director CPU: the "
        f"tournament process's own user+system time (wait4); played here, its engines' "
        f"time is in it. Load average {load:.2f} at the end (the machine is shared). "
        f"The director is not the bottleneck: its CPU per game on a cluster is a few "
        f"hundredths of a second (one core: over 50 000 games an hour); what limits these "
        f"rows is the engines' start-up competing for 2 cores, which more workers on the "
        f"same 2 cores only share out."
    )


def section(args: argparse.Namespace | None = None) -> str:
    """For bench/run.py: short games (the cost around a game), then longer ones."""
    repeat = min(getattr(args, "repeat", None) or 1, 2)
    return (f"Short games:\n\n{run(repeat, 2, 10)}\n\n"
            "More moves a game (`moves = 60`, 1 round; at depth 1 still under a second of "
            f"play):\n\n{run(repeat, 1, 60)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=1, help="runs per configuration (median)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds (12 games each)")
    ap.add_argument("--moves", type=int, default=10, help="move limit of each game")
    args = ap.parse_args()
    print(run(args.repeat, args.rounds, args.moves))
    return 0


if __name__ == "__main__":
    sys.exit(main())
