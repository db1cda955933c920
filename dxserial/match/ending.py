"""The end of a match game on both connections: the GAMEEND exchange, sans-I/O.

Where dxserial is to move it sends GAMEEND (on behalf of the absent opponent: ``reasons``
says which); where the engine is to move it waits for the engine's GAMEEND (or its next
MOVE, which is not relayed, and then sends its own).  An engine that leaves our GAMEEND
unanswered for ``gameend_timeout`` (GWD's default) has answered by its silence; one that has
not finished by ``timeout`` fails.  Used by :class:`~dxserial.match.machine.GameConductor`.
"""

from __future__ import annotations

import logging

from dxserial.drive.actions import Action, Hangup, Log
from dxserial.match.engine import Engine, Payload, intake, send
from dxserial.protocol.messages import (
    BackAccept,
    BackCode,
    EndReason,
    GameEnd,
    Move,
    StopCode,
)
from dxserial.protocol.session import Phase
from dxserial.protocol.tolerance import awaits_gameend_answer, silence_as_answer

__all__ = ["EndExchange", "hangup"]


def hangup(engine: Engine, side: str, out: list[Action]) -> None:
    """Close the engine's connection (its endpoint stays ready for the next one)."""
    engine.connected = False
    out.append(Hangup(side, engine.failure or engine.gone or "the session is over"))


class EndExchange:
    """Finishes the game with both engines; :attr:`over` once it has."""

    def __init__(
        self,
        engines: dict[str, Engine],
        reasons: dict[str, EndReason],
        stops: dict[str, StopCode],
        *,
        level: int,
    ) -> None:
        self.engines = engines  # side -> engine
        self.reasons = reasons  # engine label -> the reason we tell it
        self.stops = stops  # engine label -> stop code
        self.level = level
        self.pending: set[str] = set()  # sides whose exchange is not over
        self.over = False
        self._deadline = 0.0
        self._silence = 0.0  # 0: the silence was taken as an answer already

    def begin(self, now: float, timeout: float, gameend_timeout: float) -> list[Action]:
        out: list[Action] = []
        for side, engine in self.engines.items():
            if engine.connected and not engine.usable:
                hangup(engine, side, out)
            elif engine.connected and not self._advance(side, out):
                self.pending.add(side)
        self._deadline = now + timeout
        self._silence = now + min(timeout, gameend_timeout)
        self._finish_if_done(out)
        return out

    def next_deadline(self) -> float | None:
        if self.over:
            return None
        return min(self._deadline, self._silence) if self._silence else self._deadline

    def receive(self, side: str, payload: Payload, now: float) -> list[Action]:
        out: list[Action] = []
        engine = self.engines[side]
        msg = intake(engine, side, payload, self.level, out)
        if isinstance(msg, Move):
            out.append(Log(
                logging.INFO, f"engine {engine.label}: MOVE after the end of the game (not relayed)"
            ))
        if not engine.usable:
            self.pending.discard(side)
            hangup(engine, side, out)
        elif side in self.pending and self._advance(side, out):
            self.pending.discard(side)
        self._finish_if_done(out)
        return out

    def failed(self, side: str) -> list[Action]:
        """The engine on ``side`` failed (a send did not go): its exchange is over."""
        out: list[Action] = []
        self.pending.discard(side)
        self._finish_if_done(out)
        return out

    def poll(self, now: float) -> list[Action]:
        out: list[Action] = []
        due = self.next_deadline()
        if due is None or now < due:
            return out
        if self._silence and now < self._deadline:
            self._silence = 0.0
            self.pending -= self._silent_answers(out)
            self._finish_if_done(out)
            return out
        for side in sorted(self.pending):
            engine = self.engines[side]
            engine.fail("did not finish the GAMEEND exchange in time", out)
            hangup(engine, side, out)
        self.pending.clear()
        self.over = True
        return out

    def _advance(self, side: str, out: list[Action]) -> bool:
        """One step of the exchange with ``side``; True once it is over there."""
        engine = self.engines[side]
        s = engine.session
        reason = self.reasons.get(engine.label, EndReason.NONE)
        stop = self.stops[engine.label]
        if not engine.usable:
            return True
        if s.phase is Phase.BACK_REQUESTED and s.must_answer is not None:
            send(engine, side, BackAccept(code=BackCode.NOT_SUPPORTED), self.level, out)
        if s.phase.game_running and s.our_turn:
            send(engine, side, GameEnd(reason=reason, stop=stop), self.level, out)
        elif s.phase is Phase.ENDING and s.must_answer is not None:
            send(engine, side, GameEnd(reason=EndReason.NONE, stop=stop), self.level, out)
        return s.phase in (Phase.IDLE, Phase.STOPPED) or not engine.usable

    def _silent_answers(self, out: list[Action]) -> set[str]:
        """Engines that left our GAMEEND unanswered (GWD's default): their silence is the
        answer; their exchange is over.  The sides of those engines."""
        done: set[str] = set()
        for side, engine in self.engines.items():
            if side in self.pending and awaits_gameend_answer(engine.session):
                for note in engine.habits.notes(silence_as_answer(engine.session)):
                    out.append(Log(logging.INFO, f"engine {engine.label}: {note}"))
                engine.late_answer = True
                done.add(side)
        return done

    def _finish_if_done(self, out: list[Action]) -> None:
        if self.pending or self.over:
            return
        self.over = True
        for side, engine in self.engines.items():
            if engine.connected and engine.session.phase is Phase.STOPPED:
                hangup(engine, side, out)
