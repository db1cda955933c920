"""A match between two follower engines, with dxserial as the initiator towards both.

Each game is offered to both engines with opposite colours; a move from the side to move is
judged by a strict :class:`~dxserial.game.referee.Referee` and, if legal, relayed byte for
byte to the other engine; every game is written as PDN.  How a game ends, illegal moves,
take-backs, failed engines and stop codes (what the protocol leaves to the organiser):
docs/match.md.  A game is conducted sans-I/O by a
:class:`~dxserial.match.machine.GameConductor` on the one driver (the
:class:`~dxserial.match.links.EngineDesk`); :class:`Match` connects the engines,
runs the games in turn, writes the PDN and keeps the score.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from dxserial.drive.actions import Action, News, Say
from dxserial.errors import DxSerialError
from dxserial.game.news import GameClosed, TableShown, Watcher
from dxserial.game.referee import GameResult
from dxserial.match.links import EngineDesk, Interrupted, MatchEngine, Playing
from dxserial.match.machine import GameConductor
from dxserial.match.pdn import Player, save_game, time_control_text
from dxserial.match.rules import FailurePolicy, GameStart, MatchConfig
from dxserial.match.standings import (
    GameSummary,
    Progress,
    QuietProgress,
    Standing,
    results_table,
    score,
    score_text,
)
from dxserial.transports.endpoints import EngineEndpoint

__all__ = ["Match"]

log = logging.getLogger("dxserial.match.runner")


def _named(side: MatchEngine) -> str | None:
    """The [engines.NAME] an engine the director runs comes from (None: an endpoint)."""
    label = getattr(side.endpoint, "label", None)
    return label if isinstance(label, str) else None


def _where(side: MatchEngine) -> str:
    """Where the results table says an engine is: its [engines.NAME] and program, or the
    endpoint as given (an address the director picked for a command is no help there)."""
    name = _named(side)
    text = side.endpoint.spec.text
    return f"{name}: {text}" if name is not None else text


class Match:
    """Plays ``config.games`` games between the engines at two endpoints."""

    def __init__(
        self,
        a: EngineEndpoint | MatchEngine,
        b: EngineEndpoint | MatchEngine,
        config: MatchConfig,
        *,
        progress: Progress | None = None,
        watch: Watcher | None = None,
        desk: EngineDesk | None = None,
    ) -> None:
        self.cfg = config
        self.sides = (
            a if isinstance(a, MatchEngine) else MatchEngine("A", endpoint=a),
            b if isinstance(b, MatchEngine) else MatchEngine("B", endpoint=b),
        )
        self.watch = watch
        self.progress: Progress = progress or QuietProgress()
        #: The engines' connections (a tournament's desk serves all its games).
        self.desk = desk or EngineDesk()
        self._own_desk = desk is None
        self._stopping = asyncio.Event()
        self._stops = 0  # stop requests no game has taken yet
        self._playing: Playing | None = None
        self.summaries: list[GameSummary] = []
        self.standings = {s.label: Standing(s.label, s.label, _where(s)) for s in self.sides}
        self.stopped: str | None = None  # why the match ended early
        self._status = ""  # the live status shown

    def stop(self) -> None:
        """Ask the match to stop (a signal handler may call this): the game is ``*`` and
        ends with a short GAMEEND exchange; asked again, that exchange ends too."""
        self._stopping.set()
        playing = self._playing
        if playing is not None and not playing.game.over:
            self.desk.act(playing, playing.game.stop)
        else:
            self._stops += 1

    # ------------------------------------------------------------------ the match

    async def run(self) -> bool:
        """Play the match; True if every game was played to the end."""
        try:
            for side in self.sides:
                where = await side.endpoint.prepare()
                listening = side.endpoint.listen_address
                if listening is not None and not _named(side):
                    self.standings[side.label].where = f"listen://{listening}"
                self.progress.line(f"engine {side.label}: {where}")
            self.progress.line(
                f"match: {self.cfg.games} game(s), {self.cfg.moves or 'no'} move limit, "
                f"time control {time_control_text(self.cfg.minutes, self.cfg.period)}"
                + ("" if self.cfg.arbiter.time_control == "on"
                   else f" (the director's clock: {self.cfg.arbiter.time_control})")
                + ", "
                f"PDN in {self.cfg.pdn_dir}"
            )
            for number in range(1, self.cfg.games + 1):
                a, b = self.sides
                white, black = (a, b) if number % 2 == 1 else (b, a)
                summary = await self.game(
                    number, white, black, last=number == self.cfg.games, start=self.cfg.start
                )
                if summary is not None:
                    self.summaries.append(summary)
                    score(self.standings, summary)
                    if self.watch is not None:
                        table = results_table(list(self.standings.values()), len(self.summaries))
                        self.watch(TableShown(table).event())
                if self.stopped is not None:
                    break
                failed = [s for s in self.sides if s.failure]
                if failed and self.cfg.on_engine_failure is FailurePolicy.STOP:
                    who = ", ".join(f"engine {s.title}: {s.failure}" for s in failed)
                    self.stopped = f"{who} (--on-engine-failure stop)"
                    break
            self.progress.clear()
            for row in results_table(list(self.standings.values()), len(self.summaries)):
                self.progress.line(row)
            return self.stopped is None
        finally:
            for side in self.sides:
                await self.desk.close(side)
                await side.endpoint.close()
            if self._own_desk:
                await self.desk.shutdown()

    def _score_text(self) -> str:
        a, b = (self.standings[s.label] for s in self.sides)
        return score_text(a, b, len(self.summaries))

    # ------------------------------------------------------------------ one game

    async def game(
        self,
        number: int,
        white: MatchEngine,
        black: MatchEngine,
        *,
        last: bool | set[str] | Callable[[], set[str]] = False,
        start: GameStart | None = None,
    ) -> GameSummary | None:
        """Play game ``number``; None if the match was interrupted before it started.

        ``last``: stop code 1 for both engines (True) or for the engines named (a tournament
        stops each engine after its own last game; a function: asked when the game is decided).
        """
        start = start or GameStart()
        last_for = {s.label for s in self.sides} if last is True else (last or set())
        self._show(f"game {number}/{self.cfg.games}: starting")
        a, b = self.sides
        game = GameConductor(
            number, a, b, self.cfg, white="A" if white is a else "B", start=start,
            last=last_for, score=self._score_text(),
        )
        interrupted = not await self._ready_sides()
        if self._stops:
            self._stops -= 1
            interrupted = True
        self._playing = self.desk.seat(game, a, b, self._carry, lambda: self._show(game.status))
        try:
            await self.desk.play(self._playing, game.stop if interrupted else game.begin)
        finally:
            self._playing = None
        for side in self.sides:
            if side.name:
                self.standings[side.label].name = side.name
        result = game.result or GameResult("*", "match interrupted")
        for side in (white, black):  # a started engine's exit status and last log lines
            detail = side.endpoint.failed(side.failure) if side.failure else ""
            if detail:
                result = GameResult(result.result, f"{result.reason} ({detail})")
        if game.interrupted:
            self.stopped = "interrupted"
            if game.record is None and not any(s.failure for s in self.sides):
                self._show("")
                return None  # not started: nothing to record or score
        path = save_game(
            game.record, number, Player(white.label, white.name), Player(black.label, black.name),
            result, event=self.cfg.event, label_players=self.cfg.label_players,
            pdn_dir=self.cfg.pdn_dir, opening=start.label, position=start.position,
            to_move=start.to_move,
            time_control=self.cfg.control(),
            annotated=self.cfg.pdn_notes,
        )
        if self.watch is not None:
            self.watch(GameClosed(number, result.result, result.reason).event())
        self._show("")
        self.progress.line(
            f"game {number}: {result.result} ({result.reason})" + (f" -> {path}" if path else "")
        )
        return GameSummary(number, white.label, black.label, result, game.plies, path)

    async def _ready_sides(self) -> bool:
        """Connect each side that is not (a side it cannot reach fails, told by the game);
        False when the match was interrupted meanwhile."""
        fresh = False
        try:
            for side in self.sides:
                if side.connected and not side.usable:
                    await self.desk.close(side)
                side.failure = side.gone = None
                if not side.connected:
                    try:
                        await self.desk.connect(side, self.cfg.connect_timeout, self._stopping)
                        fresh = True
                    except DxSerialError as exc:
                        out: list[Action] = []
                        side.fail(f"cannot reach it: {exc}", out)
                        for action in out:
                            self._carry(action)
            if fresh and self.cfg.listen_first > 0:
                await self._listen_first()
        except Interrupted:
            return False
        return True

    async def _listen_first(self) -> None:
        """A new connection is listened to before the first GAMEREQ goes out: an engine
        set up as initiator sends its own at once, and must not get ours on top of it."""
        try:
            await asyncio.wait_for(self._stopping.wait(), self.cfg.listen_first)
        except TimeoutError:
            return
        raise Interrupted

    def _carry(self, action: Action) -> None:
        """What the game says that is not for the engines: lines and news."""
        if isinstance(action, Say):
            self.progress.line(action.text)
        elif isinstance(action, News) and self.watch is not None:
            self.watch(action.news.event())

    def _show(self, status: str) -> None:
        """The live status, when it changed."""
        if status != self._status:
            self._status = status
            self.progress.update(status)
