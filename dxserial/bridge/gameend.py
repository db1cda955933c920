"""The GAMEEND exchange as the bridge minds it: an answer waited for, and stop code 1.

A GAMEEND left unanswered ``gameend_timeout`` seconds is answered on the silent engine's
behalf (a dialect of real engines, :mod:`dxserial.protocol.dialects`), and an answer that
comes after all is consumed.  The serial engine is the rig's long-lived party: a TCP
engine's stop code 1 ends that engine's session only, so the serial engine gets the GAMEEND
with stop code 0 and its answer goes back with stop code 1, both as the bridge's changes
(``pass_stop`` forwards it unchanged).
"""

from __future__ import annotations

import logging

from dxserial.bridge.closeout import Closeouts
from dxserial.bridge.fate import MessageFate
from dxserial.bridge.judge import SERIAL, TCP, Judge, Side, other
from dxserial.bridge.records import Item, Records, Say, direction
from dxserial.drive.actions import WriteRecord
from dxserial.protocol.dialects import GAMEEND_UNANSWERED
from dxserial.protocol.messages import Chat, EndReason, GameEnd, Message, StopCode, escape
from dxserial.protocol.session import Phase


class GameEnds:
    """The relay's watch over GAMEEND exchanges (``say``: the relay's own messages)."""

    def __init__(
        self, records: Records, judge: Judge, present: dict[Side, bool],
        session: dict[Side, int], closeouts: Closeouts, fate: MessageFate, *, timeout: float,
        pass_stop: bool, say: Say,
    ) -> None:
        self._records = records
        self._judge = judge
        self._present = present
        self._session = session
        self._closeouts = closeouts
        self._fate = fate  # holds the serial engine's messages once the tcp engine stopped
        self._timeout = timeout  # 0: never answer for a silent engine
        self._pass_stop = pass_stop
        self._say = say
        # A GAMEEND waiting for its answer: (the side that owes it, when the bridge answers).
        self.ending: tuple[Side, float] | None = None
        self.answered_for: Side | None = None  # the bridge answered its GAMEEND for it
        self._stop_back = False  # the serial engine's answer goes back with stop code 1

    def late(self, item: Item, msg: Message) -> bool:
        """A message from the side the bridge answered a GAMEEND for: True if it is that
        answer, come late (consumed here)."""
        if isinstance(msg, Chat):
            return False
        self.answered_for = None
        if not isinstance(msg, GameEnd):
            return False
        assert item.sender is not None
        self._records.arrival(
            item, "dropped", reason="consumed",
            because="a late answer to a GAMEEND whose game is over already",
        )
        self._records.log(logging.INFO, f"{direction(item.sender)}: late GAMEEND answer "
                          f"'{escape(item.raw)}' consumed: that game is over already")
        return True

    def watch(self, now: float) -> None:
        """Arm (or clear) the wait for a GAMEEND's answer (see ``gameend_timeout``)."""
        d = self._judge.dialogue
        if d.phase is not Phase.ENDING or d.awaiting is None or not self._timeout:
            self.ending = None
            return
        silent = self._judge.side_of(d.awaiting)
        if self.ending is None or self.ending[0] != silent:
            self.ending = (silent, now + self._timeout)

    def poll(self, now: float) -> None:
        if self.ending is not None and now >= self.ending[1]:
            self._answer_for_silent(now)

    def _answer_for_silent(self, now: float) -> None:
        """The GAMEEND waited ``gameend_timeout`` s: answer it for the silent engine."""
        assert self.ending is not None
        silent, _ = self.ending
        self.ending = None
        d = self._judge.dialogue
        if (
            self._closeouts.current is not None or not self._present[other(silent)]
            or d.phase is not Phase.ENDING or d.awaiting is not self._judge.roles[silent]
        ):  # answered meanwhile another way (a close-out for a departed engine)
            return
        self._records.habit(silent, self._session[silent], GAMEEND_UNANSWERED)
        self.answered_for = silent
        self._say(
            other(silent), GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE),
            f"on behalf of the {silent} engine, which did not answer the GAMEEND within "
            f"{self._timeout:g} s",
            judged=True,
        )
        self.watch(now)

    def stop_for_tcp_only(self, item: Item, msg: GameEnd, now: float) -> bool:
        """A TCP engine's stop code 1 ends its own session, not the serial engine's: the
        serial engine gets the GAMEEND with stop code 0 and its answer goes back with stop
        code 1, both as the bridge's changes (``--pass-stop`` forwards it unchanged)."""
        if self._pass_stop:
            return False
        judge = self._judge
        d = judge.dialogue
        if item.sender == SERIAL:
            if not (self._stop_back and d.phase is Phase.ENDING
                    and d.awaiting is judge.roles[SERIAL]):
                return False
            self._stop_back = False
            verdict = judge.judge(SERIAL, msg)  # what the serial engine said, as it said it
            if verdict.record is not None:
                self._records.out.append(WriteRecord(verdict.record))
            for note in verdict.notes:
                self._records.log(logging.INFO, f"referee: {note}")
            self._replaced(item, GameEnd(reason=msg.reason, stop=StopCode.STOP), TCP,
                           "the tcp engine asked to stop: the serial engine's answer goes back "
                           "with stop code 1", on_behalf_of=SERIAL, judged_as_sent=True)
            self.watch(now)
            return True
        if msg.stop is not StopCode.STOP or not judge.would_accept(TCP, msg):
            return False
        self._fate.tcp_stopped = True
        self._stop_back = d.phase is not Phase.ENDING  # it starts the exchange: answer owed
        self._replaced(item, GameEnd(reason=msg.reason, stop=StopCode.CONTINUE), SERIAL,
                       "stop code 1 ends the tcp engine's session only; the serial engine gets "
                       "stop code 0 and stays ready for the next one (--pass-stop: unchanged)",
                       on_behalf_of=TCP, judged=True)
        self.watch(now)
        return True

    def _replaced(
        self, item: Item, new: GameEnd, to: Side, why: str, *, on_behalf_of: Side,
        judged: bool = False, judged_as_sent: bool = False,
    ) -> None:
        """``item`` goes on as ``new``: the engine's message is traced as replaced (judged,
        if the judge took it as sent) and ``new`` as the bridge's, on its sender's behalf."""
        self._records.arrival(item, "dropped", reason="replaced", because=why,
                              judged=True if judged_as_sent else None)
        self._say(to, new, why, judged=judged, on_behalf_of=on_behalf_of)


__all__ = ["GameEnds"]
