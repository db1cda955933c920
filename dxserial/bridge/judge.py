"""Judges each message once, on arrival: dialogue, referee and game record in one step.

The relay asks :meth:`Judge.judge` exactly once per message it may forward (and once per
message the bridge sends on a departed engine's behalf); nothing is re-judged when the
message is delivered.  The judge learns who is the initiator from each GAMEREQ that
starts a dialogue afresh, so a new engine with the other role gets a clean slate without
the relay having to reset anything by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dxserial.errors import DialogueError, DuplicateMessageError
from dxserial.game.record import GameRecord, Recorder
from dxserial.game.referee import Policy, Referee, ViolationKind, chat_for
from dxserial.protocol.messages import Chat, GameRequest, Message
from dxserial.protocol.session import Dialogue, Phase, Role

Side = Literal["serial", "tcp"]
SERIAL: Side = "serial"
TCP: Side = "tcp"
RefereeMode = Literal["off", "warn", "strict"]


def other(side: Side) -> Side:
    return TCP if side == SERIAL else SERIAL


@dataclass(frozen=True)
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

    @property
    def forward(self) -> bool:
        return self.duplicate is None and self.refused is None


class Judge:
    """Dialogue state, referee and recorder of the engines on both sides of a bridge."""

    def __init__(self, referee: RefereeMode = "warn", *, record: bool = False) -> None:
        self.mode: RefereeMode = referee
        self._record = record
        self.roles: dict[Side, Role] = {SERIAL: Role.INITIATOR, TCP: Role.FOLLOWER}
        self.roles_known = False
        self._referee: Referee | None = None
        self._dialogue = Dialogue()
        self._recorder = Recorder(site="dxserial bridge") if record else None
        self._fresh()

    def _fresh(self) -> None:
        """A new dialogue: after a stopped session, or when the roles change."""
        if self.mode != "off" or self._record:
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

    def comment(self, text: str) -> None:
        """A note in the record of the running game (a bridge action), if one is open."""
        if self._recorder is not None and self._recorder.current is not None:
            self._recorder.current.add_comment(text)

    def abort(self, reason: str) -> GameRecord | None:
        """End the running game's record with ``*`` (nobody will finish it)."""
        return self._recorder.abort(reason) if self._recorder is not None else None

    def restart(self, reason: str) -> GameRecord | None:
        """Forget the dialogue (both engines are assumed to start afresh)."""
        record = self.abort(reason)
        self._fresh()
        self.roles_known = False
        return record

    def judge(self, sender: Side, msg: Message) -> Judgement:
        initiator = self._learn_roles(sender, msg)
        role = self.roles[sender]
        if self._referee is None:
            return self._dialogue_only(sender, msg, role, initiator)
        verdict = self._referee.observe(msg, role)
        if verdict.kind is ViolationKind.DUPLICATE:
            return Judgement(role, duplicate=verdict.text)
        record: GameRecord | None = None
        if self._recorder is not None:
            record = self._recorder.observe(msg, role, verdict)
        notes = verdict.notes
        if verdict.ok:
            return Judgement(role, notes=notes, record=record, initiator=initiator)
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

    def _dialogue_only(
        self, sender: Side, msg: Message, role: Role, initiator: Side | None
    ) -> Judgement:
        try:
            self._dialogue.handle(msg, role)
        except DuplicateMessageError as exc:
            return Judgement(role, duplicate=str(exc))
        except DialogueError as exc:
            return Judgement(
                role, violation=f"the {sender} engine broke the dialogue: {exc}"
            )
        return Judgement(role, initiator=initiator)

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


__all__ = ["SERIAL", "TCP", "Judge", "Judgement", "RefereeMode", "Side", "other"]
