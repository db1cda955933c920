"""Replaying a bridge trace or a PDN file move by move: what ``dxserial replay`` prints.

A trace is judged again from scratch by the referee, in the order the bridge judged it
(each message's arrival record, the bridge's own messages on behalf of an engine that
left included; warn policy), so a replay also finds what a bridge without ``--referee``
let through.  Messages that never reached their engine are pointed out.  A PDN file is
replayed on the board; a move that does not replay, and every violation the recorder
wrote into a comment, is pointed at with ``!!``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dxserial.draughts import IllegalMoveError, Position, parse_pdn_move
from dxserial.errors import DxSerialError, MessageError
from dxserial.files import problem
from dxserial.game.pdn import compact_fen, read_pdn
from dxserial.game.record import VIOLATION_PREFIX, GameRecord, RecordError
from dxserial.game.referee import Policy, Referee
from dxserial.game.trace import parse_trace, unescape
from dxserial.protocol.dxp_moves import position_from_gamereq
from dxserial.protocol.messages import Chat, Colour, GameRequest, Message, Move, colour_name, parse
from dxserial.protocol.session import GameStarted, Phase, Role


class ReplayError(DxSerialError):
    """The file to replay cannot be read, or holds no game (or not the one asked for)."""


@dataclass
class GameLog:
    """What a replay prints for one game (``number`` 0: what came before any game)."""

    number: int
    title: str = ""
    entries: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)  # the ``!!`` lines, also for --final
    final: Position | None = None
    result: str = ""
    violations: int = 0

    def alert(self, text: str) -> None:
        self.entries.append(text)
        self.alerts.append(text)
        self.violations += 1


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# --------------------------------------------------------------------------- traces


class _TraceReplay:
    """Feeds a trace's messages to a referee and collects the lines to print per game."""

    def __init__(self, board: bool) -> None:
        self.board = board
        self.referee = Referee(Policy.WARN)
        self.roles: dict[str, Role] = {}
        self.preamble = GameLog(0)
        self.games: list[GameLog] = []
        self.pending: list[str] = []
        self.open = False  # the last game in ``games`` has not ended yet
        self.messages = 0
        self.seen: set[Any] = set()  # ids of messages whose arrival was judged

    @property
    def current(self) -> GameLog:
        return self.games[-1] if self.games else self.preamble

    def run(self, records: Iterable[dict[str, Any]]) -> None:
        for record in records:
            if record.get("kind") == "message":
                self.messages += 1
                self._message(record)
        if self.pending:
            self.current.entries.extend(self.pending)
        if self.open:
            self._cut_short("the trace ends during the game")

    def _cut_short(self, why: str) -> None:
        log = self.current
        log.entries.append(f"   game cut short: {why}")
        log.result = f"* (cut short: {why})"
        self.open = False

    def _message(self, record: dict[str, Any]) -> None:
        direction = str(record.get("direction", "?"))
        raw_text = str(record.get("raw", ""))
        action = str(record.get("action", "forwarded"))
        seen = self._how_seen(record, direction, raw_text, action)
        if seen is None:
            return
        direction, action = seen
        try:
            msg = parse(unescape(raw_text), strict=False)
        except (MessageError, ValueError) as exc:
            # Not DXP at all: the sender's fault whatever the bridge did with it.
            ply = self.referee.dialogue.plies if self.open else 0
            self.current.alert(
                f"!! ply {ply}: {direction}: invalid message {raw_text!r} ({action}): {exc}"
            )
            return
        side = direction.split("->")[0]
        if isinstance(msg, GameRequest) and action in ("forwarded", "queued"):
            # A GAMEREQ the dialogue cannot take, which the bridge did not flag either: the
            # bridge started over with a new peer (its own dialogue was reset).
            phase = self.referee.dialogue.phase
            if not self.roles or (phase is not Phase.IDLE and not record.get("error")):
                self._new_connection(side, phase)
        role = self.roles.get(side)
        if role is None:
            self.current.entries.append(
                f"   {direction}: {msg.NAME} [{raw_text}] before any GAMEREQ: not judged"
            )
            return
        if action not in ("forwarded", "queued"):
            # "because": the bridge's own act (consumed, replaced); "error" in traces
            # written before the field was split off, and for the sender's faults.
            why = record.get("because") or record.get("error")
            self.current.entries.append(
                f"   -- {role} {msg.NAME} [{raw_text}]: not forwarded ({action}), not applied"
                + (f": {why}" if why else "")
            )
            return
        self._judge(msg, role, raw_text)

    def _how_seen(
        self, record: dict[str, Any], direction: str, raw_text: str, action: str
    ) -> tuple[str, str] | None:
        """The direction and action to judge a trace record by (what the bridge sent for an
        engine is judged as that engine's), or None when it is not judged."""
        ident = record.get("id")
        if action == "delivered":
            return None  # its arrival record was judged already
        if action == "lost" and ident is not None and ident in self.seen:
            receiver = direction.split("->")[-1]
            self.current.entries.append(
                f"   -- [{raw_text}] never reached the {receiver} engine: "
                f"{record.get('error', 'lost')}"
            )
            return None
        if ident is not None:
            self.seen.add(ident)
        if action == "sent-by-bridge":
            speaks_for = record.get("on_behalf_of")
            if not speaks_for or record.get("judged") is False:  # its own, or a change
                self.current.entries.append(f"   bridge -> {direction[8:]}: [{raw_text}]")
                return None
            self.current.entries.append(
                f"   bridge, on behalf of the {speaks_for} engine: [{raw_text}]"
            )
            direction = f"{speaks_for}->{direction[8:]}"
            action = "queued"
        if action == "dropped" and record.get("judged") is True:
            action = "queued"  # the bridge changed it on its way, and judged it as sent
        if action == "lost" and record.get("judged") is False:
            return None  # held for a game that never came: nobody judged or received it
        if action == "lost":
            action = "queued"  # judged on arrival, then nobody was there to receive it
        return direction, action

    def _new_connection(self, side: str, phase: Phase) -> None:
        """Start judging afresh: the sender of this GAMEREQ is the initiator from now on."""
        if self.roles:
            if self.open:
                self._cut_short("a new GAMEREQ started over (new connection?)")
            self.current.entries.extend(self.pending)
            self.pending.clear()
            if phase is not Phase.STOPPED:
                self.current.entries.append("   (new GAMEREQ: judged as a new connection)")
            self.referee = Referee(Policy.WARN)
        other = next(s for s in ("serial", "tcp", "?") if s != side)
        self.roles = {side: Role.INITIATOR, other: Role.FOLLOWER}

    def _judge(self, msg: Message, role: Role, raw_text: str) -> None:
        verdict = self.referee.observe(msg, role)
        line: str | None = None
        if isinstance(msg, Move):
            if verdict.applied:
                colour = colour_name(verdict.colour) if verdict.colour else "?"
                line = f"ply {verdict.ply}: {colour} {verdict.pdn}  [{raw_text}]"
        elif isinstance(msg, Chat):
            line = f"   {verdict.who} says: {msg.text}"
        elif verdict.ok:
            line = f"   {verdict.text} [{raw_text}]"
        started = next((e for e in verdict.events if isinstance(e, GameStarted)), None)
        if started is not None or self.referee.dialogue.phase is Phase.REQUESTED:
            # A GAMEREQ and its answer belong to the game they start.
            if line is not None:
                self.pending.append(line)
                line = None
            if started is not None:
                self._start_game(started)
        elif self.pending:
            self.current.entries.extend(self.pending)  # refused: stays with the last game
            self.pending.clear()
        log = self.current
        if line is not None:
            log.entries.append(line)
        if not verdict.ok:
            ply = verdict.ply if verdict.ply is not None else self.referee.dialogue.plies
            log.alert(f"!! ply {ply}: {verdict.text}")
        position = self.referee.position if self.referee.unreliable_from is None else None
        if isinstance(msg, Move) and verdict.applied:
            if self.board and position is not None:
                log.entries.append(position.render())
            if self.open:
                log.final = position
        for note in verdict.notes:
            log.entries.append(f"   note: {note}")
        if verdict.game_ended is not None and verdict.result is not None and self.open:
            log.result = f"{verdict.result.result} ({verdict.result.reason})"
            self.open = False

    def _start_game(self, event: GameStarted) -> None:
        request, accept = event.request, event.accept
        names = {"initiator": request.name, "follower": accept.name}
        white = "follower" if request.follower_colour is Colour.WHITE else "initiator"
        black = "initiator" if white == "follower" else "follower"
        start = position_from_gamereq(request)
        number = len(self.games) + 1
        title = (
            f"game {number}: White {names[white]} ({white}) vs Black {names[black]} ({black}),"
            f" start {compact_fen(start)}"
        )
        log = GameLog(number, title, final=start)
        log.entries.extend(self.pending)
        self.pending.clear()
        if self.board:
            log.entries.append(start.render())
        self.games.append(log)
        self.open = True


