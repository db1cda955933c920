"""The serial engine's state, checked before a GAMEREQ reaches it (``check_serial_state``).

The serial engine is the rig's long-lived party: it may still be inside a game of the
bridge's previous run (or of before its line went quiet).  Until it is known (it sends a
GAMEREQ or a GAMEACC, or answers) the first GAMEREQ for it waits while the bridge ends any
such game: a GAMEEND 0, stop code 0, of the bridge's own, whose answer is consumed.  A game
message it sends meanwhile, with no game running here, belongs to that old game: it is given
to no one and that game is ended.
"""

from __future__ import annotations

import logging
from collections import deque

from dxserial.bridge.closeout import Closeouts
from dxserial.bridge.judge import SERIAL, Judge, Side
from dxserial.bridge.records import Item, Records, Resume, Say
from dxserial.protocol.messages import (
    BackAccept,
    BackRequest,
    Chat,
    EndReason,
    GameEnd,
    GameRequest,
    Message,
    Move,
    StopCode,
    escape,
)
from dxserial.protocol.session import Phase

#: What only a running game explains (from a serial engine still in an old one).
_GAME_MESSAGES = (Move, GameEnd, BackRequest, BackAccept)


class SerialCheck:
    """The check of the serial engine's state, and the messages held behind it.

    ``say`` sends the bridge's own messages, ``resume`` judges and routes a held message:
    both are the relay's.
    """

    def __init__(
        self, records: Records, judge: Judge, present: dict[Side, bool], closeouts: Closeouts,
        *, enabled: bool, timeout: float, say: Say, resume: Resume,
    ) -> None:
        self._records = records
        self._judge = judge
        self._present = present
        self._closeouts = closeouts
        self._enabled = enabled
        self._timeout = timeout  # seconds the serial engine has to answer the bridge's GAMEEND
        self._say = say
        self._resume = resume
        # Known once it sends a GAMEREQ or a GAMEACC, or answers.
        self.known = not enabled
        self.probe: tuple[float, deque[tuple[Item, Message]]] | None = None  # deadline, held

    def rejoined(self) -> None:
        """The serial engine is back after it was given up: it may be anywhere."""
        self.known = not self._enabled

    def intercepts(self, item: Item, msg: Message, now: float) -> bool:
        """The serial engine's state is unknown when a TCP engine's GAMEREQ is for it: end
        any game it may still have open (GAMEEND 0, stop 0, the bridge's own), consume its
        answer, then forward the GAMEREQ.  True if ``item`` was taken care of here."""
        sender = item.sender
        if sender == SERIAL and self.probe is None:
            if self.known or isinstance(msg, Chat):
                return False
            if isinstance(msg, _GAME_MESSAGES) and self._judge.phase is Phase.IDLE:
                self._left_over(item, msg, now)
                return True
            self.known = True  # it spoke: whatever it says is judged from here
            return False
        if sender == SERIAL:
            self._records.arrival(
                item, "dropped", reason="consumed",
                because="answers the bridge, which ended a game the serial engine may have had",
            )
            self._records.log(logging.INFO, f"serial->tcp: '{escape(item.raw)}' answers the "
                              "bridge (consumed)")
            if isinstance(msg, GameEnd):
                self._end(now)
            return True
        if self.probe is not None:
            self.probe[1].append((item, msg))
            return True
        if (
            self.known or not isinstance(msg, GameRequest) or not self._present[SERIAL]
            or self._closeouts.current is not None or self._judge.game_open
        ):
            return False
        self._start(now, deque([(item, msg)]), "any such game is ended before the tcp "
                    "engine's GAMEREQ")
        return True

    def left(self, side: Side, gone: str) -> None:
        """The engine on ``side`` left: its messages held behind the check are lost."""
        if self.probe is None:
            return
        probe_held = self.probe[1]
        for held_item, held_msg in [p for p in probe_held if p[0].sender == side]:
            probe_held.remove((held_item, held_msg))
            self._records.arrival(
                held_item, "lost", reason=f"{gone} (its message was held)", judged=False
            )

    def poll(self, now: float) -> None:
        if self.probe is not None and now >= self.probe[0]:
            self._records.log(logging.INFO, "the serial engine did not answer the bridge's "
                              "GAMEEND; taken to be idle")
            self._end(now)

    def _start(self, now: float, held: deque[tuple[Item, Message]], what: str) -> None:
        self.probe = (now + self._timeout, held)
        self._say(
            SERIAL, GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE),
            f"the bridge cannot know whether the serial engine is still in a game of an earlier "
            f"run: {what}",
            judged=False,
        )

    def _left_over(self, item: Item, msg: Message, now: float) -> None:
        """A game message from a serial engine of unknown state while no game runs here: it
        belongs to a game of the bridge's earlier run, which no TCP engine has.  Not given
        to anyone; that game is ended (the bridge answers its GAMEEND, or sends one)."""
        why = "from a game of the bridge's earlier run, which no tcp engine has"
        self._records.arrival(item, "lost", reason=why)
        self._records.log(logging.INFO, f"serial->tcp: '{escape(item.raw)}' not delivered: {why}")
        if isinstance(msg, GameEnd):
            self.known = True
            self._say(
                SERIAL, GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE),
                "answers the GAMEEND of a game of the bridge's earlier run", judged=False,
            )
            return
        self._start(now, deque(), "that game is ended")

    def _end(self, now: float) -> None:
        assert self.probe is not None
        held = self.probe[1]
        self.probe = None
        self.known = True
        while held:
            item, msg = held.popleft()
            self._resume(item, msg, now)


__all__ = ["SerialCheck"]
