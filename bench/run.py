#!/usr/bin/env python3
"""One command for every measured figure: ``python3 bench/run.py`` writes bench/RESULTS.md.

Sections (``--only NAME`` runs one and keeps the others' last figures in RESULTS.md):

* ``bridges``: dxserial's bridge (``--link nul``) beside ser2net (``sendon='\\x00'``),
  socat (``nodelay``), the Python floor, the transport floor (bench/transport_floor.py)
  and the plumbing floor (bench/plumbing_floor.py)
  on the shared harness (``shared/bench/bench.py``, found beside the
  repository or given with ``--harness``): median round trip and bulk MiB/s with the
  ascii pattern, medians over ``--repeat`` runs, ratios measured in the same run.
* ``cpu``: bench/cpu_per_message.py, the CPU time each bridge spends per message in the
  latency run (user and system), beside ser2net's and the two floors'.
* ``game``: bench/game_latency.py, the Scan game's legal messages one way through
  ser2net, the transport floor and dxserial's bridge (one-way delay per message).
* ``nulmodem``, ``parsing``, ``movegen``, ``idle``: see bench/perf.py (NULMODEM delivery
  time against the line's physical minimum; parse/encode rates; move generation beside
  dame-rs and pydraughts, perft(7); an idle bridge's CPU, memory and descriptors, start-up).
* ``faults``: bench/faults.py, drop and corruption at 0.1/1/5 %, unplug/replug, TCP peers
  that hang up, idle or read slowly: sent, delivered once/twice, lost, memory.
* ``soak``: bench/soak.py, games between built-in engines through the bridge
  over NULMODEM: every record replays legally; memory and descriptors stay flat.
* ``line-soak``: bench/line_soak.py, three lines on vpairs with the strict engine on each
  serial end, noise, replugs before and after the grace, bridge SIGKILLs, look-alike ports
  sharing a state folder: refusals, phantom deliveries, records that replay.
* ``hostile``: bench/hostile.py, hostile TCP clients (random bytes, control bytes, huge
  frames, many clients, reconnects, silence, half a message) one at a time against a bridge
  with a built-in engine on the serial end: alive, the next game played, memory, log lines.
* ``serve``: bench/serve_memory.py, ``dxserial serve``'s resident memory with 1, 8 and 32
  lines beside ser2net serving the same lines and a ``dxserial bridge`` per line; CPU per
  message with every line busy.
* ``serve-rig``: bench/serve_rig.py, 16 lines on vpairs with built-in engines on both ends,
  a game on each at once, one cable unplugged and replugged, one line removed and one added
  by SIGHUP: every PDN replays, every line's counts add up, the others untouched.
* ``cluster``: bench/cluster_rate.py, games per hour of a tournament here and on 2 Dask
  workers on this machine beside the same tournament played here; the director's CPU per game.
* ``fuzz``: the long form of tests/testing/test_fuzz.py, ``DXSERIAL_FUZZ_SECONDS`` (default 20)
  per target; see bench/fuzz.py.

Every figure is a median over repeated runs on the machine described at the top of the
file; compare ratios within one file, never absolute numbers across machines.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from cluster_rate import section as run_cluster  # bench/cluster_rate.py
from cpu_per_message import run_section as cpu_section  # bench/cpu_per_message.py
from faults import section as run_faults  # bench/faults.py
from fuzz import run_section as run_fuzz  # bench/fuzz.py
from game_latency import BASELINE_ENV, BASELINE_KIND  # bench/game_latency.py
from game_latency import run_section as game_section
from hostile import section as run_hostile  # bench/hostile.py
from line_soak import section as run_line_soak  # bench/line_soak.py
from perf import run_idle, run_movegen, run_nulmodem, run_parsing  # bench/perf.py
from probe_matrix import run_section as run_probe  # bench/probe_matrix.py
from serve_memory import section as serve_section  # bench/serve_memory.py
from serve_rig import section as serve_rig_section  # bench/serve_rig.py
from soak import section as run_soak  # bench/soak.py

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
FRAME_BYTES = 12  # the harness's frame, 'M0012061100' + NUL
# A DXP bridge forwards whole messages only, so bulk streams a whole number of frames.
BULK_BYTES = (2 * 1024 * 1024 // FRAME_BYTES) * FRAME_BYTES


def find_harness(given: str | None) -> Path:
    if given:
        return Path(given)
    for parent in HERE.parents:
        candidate = parent / "shared" / "bench" / "bench.py"
        if candidate.is_file():
            return candidate
    sys.exit("bench: shared/bench/bench.py not found beside the repository; use --harness")


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs ({model}), {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f} at start"
    )


# ----------------------------------------------------------------------- bridges


def bridge_configs(harness: Path) -> list[tuple[str, list[str]]]:
    dx = f"{shutil.which('dxserial') or sys.executable + ' -m dxserial'}"
    configs = [("pty floor (no bridge)", ["--bridge", "none"])]
    if shutil.which("ser2net"):
        configs.append(
            ("ser2net, sendon='\\x00'", ["--bridge", "ser2net", "--ser2net-opt", "sendon='\\x00'"])
        )
    if shutil.which("socat"):
        configs.append(("socat, nodelay", ["--bridge", "socat", "--socat-tcp-opts", "nodelay"]))
    floor = Path(harness).parent / "floor_bridge.py"
    if floor.is_file():  # the least a Python DXP bridge must do: the Python floor
        for label, flag in (("python floor (asyncio)", ""), ("python floor (uvloop)", " --uvloop")):
            cmd = f"{sys.executable} {floor} {{serial}} {{port}}{flag}"
            configs.append((label, ["--bridge", "cmd", "--bridge-cmd", cmd]))
    transports = HERE / "transport_floor.py"  # the transports dxserial uses, no work
    configs.append(
        ("transport floor (uvloop)",
         ["--bridge", "cmd", "--bridge-cmd", f"{sys.executable} {transports} {{serial}} {{port}}"])
    )
    plumbing = HERE / "plumbing_floor.py"  # the bridge with a relay that only forwards
    configs.append(
        ("plumbing floor (uvloop)",
         ["--bridge", "cmd", "--bridge-cmd", f"{sys.executable} {plumbing} {{serial}} {{port}}"])
    )
    bridge = "bridge {serial} --link nul --listen 127.0.0.1:{port} -q"
    runs = [
        ("dxserial bridge --link nul", dx, ""),
        ("dxserial bridge --link nul (asyncio loop)", f"env DXSERIAL_LOOP=asyncio {dx}", ""),
        ("dxserial bridge --link nul --referee off", dx, " --referee off"),
    ]
    baseline = os.environ.get(BASELINE_ENV)
    if baseline:  # the same command, run from the other checkout's code
        # -P: the current folder (say this checkout) must not come before PYTHONPATH.
        other = f"env PYTHONPATH={baseline} {sys.executable} -P -m dxserial"
        # A main from before issue 29 ended a game before every first GAMEREQ, and took
        # the echo peer's first MOVE for an old game's: only it needs the check off.
        runs.insert(1, (BASELINE_KIND, other, " --no-serial-check"))
    for label, program, extra in runs:
        command = f"{program} {bridge}{extra}"
        configs.append((label, ["--bridge", "cmd", "--bridge-cmd", command]))
    return configs


def run_bridges(args: argparse.Namespace) -> str:
    """Rounds: each round runs every bridge once, in turn, so that a slow spell of this
    shared machine hits all of them alike; ratios are formed within a round."""
    harness = find_harness(args.harness)
    configs = bridge_configs(harness)
    rows: dict[str, dict[str, list[float]]] = {
        label: {"rtt": [], "p99": [], "mibs": [], "intact": []} for label, _ in configs
    }
    per_round: list[dict[str, dict[str, float]]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_no in range(args.repeat):
            this_round: dict[str, dict[str, float]] = {}
            for label, extra in configs:
                out = Path(tmp) / "out.jsonl"
                out.unlink(missing_ok=True)
                cmd = [
                    sys.executable, str(harness), *extra, "--bulk-pattern", "ascii",
                    "--bulk-bytes", str(BULK_BYTES), "--repeat", "1",
                    "--n", str(args.frames), "--json-out", str(out), "--label", label,
                ]
                print(f"bench: round {round_no + 1}: {label} ...", file=sys.stderr, flush=True)
                subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False, timeout=3600)
                row = rows[label]
                got = this_round.setdefault(label, {})
                for line in out.read_text().splitlines() if out.exists() else []:
                    rec = json.loads(line)
                    if "error" in rec:
                        notes.append(f"{label}: {rec['error']}")
                    elif rec["phase"] == "latency":
                        row["rtt"].append(rec["us_median"])
                        row["p99"].append(rec["us_p99"])
                        got["rtt"] = rec["us_median"]
                    elif rec.get("MiB_per_s") is not None:
                        row["mibs"].append(rec["MiB_per_s"])
                        row["intact"].append(1.0 if rec["intact"] else 0.0)
                        got["mibs"] = rec["MiB_per_s"]
            per_round.append(this_round)
    ser2net = next((k for k in rows if k.startswith("ser2net")), None)

    def round_ratios(label: str, key: str) -> list[float]:
        if ser2net is None:
            return []
        return [
            r[label][key] / r[ser2net][key]
            for r in per_round
            if key in r.get(label, {}) and r.get(ser2net, {}).get(key)
        ]

    lines = [
        "| bridge | runs | round trip median µs | p99 µs | p99 / median | bulk MiB/s (ascii) "
        "| bulk intact | round trip vs ser2net | bulk vs ser2net |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, v in rows.items():
        rtt, p99 = _median(v["rtt"]), _median(v["p99"])
        spread = f"{p99 / rtt:.1f}" if rtt and p99 else "-"
        vs_rtt, vs_bulk = _median(round_ratios(label, "rtt")), _median(round_ratios(label, "mibs"))
        lines.append(
            f"| {label} | {len(v['rtt'])} | {_fmt(rtt)} | {_fmt(p99)} | {spread} "
            f"| {_fmt(_median(v['mibs']), 2)} | {int(sum(v['intact']))}/{len(v['intact'])} "
            f"| {_fmt_ratio(vs_rtt)} | {_fmt_ratio(vs_bulk)} |"
        )
    text = "\n".join(lines)
    text += (
        f"\n\nLatency: {args.frames} frames `M0012061100\\0` one at a time. Bulk: "
        f"{BULK_BYTES} bytes of repeated frames (a whole number of messages: a DXP bridge "
        "forwards whole messages only), echoed back through the bridge, checked byte for byte. "
        f"{args.repeat} rounds; each round runs every bridge once, in this order; a ratio is "
        "the median over rounds of (this bridge / ser2net) within the round. Python floor: "
        "`shared/bench/floor_bridge.py` (raw file descriptors, split on NUL, one write per "
        "message). Transport floor: `bench/transport_floor.py`, dxserial's own serial and TCP "
        "transports doing the same and nothing more. Plumbing floor: `bench/plumbing_floor.py`, "
        "the real bridge (core, link drivers, layer-1 links, transports) with a relay that "
        "only forwards: from the transport floor to it is the plumbing's cost per message, "
        "from it to the bridge the relay's (parse, sessions, judging, counts)."
    )
    if notes:
        text += "\n\nErrors: " + "; ".join(notes)
    return text


def _fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


# ----------------------------------------------------------------------- results file

SECTIONS: dict[str, tuple[str, Callable[[argparse.Namespace], str]]] = {
    "bridges": ("Bridge round trip and bulk throughput beside ser2net and socat", run_bridges),
    "cpu": ("CPU time per message beside ser2net",
            lambda args: cpu_section(find_harness(args.harness), args.repeat)),
    "game": ("A real game's messages through the bridge beside ser2net",
             lambda args: game_section(args.repeat)),
    "nulmodem": ("NULMODEM delivery time against the line's physical minimum", run_nulmodem),
    "parsing": ("Message parsing, encoding and framing rates", run_parsing),
    "movegen": ("Legal-move generation beside dame-rs and pydraughts; perft(7)", run_movegen),
    "idle": ("An idle bridge's footprint; start-up time", run_idle),
    "fuzz": ("Fuzzing, long form", run_fuzz),
    "faults": ("Faults: a bad line, a pulled cable, misbehaving TCP peers", run_faults),
    "soak": ("Soak: games through the bridge over NULMODEM", run_soak),
    "line-soak": ("Line soak: noise, replugs, kills and look-alike ports on several lines",
                  run_line_soak),
    "hostile": ("Hostile TCP clients, one attack at a time", run_hostile),
    "probe": ("dxserial probe against every peer of its issue, real processes", run_probe),
    "serve": ("dxserial serve: memory per line and CPU per message beside ser2net",
              lambda args: serve_section(min(args.repeat, 3))),
    "serve-rig": ("dxserial serve: 16 lines on vpairs, unplugged and reloaded while they play",
                  lambda args: serve_rig_section()),
    "cluster": ("A tournament here and on a Dask cluster of two workers: games per hour",
                run_cluster),
}


def read_sections() -> dict[str, str]:
    """The sections of the current RESULTS.md, so ``--only`` keeps the others."""
    found: dict[str, str] = {}
    if not RESULTS.exists():
        return found
    current: str | None = None
    body: list[str] = []
    for line in RESULTS.read_text().splitlines():
        if line.startswith("<!-- section: "):
            if current:
                found[current] = "\n".join(body).strip()
            current = line.removeprefix("<!-- section: ").removesuffix(" -->")
            body = []
        elif current:
            body.append(line)
    if current:
        found[current] = "\n".join(body).strip()
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", choices=sorted(SECTIONS), action="append")
    ap.add_argument("--repeat", type=int, default=5, help="runs per configuration (median)")
    ap.add_argument("--frames", type=int, default=2000, help="latency frames per run")
    ap.add_argument("--harness", help="path of shared/bench/bench.py")
    ap.add_argument("--fault-messages", type=int, help="faults: messages per direction")
    ap.add_argument("--soak-games", type=int, help="soak: games (default 60)")
    ap.add_argument(
        "--baseline", metavar="DIR",
        help="bridges, cpu: also run the bridge of another checkout (say the previous main,\n"
        "made with `git worktree add DIR COMMIT`) in the same rounds, for a side-by-side row",
    )
    args = ap.parse_args()
    if args.baseline:
        os.environ[BASELINE_ENV] = str(Path(args.baseline).resolve())
    sections = read_sections()
    for name in args.only or list(SECTIONS):
        title, func = SECTIONS[name]
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        sections[name] = f"## {title}\n\nMeasured {stamp} on {machine()}.\n\n{func(args)}"
    parts = [
        "# dxserial measured",
        "",
        "Written by `python3 bench/run.py` (see its docstring). Each figure is a median over "
        "repeated runs; ratios compare figures measured in the same run on the same machine.",
    ]
    for name in SECTIONS:
        if name in sections:
            parts += ["", f"<!-- section: {name} -->", sections[name]]
    RESULTS.write_text("\n".join(parts) + "\n")
    print(f"bench: wrote {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
