"""A match between two follower engines, with dxserial as the initiator towards both.

Each game is offered to both engines with opposite colours; a move from the side to move is
judged by a strict :class:`~dxserial.game.referee.Referee` and, if legal, relayed byte for
byte to the other engine; every game is written as PDN.  How a game ends, illegal moves,
take-backs, failed engines and stop codes (what the protocol leaves to the organiser):
docs/match.md.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from dataclasses import dataclass, field
from pathlib import Path

from dxserial.engine.player import DEFAULT_NAME
from dxserial.errors import DxSerialError
from dxserial.game.arbiter import ArbiterSettings, clock_comment, clock_left, time_loss
from dxserial.game.clock import GameClock
from dxserial.game.news import GameClosed, GameOpened, MoveMade, TableShown, Watcher
from dxserial.game.record import GameRecord, Recorder
from dxserial.game.referee import (
    GameResult,
    Policy,
    Referee,
    Verdict,
    chat_for,
    false_claim_scored,
    gameend_result,
)
from dxserial.programs.match_links import (
    EngineLinks,
    EngineSide,
    Interrupted,
    Item,
    Lost,
    close_side,
)
from dxserial.programs.match_pdn import Player, save_game
from dxserial.programs.standings import (
    GameSummary,
    Progress,
    QuietProgress,
    Standing,
    results_table,
    score,
    score_text,
)
from dxserial.protocol.dialects import DEFAULT_GAMEEND_TIMEOUT
from dxserial.protocol.messages import (
    AcceptCode,
    BackAccept,
    BackCode,
    Chat,
    Colour,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    Piece,
    StopCode,
    colour_name,
)
from dxserial.protocol.session import MovePlayed, Phase, Role, Session
from dxserial.protocol.tolerance import (
    awaits_gameend_answer,
    silence_as_answer,
)
from dxserial.transports.endpoints import EngineEndpoint

__all__ = ["FailurePolicy", "GameStart", "Match", "MatchConfig"]

log = logging.getLogger("dxserial.programs.match")

#: After a signal, how long the engines get to finish the GAMEEND exchange.
_INTERRUPT_GRACE = 2.0


class FailurePolicy(enum.StrEnum):
    STOP = "stop"
    CONTINUE = "continue"


@dataclass(frozen=True)
class MatchConfig:
    games: int = 2
    minutes: int = 5
    moves: int = 75
    pdn_dir: Path = Path("games")
    on_engine_failure: FailurePolicy = FailurePolicy.STOP
    move_timeout: float = 60.0
    connect_timeout: float = 30.0
    name: str = DEFAULT_NAME
    event: str = "dxserial match"
    log_messages: bool = False
    #: PDN White/Black: the engines' labels (a tournament's names) instead of their own names.
    label_players: bool = False
    #: Draw rules, false claims, the director's clock (see dxserial.game.arbiter).
    arbiter: ArbiterSettings = field(default_factory=ArbiterSettings)
    #: Where every game starts (None: the normal start position).
    start: GameStart | None = None
    #: Seconds an engine may leave our GAMEEND unanswered before its silence is the answer.
    gameend_timeout: float = DEFAULT_GAMEEND_TIMEOUT


@dataclass(frozen=True)
class GameStart:
    """Where a game starts: the normal start, or an opening's position (GAMEREQ form B)."""

    position: tuple[Piece, ...] | None = None
    to_move: Colour | None = None
    label: str = ""  # the opening as the user wrote it, for the PDN and the display


def _end_result(reason: EndReason, colour: Colour, title: str) -> GameResult:
    """The result of a GAMEEND an engine started (the board had not decided the game)."""
    who = f"{colour_name(colour)} {title}"
    claimed = gameend_result(reason, colour, who)
    return claimed or GameResult("*", f"no result: {who} ended the game without a reason")


