"""Plays a :class:`~dxserial.tournament.spec.TournamentSpec`: games between engine pairs,
several at once where the engines allow, each through :meth:`Match.game` (the same code as
``dxserial match``), with the state written after every game so a crash loses at most the
games that were running.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from dxserial.errors import ConfigError, DxSerialError
from dxserial.files import write_atomic
from dxserial.game.news import Watcher
from dxserial.match.links import EngineDesk, MatchEngine
from dxserial.match.rules import FailurePolicy, GameStart, MatchConfig
from dxserial.match.runner import Match
from dxserial.match.standings import GameSummary, Progress
from dxserial.processes.endpoint import CommandEndpoint
from dxserial.tournament.charts import llr_svg, ratings_svg
from dxserial.tournament.engines import entry_endpoint
from dxserial.tournament.event import (
    GameResultEntry,
    Pairing,
    Schedule,
    Scores,
    State,
    game_lines,
    ratings_json,
)
from dxserial.tournament.rating import FieldRatings
from dxserial.tournament.spec import TournamentSpec
from dxserial.tournament.sprt import SprtState
from dxserial.transports.child import kill_leftover
from dxserial.transports.endpoints import LinkOptions

__all__ = ["EVENT_FILE", "STATE_FILE", "Tournament", "load_spec"]

log = logging.getLogger("dxserial.tournament.event")

STATE_FILE = "tournament-state.json"
EVENT_FILE = "event.pdn"
RATINGS_CHART = "ratings.svg"
LLR_CHART = "sprt-llr.svg"

class _GameProgress:
    """A running game's live text goes to the tournament's status line, not over it."""

    def __init__(self, owner: Tournament, number: int) -> None:
        self._owner = owner
        self._number = number

    def line(self, text: str) -> None:
        self._owner.progress.line(text)

    def update(self, text: str) -> None:
        self._owner.game_status(self._number, text)

    def clear(self) -> None:
        pass


class Tournament:
    """Runs the schedule; :meth:`run` returns True when every game was played."""

    def __init__(
        self,
        spec: TournamentSpec,
        options: LinkOptions,
        *,
        progress: Progress,
        resume: bool = False,
        concurrency: int | None = None,
        name: str = "dxserial",
        log_messages: bool = False,
    ) -> None:
        self.spec = spec
        self.options = options
        self.schedule = Schedule(spec)
        self.progress = progress
        self.resume = resume
        self.concurrency = concurrency or spec.concurrency
        self.state_path = spec.pdn / STATE_FILE
        self.event_path = spec.pdn / EVENT_FILE
        self.state = State(self.schedule.fingerprint)
        self.watchers: list[Watcher] = []
        self.sides: dict[str, MatchEngine] = {}
        #: Every engine's connection, on one driver, for all the games.
        self.desk = EngineDesk()
        #: Engines the director runs: every process slot of each (one per concurrent game).
        self.pools: dict[str, list[MatchEngine]] = {}
        for entry in spec.engines:
            endpoint = entry_endpoint(entry, options, spec.pdn, self._engine_news)
            self.sides[entry.name] = MatchEngine(entry.name, endpoint=endpoint)
            if entry.command is not None:
                self.pools[entry.name] = [self.sides[entry.name]]
        #: Engines that may play several games at once: each game its own process (not
        #: when its files go into one shared folder, where two runs would overwrite them).
        self.parallel = {
            e.name for e in spec.engines
            if e.command is not None and not (e.command.cwd and e.command.files)
        } if self.concurrency > 1 else set()
        self.config = MatchConfig(
            games=len(self.schedule.games),
            minutes=spec.minutes,
            time_moves=spec.time_moves,
            moves=spec.moves,
            pdn_notes=spec.pdn_notes,
            pdn_dir=spec.pdn,
            on_engine_failure=FailurePolicy.CONTINUE,
            move_timeout=spec.move_timeout,
            connect_timeout=spec.connect_timeout,
            name=name,
            event=spec.event,
            log_messages=log_messages,
            label_players=True,
            arbiter=spec.arbiter,
            adjudication=spec.adjudication,
            increment=spec.hub_time.increment,
            move_time=spec.hub_time.move_time,
        )
        self.scores = Scores(spec.names)
        self._running: dict[int, tuple[Pairing, Match]] = {}
        self._seats: dict[int, tuple[MatchEngine, MatchEngine]] = {}
        self._prepared: set[int] = set()
        self._reached: set[str] = set()  # engines that were connected once in this run
        self._status: dict[int, str] = {}
        self._stopping = False
        self.sprt = SprtState(spec.sprt) if spec.sprt is not None else None
        self._sprt_counted: set[tuple[int, int]] = set()  # pairs (round, opening) in it
        self.decided: str | None = None  # the SPRT's verdict, once it has one
        #: Why the tournament did not finish (one line), when it stopped on its own.
        self.stopped: str | None = None

    # ------------------------------------------------------------------ watchers

    def _tell(self, event: dict[str, Any]) -> None:
        for watcher in self.watchers:
            watcher(event)

    def snapshot_standings(self) -> dict[str, Any]:
        total = len(self.schedule.games)
        return {
            "kind": "standings",
            "done": len(self.state.games),
            "total": total,
            "table": self.scores.table(len(self.state.games), total)
            + self._restart_lines()
            + ([self.sprt.line()] if self.sprt is not None else []),
            **self._pictures(),
        }

    # ------------------------------------------------------------------ ratings, charts

    def _pictures(self) -> dict[str, Any]:
        """The field's ratings and the charts, for the live view's standings update."""
        return {"ratings": ratings_json(self.scores.ratings()), "charts": self._charts()}

    def _charts(self) -> dict[str, str]:
        """SVG text by file name: the ratings (once there are any) and the SPRT's LLR."""
        charts: dict[str, str] = {}
        field = self.scores.ratings()
        if isinstance(field, FieldRatings):
            charts[RATINGS_CHART] = ratings_svg(field)
        if self.sprt is not None:
            cfg = self.sprt.config
            title = f"SPRT [{cfg.elo0:g}, {cfg.elo1:g}]"
            charts[LLR_CHART] = llr_svg(self.sprt.history, cfg.lower, cfg.upper, title=title)
        return charts

    def _write_charts(self) -> None:
        """The charts as SVG files beside event.pdn, when the run ends."""
        for name, svg in self._charts().items():
            path = self.spec.pdn / name
            try:
                write_atomic(path, svg)
            except OSError as exc:
                log.warning("cannot write %s: %s", path, exc)
                continue
            self.progress.line(f"chart: {path}")

    def _slots(self) -> list[CommandEndpoint]:
        return [
            s.endpoint for pool in self.pools.values() for s in pool
            if isinstance(s.endpoint, CommandEndpoint)
        ]

    def _restart_lines(self) -> list[str]:
        return [
            f"engine {slot.label}: restarted {slot.supervisor.restarts} time(s); "
            + "; ".join(slot.supervisor.events[-3:])
            for slot in self._slots() if slot.supervisor.restarts
        ]

    def _engine_news(self, slot: CommandEndpoint, text: str) -> None:
        """An engine process started: a restart is shown and written in the state file."""
        if text:
            self.progress.line(text)
        self._save_engines()
        if text:
            self._redraw()
            self._tell(self.snapshot_standings())

    def _save_engines(self) -> None:
        for slot in self._slots():
            self.state.engines[slot.label] = {
                **slot.group(),
                "restarts": slot.supervisor.restarts,
                "failures": slot.supervisor.failures,
                "events": slot.supervisor.events[-20:],
            }
        self.state.save(self.state_path)

    # ------------------------------------------------------------------ display

    def game_status(self, number: int, text: str) -> None:
        if text:
            self._status[number] = text.split("|")[0].strip()
        else:
            self._status.pop(number, None)
        self._redraw()

    def _redraw(self) -> None:
        total = len(self.schedule.games)
        running = "; ".join(self._status[n] for n in sorted(self._status))
        restarted = ", ".join(
            f"{slot.label} {slot.supervisor.restarts}"
            for slot in self._slots() if slot.supervisor.restarts
        )
        extra = f"  |  restarts: {restarted}" if restarted else ""
        if self.sprt is not None:
            extra += f"  |  LLR {self.sprt.llr():.2f} ({self.sprt.pairs} pairs)"
        self.progress.update(f"[{len(self.state.games)}/{total}] {running}{extra}")

    def stop(self) -> None:
        """Stop after the running games are ended (a signal handler calls this)."""
        self._stopping = True
        for _, match in self._running.values():
            match.stop()

    # ------------------------------------------------------------------ the event

    async def run(self) -> bool:
        self._load()
        total = len(self.schedule.games)
        try:
            if not await self._open():
                return False
            left = total - len(self.state.games)
            self.progress.line(
                f"tournament: {self.spec.event}, {self.spec.format}, {len(self.sides)} engines, "
                f"{total} game(s)"
                + (f", {left} left (resumed)" if self.resume else "")
                + f", {self._at_once()}, PDN in {self.spec.pdn}"
            )
            self._tell(self.snapshot_standings())
            await self._loop()
        finally:
            await self._close()
        self.progress.clear()
        for row in self.scores.table(len(self.state.games), total) + self._restart_lines():
            self.progress.line(row)
        if self.sprt is not None:
            self.progress.line(self.sprt.line())
        if self.state.games:
            for row in game_lines(self.state.games):
                self.progress.line(row)
        if self.state.games:
            self.progress.line(f"event PDN: {self.event_path}")
            self._write_charts()
        if self.state.games and not any(g.plies != 0 for g in self.state.games.values()):
            self.stopped = self.stopped or (
                "no game was played: every game was forfeited or ended before its first move"
            )
        done = len(self.state.games) == total or self.decided is not None
        return done and self.stopped is None

    def _load(self) -> None:
        """The state: refused when one exists and --resume was not given, else loaded."""
        if self.state_path.exists() and not self.resume:
            raise ConfigError(
                f"{self.state_path} exists: add --resume to continue that tournament, "
                "or use another pdn folder"
            )
        if self.resume:
            self.state = State.load(self.state_path, self.schedule.fingerprint)
            for side in self.sides.values():
                if side.label in self.pools:  # an engine the director starts is fresh
                    continue
                why = self.state.may_have_a_game_open(side.label)
                side.stale = why is not None
                if why is not None:
                    log.info("%s: %s (%s): that game is ended before the next one is offered",
                             side.label, why, self.state_path)
            self.state.playing = {}
            self._kill_leftovers()
        self.scores = Scores(self.spec.names, self.state.games.values())
        if self.state.games:  # the resumed state file keeps its ratings
            self.state.ratings = ratings_json(self.scores.ratings())
        self._sprt_update()

    def _at_once(self) -> str:
        return f"{self.concurrency} game(s) at the same time"

    async def _open(self) -> bool:
        """Reach or start every engine before the first game; False if the event stopped."""
        for side in self.sides.values():
            where = await side.endpoint.prepare()
            self.progress.line(f"engine {side.label}: {where}")
        return await self._start_engines()

    async def _close(self) -> None:
        sides = {id(s): s for s in self.sides.values()}
        sides.update((id(s), s) for pool in self.pools.values() for s in pool)
        for side in sides.values():
            await self.desk.close(side)
            await side.endpoint.close()
        await self.desk.shutdown()
        if self.pools and self.state_path.exists():
            self._save_engines()

    def _kill_leftovers(self) -> None:
        """Whatever of an earlier run's engine process groups is still running is killed
        (its keeper died with the director, or was killed): the state file names each
        group, its keeper's start time and session, which every member must match."""
        for slot, info in self.state.engines.items():
            pgid, started, session = info.get("pgid"), info.get("started"), info.get("session")
            if not (isinstance(pgid, int) and isinstance(started, int)):
                continue
            killed = kill_leftover(pgid, started, session if isinstance(session, int) else None)
            if killed:
                self.progress.line(
                    f"engine {slot}: killed {len(killed)} process(es) of group {pgid} left "
                    f"running by the earlier run (pids {', '.join(map(str, killed))})"
                )

    async def _loop(self) -> None:
        tasks: dict[asyncio.Task[GameSummary | None], Pairing] = {}
        while True:
            if not self._stopping:
                running = [g for g, _ in self._running.values()]
                free = self.concurrency - len(running)
                ready = self.schedule.ready(self.state.games, running, self.parallel)
                if self.decided is not None:  # only the other colour of a ballot begun
                    ready = self.schedule.halves(ready, self.state.games, running)
                for game in ready[: max(0, free)]:
                    match = self._start(game)
                    task = asyncio.create_task(self._play(game, match))
                    tasks[task] = game
            if not tasks:
                return
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                game = tasks.pop(task)
                _, match = self._running.pop(game.number)
                self._status.pop(game.number, None)
                self._finish(game, match, task.result())
                del self._seats[game.number]

    def _seat(self, name: str) -> MatchEngine:
        """The engine's side for a new game: a free process slot (or a new one) of an
        engine the director runs in parallel, else its only side."""
        if name not in self.parallel:
            return self.sides[name]
        busy = {id(s) for seats in self._seats.values() for s in seats}
        pool = self.pools[name]
        for side in pool:
            if id(side) not in busy:
                return side
        first = pool[0].endpoint
        assert isinstance(first, CommandEndpoint)
        entry = next(e for e in self.spec.engines if e.name == name)
        side = MatchEngine(name, endpoint=entry_endpoint(
            entry, self.options, self.spec.pdn, first.notify, slot=len(pool) + 1))
        pool.append(side)
        return side

    def _start(self, game: Pairing) -> Match:
        white, black = self._seat(game.white), self._seat(game.black)
        self._seats[game.number] = (white, black)
        match = Match(
            white,
            black,
            self.config,
            progress=_GameProgress(self, game.number),
            watch=self._tell,
            desk=self.desk,
        )
        self._running[game.number] = (game, match)
        self._playing(game.number, [game.white, game.black])
        return match

    def _playing(self, number: int, names: list[str] | None) -> None:
        """The state file's record of a game in play: written as it starts and as it ends
        (the evidence a resumed run needs before it ends an engine's game)."""
        playing = self.state.playing if self.state.playing is not None else {}
        if names is None:
            if playing.pop(number, None) is None:
                return
        else:
            playing[number] = names
        self.state.playing = playing
        self.state.save(self.state_path)

    async def _play(self, game: Pairing, match: Match) -> GameSummary | None:
        white, black = self._seats[game.number]
        for side in (white, black):
            if id(side) not in self._prepared:  # a new process slot: listen first
                self._prepared.add(id(side))
                await side.endpoint.prepare()
        opening = self.spec.openings[game.opening]
        start = GameStart()
        if opening.position is not None:
            start = GameStart(opening.position.pieces(), opening.position.turn, opening.text)

        def last() -> set[str]:  # asked when the game is decided: the games running then
            running = [n for n in self._running if n != game.number]
            return self.schedule.last_for(game, self.state.games, running)

        return await match.game(game.number, white, black, last=last, start=start)

    def _finish(self, game: Pairing, match: Match, summary: GameSummary | None) -> None:
        if summary is None or match.stopped == "interrupted":
            log.info("game %d interrupted: it is played again on --resume", game.number)
            return
        white, black = self._seats[game.number]
        if self._unreachable(white, black):
            return
        entry = GameResultEntry(
            game.number,
            game.white,
            game.black,
            summary.result.result,
            summary.result.reason,
            summary.pdn.name if summary.pdn else None,
            white.name,
            black.name,
            summary.plies,
        )
        self._record(game, entry)

    def _record(self, game: Pairing, entry: GameResultEntry, where: str = "") -> None:
        """A finished game into the state, the event PDN, the scores and the SPRT."""
        total = len(self.schedule.games)
        self.state.games[game.number] = entry
        (self.state.playing or {}).pop(game.number, None)
        self.scores.add(entry)
        self.state.ratings = ratings_json(self.scores.ratings())
        self.state.save(self.state_path)
        self._write_event()
        pairs = self.sprt.pairs if self.sprt is not None else 0
        self._sprt_update()
        self.progress.line(
            f"[{len(self.state.games)}/{total}] game {game.number}: {game.white} - {game.black} "
            f"{entry.result} ({entry.reason}){where}  |  {self.scores.standings_line()}"
        )
        if self.sprt is not None and self.sprt.pairs > pairs:
            self.progress.line(self.sprt.line())
        self._tell(self.snapshot_standings())

    def _sprt_update(self) -> None:
        """The SPRT over every finished pair (an opening with both colours), each pair
        added once, in the order they were finished (the LLR chart's x axis); a verdict
        stops new games from starting."""
        if self.sprt is None:
            return
        tested = self.spec.gauntlet or self.spec.names[0]
        pairs: dict[tuple[int, int], list[tuple[int, float]]] = {}
        for number, entry in sorted(self.state.games.items()):
            game = self.schedule.games[number - 1]
            if entry.result == "*":
                continue
            points = {"2-0": 2, "1-1": 1, "0-2": 0}[entry.result]
            mine = points if entry.white == tested else 2 - points
            pairs.setdefault((game.round, game.opening), []).append((number, mine / 2))
        done = sorted((max(n for n, _ in g), key) for key, g in pairs.items() if len(g) == 2)
        for _, key in done:
            if key not in self._sprt_counted:
                self._sprt_counted.add(key)
                first, second = pairs[key]
                self.sprt.add_pair(first[1], second[1])
        self.decided = self.sprt.verdict()

    async def _start_engines(self) -> bool:
        """Start every engine the director runs (its first process), so that one that
        cannot start stops the event before a game is played; False if it stopped."""
        for name, pool in self.pools.items():
            try:
                await pool[0].endpoint.open_early()
            except DxSerialError as exc:
                if self.spec.on_unreachable == "forfeit":
                    self.progress.line(f"engine {name} did not start ({exc}): its games are "
                                       "forfeited (on_unreachable = \"forfeit\")")
                    continue
                self.stopped = (
                    f"engine {name} could not be started: {exc}; fix it and run again with "
                    '--resume (on_unreachable = "forfeit" plays on without it)'
                )
                return False
            self._reached.add(name)
        return True

    def _unreachable(self, white: MatchEngine, black: MatchEngine) -> bool:
        """An engine that could not be reached before its first game stops the event (the
        game is not recorded: --resume plays it), unless on_unreachable = "forfeit"."""
        for side in (white, black):
            if side.generation > 0:
                self._reached.add(side.label)
        lost = [
            s for s in (white, black)
            if s.failure and s.label not in self._reached and s.failure.startswith("cannot reach")
        ]
        if not lost or self.spec.on_unreachable == "forfeit":
            return False
        side = lost[0]
        self.stopped = (
            f"engine {side.label} could not be reached before its first game: {side.failure}; "
            'fix it and go on with --resume (on_unreachable = "forfeit" plays on without it)'
        )
        self.stop()
        return True

    def _write_event(self) -> None:
        """One PDN file of the whole event: every finished game in schedule order."""
        parts = []
        for number in sorted(self.state.games):
            name = self.state.games[number].pdn
            if name is None:
                continue
            try:
                parts.append((self.spec.pdn / name).read_text(encoding="utf-8").strip())
            except OSError as exc:
                log.warning("game %d missing from %s: %s", number, self.event_path, exc)
        write_atomic(self.event_path, "\n\n".join(parts) + "\n")


def load_spec(path: Path) -> TournamentSpec:
    """Read the tournament file at ``path`` (the pdn folder is relative to it)."""
    from dxserial.config import read_toml

    data = read_toml(path, "tournament file", "give the path of a TOML tournament file")
    return TournamentSpec.from_dict(data, source=str(path), base=path.parent)
