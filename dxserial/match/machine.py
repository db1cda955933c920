"""One game of a match, conducted sans-I/O: offer, accept, play, the GAMEEND exchange.

:class:`GameConductor` is a :mod:`dxserial.drive` machine with two sides, "A" and "B" (the
match's two engines; A plays the initiator's part for the referee).  It takes the engines'
messages as bytes with the time they came, and answers with actions: messages to send
(relayed moves byte for byte), log lines, news for a live view, a hang-up for a failed
engine.  :class:`~dxserial.match.runner.Match` runs one per game; the rules it keeps:
docs/match.md.
"""

from __future__ import annotations

import enum
import logging
from collections import deque
from collections.abc import Callable

from dxserial.drive.actions import Action, Done, Log, News, Say, Send
from dxserial.drive.machine import BaseMachine
from dxserial.game.adjudication import Adjudicator
from dxserial.game.arbiter import clock_left, time_loss
from dxserial.game.clock import GameClock
from dxserial.game.news import GameOpened, MoveMade
from dxserial.game.record import GameRecord, PlyClock, Recorder
from dxserial.game.referee import GameResult, Policy, Referee, Verdict, chat_for
from dxserial.game.thinking import Thinking
from dxserial.match.ending import EndExchange
from dxserial.match.engine import (
    Engine,
    Lost,
    Payload,
    claims_initiator,
    fail_as_initiator,
    intake,
    read,
    send,
)
from dxserial.match.rules import (
    FailurePolicy,
    GameStart,
    MatchConfig,
    claim_result,
    clean_name,
    clock_from_delivery,
    failure_result,
)
from dxserial.protocol.messages import (
    AcceptCode,
    Chat,
    Colour,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    StopCode,
    colour_name,
)
from dxserial.protocol.session import MovePlayed, Phase, Role, Session

__all__ = ["GameConductor"]

#: After a signal, how long the engines get to finish the GAMEEND exchange.
INTERRUPT_GRACE = 2.0
#: How long an engine that may still be in an earlier director's game gets to close it.
STALE_TIMEOUT = 3.0

SIDES = ("A", "B")


class _Phase(enum.Enum):
    NEW = "new"
    STALE = "closing a stale game"
    OFFER = "offer"
    PLAY = "play"
    END = "end"
    DONE = "done"


