"""Plays a :class:`~dxserial.programs.tournament.TournamentSpec`: games between engine pairs,
several at once where the engines allow, each through :meth:`Match.game` (the same code as
``dxserial match``), with the state written after every game so a crash loses at most the
games that were running.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dxserial.engine.endpoint import EngineEndpoint, LinkOptions, parse_engine_endpoint
from dxserial.errors import ConfigError
from dxserial.programs.match import (
    EngineSide,
    FailurePolicy,
    GameStart,
    GameSummary,
    Match,
    MatchConfig,
    Progress,
    close_side,
    idle_sink,
)
from dxserial.programs.tournament import (
    GameResultEntry,
    Pairing,
    Schedule,
    Scores,
    State,
    TournamentSpec,
    write_atomic,
)
from dxserial.protocol.links import LinkKind

__all__ = ["EVENT_FILE", "STATE_FILE", "Tournament"]

log = logging.getLogger("dxserial.programs.tournament")

STATE_FILE = "tournament-state.json"
EVENT_FILE = "event.pdn"

#: See :data:`dxserial.programs.match.Watcher`; the tournament adds "standings" events.
Watcher = Callable[[dict[str, Any]], None]


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
        self.schedule = Schedule(spec)
        self.progress = progress
        self.resume = resume
        self.concurrency = concurrency or spec.concurrency
        self.state_path = spec.pdn / STATE_FILE
        self.event_path = spec.pdn / EVENT_FILE
        self.state = State(self.schedule.fingerprint)
        self.watchers: list[Watcher] = []
        self.sides: dict[str, EngineSide] = {}
        for entry in spec.engines:
            these = options
            if entry.link is not None:
                these = dataclasses.replace(these, link=_link(entry.link))
            if entry.baud is not None:
                serial = dataclasses.replace(these.serial, baudrate=entry.baud)
                these = dataclasses.replace(these, serial=serial)
            endpoint = EngineEndpoint(parse_engine_endpoint(entry.endpoint), these)
            self.sides[entry.name] = EngineSide(entry.name, endpoint, sink=idle_sink)
        self.config = MatchConfig(
            games=len(self.schedule.games),
            minutes=spec.minutes,
            moves=spec.moves,
            pdn_dir=spec.pdn,
            on_engine_failure=FailurePolicy.CONTINUE,
            move_timeout=spec.move_timeout,
            connect_timeout=spec.connect_timeout,
            name=name,
            event=spec.event,
            log_messages=log_messages,
            label_players=True,
        )
        self.scores = Scores(spec.names)
        self._running: dict[int, tuple[Pairing, Match]] = {}
        self._status: dict[int, str] = {}
        self._stopping = False

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
            "table": self.scores.table(len(self.state.games), total),
        }

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
        self.progress.update(f"[{len(self.state.games)}/{total}] {running}")

    def stop(self) -> None:
        """Stop after the running games are ended (a signal handler calls this)."""
        self._stopping = True
        for _, match in self._running.values():
            match.stop()

    # ------------------------------------------------------------------ the event

    async def run(self) -> bool:
        if self.state_path.exists() and not self.resume:
            raise ConfigError(
                f"{self.state_path} exists: add --resume to continue that tournament, "
                "or use another pdn folder"
            )
        if self.resume:
            self.state = State.load(self.state_path, self.schedule.fingerprint)
            for side in self.sides.values():
                side.stale = True
        self.scores = Scores(self.spec.names, self.state.games.values())
        total = len(self.schedule.games)
        try:
            for side in self.sides.values():
                where = await side.endpoint.prepare()
                self.progress.line(f"engine {side.label}: {where}")
            left = total - len(self.state.games)
            self.progress.line(
                f"tournament: {self.spec.event}, {self.spec.format}, {len(self.sides)} engines, "
                f"{total} game(s)"
                + (f", {left} left (resumed)" if self.resume else "")
                + f", {self.concurrency} game(s) at the same time, PDN in {self.spec.pdn}"
            )
            self._tell(self.snapshot_standings())
            await self._loop()
        finally:
            for side in self.sides.values():
                await close_side(side)
                await side.endpoint.close()
        self.progress.clear()
        for row in self.scores.table(len(self.state.games), total):
            self.progress.line(row)
        if self.state.games:
            self.progress.line(f"event PDN: {self.event_path}")
        return len(self.state.games) == total

    async def _loop(self) -> None:
        tasks: dict[asyncio.Task[GameSummary | None], Pairing] = {}
        while True:
            if not self._stopping:
                running = [g for g, _ in self._running.values()]
                free = self.concurrency - len(running)
                for game in self.schedule.ready(self.state.games, running)[: max(0, free)]:
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
                for side in match.sides:
                    side.sink = idle_sink
                self._finish(game, match, task.result())

    def _start(self, game: Pairing) -> Match:
        white, black = self.sides[game.white], self.sides[game.black]
        match = Match(
            white,
            black,
            self.config,
            progress=_GameProgress(self, game.number),
            watch=self._tell,
        )
        self._running[game.number] = (game, match)
        return match

    async def _play(self, game: Pairing, match: Match) -> GameSummary | None:
        white, black = self.sides[game.white], self.sides[game.black]
        opening = self.spec.openings[game.opening]
        start = GameStart()
        if opening.position is not None:
            start = GameStart(opening.position.pieces(), opening.position.turn, opening.text)
        last = self.schedule.last_for(game, self.state.games)
        return await match.game(game.number, white, black, last=last, start=start)

    def _finish(self, game: Pairing, match: Match, summary: GameSummary | None) -> None:
        total = len(self.schedule.games)
        if summary is None or match.stopped == "interrupted":
            log.info("game %d interrupted: it is played again on --resume", game.number)
            return
        white, black = self.sides[game.white], self.sides[game.black]
        entry = GameResultEntry(
            game.number,
            game.white,
            game.black,
            summary.result.result,
            summary.result.reason,
            summary.pdn.name if summary.pdn else None,
            white.name,
            black.name,
        )
        self.state.games[game.number] = entry
        self.scores.add(entry)
        self.state.save(self.state_path)
        self._write_event()
        self.progress.line(
            f"[{len(self.state.games)}/{total}] game {game.number}: {game.white} - {game.black} "
            f"{entry.result}  |  {self.scores.standings_line()}"
        )
        self._tell(self.snapshot_standings())

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


def _link(text: str) -> LinkKind:
    if text == "nul":
        return "nul"
    if text == "nulmodem":
        return "nulmodem"
    raise ConfigError(f"engine link {text!r} is not 'nulmodem' or 'nul'")


def load_spec(path: Path) -> TournamentSpec:
    """Read the tournament file at ``path`` (the pdn folder is relative to it)."""
    from dxserial.files import read_text

    text = read_text(path, "tournament file", "give the path of a TOML tournament file")
    return TournamentSpec.from_toml(text, source=str(path), base=path.parent)
