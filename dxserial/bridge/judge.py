"""Judges each message once, on arrival: dialogue, referee and game record in one step.

The relay asks :meth:`Judge.judge` exactly once per message it may forward (and once per
message the bridge sends on a departed engine's behalf); nothing is re-judged when the
message is delivered.  The judge learns who is the initiator from each GAMEREQ that
starts a dialogue afresh, so a new engine with the other role gets a clean slate without
the relay having to reset anything by hand.

With ``news`` on, the judge also keeps a short account of each game for a live view
(:data:`~dxserial.game.news.GameNews`: started, move, take-back, ended), taken from the
referee's verdicts so the page shows exactly what the PDN record says; the relay hands it
out as actions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dxserial.errors import DialogueError, DuplicateMessageError
from dxserial.game.news import GameClosed, GameNews, GameOpened, MoveMade, TakenBack
from dxserial.game.record import GameRecord, Recorder
from dxserial.game.referee import GameResult, Policy, Referee, Verdict, ViolationKind, chat_for
from dxserial.protocol.dialects import CUMULATIVE_TIMES, CumulativeTimes
from dxserial.protocol.messages import (
    Chat,
    Colour,
    GameAccept,
    GameRequest,
    Message,
    Move,
    colour_name,
)
from dxserial.protocol.session import (
    Dialogue,
    DialogueEvent,
    GameStarted,
    HabitSeen,
    Phase,
    Role,
    TakeBack,
)

Side = Literal["serial", "tcp"]
SERIAL: Side = "serial"
TCP: Side = "tcp"
RefereeMode = Literal["off", "warn", "strict"]


def other(side: Side) -> Side:
    return TCP if side == SERIAL else SERIAL


@dataclass(slots=True)  # not frozen: one is built per message (read it, do not change it)
class Judgement:
    """What the judge made of one message.

    ``duplicate`` (a repeated delivery) and ``refused`` (strict referee) mean: do not
    forward.  ``violation`` is a log line for a message that is forwarded anyway (warn);
    ``chat`` tells the sender of a refused message why.  ``record`` is a game that this
    message finished.
    """

    role: Role
    duplicate: str | None = None
    violation: str | None = None
    refused: str | None = None
    chat: Chat | None = None
    notes: tuple[str, ...] = ()
    record: GameRecord | None = None
    initiator: Side | None = None  # set when this GAMEREQ (re)assigned the roles
    habits: tuple[tuple[Side, str], ...] = ()  # dialects this message showed (who, habit)

    @property
    def forward(self) -> bool:
        return self.duplicate is None and self.refused is None


class Judge:
    """Dialogue state, referee and recorder of the engines on both sides of a bridge."""

    def __init__(
        self,
        referee: RefereeMode = "warn",
        *,
        record: bool = False,
        news: bool = False,
        repeats: frozenset[Side] = frozenset({SERIAL}),
    ) -> None:
        self.mode: RefereeMode = referee
        #: The sides whose line can deliver a message twice (NULMODEM): only there is a
        #: repeat a retransmission; anywhere else it is what the engine sent (forwarded).
        self.repeats = repeats
        self._record = record
        self._news_on = news
        self._news: list[GameNews] = []  # in order, until the relay takes them
        self._games = 0  # games started through this bridge: the live view's numbers
        self._open: int | None = None  # the live view's number of the running game
        self.roles: dict[Side, Role] = {SERIAL: Role.INITIATOR, TCP: Role.FOLLOWER}
        self.roles_known = False
        self._referee: Referee | None = None
        self._dialogue = Dialogue()
        self._recorder = Recorder(site="dxserial bridge") if record else None
        self._times = {SERIAL: CumulativeTimes(), TCP: CumulativeTimes()}  # this game's
        self._last_at: float | None = None  # when the last message was judged
        self._budget: float | None = None  # this game's seconds per side
        self._fresh()

    def _fresh(self) -> None:
        """A new dialogue: after a stopped session, or when the roles change."""
        if self.mode != "off" or self._record or self._news_on:
            policy = Policy.STRICT if self.mode == "strict" else Policy.WARN
            self._referee = Referee(policy)
        else:
            self._referee = None
            self._dialogue = Dialogue()

    @property
    def dialogue(self) -> Dialogue:
        return self._referee.dialogue if self._referee is not None else self._dialogue

    @property
    def phase(self) -> Phase:
        return self.dialogue.phase

    @property
    def game_open(self) -> bool:
        """A GAMEREQ, game, take-back or GAMEEND is under way (someone owes something)."""
        return self.phase not in (Phase.IDLE, Phase.STOPPED)

    def side_of(self, role: Role) -> Side:
        return SERIAL if self.roles[SERIAL] is role else TCP

    def comment(self, text: str, *, note: bool = False) -> None:
        """A comment in the record of the running game (a bridge action), if one is open;
        ``note``: only for the annotated form (it explains, it reports no action)."""
        if self._recorder is not None and self._recorder.current is not None:
            self._recorder.current.add_comment(text, note=note)

    def abort(self, reason: str) -> GameRecord | None:
        """End the running game's record with ``*`` (nobody will finish it)."""
        record = self._recorder.abort(reason) if self._recorder is not None else None
        if self._open is not None:  # as the recorder has it: the board's verdict stands
            decided = self._referee.decided if self._referee is not None else None
            if record is not None:
                decided = GameResult(record.result, record.termination)
            result = decided or GameResult("*", reason)
            self._news.append(GameClosed(self._open, result.result, result.reason))
            self._open = None
        return record

    @property
    def has_news(self) -> bool:
        return bool(self._news)

    def take_news(self) -> list[GameNews]:
        """The news since the last call (empty unless the judge was made with ``news``)."""
        out, self._news = self._news, []
        return out

    def restart(self, reason: str) -> GameRecord | None:
        """Forget the dialogue (both engines are assumed to start afresh)."""
        record = self.abort(reason)
        self._fresh()
        self.roles_known = False
        return record

    def may_keep_back(self, sender: Side, msg: Message) -> bool:
        """Whether judging ``msg`` could stop it (so it must be judged before it is sent).

        Under ``warn`` and ``off`` only a repeated delivery is kept back; a GAMEREQ may also
        change who is the initiator.  Everything else can be forwarded first and judged
        right after the write, off the message's way.
        """
        if self.mode == "strict" or isinstance(msg, GameRequest):
            return True
        return sender in self.repeats and self.dialogue.may_be_repeat(msg, self.roles[sender])

    def would_accept(self, sender: Side, msg: Message) -> bool:
        """Whether the dialogue takes ``msg`` from ``sender`` as it stands (nothing changes)."""
        outcome = self.dialogue.fork().attempt(msg, self.roles[sender])
        return not isinstance(outcome, DialogueError)

    def _habits(self, events: tuple[DialogueEvent, ...] | list[DialogueEvent]) -> tuple[
        tuple[Side, str], ...
    ]:
        return tuple(
            (self.side_of(e.role), e.habit) for e in events if isinstance(e, HabitSeen)
        )

    def judge(self, sender: Side, msg: Message, now: float | None = None) -> Judgement:
        """Judge one message (``now``: when it arrived, to tell cumulative MOVE times)."""
        initiator = self._learn_roles(sender, msg)
        role = self.roles[sender]
        took = None if now is None or self._last_at is None else now - self._last_at
        self._last_at = now if now is not None else self._last_at
        if self._referee is None:
            return self._dialogue_only(sender, msg, role, initiator)
        verdict = self._referee.observe(msg, role)
        if verdict.kind is ViolationKind.DUPLICATE:
            if self.mode == "strict" or sender in self.repeats:
                return Judgement(role, duplicate=verdict.text)
            verdict = self._referee.forward_anyway(verdict)
        habits = self._habits(verdict.events) + self._timing(sender, msg, verdict, took)
        record: GameRecord | None = None
        if self._recorder is not None:
            record = self._recorder.observe(msg, role, verdict)
        if self._news_on:
            self._tell(msg, verdict)
        notes = verdict.notes
        if verdict.ok:
            return Judgement(
                role, notes=notes, record=record, initiator=initiator, habits=habits
            )
        what = (
            "played an illegal move"
            if verdict.kind is ViolationKind.ILLEGAL_MOVE
            else "broke the dialogue"
        )
        if verdict.kind is ViolationKind.ILLEGAL_MOVE and self.mode == "off":
            return Judgement(role, notes=(), record=record, initiator=initiator)
        text = f"the {sender} engine {what}: {verdict.text}"
        if self.mode == "strict":
            return Judgement(
                role, refused=text, chat=chat_for(verdict), notes=notes, record=record
            )
        return Judgement(role, violation=text, notes=notes, record=record, initiator=initiator)

    def _timing(
        self, sender: Side, msg: Message, verdict: Verdict, took: float | None
    ) -> tuple[tuple[Side, str], ...]:
        """Watch each side's MOVE times: a total for the game is a habit (GWD's)."""
        if not isinstance(msg, Move):
            if isinstance(msg, GameAccept) and any(
                isinstance(e, GameStarted) for e in verdict.events
            ):  # a new game: new totals, and its time per side worked out once
                self._times = {SERIAL: CumulativeTimes(), TCP: CumulativeTimes()}
                request = self.dialogue.game_request
                self._budget = float(request.minutes) * 60 if request is not None else None
            return ()
        if verdict.applied and self._times[sender].add(msg.seconds, took, self._budget):
            colour = colour_name(verdict.colour) if verdict.colour is not None else sender
            self.comment(
                f"{colour}'s MOVE times are its totals for the game (read as such)", note=True
            )
            return ((sender, CUMULATIVE_TIMES),)
        return ()

    def _tell(self, msg: Message, verdict: Verdict) -> None:
        """The news in one verdict: the same facts the recorder writes down."""
        referee = self._referee
        assert referee is not None
        for event in verdict.events:
            if isinstance(event, GameStarted):
                self._games += 1
                self._open = self._games
                request, accept = event.request, event.accept
                follower_white = request.follower_colour is Colour.WHITE
                white_role = Role.FOLLOWER if follower_white else Role.INITIATOR
                names = {Role.INITIATOR: request.name or "?", Role.FOLLOWER: accept.name or "?"}
                position = referee.position
                assert position is not None
                self._news.append(
                    GameOpened(
                        self._open, names[white_role], names[white_role.other],
                        self.side_of(white_role), self.side_of(white_role.other),
                        position.to_fen(), request.minutes,
                    )
                )
            elif isinstance(event, TakeBack) and self._open is not None:
                position = referee.position if referee.unreliable_from is None else None
                fen = position.to_fen() if position is not None else None
                self._news.append(TakenBack(self._open, event.ply, fen))
        if self._open is None:
            return
        if isinstance(msg, Move) and verdict.applied and verdict.ply is not None:
            assert verdict.colour is not None
            position = referee.position if verdict.ok and verdict.checked else None
            fen = position.to_fen() if position is not None else None
            self._news.append(
                MoveMade(
                    self._open, verdict.ply, verdict.pdn or "?", verdict.colour, fen, msg.seconds,
                    total=self._times[self.side_of(verdict.sender)].cumulative,
                )
            )
        if verdict.game_ended is not None and verdict.result is not None:
            self._news.append(
                GameClosed(self._open, verdict.result.result, verdict.result.reason)
            )
            self._open = None

    def _dialogue_only(
        self, sender: Side, msg: Message, role: Role, initiator: Side | None
    ) -> Judgement:
        outcome = self._dialogue.attempt(msg, role)
        if isinstance(outcome, DuplicateMessageError) and sender in self.repeats:
            return Judgement(role, duplicate=str(outcome))
        if isinstance(outcome, DialogueError):
            self._dialogue.follow(msg, role)  # forwarded: the receiver believes it
            return Judgement(
                role, violation=f"the {sender} engine broke the dialogue: {outcome}"
            )
        return Judgement(role, initiator=initiator, habits=self._habits(outcome))

    def _learn_roles(self, sender: Side, msg: Message) -> Side | None:
        """A GAMEREQ when nothing is under way names its sender the initiator."""
        if not isinstance(msg, GameRequest):
            return None
        phase = self.phase
        if phase is Phase.IDLE and self.roles_known and self.roles[sender] is Role.INITIATOR:
            return None
        if phase not in (Phase.IDLE, Phase.STOPPED):
            return None
        if phase is Phase.STOPPED or self.roles[sender] is not Role.INITIATOR:
            self._fresh()
        self.roles = {sender: Role.INITIATOR, other(sender): Role.FOLLOWER}
        self.roles_known = True
        return sender


__all__ = [
    "SERIAL",
    "TCP",
    "Judge",
    "Judgement",
    "RefereeMode",
    "Side",
    "other",
]
