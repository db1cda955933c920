"""Stand-in follower engines for the arbiter's tests: each breaks or stretches one rule.

A :class:`StandIn` plays one side of a game through a :class:`~dxserial.testing.peers.DxpClient`
(the match listens, the stand-in connects): it accepts the GAMEREQ, keeps the position and
answers each MOVE with the move its ``choose`` gives, or a GAMEEND claim.  Whatever the
stand-in receives is kept in ``seen`` for the test to read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from dxserial.draughts import LegalMove, Position
from dxserial.protocol.dxp_moves import match_dxp_move, position_from_gamereq, to_dxp_move
from dxserial.protocol.messages import (
    AcceptCode,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    StopCode,
    encode,
    parse,
)
from dxserial.testing.peers import DxpClient

__all__ = ["Choice", "StandIn", "first_quiet_king_move", "shuttle"]

#: What the stand-in does in a position: a move, or a GAMEEND reason to claim with.
Choice = Callable[[Position, int], LegalMove | EndReason]


def first_quiet_king_move(position: Position, ply: int) -> LegalMove | EndReason:
    """The first king move that leaves nothing to be taken (else the first legal move)."""
    moves = position.legal_moves()
    quiet = [
        m for m in moves
        if m.king and not any(x.captured for x in position.play(m).legal_moves())
    ]
    return (quiet or list(moves))[0]


def shuttle(a: int, b: int) -> Choice:
    """A king that goes ``a``-``b`` and back for ever (forced captures come first)."""

    def choose(position: Position, ply: int) -> LegalMove | EndReason:
        moves = position.legal_moves()
        for frm, to in ((a, b), (b, a)):
            found = [m for m in moves if (m.from_square, m.to_square) == (frm, to)]
            if found:
                return found[0]
        return moves[0]

    return choose


@dataclass
class StandIn:
    """One follower's games over ``client``; ``think`` seconds before each answer."""

    client: DxpClient
    choose: Choice = first_quiet_king_move
    name: str = "Stand-in"
    think: float = 0.0
    seen: list[Message] = field(default_factory=list)

    def _send(self, msg: Message) -> None:
        self.client.send(encode(msg))

    def _next(self, timeout: float) -> Message:
        msg = parse(self.client.expect(timeout))
        self.seen.append(msg)
        return msg

    def play(self, timeout: float = 30.0) -> GameEnd:
        """Play one game to the end of its GAMEEND exchange; the director's GAMEEND (its
        claim or the end it decided, or its answer to the stand-in's own claim)."""
        position: Position | None = None
        plies = 0
        claimed = False
        while True:
            msg = self._next(timeout)
            if isinstance(msg, GameRequest):
                position = position_from_gamereq(msg)
                self._send(GameAccept(name=self.name, code=AcceptCode.ACCEPT))
                if position.turn is msg.follower_colour:
                    position, plies = self._answer(position, plies)
            elif isinstance(msg, Move) and position is not None:
                position = position.play(match_dxp_move(position, msg))
                position, plies = self._answer(position, plies + 1)
            elif isinstance(msg, GameEnd):
                if not claimed:
                    self._send(GameEnd(reason=EndReason.NONE, stop=msg.stop))
                return msg
            claimed = claimed or (position is None and plies > 0)

    def _answer(self, position: Position, plies: int) -> tuple[Position | None, int]:
        if self.think:
            time.sleep(self.think)  # the stand-in's own behaviour: it thinks this long
        choice = self.choose(position, plies)
        if isinstance(choice, EndReason):
            self._send(GameEnd(reason=choice, stop=StopCode.CONTINUE))
            return None, plies + 1
        self._send(to_dxp_move(choice, seconds=round(self.think)))
        return position.play(choice), plies + 1
