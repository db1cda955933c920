"""What the bridge says on behalf of an engine that left, so the other one is not stranded.

An engine that vanishes mid-game leaves the other engine waiting for a MOVE, a GAMEACC or
a GAMEEND answer that will never come.  The bridge then speaks for the departed engine,
with the mildest message that brings the dialogue back to idle (stop code 0, so the
engine that stayed is ready for the next game):

* it owes a GAMEACC: ``A`` code 2 (refuse this game, a next one may follow);
* it owes a BACKACC: ``K1`` (take-back not supported), then carry on;
* it is to move: GAMEEND reason 0, stop code 0;
* it owes the answer to a GAMEEND: GAMEEND reason 0, stop code 0.

When the engine that stayed is the one to move (or owes an answer) the bridge waits for
it; its message is for the departed engine and is not delivered to anyone.
:func:`next_step` says what to send; :class:`Closeouts` is the relay's close-out under way
(the grace period, the messages held meanwhile, the patience with the engine that stayed).
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field

from dxserial.bridge.judge import SERIAL, Judge, Side, other
from dxserial.bridge.records import Item, Records, Resume, Say, direction
from dxserial.drive.actions import WriteRecord
from dxserial.protocol.messages import (
    AcceptCode,
    BackAccept,
    BackCode,
    EndReason,
    GameAccept,
    GameEnd,
    Message,
    StopCode,
    escape,
)
from dxserial.protocol.session import Dialogue, Phase, Role

#: The name the bridge gives in a GAMEACC it sends on a departed follower's behalf.
BRIDGE_NAME = "dxserial bridge"


class Wait:
    """The engine that stayed owes the next message."""


class Done:
    """Nothing is under way any more."""


WAIT = Wait()
DONE = Done()


def next_step(dialogue: Dialogue, departed: Role) -> Message | Wait | Done:
    """The message to send for ``departed`` now, or whether to wait or stop."""
    phase = dialogue.phase
    if phase in (Phase.IDLE, Phase.STOPPED):
        return DONE
    owes = dialogue.awaiting is departed
    if phase is Phase.REQUESTED:
        return GameAccept(name=BRIDGE_NAME, code=AcceptCode.REFUSE_THIS_GAME) if owes else WAIT
    if phase is Phase.BACK_REQUESTED:
        return BackAccept(code=BackCode.NOT_SUPPORTED) if owes else WAIT
    if phase is Phase.ENDING:
        return GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE) if owes else WAIT
    if dialogue.turn_role() is departed:
        return GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)
    return WAIT


@dataclass
class Closing:
    """The bridge speaking for ``departed`` towards the other side, until the game is closed."""

    departed: Side
    why: str
    deadline: float
    started: bool = False
    spoke: bool = False  # the bridge has sent something: what follows answers it
    held: deque[tuple[Item, float]] = field(default_factory=deque)


class Closeouts:
    """The relay's close-out of a game on a departed engine's behalf (at most one at a time).

    ``say`` sends the bridge's own messages, ``resume`` judges and routes a message that was
    held until the old game was closed: both are the relay's.
    """

    def __init__(
        self, records: Records, judge: Judge, present: dict[Side, bool], *, timeout: float,
        say: Say, resume: Resume, accept_timeout: float | None = None,
    ) -> None:
        self._records = records
        self._judge = judge
        self._present = present
        self._timeout = timeout  # seconds the engine that stayed has to answer the bridge
        # ... and to answer the departed engine's GAMEREQ: an offer, not a game, so seconds.
        self._accept_timeout = timeout if accept_timeout is None else accept_timeout
        self._say = say
        self._resume = resume
        self.current: Closing | None = None

    def left(self, side: Side, gone: str, grace: float, now: float) -> bool:
        """The engine on ``side`` left; True if a close-out for it is now armed."""
        co = self.current
        if co is not None and co.departed == side:
            while co.held:  # the newcomer left before the old game was closed
                item, _ = co.held.popleft()
                self._records.arrival(
                    item, "lost", reason=f"{gone} (its message was held)", judged=False
                )
        if co is not None and co.departed != side:
            self.finish(f"{gone} too", now, abort=True)
        elif co is None and self._judge.game_open:
            d = self._judge.dialogue
            if d.phase is Phase.ENDING and d.awaiting is self._judge.roles[side]:
                # It left instead of answering the GAMEEND (engines that never answer one do
                # when their games are over): the game is over; answer for it at once.
                grace = 0.0
                self._records.log(logging.INFO, f"{gone} without answering the GAMEEND; the "
                                  "bridge answers it on its behalf")
            self.current = Closing(side, gone, now + grace)
            if grace > 0:
                self._records.log(
                    logging.WARNING,
                    f"{gone} during a game ({self._judge.phase}); the bridge closes the game "
                    f"towards the {other(side)} engine in {grace:g} s unless it is closed before",
                )
            return True
        return False

    def restart(self, item: Item, now: float) -> None:
        """The serial engine restarted mid-game: its GAMEREQ ``item`` waits for the close."""
        self.current = Closing(SERIAL, "the serial engine restarted", now)
        self.current.held.append((item, now))
        self.start(now)

    def hold(self, item: Item, now: float) -> None:
        """The departed side's next engine spoke: held until the old game is closed."""
        co = self.current
        assert co is not None and item.sender is not None
        if not co.held:
            self._records.log(
                logging.INFO,
                f"{direction(item.sender)}: '{escape(item.raw)}' held until the "
                f"{other(item.sender)} engine's old game is closed",
            )
        co.held.append((item, now))
        if not co.started:
            self.start(now)

    def stayer_spoke(self, item: Item, now: float) -> None:
        """The engine that stayed speaks to the one that left: nobody receives it."""
        co = self.current
        assert co is not None and item.sender is not None
        dir_ = direction(item.sender)
        if co.spoke:
            self._records.arrival(
                item, "dropped", reason="consumed",
                because=f"the answer to the bridge, which speaks for the departed "
                f"{co.departed} engine",
            )
            self._records.log(
                logging.INFO,
                f"{dir_}: '{escape(item.raw)}' answers the bridge (consumed)",
            )
        else:
            self._records.arrival(item, "lost", reason=co.why)
            self._records.log(
                logging.WARNING,
                f"{dir_}: message '{escape(item.raw)}' NOT delivered: {co.why}",
            )
        if co.started:
            self.step(now)

    def poll(self, now: float) -> None:
        co = self.current
        if co is not None and now >= co.deadline:
            if not co.started:
                self.start(now)
            elif self._judge.phase is Phase.REQUESTED:
                self._records.log(
                    logging.WARNING,
                    f"the {other(co.departed)} engine did not answer the departed "
                    f"{co.departed} engine's GAMEREQ within {self._accept_timeout:g} s; "
                    "taken as not started: both engines start afresh",
                )
                self.finish("no answer to a GAMEREQ whose sender left", now, abort=True)
            else:
                self._records.log(
                    logging.WARNING,
                    f"the {other(co.departed)} engine did not answer the bridge within "
                    f"{self._timeout:g} s; both engines are taken to start afresh",
                )
                self.finish("no answer to the bridge", now, abort=True)

    def shutdown(self, why: str) -> None:
        """The bridge stops: what was held is lost."""
        if self.current is not None:
            while self.current.held:
                item, _ = self.current.held.popleft()
                self._records.arrival(item, "lost", reason=why, judged=False)
            self.current = None

    def start(self, now: float) -> None:
        co = self.current
        assert co is not None
        co.started = True
        co.deadline = now + self._timeout
        stayer = other(co.departed)
        if not self._present[stayer]:
            self.finish(f"{co.why}, and no {stayer} engine is there", now, abort=True)
            return
        self._judge.comment(
            f"{co.why}: the bridge ended the game towards the {stayer} engine on its behalf"
        )
        self.step(now)

    def step(self, now: float) -> None:
        co = self.current
        assert co is not None
        stayer = other(co.departed)
        while True:
            step = next_step(self._judge.dialogue, self._judge.roles[co.departed])
            if step is DONE:
                self.finish(co.why, now, abort=False)
                return
            if step is WAIT:
                requested = self._judge.phase is Phase.REQUESTED
                co.deadline = now + (self._accept_timeout if requested else self._timeout)
                return
            assert isinstance(step, Message)
            co.spoke = True
            self._say(
                stayer, step, f"on behalf of the departed {co.departed} engine: {co.why}",
                judged=True,
            )

    def finish(self, why: str, now: float, *, abort: bool) -> None:
        co = self.current
        assert co is not None
        self.current = None
        if abort:
            record = self._judge.restart(why)
            if record is not None:
                self._records.out.append(WriteRecord(record))
        self._records.log(
            logging.INFO,
            f"the old game is closed ({why}); {len(co.held)} held message(s) go on",
        )
        while co.held:
            item, _ = co.held.popleft()
            if self.current is not None:
                self.current.held.append((item, now))
                continue
            assert item.msg is not None
            self._resume(item, item.msg, now)


__all__ = [
    "BRIDGE_NAME", "DONE", "WAIT", "Closeouts", "Closing", "Done", "Wait", "next_step",
]
