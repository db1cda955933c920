"""A referee for the games of one DXP connection: every message judged with its sender.

Sans-I/O: :meth:`Referee.observe` takes a parsed message and the role that sent it and
returns a :class:`Verdict`; it never raises for anything a peer sends.  A
:class:`~dxserial.protocol.session.Dialogue` keeps turn and phase, a
:class:`~dxserial.draughts.Position` per ply keeps legality; what to do about a violation is
the caller's policy.  How ``Policy.STRICT`` and ``Policy.WARN`` differ, and why an illegal
move that was forwarded makes the record unreliable: docs/dialogue.md.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import partial

from dxserial.draughts import IllegalMoveError, LegalMove, Position, Rejection, RulesError, pdn_in
from dxserial.draughts.draw_rules import Draw, DrawCounter
from dxserial.errors import DialogueError, DuplicateMessageError
from dxserial.game.claims import ClaimCheck, check_draw_claim, check_win_claim
from dxserial.protocol.dxp_moves import describe_dxp_move, match_dxp_move, position_from_gamereq
from dxserial.protocol.messages import (
    MESSAGE_TYPES,
    Chat,
    Colour,
    EndReason,
    GameRequest,
    Message,
    Move,
    colour_name,
)
from dxserial.protocol.session import (
    Dialogue,
    DialogueEvent,
    GameEnded,
    GameStarted,
    MovePlayed,
    Phase,
    Role,
    TakeBack,
)

__all__ = [
    "CHAT_PREFIX",
    "GameResult",
    "Policy",
    "Referee",
    "Verdict",
    "ViolationKind",
    "chat_for",
    "false_claim_scored",
    "gameend_result",
]

CHAT_PREFIX = "referee: "
_DXP_TYPES = tuple(MESSAGE_TYPES.values())


class Policy(enum.StrEnum):
    """What the caller does with a violating message; see docs/dialogue.md."""

    WARN = "warn"  # forwarded anyway: the other engine saw it
    STRICT = "strict"  # not forwarded: as if it had never been sent


class ViolationKind(enum.StrEnum):
    """What is wrong with a message."""

    ILLEGAL_MOVE = "illegal-move"  # a MOVE in turn that the rules of draughts forbid
    OUT_OF_TURN = "out-of-turn"  # any DialogueError: wrong side, wrong moment, bad answer
    DUPLICATE = "duplicate"  # a repeat of the sender's previous message (retransmission)


@dataclass(frozen=True)
class GameResult:
    """How a game ended: PDN ``result`` (``2-0``, ``1-1``, ``0-2``, ``*``) and why."""

    result: str
    reason: str
    #: A GAMEEND claim (reason 2 or 3) that the position did not bear out, scored as claimed.
    false_claim: bool = False
    #: The draw rule that ended the game, if one did (its name, e.g. "5-move rule").
    rule: str = ""

    @property
    def winner(self) -> Colour | None:
        return {"2-0": Colour.WHITE, "0-2": Colour.BLACK}.get(self.result)

    @classmethod
    def win_for(cls, colour: Colour, reason: str) -> GameResult:
        return cls("2-0" if colour is Colour.WHITE else "0-2", reason)


def gameend_result(reason: EndReason, colour: Colour, who: str) -> GameResult | None:
    """What a GAMEEND started by ``who`` (playing ``colour``) says of the result; ``None``
    for reason 0 (no claim: the board or nobody decides).  The one place this is read."""
    if reason is EndReason.RESIGN:
        return GameResult.win_for(colour.other, f"{who} resigned")
    if reason is EndReason.DRAW:
        return GameResult("1-1", f"draw: {who} sent GAMEEND reason 2")
    if reason is EndReason.WIN:
        return GameResult.win_for(colour, f"{who} claims the win: GAMEEND reason 3")
    return None


def false_claim_scored(result: GameResult, claimant: Colour, policy: str) -> GameResult:
    """A false claim scored by ``policy``: ``as-claimed`` keeps it, ``loss`` loses the game
    for the claimant (the record says both the claim and why it was not borne out)."""
    if not result.false_claim or policy == "as-claimed":
        return result
    lost = GameResult.win_for(claimant.other, f"{result.reason}; scored as a loss")
    return GameResult(lost.result, lost.reason, false_claim=True)


@dataclass(slots=True)  # not frozen: one is built per message (read it, do not change it)
class Verdict:
    """The referee's judgement of one message.

    ``kind`` is ``None`` for a good message.  ``problem`` is the short complaint (what a
    CHAT or a PDN comment says), ``text`` one line for a log that names the side, the
    message and (for moves) the position.  ``applied`` says whether the message changed the
    game state; ``checked`` is false for a MOVE the referee could not judge on the board
    because the game's record is unreliable.  ``result`` is set when the game is decided:
    by the board (the side to move has no legal move) or by the GAMEEND exchange.
    """

    message: Message
    sender: Role
    who: str
    text: str
    kind: ViolationKind | None = None
    reason: Rejection | None = None
    problem: str = ""
    game: int = 0
    colour: Colour | None = None
    position_before: Position | None = None
    ply: int | None = None
    pdn: str | None = None
    move: LegalMove | None = None
    applied: bool = True
    checked: bool = True
    events: tuple[DialogueEvent, ...] = ()
    result: GameResult | None = None
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.kind is None

    @property
    def fen_before(self) -> str | None:
        """The position before the message, as FEN (written out on demand: it costs)."""
        return self.position_before.to_fen() if self.position_before is not None else None

    @property
    def game_ended(self) -> GameEnded | None:
        """The GAMEEND exchange this message completed, if any."""
        for event in self.events:
            if isinstance(event, GameEnded):
                return event
        return None


def _fen(position: Position | None) -> str | None:
    return position.to_fen() if position is not None else None


def chat_for(verdict: Verdict) -> Chat:
    """The CHAT that tells the sender of a violating message what was wrong (≤ 126 chars)."""
    if verdict.ok:
        raise ValueError("chat_for() needs a violation, not a good message")
    return Chat.carrying(CHAT_PREFIX + verdict.problem)


def _describe(msg: Message) -> str:
    if isinstance(msg, Move):
        return f"MOVE {describe_dxp_move(msg)}"
    return msg.NAME


class Referee:
    """Follows every game of one connection, from each GAMEREQ, and judges each message.

    ``observe`` must see every message that the engines saw, in order, with its sender
    (and, under ``Policy.STRICT``, every message the caller was about to forward).
    """

    def __init__(self, policy: Policy = Policy.WARN, *, draw_rules: bool = True) -> None:
        self.policy = Policy(policy)
        #: FMJD's draw rules end the game (a verdict's ``result``); off: only claims use them.
        self.draw_rules = draw_rules
        self._counter: DrawCounter | None = None  # the draw rules' counts of this game
        self._draw: Draw | None = None  # the rule that ended the game, once one has
        self._dialogue = Dialogue()
        self._positions: list[Position] = []  # positions[k]: after k plies of this game
        self._unreliable_from: int | None = None
        self._limit_reported = False

    # ------------------------------------------------------------------ state

    @property
    def dialogue(self) -> Dialogue:
        """The turn/phase bookkeeping (read it, do not feed it: use :meth:`observe`)."""
        return self._dialogue

    @property
    def game(self) -> int:
        """Number of games started so far on this connection (1 = the first game)."""
        return self._dialogue.games_started

    @property
    def position(self) -> Position | None:
        """The current position of the running (or last) game, as far as it is known."""
        return self._positions[-1] if self._positions else None

    @property
    def unreliable_from(self) -> int | None:
        """The ply of the illegal move (warn policy) since which moves are not judged."""
        return self._unreliable_from

    @property
    def decided(self) -> GameResult | None:
        """The board's verdict once the side to move has no legal move, or the draw rule
        that ended the game (else ``None``)."""
        if not self._in_game():
            return None
        return self._draw_result() or self._board_result()

    @property
    def draw(self) -> Draw | None:
        """The draw rule that ended the running (or last) game, if one did (and rules on)."""
        return self._draw

    def _draw_result(self) -> GameResult | None:
        if self._draw is None:
            return None
        return GameResult("1-1", self._draw.text, rule=str(self._draw.rule))

    def claim_result(self, reason: EndReason, colour: Colour, who: str) -> GameResult | None:
        """The result of a GAMEEND by ``who`` (playing ``colour``, to move), its claim
        checked on the position: reason 2 and 3 say whether the position bears them out
        (see :mod:`dxserial.game.claims`); ``None`` for reason 0.  Does not change the game."""
        claimed = gameend_result(reason, colour, who)
        if claimed is None or reason is EndReason.RESIGN:
            return claimed
        check = self._check_claim(reason, colour)
        if reason is EndReason.DRAW:
            text = f"draw claimed by {who}, {check.text}"
        else:
            text = f"{who} claimed the win, {check.text}"
        return GameResult(claimed.result, text, false_claim=check.founded is False)

    def _check_claim(self, reason: EndReason, colour: Colour) -> ClaimCheck:
        position = self.position
        if position is None or self._counter is None or self._unreliable_from is not None:
            unreliable = self._unreliable_from
            why = f"unreliable from ply {unreliable}" if unreliable is not None else "no game"
            return ClaimCheck(None, f"the position is unknown ({why})")
        if reason is EndReason.WIN:
            return check_win_claim(position, colour)
        request = self._dialogue.game_request
        limit = request.moves if request is not None else 0
        return check_draw_claim(
            position, self._counter, plies=self._dialogue.plies, move_limit=limit
        )

    def _in_game(self) -> bool:
        return self._dialogue.game_request is not None and (
            self._dialogue.phase.game_running or self._dialogue.phase is Phase.ENDING
        )

    def _who(self, sender: Role) -> str:
        colour = self._dialogue.colour_of(sender) if self._in_game() else None
        return f"{sender} ({colour_name(colour)})" if colour is not None else str(sender)

    # ------------------------------------------------------------------ judging

    def observe(self, msg: Message, sender: Role) -> Verdict:
        """Judge ``msg`` sent by ``sender`` and apply it if it is good (see the policies).

        Raises ``TypeError`` only for an object that is not a DXP message (a bug, not a
        peer's fault).
        """
        if not isinstance(msg, _DXP_TYPES):
            raise TypeError(f"not a DXP message: {type(msg).__name__}")
        if sender.__class__ is not Role:
            sender = Role(sender)
        in_game = self._in_game()
        colour = self._dialogue.colour_of(sender) if in_game else None
        who = f"{sender} ({colour_name(colour)})" if colour is not None else str(sender)
        # The position it is judged in: written out as FEN only when a violation names it.
        judged_in = (
            self._positions[-1]
            if in_game and self._unreliable_from is None and self._positions
            else None
        )
        trial = self._dialogue.fork()  # committed only if the message is applied
        events = trial.attempt(msg, sender)
        if isinstance(events, DialogueError):
            return self._dialogue_violation(msg, sender, who, judged_in, colour, events)
        played = next((e for e in events if isinstance(e, MovePlayed)), None)
        if played is not None:
            assert isinstance(msg, Move)
            return self._judge_move(msg, sender, who, judged_in, trial, played, tuple(events))
        self._dialogue = trial
        return self._apply_events(msg, sender, who, judged_in, tuple(events))

    def _dialogue_violation(
        self,
        msg: Message,
        sender: Role,
        who: str,
        judged_in: Position | None,
        colour: Colour | None,
        exc: DialogueError,
    ) -> Verdict:
        detail = exc.reason or str(exc)
        events: tuple[DialogueEvent, ...] = ()
        if isinstance(exc, DuplicateMessageError):
            kind = ViolationKind.DUPLICATE
            problem = f"{_describe(msg)} sent again: duplicate: {detail}"
        else:
            kind = ViolationKind.OUT_OF_TURN
            problem = f"{_describe(msg)} out of turn: {detail}"
            if self.policy is Policy.WARN:
                events = tuple(self._dialogue.follow(msg, sender))
        text = f"{who} sent {problem}" + (f" (position {judged_in.to_fen()})" if judged_in else "")
        return Verdict(
            message=msg,
            sender=sender,
            who=who,
            text=text,
            kind=kind,
            problem=problem,
            game=self.game,
            colour=colour,
            position_before=judged_in,
            ply=self._dialogue.plies + 1 if isinstance(msg, Move) and self._in_game() else None,
            applied=False,
            events=events,
        )

    def forward_anyway(self, verdict: Verdict) -> Verdict:
        """A duplicate the caller forwards after all (it cannot be a line's repeat): an
        out-of-turn message the receiver got, followed like one."""
        assert verdict.kind is ViolationKind.DUPLICATE
        events = tuple(self._dialogue.follow(verdict.message, verdict.sender))
        problem = verdict.problem.replace(" sent again: duplicate: ", " sent again: ", 1)
        return Verdict(
            message=verdict.message, sender=verdict.sender, who=verdict.who,
            text=verdict.text.replace(verdict.problem, problem, 1),
            kind=ViolationKind.OUT_OF_TURN, problem=problem, game=verdict.game,
            colour=verdict.colour, position_before=verdict.position_before,
            applied=False, events=events,
        )

    def _judge_move(
        self,
        msg: Move,
        sender: Role,
        who: str,
        judged_in: Position | None,
        trial: Dialogue,
        played: MovePlayed,
        events: tuple[DialogueEvent, ...],
    ) -> Verdict:
        limit = self._limit_notes(played)
        notes = list(limit)
        short = describe_dxp_move(msg).split(" ")[0]
        # Each Verdict is built once, with all its fields (a dataclasses.replace() of a
        # common base cost more than the rest of judging a quiet move).
        verdict = partial(
            Verdict, message=msg, sender=sender, who=who, game=self.game,
            colour=played.colour, position_before=judged_in, ply=played.ply,
        )
        if self._unreliable_from is not None:
            self._commit(trial, limit=bool(limit))
            return verdict(
                text=f"{who} played {short} (not checked: record unreliable from ply"
                f" {self._unreliable_from})",
                pdn=short,
                checked=False,
                events=events,
                notes=tuple(notes),
            )
        before = self._positions[-1]
        try:
            move = match_dxp_move(before, msg)
        except RulesError as exc:
            reason = exc.reason if isinstance(exc, IllegalMoveError) else Rejection.NO_SUCH_MOVE
            why = str(exc)
            prefix = f"illegal move {describe_dxp_move(msg)}: "
            why = why[len(prefix) :] if why.startswith(prefix) else why
            applied = self.policy is Policy.WARN
            if applied:
                self._commit(trial, limit=bool(limit))
                self._unreliable_from = played.ply
                notes.append(f"record unreliable from ply {played.ply}: moves not judged")
            return verdict(
                text=f"{who} played {short}: illegal move: {why} (position {_fen(judged_in)})",
                kind=ViolationKind.ILLEGAL_MOVE,
                reason=reason,
                problem=f"illegal move {short}: {why}",
                pdn=short,
                applied=applied,
                events=events if applied else (),
                notes=tuple(notes),
            )
        text_pdn = pdn_in(before, move)
        after = before.play(move)
        self._commit(trial, limit=bool(limit))
        self._positions.append(after)
        result = self._result_after(after, notes)
        return verdict(
            text=f"{who} played {text_pdn}",
            pdn=text_pdn,
            move=move,
            events=events,
            result=result,
            notes=tuple(notes),
        )

    def _result_after(self, after: Position, notes: list[str]) -> GameResult | None:
        """What the move to ``after`` decided, by the board or a draw rule (told in ``notes``)."""
        result = self._board_result()
        if self._counter is not None:
            draw = self._counter.play(after)
            if result is None and draw is not None and self._draw is None and self.draw_rules:
                self._draw = draw
                result = self._draw_result()
                notes.append(f"game over: {draw.long}")
        if result is not None and not result.rule:
            notes.append(f"game over: {result.reason}")
        return result

    def _board_result(self) -> GameResult | None:
        """The result the current position decides: the side to move with no move loses."""
        position = self.position
        if position is None or self._unreliable_from is not None or not position.is_lost():
            return None
        return GameResult.win_for(
            position.turn.other, f"{colour_name(position.turn)} has no legal move"
        )

    def _commit(self, trial: Dialogue, *, limit: bool) -> None:
        """A move is applied: take the dialogue's new state; the limit is said only once."""
        self._dialogue = trial
        self._limit_reported = self._limit_reported or limit

    def _limit_notes(self, played: MovePlayed) -> list[str]:
        """The one-off note when a move passes the GAMEREQ's move limit (000: no limit)."""
        request = self._dialogue.game_request
        if request is None or not request.moves or self._limit_reported:
            return []
        if played.move_number <= request.moves:
            return []
        return [
            f"move limit exceeded: move {played.move_number} is past the {request.moves}"
            " moves of the time control (informational)"
        ]

    def _apply_events(
        self,
        msg: Message,
        sender: Role,
        who: str,
        judged_in: Position | None,
        events: tuple[DialogueEvent, ...],
    ) -> Verdict:
        notes: list[str] = []
        result: GameResult | None = None
        for event in events:
            if isinstance(event, GameStarted):
                notes.extend(self._start(event.request))
                result = self._board_result()
            elif isinstance(event, TakeBack):
                notes.extend(self._take_back(event))
            elif isinstance(event, GameEnded):
                result = self._end_result(event)
        text = f"{who} sent {_describe(msg)}"
        if result is not None:
            text += f": {result.result} ({result.reason})"
        return Verdict(
            message=msg,
            sender=sender,
            who=self._who(sender) if any(isinstance(e, GameStarted) for e in events) else who,
            text=text,
            game=self.game,
            colour=self._dialogue.colour_of(sender) if self._in_game() else None,
            position_before=judged_in,
            events=events,
            result=result,
            notes=tuple(notes),
        )

    def _start(self, request: GameRequest) -> list[str]:
        self._positions = [position_from_gamereq(request)]
        self._counter = DrawCounter(self._positions[0])
        self._draw = None
        self._unreliable_from = None
        self._limit_reported = False
        result = self._board_result()
        return [f"game over: {result.reason}"] if result is not None else []

    def _take_back(self, event: TakeBack) -> list[str]:
        notes = [
            f"take-back to move {event.move_number}, {colour_name(event.to_move)} to move"
            f" (asked by the {event.requested_by})"
        ]
        if self._unreliable_from is not None:
            if event.ply >= self._unreliable_from:
                return notes  # still after the illegal move: still unknown
            notes.append("record reliable again")
            self._unreliable_from = None
        del self._positions[event.ply + 1 :]
        self._counter = DrawCounter.replay(self._positions)
        self._draw = self._counter.draw if self.draw_rules else None
        return notes

    def _end_result(self, event: GameEnded) -> GameResult:
        reason = event.initial.reason
        colour = self._dialogue.colour_of(event.ended_by) or event.colour
        by = f"{colour_name(colour)} ({event.ended_by})"
        claimed = self.claim_result(reason, colour, by)
        if claimed is not None:
            return claimed
        if self._unreliable_from is not None:
            return GameResult(
                "*",
                f"no result: {by} sent GAMEEND reason 0 and the final position is unknown"
                f" (record unreliable from ply {self._unreliable_from})",
            )
        decided = self._draw_result() or self._board_result()
        if decided is not None:
            return decided
        return GameResult("*", f"no result: {by} sent GAMEEND reason 0")