def _clock_from_delivery(
    clock: GameClock, side: EngineSide, colour: Colour, move: bytes | None
) -> None:
    """Start ``colour``'s running clock where the link delivered it ``move``, the move it
    answers (the clock was started when the move was sent)."""
    if clock.running is colour and side.delivered is not None and move is not None:
        raw, at = side.delivered
        if raw == move and at > clock.since:
            log.debug("%s's clock from the delivery, %.1f ms after the send",
                      colour_name(colour), 1000 * (at - clock.since))
            clock.start(colour, at)


def _clean_name(name: str, fallback: str) -> str:
    name = name.strip()
    return name[:32] if name else fallback


class Match:
    """Plays ``config.games`` games between the engines at two endpoints."""

    def __init__(
        self,
        a: EngineEndpoint | EngineSide,
        b: EngineEndpoint | EngineSide,
        config: MatchConfig,
        *,
        progress: Progress | None = None,
        watch: Watcher | None = None,
    ) -> None:
        self.cfg = config
        self.sides = (
            a if isinstance(a, EngineSide) else EngineSide("A", a),
            b if isinstance(b, EngineSide) else EngineSide("B", b),
        )
        self.watch = watch
        self.progress: Progress = progress or QuietProgress()
        self.links = EngineLinks(self.progress, log_messages=config.log_messages)
        for side in self.sides:
            side.sink = self.links.post
        self.summaries: list[GameSummary] = []
        self.standings = {
            s.label: Standing(s.label, s.label, s.endpoint.spec.text) for s in self.sides
        }
        self.stopped: str | None = None  # why the match ended early
        self._record: GameRecord | None = None  # the game being played

    def stop(self) -> None:
        """Ask the match to stop (a signal handler may call this)."""
        self.links.stop()

    # ------------------------------------------------------------------ the match

    async def run(self) -> bool:
        """Play the match; True if every game was played to the end."""
        try:
            for side in self.sides:
                where = await side.endpoint.prepare()
                listening = side.endpoint.listen_address
                if listening is not None:
                    self.standings[side.label].where = f"listen://{listening}"
                self.progress.line(f"engine {side.label}: {where}")
            self.progress.line(
                f"match: {self.cfg.games} game(s), {self.cfg.moves or 'no'} move limit, "
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
                await close_side(side)
                await side.endpoint.close()

    def _score_text(self) -> str:
        a, b = (self.standings[s.label] for s in self.sides)
        return score_text(a, b, len(self.summaries))

    # ------------------------------------------------------------------ one game

    async def game(
        self,
        number: int,
        white: EngineSide,
        black: EngineSide,
        *,
        last: bool | set[str] = False,
        start: GameStart | None = None,
    ) -> GameSummary | None:
        """Play game ``number``; None if the match was interrupted before it started.

        ``last``: stop code 1 for both engines (True) or for the engines named (a tournament
        stops each engine after its own last game).
        """
        colours = {white.label: Colour.WHITE, black.label: Colour.BLACK}
        start = start or GameStart()
        last_for = {s.label for s in self.sides} if last is True else (last or set())
        self.progress.update(f"game {number}/{self.cfg.games}: starting")
        recorder = Recorder(event=self.cfg.event, site="dxserial")
        referee = Referee(Policy.STRICT, draw_rules=self.cfg.arbiter.fmjd)
        self._record = None
        result: GameResult | None = None
        reasons: dict[str, EndReason] = {}
        interrupted = False
        try:
            for side in self.sides:
                if side.connected and not side.usable:
                    await close_side(side)
                side.failure = side.gone = None
                if not side.connected:
                    try:
                        await self.links.connect(side, self.cfg.connect_timeout)
                    except DxSerialError as exc:
                        self.links.fail(side, f"cannot reach it: {exc}")
            for side in (white, black):
                if side.stale and side.usable:
                    await self.close_stale(side)
            accepted = await self._offer(number, white, black, start)
            self.progress.line(f"game {number}: White {white.title} vs Black {black.title}")
            if accepted is not None:
                result, reasons = await self._play(
                    number, referee, recorder, accepted, colours, start
                )
        except Interrupted:
            interrupted = True
            result = GameResult("*", "match interrupted")
        if result is None:
            result = self._failure_result(white, black)
            survivors = [s for s in (white, black) if not s.failure]
            if len(survivors) == 1 and not interrupted:
                reasons = {survivors[0].label: EndReason.RESIGN}  # the opponent forfeits
        failed = any(s.failure for s in self.sides)
        stop_all = interrupted or (failed and self.cfg.on_engine_failure is FailurePolicy.STOP)
        stops = {
            s.label: StopCode.STOP if stop_all or s.label in last_for else StopCode.CONTINUE
            for s in self.sides
        }
        self.progress.update(f"game {number}/{self.cfg.games}: {result.result}, ending")
        try:
            await self._end_exchange(
                reasons,
                stops,
                timeout=_INTERRUPT_GRACE if interrupted else self.cfg.move_timeout,
            )
        except Interrupted:
            interrupted = True
        for side in (white, black):  # a started engine's exit status and last log lines
            detail = side.endpoint.failed(side.failure) if side.failure else ""
            if detail:
                result = GameResult(result.result, f"{result.reason} ({detail})")
        if interrupted:
            self.stopped = "interrupted"
            if self._record is None and not any(s.failure for s in self.sides):
                self.progress.update("")
                return None  # not started: nothing to record or score
        path = save_game(
            self._record, number, Player(white.label, white.name), Player(black.label, black.name),
            result, event=self.cfg.event, label_players=self.cfg.label_players,
            pdn_dir=self.cfg.pdn_dir, opening=start.label, position=start.position,
            to_move=start.to_move,
            time_control=self.cfg.arbiter.control(self.cfg.minutes, self.cfg.moves),
        )
        if self.watch is not None:
            self.watch(GameClosed(number, result.result, result.reason).event())
        self.progress.update("")
        self.progress.line(
            f"game {number}: {result.result} ({result.reason})" + (f" -> {path}" if path else "")
        )
        plies = referee.dialogue.plies if referee.game else 0
        return GameSummary(number, white.label, black.label, result, plies, path)

    def _failure_result(self, white: EngineSide, black: EngineSide) -> GameResult:
        failed = [s for s in (white, black) if s.failure]
        if not failed:
            return GameResult("*", "match interrupted")
        if len(failed) == 2:
            return GameResult("*", f"both engines failed: {white.failure}; {black.failure}")
        loser = failed[0]
        colour = Colour.WHITE if loser is white else Colour.BLACK
        return GameResult.win_for(
            colour.other, f"{colour_name(colour)} {loser.title} forfeits: {loser.failure}"
        )

    async def _offer(
        self, number: int, white: EngineSide, black: EngineSide, start: GameStart
    ) -> dict[str, GameAccept] | None:
        """GAMEREQ to both; their GAMEACCs when both accepted, else None (a side failed)."""
        if white.failure or black.failure:
            return None
        for side, colour in ((white, Colour.WHITE), (black, Colour.BLACK)):
            self.links.send(
                side,
                GameRequest(
                    name=self.cfg.name,
                    follower_colour=colour,
                    minutes=self.cfg.minutes,
                    moves=self.cfg.moves,
                    to_move=start.to_move,
                    position=start.position,
                ),
            )
        accepted: dict[str, GameAccept] = {}
        early: list[Item] = []
        try:
            return await self._accepts(number, white, black, accepted, early)
        finally:
            self.links.held.extend(early)  # the game (or its end) reads them next

    async def _accepts(
        self,
        number: int,
        white: EngineSide,
        black: EngineSide,
        accepted: dict[str, GameAccept],
        early: list[Item],
    ) -> dict[str, GameAccept] | None:
        deadline = asyncio.get_running_loop().time() + self.cfg.move_timeout
        while len(accepted) < 2:
            if white.failure or black.failure:
                return None
            item = await self.links.next(deadline)
            if item is None:
                for side in (white, black):
                    if side.label not in accepted:
                        self.links.fail(side, f"no GAMEACC within {self.cfg.move_timeout:g} s")
                return None
            assert item.side is not None
            if item.side.label in accepted:
                early.append(item)  # e.g. White's first move, before Black has accepted
                continue
            if isinstance(item.payload, GameEnd) and self._stale_game(item.side, item.payload):
                deadline = asyncio.get_running_loop().time() + self.cfg.move_timeout
                continue
            msg = self.links.intake(item.side, item.payload)
            if isinstance(msg, GameAccept):
                side = item.side
                side.name = _clean_name(msg.name, side.label)
                self.standings[side.label].name = side.name
                if msg.code is not AcceptCode.ACCEPT:
                    self.links.fail(side, f"refused game {number} (GAMEACC code {msg.code.value})")
                    return None
                accepted[side.label] = msg
        return accepted

    async def close_stale(self, side: EngineSide, timeout: float = 3.0) -> None:
        """Close a game the engine may still have open from a director that crashed.

        GAMEEND reason 0, stop code 0, sent outside the dialogue (ours has no game), then
        its answer is awaited for up to ``timeout`` seconds and swallowed, with any CHAT
        (an idle engine may say the GAMEEND was unexpected).  Messages from the other
        engine meanwhile are kept for the game.
        """
        side.stale = False
        if side.driver is None:
            return
        log.info("engine %s: closing any game left open by an earlier run (GAMEEND 0)", side.label)
        side.driver.send(GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE).wire)
        deadline = asyncio.get_running_loop().time() + min(timeout, self.cfg.move_timeout)
        others: list[Item] = []
        try:
            while side.usable:
                item = await self.links.next(deadline)
                if item is None:
                    return
                if item.side is not side:
                    others.append(item)
                    continue
                payload = item.payload
                if isinstance(payload, GameEnd):
                    return
                if isinstance(payload, Chat):
                    log.info("chat from engine %s: %s", side.label, payload.text)
                elif isinstance(payload, Lost):
                    self.links.fail(side, f"link lost: {payload.reason}")
        finally:
            self.links.held.extend(others)

    def _stale_game(self, side: EngineSide, end: GameEnd) -> bool:
        """A GAMEEND instead of a GAMEACC: the engine was still in a game of a director that
        died (a crash before ``--resume``).  Answer it so the engine's old game is closed,
        then offer the game again.  True if handled so."""
        if side.session.phase is not Phase.REQUESTED or side.driver is None:
            return False
        request = side.session.dialogue.pending
        if not isinstance(request, GameRequest):
            return False
        log.info(
            "engine %s was still in an earlier game (GAMEEND instead of GAMEACC): "
            "answered, and the game offered again",
            side.label,
        )
        side.driver.send(GameEnd(reason=EndReason.NONE, stop=end.stop).wire)
        side.session = Session(Role.INITIATOR)
        self.links.send(side, request)
        return True

    async def _play(
        self,
        number: int,
        referee: Referee,
        recorder: Recorder,
        accepted: dict[str, GameAccept],
        colours: dict[str, Colour],
        start: GameStart,
    ) -> tuple[GameResult | None, dict[str, EndReason]]:
        """Relay moves until the game is decided; the result and the GAMEEND reasons."""
        a, b = self.sides
        roles = {a.label: Role.INITIATOR, b.label: Role.FOLLOWER}
        other = {a.label: b, b.label: a}

        def judge(msg: Message, role: Role) -> Verdict:
            verdict = referee.observe(msg, role)
            recorder.observe(msg, role, verdict)
            return verdict

        request = GameRequest(
            name=a.name or "A",
            follower_colour=colours[b.label],
            minutes=self.cfg.minutes,
            moves=self.cfg.moves,
            to_move=start.to_move,
            position=start.position,
        )
        judge(request, Role.INITIATOR)
        opened = judge(accepted[b.label], Role.FOLLOWER)
        self._record = recorder.current
        control = self.cfg.arbiter.control(self.cfg.minutes, self.cfg.moves)
        clock = GameClock(control) if control is not None else None
        loop = asyncio.get_running_loop()
        if self.watch is not None and referee.position is not None:
            white = a if colours[a.label] is Colour.WHITE else b
            black = other[white.label]
            opened_news = GameOpened(
                number, white.name or white.label, black.name or black.label,
                white.label, black.label, referee.position.to_fen(), self.cfg.minutes,
                opening=start.label, left=clock_left(clock, loop.time()) if clock else None,
            )
            self.watch(opened_news.event())
        if opened.result is not None:  # a start position where the side to move has lost
            return opened.result, {}
        first = request.first_to_move
        to_move = a if colours[a.label] is first else b
        relayed: bytes | None = None  # the last MOVE relayed: its delivery starts a clock
        if clock is not None:
            clock.start(first, loop.time())
        deadline = loop.time() + self.cfg.move_timeout
        while True:
            if a.failure or b.failure:
                return None, {}
            if clock is not None:
                _clock_from_delivery(clock, to_move, colours[to_move.label], relayed)
            flag = clock.flag_at() if clock is not None else None
            item = await self.links.next(deadline if flag is None else min(deadline, flag))
            if item is None and clock is not None:
                _clock_from_delivery(clock, to_move, colours[to_move.label], relayed)
                if clock.fallen(loop.time()) is not None:
                    return self._time_loss(to_move, colours, clock, other, loop.time())
                if loop.time() < deadline:
                    continue  # the flag moved on: the move was delivered after it was sent
            if item is None:
                self.links.fail(to_move, f"no move within {self.cfg.move_timeout:g} s")
                return None, {}
            side = item.side
            assert side is not None
            msg = self.links.intake(side, item.payload)
            if msg is None:
                continue
            opponent = other[side.label]
            colour = colours[side.label]
            if isinstance(msg, GameEnd):
                who = f"{colour_name(colour)} {side.title}"
                claim = referee.claim_result(msg.reason, colour, who)
                result = referee.decided or claim or _end_result(msg.reason, colour, side.title)
                result = false_claim_scored(result, colour, self.cfg.arbiter.on_false_claim)
                told = msg.reason
                if result.false_claim:  # both are told; a claim scored as a loss resigns
                    for engine in (side, opponent):
                        self.links.send(engine, Chat.carrying(f"referee: {result.reason}"))
                    if result.winner is colour.other:
                        told = EndReason.RESIGN
                return result, {opponent.label: told}
            if not isinstance(msg, Move):
                log.warning("engine %s: %s ignored during the game", side.label, msg.NAME)
                continue
            if clock is not None:
                _clock_from_delivery(clock, side, colour, relayed)
                charged = clock.stop(colour, loop.time())
                if clock.fallen(loop.time()) is colour:  # answered after its flag fell
                    return self._time_loss(side, colours, clock, other, loop.time())
            verdict = judge(msg, roles[side.label])
            if not verdict.ok:
                self.links.send(side, chat_for(verdict))
                result = GameResult.win_for(
                    colour.other, f"{colour_name(colour)} {side.title} played an {verdict.problem}"
                )
                return result, {side.label: EndReason.WIN, opponent.label: EndReason.RESIGN}
            self.links.send(opponent, msg)
            relayed = msg.wire
            if clock is not None:
                clock.start(colours[opponent.label], loop.time())
                if self._record is not None:
                    left = clock.left(colour, loop.time())
                    self._record.add_comment(clock_comment(charged, left, msg.seconds))
            if self.watch is not None and referee.position is not None:
                made = MoveMade(
                    number, referee.dialogue.plies, verdict.pdn or "?", colour,
                    referee.position.to_fen(), msg.seconds,
                    left=clock_left(clock, loop.time()) if clock else None,
                )
                self.watch(made.event())
            played = next((e for e in verdict.events if isinstance(e, MovePlayed)), None)
            move_no = played.move_number if played else 0
            self.progress.update(
                f"game {number}/{self.cfg.games}: move {move_no} "
                f"{colour_name(colour)} {verdict.pdn}  |  {self._score_text()}"
            )
            if verdict.result is not None and verdict.result.rule:  # a draw rule ends it
                rule = referee.draw.long if referee.draw else verdict.result.reason
                for engine in (side, opponent):
                    self.links.send(engine, Chat.carrying(f"referee: {rule}"))
                return verdict.result, {side.label: EndReason.DRAW, opponent.label: EndReason.DRAW}
            if verdict.result is not None:
                return verdict.result, {side.label: EndReason.RESIGN, opponent.label: EndReason.WIN}
            moves = self.cfg.moves
            if moves and referee.dialogue.plies >= 2 * moves:
                result = GameResult("1-1", f"draw: move limit of {moves} moves reached")
                return result, {side.label: EndReason.DRAW, opponent.label: EndReason.DRAW}
            to_move = opponent
            deadline = loop.time() + self.cfg.move_timeout

    def _time_loss(
        self,
        side: EngineSide,
        colours: dict[str, Colour],
        clock: GameClock,
        other: dict[str, EngineSide],
        now: float,
    ) -> tuple[GameResult, dict[str, EndReason]]:
        """``side``'s flag fell: it loses; both engines are told by CHAT, then GAMEEND."""
        result = time_loss(colours[side.label], side.title, clock, now)
        opponent = other[side.label]
        for engine in (side, opponent):
            self.links.send(engine, Chat.carrying(f"referee: {result.reason}"))
        return result, {side.label: EndReason.WIN, opponent.label: EndReason.RESIGN}

    # ------------------------------------------------------------------ ending

    def _advance_end(self, side: EngineSide, reason: EndReason, stop: StopCode) -> bool:
        """One step of the GAMEEND exchange with ``side``; True once it is over there."""
        s = side.session
        if not side.usable:
            return True
        if s.phase is Phase.BACK_REQUESTED and s.must_answer is not None:
            self.links.send(side, BackAccept(code=BackCode.NOT_SUPPORTED))
        if s.phase.game_running and s.our_turn:
            self.links.send(side, GameEnd(reason=reason, stop=stop))
        elif s.phase is Phase.ENDING and s.must_answer is not None:
            self.links.send(side, GameEnd(reason=EndReason.NONE, stop=stop))
        return s.phase in (Phase.IDLE, Phase.STOPPED) or not side.usable

    async def _end_exchange(
        self, reasons: dict[str, EndReason], stops: dict[str, StopCode], *, timeout: float
    ) -> None:
        """Finish the game on both connections (see the module docstring)."""
        pending: set[str] = set()
        for side in self.sides:
            if side.connected and not side.usable:
                await close_side(side)
            elif side.connected and not self._advance_end(
                side, reasons.get(side.label, EndReason.NONE), stops[side.label]
            ):
                pending.add(side.label)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        silence = loop.time() + min(timeout, self.cfg.gameend_timeout)
        while pending:
            item = await self.links.next(min(deadline, silence) if silence else deadline)
            if item is None and silence and loop.time() < deadline:
                silence = 0.0
                pending -= self._silent_answers(pending)
                continue
            if item is None:
                for side in self.sides:
                    if side.label in pending:
                        self.links.fail(side, "did not finish the GAMEEND exchange in time")
                        await close_side(side)
                return
            sender = item.side
            assert sender is not None
            msg = self.links.intake(sender, item.payload)
            if isinstance(msg, Move):
                log.info("engine %s: MOVE after the end of the game (not relayed)", sender.label)
            if not sender.usable:
                pending.discard(sender.label)
                await close_side(sender)
            elif sender.label in pending and self._advance_end(
                sender, reasons.get(sender.label, EndReason.NONE), stops[sender.label]
            ):
                pending.discard(sender.label)
        for side in self.sides:
            if side.connected and side.session.phase is Phase.STOPPED:
                await close_side(side)

    def _silent_answers(self, pending: set[str]) -> set[str]:
        """Engines that left our GAMEEND unanswered (GWD's default): their silence is the
        answer; their exchange is over.  The labels of those engines."""
        done: set[str] = set()
        for side in self.sides:
            if side.label in pending and awaits_gameend_answer(side.session):
                for note in side.habits.notes(silence_as_answer(side.session)):
                    log.info("engine %s: %s", side.label, note)
                side.late_answer = True
                done.add(side.label)
        return done
