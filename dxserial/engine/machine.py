"""The built-in engine as a machine for the one driver: a :class:`Player` on one side, "peer".

It turns what the peer's link reports into the player's inputs and the player's messages
and events into actions: every message read is answered through :class:`Work` (a search
runs in a worker thread; the driver holds the other inputs meanwhile, and the link keeps
echoing), each finished game is a :class:`Say`, and the end of the session is a
:class:`Done` with the exit status of :class:`~dxserial.engine.runner.RunResult`.  The
player's clock is the driver's (``time.monotonic``; a fake one in tests).
"""

from __future__ import annotations

import contextlib
import logging

from dxserial.drive.actions import Action, Done, Hangup, Log, Say, Send, Work
from dxserial.drive.machine import BaseMachine
from dxserial.engine.player import GameBegun, GameOver, NoAnswer, Note, PeerError, Player
from dxserial.engine.search import SearchCancelled
from dxserial.errors import DxSerialError, MessageError
from dxserial.protocol.messages import Chat, Message, colour_name, escape, parse
from dxserial.protocol.nulmodem import LinkProblem

#: The engine's one side: the peer it plays (a serial line, a TCP connection).
PEER = "peer"
#: The exit line of an engine stopped before it began a game.
NOTHING_PLAYED = "stopped before any game was played"


