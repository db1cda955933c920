#!/usr/bin/env python3
"""Games per hour of the same tournament played here (``concurrency = 2``) and on a Dask
cluster of two workers on this machine (one thread each), run in turn (ABAB...) so that
the shared machine's load falls on both alike; medians, and the median of each pair's
ratio.  ``python3 bench/cluster_rate.py`` prints the tables; bench/run.py ``--only
cluster`` writes them into RESULTS.md.

Each run is a real ``dxserial tournament`` process; the cluster runs have a real
``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 (started before the clock
starts, stopped after).  Workloads: a round robin of 4 built-in engines (depth 1) with 10-
and 60-move games, and a real engine, Moby Dam (built from its source: give its folder with
``--mobydam DIR`` or ``DXSERIAL_MOBYDAM``; ``make`` in ``main/``), against the built-in one.
The director's own CPU (wait4) per game says how many games one director could serve.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dxserial.testing.cluster import DaskRig

ENGINE = [sys.executable, "-m", "dxserial", "engine"]


def _builtin(name: str, speaks: str) -> str:
    where = "listen" if speaks == "dxp-server" else "tcp"
    argv = [*ENGINE, f"{where}://127.0.0.1:{{port}}", "--role", "follower", "--depth", "1"]
    return f'[engines.{name}]\ncommand = {json.dumps(argv)}\nspeaks = "{speaks}"\n'


def _moby(folder: Path) -> str:
    """Moby Dam as a DXP client: a 64 MiB hash table (``-t 22``), its opening book, 100 ms
    a move (its console's ``time`` command, then a console that stays silent)."""
    program, book = folder / "main" / "mobydam", folder / "book" / "book.opn"
    shell = f"(echo 'time 100'; sleep 100000) | {program} -t 22 -b {book} -c 127.0.0.1 -p {{port}}"
    return (f'[engines.moby]\ncommand = {json.dumps(["sh", "-c", shell])}\n'
            'speaks = "dxp-client"\nstop_grace = 1\n')


@dataclass(frozen=True)
class Workload:
    label: str
    rounds: int
    moves: int
    tables: Callable[[], str]


def builtins() -> str:
    return "".join(_builtin(n, s) for n, s in (("a", "dxp-server"), ("b", "dxp-client"),
                                                 ("c", "dxp-server"), ("d", "dxp-client")))


def _file(folder: Path, work: Workload, cluster: str | None) -> Path:
    top = f"moves = {work.moves}\nminutes = 1\nmove_timeout = 20\nrounds = {work.rounds}\n"
    top += "concurrency = 2\n"
    if cluster:
        top += f'cluster = "{cluster}"\n'
    path = folder / "bench.toml"
    path.write_text(top + work.tables())
    return path


def _tournament(file: Path) -> dict[str, float]:
    """Wall seconds, the director's own CPU seconds, games recorded, and the seconds from
    the first game's result to the last's (the rate once started: no start-up, no end)."""
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "dxserial", "tournament", str(file)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    results: list[float] = []
    tail: list[str] = []
    for line in proc.stdout:  # read as it comes: the director never waits on the pipe
        if re.match(r"\[\d+/\d+\] game \d+:", line):
            results.append(time.monotonic())
        tail = [*tail, line][-10:]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"tournament failed ({proc.returncode}): {''.join(tail)}")
    state = json.loads((file.parent / "games" / "tournament-state.json").read_text())
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "games": len(state["games"]),
            "steady": results[-1] - results[0] if len(results) > 1 else wall}


def measure(work: Workload, cluster: bool) -> dict[str, float]:
    """One run: here at concurrency 2, or on two workers of one thread each."""
    with tempfile.TemporaryDirectory(prefix="dxserial-bench-cluster-") as tmp:
        folder = Path(tmp)
        if not cluster:
            return _tournament(_file(folder, work, None))
        with DaskRig(folder / "rig") as rig:
            rig.add_workers({"w1": "", "w2": ""})
            return _tournament(_file(folder, work, rig.address))


