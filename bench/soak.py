#!/usr/bin/env python3
"""Soak run: games between built-in engines through the bridge over NULMODEM.

``python3 bench/soak.py --games 60`` prints a Markdown table; bench/run.py gets the same
text from :func:`section`; tests/bridge/test_soak.py runs a short form through :func:`soak`.

Everything runs as a user would run it, each in its own process: ``dxserial vpair --baud
B`` (an emulated serial line), ``dxserial bridge --pdn DIR`` on end A, the built-in engine
as follower speaking NULMODEM on end B (``dxserial engine B --role follower``), and the
built-in engine as initiator over TCP (``dxserial engine tcp://... --role initiator
--games N``).  While they play, the bridge's VmRSS (``/proc/PID/status``) and open file
descriptors (``/proc/PID/fd``) are sampled every ``--every`` games, from the moment its
PDN directory holds that many games.  Afterwards every game record is read back
(``read_pdn``) and replayed move by move from its start position (``parse_pdn_move``), and
its result is checked against the final position (the side to move has no legal move:
the other side won; the move limit was reached: a draw) and against what both engines
said when the game ended.

"Flat": over the samples taken while the session ran (the first one after warm-up as the
baseline), the descriptor count never rises above its baseline, and RSS ends within
``--rss-tolerance`` MiB of its baseline; the least-squares slope of RSS per 100 games is
reported as well.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from dxserial.draughts import IllegalMoveError, Position, parse_pdn_move
from dxserial.game.pdn import read_pdn
from dxserial.game.record import GameRecord, RecordError
from dxserial.protocol.messages import Colour
from dxserial.testing.process import Cli, open_fds, proc_status
from dxserial.testing.rig import Bridge, Vpair

_GAME_LINE = re.compile(r"^game (\d+): (\S+) \((.*)\)$")


@dataclass(frozen=True)
class Sample:
    games: int
    rss_kib: int
    fds: int
    at: float


@dataclass
class GameCheck:
    """One game record, replayed."""

    path: str
    number: int
    plies: int
    result: str
    legal: bool
    expected: str | None  # what the final position says, if it decides
    problem: str = ""


@dataclass
class SoakResult:
    games_asked: int
    moves: int
    baud: int
    seconds: float
    samples: list[Sample]
    checks: list[GameCheck]
    engine_results: dict[str, dict[int, str]]
    counters: dict[str, int]
    exit_codes: dict[str, int | None]
    problems: list[str] = field(default_factory=list)

    # -------------------------------------------------------------- figures

    @property
    def recorded(self) -> int:
        return len(self.checks)

    @property
    def replayed_legally(self) -> int:
        return sum(1 for c in self.checks if c.legal)

    @property
    def consistent(self) -> int:
        return sum(1 for c in self.checks if not c.problem)

    @property
    def results(self) -> Counter[str]:
        return Counter(c.result for c in self.checks)

    @property
    def session(self) -> list[Sample]:
        """Samples taken while the engines were connected (not the very last one)."""
        return [s for s in self.samples if 0 < s.games < self.games_asked] or self.samples

    @property
    def fd_growth(self) -> int:
        run = self.session
        return max(s.fds for s in run) - run[0].fds if run else 0

    @property
    def rss_growth_mib(self) -> float:
        run = self.session
        return (run[-1].rss_kib - run[0].rss_kib) / 1024.0 if run else 0.0

    @property
    def rss_slope_mib_per_100(self) -> float:
        """Least-squares slope of RSS against games played, in MiB per 100 games."""
        run = self.session
        if len(run) < 2:
            return 0.0
        xs = [s.games for s in run]
        ys = [s.rss_kib / 1024.0 for s in run]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        var = sum((x - mx) ** 2 for x in xs)
        if not var:
            return 0.0
        return 100.0 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var

    def flat(self, rss_tolerance_mib: float) -> bool:
        return self.fd_growth <= 0 and self.rss_growth_mib <= rss_tolerance_mib

    @property
    def ok(self) -> bool:
        return (
            not self.problems
            and self.recorded == self.games_asked
            and self.replayed_legally == self.recorded
            and self.consistent == self.recorded
        )


# ----------------------------------------------------------------------- replay


def replay(record: GameRecord) -> tuple[Position, str | None]:
    """The final position of ``record``, or the first move that is not legal."""
    position = Position.from_fen(record.start_fen)
    for ply, move in enumerate(record.moves, 1):
        try:
            position = position.play(parse_pdn_move(position, move.text))
        except IllegalMoveError as exc:
            return position, f"ply {ply} ({move.text}): {exc}"
    return position, None


def check_record(path: Path, record: GameRecord, moves_limit: int,
                 said: dict[str, dict[int, str]]) -> GameCheck:
    position, illegal = replay(record)
    expected: str | None = None
    if illegal is None and position.is_lost():
        expected = "2-0" if position.turn is Colour.BLACK else "0-2"
    elif illegal is None and moves_limit and record.plies >= 2 * moves_limit:
        expected = "1-1"
    check = GameCheck(str(path.name), record.game_number, record.plies, record.result,
                      illegal is None, expected)
    problems = []
    if illegal is not None:
        problems.append(f"illegal move at {illegal}")
    if expected is None and illegal is None:
        problems.append(f"game ended after {record.plies} plies in a position that decides "
                        "nothing")
    elif expected is not None and record.result != expected:
        problems.append(f"result {record.result}, the final position says {expected}")
    if record.violations():
        problems.append(f"violations recorded: {record.violations()}")
    for who, results in said.items():
        if results.get(record.game_number) != record.result:
            problems.append(f"the {who} said {results.get(record.game_number)!r}, "
                            f"the record {record.result}")
    check.problem = "; ".join(problems)
    return check


# ----------------------------------------------------------------------- the run


class Engine(Cli):
    """``dxserial engine`` as a process; its ``game N: R (why)`` lines are collected."""

    def __init__(self, directory: Path, name: str, *args: str) -> None:
        self.name = name
        super().__init__("engine", *args, stderr_path=directory / f"{name}.log")
        try:
            self.out.expect("engine ready", timeout=20)
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def results(self) -> dict[int, str]:
        found = {}
        for line in self.out.lines:
            match = _GAME_LINE.match(line)
            if match:
                found[int(match.group(1))] = match.group(2)
        return found

    def drain(self) -> None:
        """Collect the remaining stdout lines (after the process has ended)."""
        self.out.drain()


def soak(games: int, *, moves: int = 20, baud: int = 115200, depths: tuple[int, int] = (1, 3),
         every: int = 10, seed: int = 1, timeout: float | None = None,
         keep: Path | None = None, echo: bool = False) -> SoakResult:
    """Play ``games`` games through a bridge; sample it every ``every`` games; check records.

    ``depths``: search depth of the initiator and of the follower (unequal, so that games
    without a move limit end in a win).  ``moves``: the GAMEREQ move limit (0: none).
    """
    plies = 2 * moves if moves else 200
    limit = timeout if timeout is not None else 120.0 + games * plies * 0.25
    with contextlib.ExitStack() as stack:
        directory = keep or Path(stack.enter_context(tempfile.TemporaryDirectory(
            prefix="dxsoak-")))
        pdn_dir = directory / "games"
        vpair = Vpair(directory, "--baud", str(baud))
        stack.callback(vpair.close)
        # --pass-stop: the initiator's last stop code ends the follower's session too.
        bridge = Bridge(directory, vpair.path_a, "--baud", str(baud), "--pdn", str(pdn_dir),
                        "--pass-stop", trace=False)
        stack.callback(bridge.shutdown)
        follower = Engine(directory, "follower", vpair.path_b, "--role", "follower",
                          "--baud", str(baud), "--depth", str(depths[1]), "--seed", str(seed))
        stack.callback(follower.close)
        started = time.monotonic()
        samples = [Sample(0, bridge.status().get("VmRSS", 0), bridge.fds(), 0.0)]
        initiator = Engine(directory, "initiator", f"tcp://127.0.0.1:{bridge.port}",
                           "--role", "initiator", "--games", str(games), "--moves", str(moves),
                           "--depth", str(depths[0]), "--seed", str(seed + 1), "--colour", "W")
        stack.callback(initiator.close)
        sampler = _Sampler(bridge, pdn_dir, every, games, samples, started, echo)
        sampler.start()
        problems: list[str] = []
        try:
            initiator.proc.wait(limit)
        except subprocess.TimeoutExpired:
            problems.append(f"the initiator did not finish {games} games in {limit:.0f} s")
        try:
            follower.proc.wait(30)
        except subprocess.TimeoutExpired:
            problems.append("the follower did not end its session")
        sampler.stop()
        seconds = time.monotonic() - started
        counters = bridge.shutdown()
        for engine in (initiator, follower):
            engine.drain()  # read their last lines before the pipes close
            engine.close()
        exit_codes = {e.name: e.proc.returncode for e in (initiator, follower)}
        for name, code in exit_codes.items():
            if code != 0:
                problems.append(f"the {name} exited with {code}")
        said = {"initiator": initiator.results(), "follower": follower.results()}
        checks = []
        for path in sorted(pdn_dir.glob("*.pdn")):
            try:
                records = read_pdn(path)
            except RecordError as exc:
                problems.append(f"{path.name}: {exc}")
                continue
            for record in records:
                checks.append(check_record(path, record, moves, said))
        checks.sort(key=lambda c: c.number)
        for key in ("invalid", "violations", "lost"):
            if counters.get(key):
                problems.append(f"bridge counted {counters[key]} {key}")
        if "NOT delivered" in bridge.log():
            problems.append("the bridge logged NOT delivered")
        return SoakResult(games, moves, baud, seconds, samples, checks, said, counters,
                          exit_codes, problems)


class _Sampler:
    """Samples the bridge whenever the PDN directory reaches the next multiple of ``every``."""

    def __init__(self, bridge: Bridge, pdn_dir: Path, every: int, games: int,
                 samples: list[Sample], started: float, echo: bool) -> None:
        self.bridge, self.pdn_dir, self.every, self.games = bridge, pdn_dir, every, games
        self.samples, self.started, self.echo = samples, started, echo
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _count(self) -> int:
        try:
            return sum(1 for p in self.pdn_dir.iterdir() if p.suffix == ".pdn")
        except OSError:
            return 0

    def _settled_fds(self) -> int | None:
        """The fewest open fds of three reads 20 ms apart: a file the bridge has open for a
        moment at a game's end (its state file, a PDN being written) is not a leak; a leak
        stays open in all three."""
        reads: list[int] = []
        for attempt in range(3):
            if attempt:
                time.sleep(0.02)
            with contextlib.suppress(OSError):
                reads.append(open_fds(self.bridge.pid))
        return min(reads) if reads else None

    def _run(self) -> None:
        target = 1  # first sample after the first game (the TCP engine is connected then)
        while not self._stop.wait(0.05):
            done = self._count()
            if done < target:
                continue
            status, fds = proc_status(self.bridge.pid), self._settled_fds()
            if not status or fds is None:
                return
            sample = Sample(done, status.get("VmRSS", 0), fds, time.monotonic() - self.started)
            self.samples.append(sample)
            if self.echo:
                print(f"soak: {done} games, RSS {sample.rss_kib / 1024:.1f} MiB, {fds} fds, "
                      f"{sample.at:.0f} s", file=sys.stderr, flush=True)
            if done >= self.games:
                return
            target = min(self.games, (done // self.every + 1) * self.every)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


# ----------------------------------------------------------------------- report


def table(result: SoakResult, rss_tolerance_mib: float = 2.0) -> str:
    run = result.session
    rss = [s.rss_kib / 1024.0 for s in run]
    fds = [s.fds for s in run]
    res = result.results
    per_game = result.seconds / max(1, result.recorded)
    plies = sum(c.plies for c in result.checks)
    lines = [
        "| figure | value |",
        "|---|---|",
        f"| games asked / recorded | {result.games_asked} / {result.recorded} |",
        f"| replayed legally from the start position | {result.replayed_legally} |",
        f"| result consistent with final position and both engines | {result.consistent} |",
        f"| results (White wins / draws / Black wins / none) | {res['2-0']} / {res['1-1']} / "
        f"{res['0-2']} / {res['*']} |",
        f"| plies in all | {plies} |",
        f"| bridge counters | {result.counters} |",
        f"| engines' exit codes | {result.exit_codes} |",
        f"| bridge RSS first / last / max MiB (samples after game 1) | {rss[0]:.1f} / "
        f"{rss[-1]:.1f} / {max(rss):.1f} |" if rss else "| bridge RSS | - |",
        f"| bridge RSS slope per 100 games | {result.rss_slope_mib_per_100:+.2f} MiB |",
        f"| bridge open fds first / last / max | {fds[0]} / {fds[-1]} / {max(fds)} |"
        if fds else "| bridge fds | - |",
        f"| samples | {len(run)} (every {_every(result)} games) |",
        f"| flat (fds never above first; RSS within {rss_tolerance_mib:g} MiB) | "
        f"{'yes' if result.flat(rss_tolerance_mib) else 'NO'} |",
        f"| wall time | {result.seconds:.0f} s ({per_game:.2f} s per game) |",
    ]
    bad = [c for c in result.checks if c.problem]
    text = "\n".join(lines)
    if bad or result.problems:
        text += "\n\nProblems:\n" + "\n".join(
            [f"- {p}" for p in result.problems]
            + [f"- game {c.number} ({c.path}): {c.problem}" for c in bad[:20]]
        )
    return text


def _every(result: SoakResult) -> str:
    run = result.session
    if len(run) < 2:
        return "-"
    gaps = Counter(b.games - a.games for a, b in itertools.pairwise(run))
    return str(gaps.most_common(1)[0][0])


def describe(args: argparse.Namespace) -> str:
    limit = f"a draw after {2 * args.moves} plies" if args.moves else "no move limit"
    return (
        f"{args.games} games, `--moves {args.moves}` ({limit}), depth {args.depths[0]} "
        f"(initiator) against {args.depths[1]} (follower; colours alternate), emulated "
        f"line at {args.baud} baud (`dxserial vpair "
        f"--baud`), NULMODEM follower on the serial end, initiator over TCP, bridge with "
        f"`--pdn` (referee on: warn). Samples every {args.every} games."
    )


def section(args: argparse.Namespace | None = None) -> str:
    """The long form as Markdown, for bench/run.py."""
    ns = argparse.Namespace(
        # The bridge writes at most 60 PDN files a minute (a client that starts and ends
        # games in a loop must not fill the disk) and these games take well under a second:
        # more than ~60 games would be played but not all recorded.
        games=getattr(args, "soak_games", None) or 60,
        moves=getattr(args, "soak_moves", None) or 20,
        depths=getattr(args, "soak_depths", None) or (1, 3),
        baud=getattr(args, "soak_baud", None) or 115200,
        every=getattr(args, "soak_every", None) or 10,
    )
    result = soak(ns.games, moves=ns.moves, baud=ns.baud, depths=ns.depths, every=ns.every,
                  echo=True)
    return table(result) + "\n\n" + describe(ns)


def _depths(text: str) -> tuple[int, int]:
    first, _, second = text.partition(",")
    return int(first), int(second or first)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=60,
                    help="games (the bridge records at most 60 a minute; these are short)")
    ap.add_argument("--moves", type=int, default=20,
                    help="moves field of GAMEREQ: a game is a draw after 2 x this many plies")
    ap.add_argument("--depths", type=_depths, default=(1, 3),
                    help="search depths of the initiator and the follower, e.g. 1,3")
    ap.add_argument("--baud", type=int, default=115200, help="emulated line speed")
    ap.add_argument("--every", type=int, default=25, help="sample the bridge every N games")
    ap.add_argument("--rss-tolerance", type=float, default=2.0, help="MiB")
    ap.add_argument("--keep", type=Path, help="keep the PDN files and logs in this directory")
    args = ap.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    result = soak(args.games, moves=args.moves, baud=args.baud, depths=args.depths,
                  every=args.every, keep=args.keep, echo=True)
    print(table(result, args.rss_tolerance) + "\n\n" + describe(args))
    return 0 if result.ok and result.flat(args.rss_tolerance) else 1


if __name__ == "__main__":
    sys.exit(main())
