"""CPU time a bridge spends per message, beside ser2net's, measured in the same run.

Round-trip latency on a shared 2-CPU machine swings by a third from run to run; CPU time
per message is steadier, and in a ping-pong it is what the round trip is made of once the
bridge is the busiest program in it. Each bridge runs as the child of a small wrapper
(``cpu_per_message.py _wrap OUT KIND SERIAL PORT``) that, when the shared harness stops it,
writes the child's user and system time. The harness's latency phase drives SHORT and then
LONG round trips through a fresh bridge each time; the difference divided by the messages
between them is the CPU per message (start-up and shut-down cancel out). A round trip
carries one message through the bridge in each direction.

    python3 bench/cpu_per_message.py [ROUNDS]
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

from game_latency import BASELINE_ENV, BASELINE_KIND, _bridge_command  # bench/game_latency.py
from tables import median_row  # bench/tables.py

HERE = Path(__file__).resolve().parent
SHORT, LONG = 200, 5200
KINDS = ["ser2net", "transport floor", "plumbing floor", "dxserial bridge --link nul"]


def _command(kind: str, path: str, port: int, tmp: str) -> list[str]:
    if kind == "plumbing floor":
        return [sys.executable, str(HERE / "plumbing_floor.py"), path, str(port)]
    return _bridge_command(kind, path, port, tmp)


def _wrap(out: str, kind: str, path: str, port: str) -> int:
    """Run the bridge as a child; on SIGTERM stop it and write its CPU times to ``out``."""
    import resource

    with tempfile.TemporaryDirectory() as tmp:
        child = subprocess.Popen(_command(kind, path, int(port), tmp))

        def stop(signum: int, frame: FrameType | None) -> None:
            child.terminate()

        signal.signal(signal.SIGTERM, stop)
        child.wait()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        Path(out).write_text(json.dumps({"user": usage.ru_utime, "sys": usage.ru_stime}))
    return 0


def _cpu(harness: Path, kind: str, frames: int, out: Path) -> dict[str, float]:
    out.unlink(missing_ok=True)
    wrap = f"{sys.executable} {Path(__file__).resolve()} _wrap {out} '{kind}' {{serial}} {{port}}"
    subprocess.run(
        [sys.executable, str(harness), "--bridge", "cmd", "--bridge-cmd", wrap,
         "--phase", "latency", "--n", str(frames), "--repeat", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, timeout=600,
    )
    if not out.exists():
        raise RuntimeError(f"{kind}: no CPU figures (did the bridge start?)")
    return dict(json.loads(out.read_text()))


def run_section(harness: Path, rounds: int) -> str:
    kinds = [k for k in KINDS if k != "ser2net" or shutil.which("ser2net")]
    if os.environ.get(BASELINE_ENV):  # bench/run.py --baseline DIR: its bridge, same rounds
        kinds.insert(kinds.index("dxserial bridge --link nul"), BASELINE_KIND)
    per: dict[str, dict[str, list[float]]] = {k: {"all": [], "user": [], "sys": [],
                                                  "ratio": []} for k in kinds}
    messages = 2 * (LONG - SHORT)
    with tempfile.TemporaryDirectory() as tmp:
        for round_no in range(rounds):
            this: dict[str, float] = {}
            for kind in kinds:
                print(f"bench: cpu round {round_no + 1}: {kind} ...", file=sys.stderr, flush=True)
                short = _cpu(harness, kind, SHORT, Path(tmp) / "short.json")
                long = _cpu(harness, kind, LONG, Path(tmp) / "long.json")
                user = (long["user"] - short["user"]) / messages * 1e6
                system = (long["sys"] - short["sys"]) / messages * 1e6
                this[kind] = user + system
                per[kind]["all"].append(user + system)
                per[kind]["user"].append(user)
                per[kind]["sys"].append(system)
            for kind in kinds:
                if "ser2net" in this:
                    per[kind]["ratio"].append(this[kind] / this["ser2net"])
    lines = [
        "| bridge | rounds | CPU µs per message | user µs | system µs | vs ser2net |",
        "|---|---|---|---|---|---|",
    ]
    lines += [median_row([kind], row, ["all", "user", "sys"], 1) for kind, row in per.items()]
    return "\n".join(lines) + (
        f"\n\nEach bridge under the shared harness's latency phase (`M0012061100\\0` one at a "
        f"time), {SHORT} and then {LONG} round trips through a fresh bridge, its CPU time "
        "(getrusage of the bridge process, user and system) at the end of each; the "
        f"difference over the {messages} messages between them (each round trip is two "
        "messages, one each way). Medians over rounds; ratios within a round. ser2net with "
        "`sendon='\\x00'`; the transport floor and the plumbing floor as in the bridges "
        "section above. The round trip cannot be shorter than the bridge's CPU per round "
        "trip (two messages) while the bridge is the busiest program in the ping-pong."
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_wrap":
        sys.exit(_wrap(*sys.argv[2:6]))
    harness = HERE.parent.parent / "shared" / "bench" / "bench.py"
    print(run_section(harness, int(sys.argv[1]) if len(sys.argv) > 1 else 3))


if __name__ == "__main__":
    main()
