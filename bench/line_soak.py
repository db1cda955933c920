#!/usr/bin/env python3
"""Line soak (issue 36): the line at its worst, on several lines at once, for minutes.

``python3 bench/line_soak.py --lines 3 --minutes 4`` prints a Markdown table;
tests/project/test_line_soak.py runs a short form through :func:`line_soak`.

Each line is what a user runs: ``dxserial vpair`` (the cable), ``dxserial bridge`` on end A
(the serial check on, ``--serial-grace``, PDN and trace; the line paced at 9600 baud), the
strict engine (``python -m dxserial.standins.strict``, follower, NULMODEM) on end B, and for
each round a built-in engine as initiator over TCP (``dxserial engine tcp://...``, two games
of at most 40 moves); a fault of a round comes 0.3-1.5 s into its first game.
Every line's state file goes in one shared folder, and two of the lines have look-alike
port names (``.../x/y/ttyA`` and ``.../x-y/ttyA``: one state file name before r35-hard's
fix).  Each round, at random, one of:

* ``plain``: the games, nothing else;
* ``noise``: a burst of random bytes (4 to 400) towards the bridge on the idle line before
  the client connects, and another between its games and the next round
  (``vpair``'s ``noise a N SEED``);
* ``short unplug`` / ``long unplug``: end A pulled mid-game and plugged back before or
  after ``--serial-grace``;
* ``kill``: the bridge SIGKILLed mid-game and started again (its TCP engine loses the
  link; the next round's engine connects to the new bridge).

Checks, per line: the strict engine never refused anything (it exits with one line on any
message its state forbids); every PDN record replays legally, and one with a result agrees
with its final position (``*``: a game the bridge ended for an engine that left); in every
trace, each message delivered was queued from an engine or sent by the bridge (named in
``why``), and no CHAT went from the serial side (the strict engine sends none: one would be
noise delivered as a message).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from soak import Engine, replay

from dxserial.game.pdn import read_pdn
from dxserial.game.record import RecordError
from dxserial.testing.process import PY, Cli, LineReader
from dxserial.testing.rig import Bridge, Vpair

EVENTS = ("plain", "noise", "short unplug", "long unplug", "kill")
BRIDGE_ARGS = ("--echo-timeout", "2", "--max-attempts", "1000")


class Strict(Cli):
    """The strict engine as a process (``python -m dxserial.standins.strict``)."""

    def __init__(self, directory: Path, endpoint: str, seed: int) -> None:
        self._err_file = (directory / "strict.log").open("a")
        self.proc = subprocess.Popen(
            [PY, "-m", "dxserial.standins.strict", endpoint, "--role", "follower",
             "--games", "100000", "--seed", str(seed)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err_file, text=True,
        )
        self.pid = self.proc.pid
        assert self.proc.stdout is not None
        self.out = LineReader(self.proc.stdout)
        self.out.expect("engine ready", timeout=20)


@dataclass
class LineResult:
    """What one line lived through and what the checks found."""

    name: str
    port: str
    rounds: Counter[str] = field(default_factory=Counter)
    noise_bytes: int = 0
    games_said: int = 0  # games the TCP engines reported over
    records: int = 0
    legal: int = 0
    unfinished: int = 0  # records with result '*': ended by the bridge for an engine
    by_bridge: Counter[str] = field(default_factory=Counter)  # the bridge's own messages
    delivered: int = 0
    refusals: list[str] = field(default_factory=list)  # the strict engine's last words
    phantoms: list[str] = field(default_factory=list)  # delivered, sent by no one
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.refusals or self.phantoms or self.problems)


class Line:
    """One line's processes; ``run`` plays rounds until ``until`` (monotonic)."""

    def __init__(self, directory: Path, name: str, state: Path, *, seed: int,
                 grace: float, baud: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.rng = random.Random(seed)
        self.seed = seed
        self.grace = grace
        self.baud = baud
        self.state = state
        self.pdn = directory / "games"
        self.runs = 0
        self.vpair = Vpair(directory, "--baud", str(baud))
        self.result = LineResult(name, self.vpair.path_a)
        self.bridge = self._bridge()
        self.strict = Strict(directory, self.vpair.path_b, seed)
        self.traces = [self.bridge.trace_path]

    def _bridge(self) -> Bridge:
        self.runs += 1
        run = self.directory / f"run-{self.runs}"
        run.mkdir()
        return Bridge(run, self.vpair.path_a, *BRIDGE_ARGS, "--baud", str(self.baud),
                      "--serial-grace", str(self.grace), "--state-dir", str(self.state),
                      "--pdn", str(self.pdn), "-v", serial_check=True)

    def run(self, until: float, plan: tuple[str, ...] = ()) -> None:
        """Rounds of random events until ``until``, or the events of ``plan`` in turn."""
        n = 0
        while (n < len(plan)) if plan else (time.monotonic() < until):
            n += 1
            event = plan[n - 1] if plan else self.rng.choice(EVENTS)
            self.result.rounds[event] += 1
            try:
                self._round(n, event)
            except Exception as exc:  # a round that broke is a finding, not a crash
                self.result.problems.append(f"round {n} ({event}): {exc!r}")
            self._strict_alive()

    def _round(self, n: int, event: str) -> None:
        if event == "noise":
            self._noise()
        tcp = Engine(self.directory, f"tcp-{n}", f"tcp://127.0.0.1:{self.bridge.port}",
                     "--role", "initiator", "--games", "2", "--moves", "40", "--depth", "1",
                     "--seed", str(self.seed * 1000 + n))
        try:
            if event in ("short unplug", "long unplug", "kill"):
                self._mid_game(self.directory / f"tcp-{n}.log")
                if event == "kill":
                    self.bridge.proc.kill()
                    self.bridge.proc.wait()
                    self.bridge = self._bridge()
                    self.traces.append(self.bridge.trace_path)
                else:
                    down = (self.rng.uniform(0.2, 0.6) * self.grace if event == "short unplug"
                            else self.grace + self.rng.uniform(1.0, 3.0))
                    self.vpair.unplug("a")
                    time.sleep(down)
                    self.vpair.replug("a")
            try:
                tcp.proc.wait(180)
            except subprocess.TimeoutExpired:
                self.result.problems.append(f"round {n} ({event}): its TCP engine ran 180 s")
        finally:
            tcp.close()
            tcp.drain()  # its last lines: the games it reported over
            self.result.games_said += len(tcp.results())
        if event == "noise":
            self._noise()  # between games: before the next round's client

    def _mid_game(self, log: Path) -> None:
        """Wait until the round's first game is under way, then a little more."""
        until = time.monotonic() + 30.0
        while time.monotonic() < until:
            with contextlib.suppress(FileNotFoundError):
                if "game 1: playing" in log.read_text(errors="replace"):
                    break
            time.sleep(0.05)
        time.sleep(self.rng.uniform(0.3, 1.5))

    def _noise(self) -> None:
        count = self.rng.randint(4, 400)
        self.vpair.command(f"noise a {count} {self.rng.randrange(1 << 30)}", f"noise a {count}")
        self.result.noise_bytes += count
        time.sleep(1.0)

    def _strict_alive(self) -> None:
        if self.strict.proc.poll() is None:
            return
        log = (self.directory / "strict.log").read_text(errors="replace").splitlines()
        said = [x for x in log if x.startswith("strict engine:")]
        self.result.refusals.append(said[-1] if said else f"exit {self.strict.proc.returncode}")
        self.strict.close()
        again = self.seed + len(self.result.refusals)
        self.strict = Strict(self.directory, self.vpair.path_b, again)

    def close(self) -> LineResult:
        with contextlib.suppress(Exception):
            self.bridge.shutdown()
        self._strict_alive()
        self.strict.close()
        self.vpair.close()
        self._check_records()
        for path in self.traces:
            self._check_trace(path)
        return self.result

    def _check_records(self) -> None:
        for path in sorted(self.pdn.glob("*.pdn")):
            try:
                records = read_pdn(path)
            except RecordError as exc:
                self.result.problems.append(f"{path.name}: {exc}")
                continue
            for record in records:
                self.result.records += 1
                position, illegal = replay(record)
                if illegal is not None:
                    self.result.problems.append(f"{path.name} game {record.game_number}: "
                                                f"illegal move at {illegal}")
                    continue
                self.result.legal += 1
                if record.result == "*":
                    self.result.unfinished += 1
                elif position.is_lost() and record.result not in ("2-0", "0-2"):
                    self.result.problems.append(f"{path.name} game {record.game_number}: "
                                                f"{record.result} in a lost position")

    def _check_trace(self, path: Path) -> None:
        first: dict[object, dict[str, object]] = {}
        with contextlib.suppress(FileNotFoundError):
            for line in path.read_text(errors="replace").splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # the last line of a SIGKILLed bridge's trace may be cut
                if rec.get("kind") != "message":
                    continue
                key = rec.get("id")
                action = rec.get("action")
                if key not in first:
                    first[key] = rec
                    if action == "sent-by-bridge":
                        self.result.by_bridge[str(rec.get("raw", ""))[:3]] += 1
                        if not rec.get("why"):
                            self.result.phantoms.append(f"{path}: bridge message without why")
                    if (rec.get("direction") == "serial->tcp" and action == "queued"
                            and str(rec.get("raw", "")).startswith("C")):
                        self.result.phantoms.append(f"{path}: CHAT from the serial side "
                                                    f"{rec.get('raw')!r} (noise delivered?)")
                    continue
                if action == "delivered":
                    self.result.delivered += 1
                    if first[key].get("action") not in ("queued", "sent-by-bridge"):
                        self.result.phantoms.append(f"{path}: id {key} delivered after "
                                                    f"{first[key].get('action')}")


def line_soak(lines: int = 3, *, seconds: float = 240.0, grace: float = 3.0,
              baud: int = 9600, seed: int = 1, keep: Path | None = None,
              lookalike: bool = True, plan: tuple[str, ...] = ()) -> list[LineResult]:
    """Run ``lines`` lines for ``seconds``; with ``lookalike``, lines 0 and 1 have look-alike
    port names (``x/y/ttyA``, ``x-y/ttyA``), else every line a folder of its own.  ``plan``:
    each line plays these events in turn instead (the short form)."""
    with contextlib.ExitStack() as stack:
        root = keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dxline-")))
        state = root / "state"
        state.mkdir(parents=True, exist_ok=True)  # --keep may name a new folder
        places = [root / f"line{i}" for i in range(lines)]
        if lookalike:
            places[:2] = [root / "x" / "y", root / "x-y"]
        made: list[Line] = []
        try:
            for i, where in enumerate(places[:lines]):
                made.append(Line(where, f"line {i}", state, seed=seed + i, grace=grace,
                                 baud=baud))
            until = time.monotonic() + seconds
            threads = [threading.Thread(target=line.run, args=(until, plan)) for line in made]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            results = [line.close() for line in made]
        return results


def table(results: list[LineResult], seconds: float) -> str:
    head = ("| line | port | rounds | noise bytes | games over (TCP) | records | legal | "
            "'*' | bridge's own | delivered | strict refusals | phantoms | problems |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    rows = []
    for r in results:
        rounds = ", ".join(f"{k} {v}" for k, v in sorted(r.rounds.items()))
        own = ", ".join(f"{k} {v}" for k, v in sorted(r.by_bridge.items())) or "0"
        rows.append(
            f"| {r.name} | `{Path(r.port).parent.name}/{Path(r.port).name}` | {rounds} | "
            f"{r.noise_bytes} | {r.games_said} | {r.records} | {r.legal} | {r.unfinished} | "
            f"{own} | {r.delivered} | {len(r.refusals)} | {len(r.phantoms)} | "
            f"{len(r.problems)} |"
        )
    notes = []
    for r in results:
        notes += [f"- {r.name}: strict engine: {x}" for x in r.refusals[:5]]
        notes += [f"- {r.name}: phantom: {x}" for x in r.phantoms[:5]]
        notes += [f"- {r.name}: {x}" for x in r.problems[:5]]
    return (f"{len(results)} lines for {seconds:.0f} s.\n\n" + head + "\n".join(rows) + "\n"
            + ("\n" + "\n".join(notes) + "\n" if notes else ""))


def describe(lines: int, seconds: float, grace: float, baud: int, lookalike: bool) -> str:
    return (
        f"{lines} lines on `dxserial vpair --baud {baud}` for {seconds / 60:g} min, each: "
        f"`dxserial bridge` (serial check on, `--serial-grace {grace:g}`, one state folder "
        "for all), the strict engine (`python -m dxserial.standins.strict`, follower) on the "
        "serial end, per round a built-in engine over TCP (initiator, two games of at most "
        "40 moves) and one event at random: plain, noise (4-400 random bytes towards the "
        "bridge before the client and after its games), short unplug (< grace, mid-game), "
        "long unplug (> grace, mid-game), kill (SIGKILL mid-game, restart). "
        + ("Lines 0 and 1 have look-alike port names (`x/y/ttyA`, `x-y/ttyA`). "
           if lookalike else "No look-alike port names. ")
        + "*records*: PDN records (`*`: ended by the bridge for an engine that left); "
        "*bridge's own*: the bridge's messages by their first three characters, each with its "
        "`why`; *strict refusals*: a message the strict engine's state forbids reached it; "
        "*phantoms*: a message delivered that no engine sent and the bridge did not announce, "
        "or a CHAT from the serial side (noise delivered)."
    )


def section(args: argparse.Namespace | None = None) -> str:
    """The long form as Markdown, for bench/run.py: with look-alike ports and without."""
    minutes = getattr(args, "line_soak_minutes", None) or 4.0
    parts = []
    for lookalike in (False, True):
        results = line_soak(3, seconds=minutes * 60, lookalike=lookalike)
        parts.append(table(results, minutes * 60) + "\n" + describe(3, minutes * 60, 3.0,
                                                                     9600, lookalike))
    return "\n\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=3)
    parser.add_argument("--minutes", type=float, default=4.0)
    parser.add_argument("--grace", type=float, default=3.0)
    parser.add_argument("--baud", type=int, default=9600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="keep the run's files in this folder")
    parser.add_argument("--no-lookalike", action="store_true",
                        help="no two lines with look-alike port names")
    args = parser.parse_args()
    if args.lines < 1 or args.minutes <= 0:
        parser.error("--lines must be at least 1 and --minutes positive")
    results = line_soak(args.lines, seconds=args.minutes * 60, grace=args.grace,
                        baud=args.baud, seed=args.seed, keep=args.keep,
                        lookalike=not args.no_lookalike)
    print(table(results, args.minutes * 60))
    print(describe(args.lines, args.minutes * 60, args.grace, args.baud, not args.no_lookalike))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