# --------------------------------------------------------------------------- PDN


def _replay_pdn(number: int, record: GameRecord, board: bool) -> GameLog:
    try:
        position: Position | None = record.start_position
    except DxSerialError as exc:
        raise ReplayError(f"game {number}: {exc}") from None
    assert position is not None
    title = (
        f"game {number}: White {record.white} vs Black {record.black},"
        f" start {compact_fen(position)}"
    )
    log = GameLog(number, title, final=position)
    if board:
        log.entries.append(position.render())
    flagged = {ply for ply, _ in record.violations()}

    def comments(ply: int) -> None:
        for text in record.comments.get(ply, []):
            if text.startswith(VIOLATION_PREFIX):
                log.alert(f"!! ply {ply}: {text[len(VIOLATION_PREFIX) :]}")
            else:
                log.entries.append(f"   {{{text}}}")

    comments(0)
    for ply, move in enumerate(record.moves, 1):
        side = colour_name(move.colour)
        log.entries.append(f"ply {ply}: {side} {move.text}")
        if position is not None:
            try:
                position = position.play(parse_pdn_move(position, move.text))
            except IllegalMoveError as exc:
                text = f"!! ply {ply}: {side} {move.text}: illegal move: {exc}"
                if ply in flagged:
                    log.entries.append(text)
                else:
                    log.alert(text)
                log.entries.append("   (the moves after this one are not replayed)")
                position = None
            else:
                if board:
                    log.entries.append(position.render())
        comments(ply)
    for ply in sorted(k for k in record.comments if k > record.plies):
        comments(ply)
    log.final = position
    log.result = record.result + (f" ({record.termination})" if record.termination else "")
    return log


def load_games(path: Path, board: bool) -> tuple[list[GameLog], GameLog | None]:
    """The games of ``path`` (a trace or PDN) and, for a trace, what came before them."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")  # PDN may be Latin-1
    except OSError as exc:
        hint = "name a bridge trace (--trace) or a PDN file"
        # The job (showing the file) was not done: exit 1, as the command's help says.
        raise ReplayError(str(problem("read", "", path, exc, hint))) from None
    if text.lstrip()[:1] == "{":
        replay = _TraceReplay(board)
        replay.run(parse_trace(text, source=str(path)))
        if not replay.messages:
            raise ReplayError(f"{path}: this trace holds no DXP message")
        return replay.games, replay.preamble
    try:
        records = read_pdn(path)
    except RecordError as exc:
        raise ReplayError(str(exc)) from None
    if not records:
        raise ReplayError(f"{path}: no game found (neither a bridge trace nor PDN)")
    return [_replay_pdn(i, record, board) for i, record in enumerate(records, 1)], None


__all__ = ["GameLog", "ReplayError", "load_games", "plural"]