class EngineMachine(BaseMachine[str]):
    """One player against one peer; ``repeat``: an unanswered GAMEREQ is sent again (NUL)."""

    def __init__(self, player: Player, *, repeat: bool, log_messages: bool = False) -> None:
        self.player = player
        self.repeat = repeat
        self._msg_level = logging.INFO if log_messages else logging.DEBUG
        self._where = "the peer"  # the peer's place, for the no-answer hint
        self._serial = False  # the peer is on a serial line: its speed may differ
        self._habits: set[str] = set()  # the peer's lenient readings, named once
        self._thinking = False  # a Work job runs: the player is busy in its thread
        self.results: list[GameOver] = []
        self.result: Done | None = None
        self.lost = False  # the link is gone: nothing more can be delivered
        self._last_chat: str | None = None  # the peer's last words, for the exit line
        self.error: Exception | None = None  # raised to the runner's caller, as before

    @property
    def thinking(self) -> bool:
        """The player is busy in its worker thread (a search)."""
        return self._thinking

    # ------------------------------------------------------------------ inputs

    def joined(self, side: str, now: float, who: str = "", *, serial: bool = False) -> list[Action]:
        """The port is open: ``who`` is where the peer is (``serial``: a serial line); an
        initiator offers a game."""
        self._where = who or self._where
        self._serial = serial
        return self._sends(self.player.start())

    def receive(self, side: str, raw: bytes, now: float) -> list[Action]:
        if self.result is not None:
            return []
        try:
            msg = parse(raw, strict=False)
        except MessageError as exc:
            out: list[Action] = [Log(self._msg_level, f"in  {escape(raw)} (invalid)")]
            try:
                sent = self.player.invalid(f"'{escape(raw)}': {exc}")
            except PeerError as error:
                return out + self._failed(error)
            return out + self._report() + self._sends(sent) + self._if_over()
        out = [Log(self._msg_level, f"in  {escape(msg.wire)} ({msg.NAME})")]
        if isinstance(msg, Chat):  # words for the user (a bridge's "busy"): kept for the
            self._last_chat = msg.text  # exit line; the player's note shows them
        for warning in msg.warnings:  # a habit of the peer's, read leniently: once
            if warning not in self._habits:
                self._habits.add(warning)
                out.append(Log(logging.INFO, f"note: the peer's habit: {warning} (read leniently)"))
        self._thinking = True
        return [*out, Work(lambda: self._answer(msg))]

    def _answer(self, msg: Message) -> list[Action]:
        """In the worker thread: the player's answer (a search), or how the session ends."""
        try:
            try:
                sent = self.player.receive(msg)
            except SearchCancelled:  # stop() was called while we were thinking
                return self._report() + self._stopped()
            except PeerError as exc:
                return self._failed(exc)
            except Exception as exc:  # the move source failed (a Hub engine that died)
                self.error = exc
                return self._finish(Done(1, str(exc)))
            return self._report() + self._sends(sent) + self._if_over()
        finally:
            self._thinking = False

    def left(self, side: str, now: float, why: str = "") -> list[Action]:
        return self._lost(why or "the peer closed the connection")

    def link_down(self, side: str, raws: list[bytes], why: str, now: float) -> list[Action]:
        return [Hangup(PEER), *self._lost(f"the peer stopped answering: {why}")]

    def undelivered(self, side: str, raws: list[bytes], why: str, now: float) -> list[Action]:
        """Our own message cannot be framed at all (the link refused it): give up."""
        if self.error is None:
            name = "a message"
            with contextlib.suppress(MessageError):
                name = parse(raws[0], strict=False).NAME if raws else name
            self.error = DxSerialError(f"cannot send {name}: {why}")
        return self._finish(Done(1, str(self.error)))

    def line_problem(self, side: str, problem: LinkProblem, now: float) -> list[Action]:
        return [Log(problem.level, f"line: {problem.error}", "line")]  # a flood is folded

    def poll(self, now: float) -> list[Action]:
        """Our GAMEREQ (or GAMEEND) is overdue: a hint, a repeat, or the silence taken."""
        if self.result is not None or self._thinking:
            return []
        sent = self.player.poll(now, repeat=self.repeat)
        return self._sends(sent) + self._report() + self._if_over()

    def next_deadline(self) -> float | None:
        if self.result is not None or self._thinking:
            return None
        return self.player.deadline()

    def stop(self, now: float) -> list[Action]:
        """A signal: end the game if it is ours to end, and say whether anything was played."""
        if self.result is not None:
            return []
        return self._stopped()

    # ------------------------------------------------------------------ endings

    def _lost(self, reason: str) -> list[Action]:
        self.lost = True
        if self.result is not None:
            return []
        if self.player.hung_up_for_answer():  # told to stop, it stopped: a normal end
            return self._report() + self._over()
        said = f" (its last words: '{self._last_chat}')" if self._last_chat else ""
        return self._finish(Done(1, f"link lost: {reason}{said}"))

    def _failed(self, exc: PeerError) -> list[Action]:
        """The peer kept breaking the protocol: say goodbye and give up."""
        out = self._report()
        if exc.farewell is not None:
            out += self._sends([exc.farewell])
        return out + self._finish(Done(1, f"protocol failure: {exc}"))

    def _stopped(self) -> list[Action]:
        player = self.player
        out = self._sends(player.abandon())
        finished = player.games_finished
        if finished:
            games = "game" if finished == 1 else "games"
            return out + self._finish(Done(0, f"stopped by a signal after {finished} {games}"))
        number = player.current_game
        if number is not None:
            why = f"stopped during game {number}, before any game was played to its end"
        elif player.games_begun:
            why = "stopped before any game was played to its end"
        else:
            why = NOTHING_PLAYED
        return out + self._finish(Done(1, why))

    def _if_over(self) -> list[Action]:
        return self._over() if self.player.done else []

    def _over(self) -> list[Action]:
        player = self.player
        return self._finish(Done(0 if player.ok else 1, f"session ended: {player.outcome}"))

    def _finish(self, done: Done) -> list[Action]:
        if self.result is not None:
            return []
        self.result = done
        return [done]

    # ------------------------------------------------------------------ output

    def _sends(self, messages: list[Message]) -> list[Action]:
        out: list[Action] = []
        for msg in messages:
            out.append(Log(self._msg_level, f"out {escape(msg.wire)} ({msg.NAME})"))
            out.append(Send(PEER, msg.wire))
        return out

    def _report(self) -> list[Action]:
        out: list[Action] = []
        for event in self.player.events():
            if isinstance(event, GameOver):
                self.results.append(event)
                out.append(Say(event.line))
            elif isinstance(event, GameBegun):
                out.append(Log(logging.INFO, f"game {event.number}: playing "
                               f"{colour_name(event.our_colour)} against {event.opponent or '?'}"))
            elif isinstance(event, Note):
                out.append(Log(event.level, event.text))
            elif isinstance(event, NoAnswer):
                again = " (GAMEREQ sent again)" if event.repeated else ""
                ask = ("is the other side running, at the same speed, link type and start "
                       f"and end bytes? (dxserial probe {self._where} finds how it speaks)"
                       if self._serial else
                       "is the other side running, and on the same link type?")
                out.append(Log(logging.WARNING, f"nothing answered on {self._where} after "
                               f"{event.waited:g} s: {ask}{again}"))
        return out


__all__ = ["NOTHING_PLAYED", "PEER", "EngineMachine"]