class GameConductor(BaseMachine[str]):
    """Game ``number`` between engines ``a`` (side "A") and ``b`` (side "B").

    Call :meth:`begin` once the engines that could be reached are connected (or
    :meth:`stop` instead, when the match was stopped before); then feed it until
    :attr:`over`.  ``last``: the labels of the engines told stop code 1 after this game.
    ``score``: the match's score so far, for the status line.
    """

    def __init__(
        self,
        number: int,
        a: Engine,
        b: Engine,
        config: MatchConfig,
        *,
        white: str = "A",
        start: GameStart | None = None,
        last: set[str] | frozenset[str] | Callable[[], set[str]] = frozenset(),
        score: str = "",
    ) -> None:
        self.number = number
        self.cfg = config
        self.engines = {"A": a, "B": b}
        self.white, self.black = white, "B" if white == "A" else "A"
        self.colours = {self.white: Colour.WHITE, self.black: Colour.BLACK}
        self.start = start or GameStart()
        # The engines that get stop code 1; a tournament asks when the game is decided
        # (which of an engine's processes plays on is known only then).
        self._last = last
        self.score = score
        self.level = logging.INFO if config.log_messages else logging.DEBUG
        self.recorder = Recorder(event=config.event, site="dxserial")
        self.referee = Referee(Policy.STRICT, draw_rules=config.arbiter.fmjd)
        #: The game's record once both engines accepted (None: it never started).
        self.record: GameRecord | None = None
        #: The result once decided (``over``: after the GAMEEND exchange too).
        self.result: GameResult | None = None
        self.interrupted = False
        #: The live status line ("" when there is nothing to show).
        self.status = ""
        self._phase = _Phase.NEW
        self._held: deque[tuple[str, Payload]] = deque()  # read early, for the next phase
        self._deadline = 0.0
        self._stale: list[str] = []  # sides still to be asked to close an old game
        self._closing: str | None = None  # the side asked now
        self._accepted: dict[str, GameAccept] = {}
        self._early: list[tuple[str, Payload]] = []
        self._clock: GameClock | None = None
        self._to_move = self.white
        self._relayed: bytes | None = None  # the last MOVE relayed: its delivery starts a clock
        self._adjudicator: Adjudicator | None = None  # the scores, when adjudication is on
        self._end: EndExchange | None = None
        for engine in self.engines.values():  # its failures follow the game's header
            engine.unheaded = []

    @property
    def over(self) -> bool:
        return self._phase is _Phase.DONE

    @property
    def plies(self) -> int:
        return self.referee.dialogue.plies if self.referee.game else 0

    # ------------------------------------------------------------------ inputs

    def begin(self, now: float) -> list[Action]:
        """Start the game: close stale games, then offer it to both engines."""
        assert self._phase is _Phase.NEW
        self.status = f"game {self.number}/{self.cfg.games}: starting"
        self._stale = [self.white, self.black]
        out: list[Action] = []
        for engine in self.engines.values():
            if engine.initiator is not None and engine.usable:
                fail_as_initiator(engine, out)  # not a word to it: no GAMEEND 0, no GAMEREQ
        self._next_stale(now, out)
        return out

    def joined(self, side: str, now: float, who: str = "") -> list[Action]:
        """A connection to the engine on ``side`` opened: a new dialogue (before :meth:`begin`)."""
        self.engines[side].joined()
        return []

    def receive(self, side: str, raw: bytes, now: float) -> list[Action]:
        return self._input(side, read(raw), now)

    def left(self, side: str, now: float, why: str = "") -> list[Action]:
        return self._input(side, Lost(why or "the engine closed the connection"), now)

    def delivered(self, side: str, raw: bytes, now: float) -> list[Action]:
        engine = self.engines[side]
        engine.delivered = (raw, now)
        if self._phase is _Phase.PLAY and self._clock is not None and side == self._to_move:
            line = clock_from_delivery(self._clock, engine, self.colours[side], self._relayed)
            return [line] if line else []
        return []

    def undelivered(self, side: str, raws: list[bytes], why: str, now: float) -> list[Action]:
        out: list[Action] = []
        self.engines[side].fail(f"cannot send to it: {why}", out)
        if self._end is not None and self._phase is _Phase.END:
            out += self._end.failed(side)
            self._after_end(out)
        elif self._phase in (_Phase.OFFER, _Phase.PLAY):
            self._decided(None, {}, now, out)
        return out

    def next_deadline(self) -> float | None:
        if self._phase in (_Phase.STALE, _Phase.OFFER):
            return self._deadline
        if self._phase is _Phase.PLAY:
            flag = self._clock.flag_at() if self._clock is not None else None
            return self._deadline if flag is None else min(self._deadline, flag)
        if self._phase is _Phase.END and self._end is not None:
            return self._end.next_deadline()
        return None

    def poll(self, now: float) -> list[Action]:
        out: list[Action] = []
        due = self.next_deadline()
        if due is None or now < due:
            return out
        if self._phase is _Phase.STALE:
            self._next_stale(now, out)
        elif self._phase is _Phase.OFFER:
            for side in (self.white, self.black):
                if side not in self._accepted:
                    self.engines[side].fail(
                        f"no GAMEACC within {self.cfg.move_timeout:g} s", out
                    )
            self._offered(None, now, out)
        elif self._phase is _Phase.PLAY:
            self._play_timeout(now, out)
        elif self._phase is _Phase.END and self._end is not None:
            out += self._end.poll(now)
            self._after_end(out)
        return out

    def stop(self, now: float) -> list[Action]:
        """Asked to stop: the game is ``*`` and ends with a short GAMEEND exchange (asked
        again during the exchange: it ends there)."""
        out: list[Action] = []
        self.interrupted = True
        if self._phase is _Phase.END:
            self._phase = _Phase.DONE
            self._done(out)
        elif self._phase is not _Phase.DONE:
            self._decided(GameResult("*", "match interrupted"), {}, now, out)
        return out

    def _input(self, side: str, payload: Payload, now: float) -> list[Action]:
        if not self.engines[side].connected:
            return []
        out: list[Action] = []
        if isinstance(payload, GameRequest) and self._phase in (
            _Phase.NEW, _Phase.STALE, _Phase.OFFER
        ):
            self._initiator(side, payload, now, out)
            return out
        if self._phase is _Phase.STALE:
            self._stale_input(side, payload, now, out)
        elif self._phase is _Phase.OFFER:
            self._offer_input(side, payload, now, out)
        elif self._phase is _Phase.PLAY:
            self._play_input(side, payload, now, out)
        elif self._phase is _Phase.END and self._end is not None:
            out += self._end.receive(side, payload, now)
            self._after_end(out)
        elif self._phase is _Phase.NEW:
            self._held.append((side, payload))
        return out

    def _initiator(self, side: str, request: GameRequest, now: float, out: list[Action]
                   ) -> None:
        """The engine sent its own GAMEREQ: it is set up as initiator.  Before the offer
        it gets none of ours; during it (the two crossed) it gets nothing more; either way
        it loses the game as the failure policy says."""
        engine = self.engines[side]
        claims_initiator(engine, request, out)
        if self._phase is _Phase.NEW:
            return  # begin() fails it
        fail_as_initiator(engine, out)
        if self._phase is _Phase.OFFER:
            self._offered(None, now, out)
        elif self._closing == side:
            self._next_stale(now, out)

    def _replay_held(self, now: float, out: list[Action]) -> None:
        """What was read early goes to the phase that has just begun."""
        while self._held and self._phase is not _Phase.DONE:
            side, payload = self._held.popleft()
            out += self._input(side, payload, now)

    # ------------------------------------------------------------------ stale games

    def _next_stale(self, now: float, out: list[Action]) -> None:
        """Ask the next engine to close a game an earlier director may have left open.

        GAMEEND reason 0, stop code 0, sent outside the dialogue (ours has no game); its
        answer (and any CHAT: an idle engine may say it was unexpected) is swallowed.
        Messages from the other engine meanwhile are kept for the game.
        """
        while self._stale:
            side = self._stale.pop(0)
            engine = self.engines[side]
            if not (engine.stale and engine.usable):
                continue
            engine.stale = False
            out.append(Log(logging.INFO, f"engine {engine.label}: closing any game left open "
                           "by an earlier run (GAMEEND 0)"))
            out.append(Send(side, GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE).wire))
            self._phase, self._closing = _Phase.STALE, side
            self._deadline = now + min(STALE_TIMEOUT, self.cfg.move_timeout)
            return
        self._closing = None
        self._offer(now, out)

    def _stale_input(self, side: str, payload: Payload, now: float, out: list[Action]) -> None:
        engine = self.engines[side]
        if side != self._closing:
            self._held.append((side, payload))
        elif isinstance(payload, GameEnd):
            self._next_stale(now, out)
        elif isinstance(payload, Chat):
            out.append(Log(logging.INFO, f"chat from engine {engine.label}: {payload.text}"))
        elif isinstance(payload, Lost):
            engine.fail(f"link lost: {payload.reason}", out)
            self._next_stale(now, out)

    # ------------------------------------------------------------------ the offer

    def _offer(self, now: float, out: list[Action]) -> None:
        """GAMEREQ to both; the game starts when both sent GAMEACC."""
        self._phase = _Phase.OFFER
        if any(e.failure for e in self.engines.values()):
            self._offered(None, now, out)
            return
        for side, colour in ((self.white, Colour.WHITE), (self.black, Colour.BLACK)):
            request = GameRequest(
                name=self.cfg.name, follower_colour=colour, minutes=self.cfg.minutes,
                moves=self.cfg.period, to_move=self.start.to_move, position=self.start.position,
            )
            send(self.engines[side], side, request, self.level, out)
        self._deadline = now + self.cfg.move_timeout
        self._replay_held(now, out)

    def _offer_input(self, side: str, payload: Payload, now: float, out: list[Action]) -> None:
        engine = self.engines[side]
        if side in self._accepted:
            self._early.append((side, payload))  # e.g. White's first move, before Black accepts
            return
        if isinstance(payload, GameEnd) and self._stale_game(side, payload, out):
            self._deadline = now + self.cfg.move_timeout
            return
        msg = intake(engine, side, payload, self.level, out)
        if isinstance(msg, GameAccept):
            engine.name = clean_name(msg.name, engine.label)
            if msg.code is not AcceptCode.ACCEPT:
                engine.fail(f"refused game {self.number} (GAMEACC code {msg.code.value})", out)
            else:
                self._accepted[side] = msg
        if any(e.failure for e in self.engines.values()):
            self._offered(None, now, out)
        elif len(self._accepted) == 2:
            self._offered(self._accepted, now, out)

    def _stale_game(self, side: str, end: GameEnd, out: list[Action]) -> bool:
        """A GAMEEND instead of a GAMEACC: the engine was still in a game of a director that
        died (a crash before ``--resume``).  Answer it so the engine's old game is closed,
        then offer the game again.  True if handled so."""
        engine = self.engines[side]
        if engine.session.phase is not Phase.REQUESTED or not engine.connected:
            return False
        request = engine.session.dialogue.pending
        if not isinstance(request, GameRequest):
            return False
        out.append(Log(logging.INFO, f"engine {engine.label} was still in an earlier game "
                       "(GAMEEND instead of GAMEACC): answered, and the game offered again"))
        out.append(Send(side, GameEnd(reason=EndReason.NONE, stop=end.stop).wire))
        engine.session = Session(Role.INITIATOR)
        send(engine, side, request, self.level, out)
        return True

    def _headed(self, out: list[Action]) -> None:
        """The game's header is said (or never will be): what waited for it follows."""
        for engine in self.engines.values():
            out.extend(engine.unheaded or ())
            engine.unheaded = None

    def _offered(self, accepted: dict[str, GameAccept] | None, now: float, out: list[Action]
                 ) -> None:
        white, black = self.engines[self.white], self.engines[self.black]
        self._held.extend(self._early)  # the game (or its end) reads them next
        self._early = []
        out.append(Say(f"game {self.number}: White {white.title} vs Black {black.title}"))
        self._headed(out)
        if accepted is None:
            self._decided(None, {}, now, out)
        else:
            self._play(accepted, now, out)

    # ------------------------------------------------------------------ the game

    def _judge(self, msg: Message, role: Role) -> Verdict:
        verdict = self.referee.observe(msg, role)
        self.recorder.observe(msg, role, verdict)
        return verdict

    def _play(self, accepted: dict[str, GameAccept], now: float, out: list[Action]) -> None:
        request = GameRequest(
            name=self.engines["A"].name or "A", follower_colour=self.colours["B"],
            minutes=self.cfg.minutes, moves=self.cfg.period, to_move=self.start.to_move,
            position=self.start.position,
        )
        self._judge(request, Role.INITIATOR)
        opened = self._judge(accepted["B"], Role.FOLLOWER)
        self.record = self.recorder.current
        for engine in self.engines.values():
            engine.thinking = None  # told before this game: not about its moves
        rules = self.cfg.adjudication
        self._adjudicator = Adjudicator(rules) if rules.on else None
        control = self.cfg.control()
        clock = self._clock = GameClock(control) if control is not None else None
        referee = self.referee
        if referee.position is not None:
            white, black = self.engines[self.white], self.engines[self.black]
            out.append(News(GameOpened(
                self.number, white.name or white.label, black.name or black.label,
                white.label, black.label, referee.position.to_fen(), self.cfg.minutes,
                opening=self.start.label, left=clock_left(clock, now) if clock else None,
            )))
        if opened.result is not None:  # a start position where the side to move has lost
            self._decided(opened.result, {}, now, out)
            return
        first = request.first_to_move
        self._to_move = self.white if first is Colour.WHITE else self.black
        if clock is not None:
            clock.start(first, now)
        self._deadline = now + self.cfg.move_timeout
        self._phase = _Phase.PLAY
        self._replay_held(now, out)

    def _play_timeout(self, now: float, out: list[Action]) -> None:
        engine = self.engines[self._to_move]
        clock = self._clock
        if clock is not None:
            self._delivery(clock, self._to_move, out)
            if clock.fallen(now) is not None:
                self._time_loss(self._to_move, clock, now, out)
                return
            if now < self._deadline:
                return  # the flag moved on: the move was delivered after it was sent
        engine.fail(f"no move within {self.cfg.move_timeout:g} s", out)
        self._decided(None, {}, now, out)

    def _delivery(self, clock: GameClock, side: str, out: list[Action]) -> None:
        line = clock_from_delivery(clock, self.engines[side], self.colours[side], self._relayed)
        if line is not None:
            out.append(line)

    def _play_input(self, side: str, payload: Payload, now: float, out: list[Action]) -> None:
        engine = self.engines[side]
        msg = intake(engine, side, payload, self.level, out)
        if any(e.failure for e in self.engines.values()):
            self._decided(None, {}, now, out)
            return
        if msg is None:
            return
        other = "B" if side == "A" else "A"
        opponent = self.engines[other]
        colour = self.colours[side]
        if isinstance(msg, GameEnd):
            self._claimed(side, msg, now, out)
            return
        if not isinstance(msg, Move):
            out.append(Log(logging.WARNING,
                           f"engine {engine.label}: {msg.NAME} ignored during the game"))
            return
        clock = self._clock
        charged = 0.0
        if clock is not None:
            self._delivery(clock, side, out)
            charged = clock.stop(colour, now)
            if clock.fallen(now) is colour:  # answered after its flag fell
                self._time_loss(side, clock, now, out)
                return
        verdict = self._judge(msg, Role.INITIATOR if side == "A" else Role.FOLLOWER)
        thinking, engine.thinking = engine.thinking, None
        if not verdict.ok:
            send(engine, side, chat_for(verdict), self.level, out)
            result = GameResult.win_for(
                colour.other, f"{colour_name(colour)} {engine.title} played an {verdict.problem}"
            )
            self._decided(result, {engine.label: EndReason.WIN,
                                   opponent.label: EndReason.RESIGN}, now, out)
            return
        send(opponent, other, msg, self.level, out)
        self._relayed = msg.wire
        if clock is not None:
            clock.start(self.colours[other], now)
            if self.record is not None:
                self.record.add_clock(PlyClock(
                    colour, clock.left(Colour.WHITE, now), clock.left(Colour.BLACK, now),
                    charged, msg.seconds,
                ))
        played, adjudged = self._noted(colour, verdict, msg, thinking, now, out)
        self.status = (
            f"game {self.number}/{self.cfg.games}: move {played.move_number if played else 0} "
            f"{colour_name(colour)} {verdict.pdn}  |  {self.score}"
        )
        self._after_move(side, verdict, adjudged, now, out)

    def _noted(
        self, colour: Colour, verdict: Verdict, msg: Move, thinking: Thinking | None,
        now: float, out: list[Action],
    ) -> tuple[MovePlayed | None, GameResult | None]:
        """A relayed move kept with its thinking, told to the live view, and shown to the
        adjudicator: the move as played and the adjudicator's result, if it ends the game."""
        referee, clock = self.referee, self._clock
        if thinking is not None and self.record is not None:
            self.record.thinking[self.record.plies] = thinking
        played = next((e for e in verdict.events if isinstance(e, MovePlayed)), None)
        adjudged = None
        if self._adjudicator is not None and played is not None:
            adjudged = self._adjudicator.observe(colour, thinking, played.move_number)
        if referee.position is not None:
            out.append(News(MoveMade(
                self.number, referee.dialogue.plies, verdict.pdn or "?", colour,
                referee.position.to_fen(), msg.seconds,
                left=clock_left(clock, now) if clock else None,
                thinking=thinking,
            )))
        return played, adjudged

    def _claimed(self, side: str, msg: GameEnd, now: float, out: list[Action]) -> None:
        """``side`` ended the game by GAMEEND: its claim is checked against the position."""
        engine = self.engines[side]
        other = "B" if side == "A" else "A"
        result, told = claim_result(self.referee, msg.reason, self.colours[side], engine.title,
                                    self.cfg.arbiter.on_false_claim)
        if result.false_claim:  # both are told
            for s in (side, other):
                send(self.engines[s], s, Chat.carrying(f"referee: {result.reason}"),
                     self.level, out)
        self._decided(result, {self.engines[other].label: told}, now, out)

    def _after_move(
        self, side: str, verdict: Verdict, adjudged: GameResult | None, now: float,
        out: list[Action],
    ) -> None:
        """``side``'s legal move was passed on: the game ends by its rules, by the engines'
        scores (``adjudged``) or goes on."""
        engine = self.engines[side]
        other = "B" if side == "A" else "A"
        opponent = self.engines[other]
        referee = self.referee
        both = {engine.label: EndReason.DRAW, opponent.label: EndReason.DRAW}
        if verdict.result is not None and verdict.result.rule:  # a draw rule ends it
            rule = referee.draw.long if referee.draw else verdict.result.reason
            for s in (side, other):
                send(self.engines[s], s, Chat.carrying(f"referee: {rule}"), self.level, out)
            self._decided(verdict.result, both, now, out)
        elif verdict.result is not None:
            self._decided(verdict.result, {engine.label: EndReason.RESIGN,
                                           opponent.label: EndReason.WIN}, now, out)
        elif adjudged is not None:
            self._adjudicated(adjudged, now, out)
        elif self.cfg.moves and referee.dialogue.plies >= 2 * self.cfg.moves:
            result = GameResult("1-1", f"draw: move limit of {self.cfg.moves} moves reached")
            self._decided(result, both, now, out)
        else:
            self._to_move = other
            self._deadline = now + self.cfg.move_timeout

    def _adjudicated(self, result: GameResult, now: float, out: list[Action]) -> None:
        """The engines' scores end the game: both are told by CHAT, then GAMEEND."""
        for s in SIDES:
            send(self.engines[s], s, Chat.carrying(f"referee: {result.reason}"), self.level, out)
        if result.winner is None:
            told = {e.label: EndReason.DRAW for e in self.engines.values()}
        else:
            told = {self.engines[s].label: EndReason.RESIGN if self.colours[s] is result.winner
                    else EndReason.WIN for s in SIDES}
        self._decided(result, told, now, out)

    def _time_loss(self, side: str, clock: GameClock, now: float, out: list[Action]) -> None:
        """``side``'s flag fell: it loses; both engines are told by CHAT, then GAMEEND."""
        engine = self.engines[side]
        other = "B" if side == "A" else "A"
        result = time_loss(self.colours[side], engine.title, clock, now)
        for s in (side, other):
            send(self.engines[s], s, Chat.carrying(f"referee: {result.reason}"), self.level, out)
        self._decided(result, {engine.label: EndReason.WIN,
                               self.engines[other].label: EndReason.RESIGN}, now, out)

    # ------------------------------------------------------------------ the end

    def _decided(
        self, result: GameResult | None, reasons: dict[str, EndReason], now: float,
        out: list[Action],
    ) -> None:
        """The game is decided (None: an engine failed): the GAMEEND exchange follows."""
        self._headed(out)  # decided before it was offered (interrupted): no header comes
        white, black = self.engines[self.white], self.engines[self.black]
        if result is None:
            result = failure_result(white, black)
            survivors = [e for e in (white, black) if not e.failure]
            if len(survivors) == 1 and not self.interrupted:
                reasons = {survivors[0].label: EndReason.RESIGN}  # the opponent forfeits
        self.result = result
        failed = any(e.failure for e in self.engines.values())
        stop_all = self.interrupted or (
            failed and self.cfg.on_engine_failure is FailurePolicy.STOP
        )
        last = self._last() if callable(self._last) else self._last
        stops = {
            e.label: StopCode.STOP if stop_all or e.label in last else StopCode.CONTINUE
            for e in self.engines.values()
        }
        self.status = f"game {self.number}/{self.cfg.games}: {result.result}, ending"
        self._phase = _Phase.END
        self._end = EndExchange(self.engines, reasons, stops, level=self.level)
        timeout = INTERRUPT_GRACE if self.interrupted else self.cfg.move_timeout
        out += self._end.begin(now, timeout, self.cfg.gameend_timeout)
        self._after_end(out)
        if self._phase is _Phase.END:
            self._replay_held(now, out)

    def _after_end(self, out: list[Action]) -> None:
        if self._end is not None and self._end.over and self._phase is _Phase.END:
            self._phase = _Phase.DONE
            self._done(out)

    def _done(self, out: list[Action]) -> None:
        result = self.result or GameResult("*", "match interrupted")
        out.append(Done(0, f"game {self.number}: {result.result} ({result.reason})"))