def workloads(mobydam: Path | None, only: str = "") -> list[Workload]:
    found = [Workload("built-in engines, 10-move games", 4, 10, builtins),
             Workload("built-in engines, 60-move games", 1, 60, builtins),
             # An SPRT's length: the start-up (Dask, the engines) spread over many games.
             Workload("built-in engines, 10-move games, a longer event", 24, 10, builtins)]
    if mobydam is not None and (mobydam / "main" / "mobydam").exists():
        def tables() -> str:
            return _moby(mobydam) + _builtin("builtin", "dxp-server")
        found.append(Workload("Moby Dam against the built-in engine, 10-move games", 6, 10,
                              tables))
    return [w for w in found if only in w.label]


def run(repeat: int, mobydam: Path | None, only: str = "") -> str:
    works = workloads(mobydam, only)
    before = os.getloadavg()
    runs: dict[tuple[str, bool], list[dict[str, float]]] = {}
    for turn in range(repeat):  # A B A B ...: the load falls on both alike
        for work in works:
            for cluster in ((False, True) if turn % 2 == 0 else (True, False)):
                one = measure(work, cluster)
                runs.setdefault((work.label, cluster), []).append(one)
                rate = one["games"] / one["wall"] * 3600
                print(f"{work.label}: {'cluster' if cluster else 'here'} {one['wall']:.1f} s "
                      f"{rate:.0f} games/h, once started {one['steady']:.1f} s, load "
                      f"{os.getloadavg()[0]:.2f}", file=sys.stderr)
    after = os.getloadavg()
    rows = ["| games | where they run | games | median wall s | games per hour | "
            "cluster / here | games per hour once started | cluster / here | "
            "director CPU s per game |",
            "|---|---|---|---|---|---|---|---|---|"]
    for work in works:
        here, there = runs[(work.label, False)], runs[(work.label, True)]
        for label, done in (("here, concurrency 2", here), ("cluster, 2 workers", there)):
            games = int(done[0]["games"])
            wall = statistics.median(r["wall"] for r in done)
            steady = statistics.median((r["games"] - 1) / r["steady"] * 3600 for r in done)
            cpu = statistics.median(r["cpu"] / r["games"] for r in done)
            whole = once = ""
            if done is there:
                pairs = list(zip(here, there, strict=True))
                whole = _ratios([h["wall"] / t["wall"] for h, t in pairs])
                once = _ratios([h["steady"] / t["steady"] for h, t in pairs])
            note = " (engines included)" if done is here else ""
            rows.append(f"| {work.label} | {label} | {games} | {wall:.1f} | "
                        f"{games / wall * 3600:.0f} | {whole} | {steady:.0f} | {once} | "
                        f"{cpu:.3f}{note} |")
    missing = "" if any("Moby" in w.label for w in works) or only else (
        "\n\nMoby Dam not measured: give its folder (built with `make` in `main/`) with "
        "`--mobydam DIR` or `DXSERIAL_MOBYDAM`.")
    return "\n".join(rows) + (
        f"\n\n{repeat} run(s) of each, interleaved (here, cluster, cluster, here, ...); wall "
        "time of the whole `dxserial tournament` process (start-up, importing Dask and "
        "connecting to the scheduler, the engines' first start and their stop at the end "
        "included); \"once started\": from the first game's result to the last's. Workers "
        "`--nthreads 1 --no-nanny` on this 2-core machine, started before the clock. Engines "
        "are kept from game to game in both (on the cluster by each worker). A ratio is "
        "the cluster's games per hour over the local ones, per pair of runs: the median "
        f"(and each pair's). Load average (1 min) {before[0]:.2f} before, {after[0]:.2f} "
        "after (the machine is shared with other work)." + missing
    )


def _ratios(ratios: list[float]) -> str:
    each = ", ".join(f"{r:.2f}" for r in ratios)
    return f"**{statistics.median(ratios):.2f}x** ({each})"


def _mobydam(given: str | None) -> Path | None:
    text = given or os.environ.get("DXSERIAL_MOBYDAM")
    return Path(text) if text else None


def section(args: argparse.Namespace | None = None) -> str:
    """For bench/run.py."""
    repeat = max(getattr(args, "repeat", None) or 4, 2)
    return run(repeat, _mobydam(getattr(args, "mobydam", None)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=4, help="runs of each (median)")
    ap.add_argument("--mobydam", help="Moby Dam's source folder, built (main/mobydam)")
    ap.add_argument("--only", default="", help="only the workloads whose label has this")
    args = ap.parse_args()
    print(run(args.repeat, _mobydam(args.mobydam), args.only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
