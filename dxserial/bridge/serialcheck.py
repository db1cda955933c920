"""The serial engine's game, ended by the bridge only on evidence that one may be open.

The serial engine is the rig's long-lived party: it may still be inside a game of the
bridge's previous run.  The bridge says nothing the engine did not cause, so a TCP
engine's first GAMEREQ goes out at once, byte for byte, unless there is evidence:

(a) the bridge's own record: the state file said a game was open when the previous run
    ended, or the serial engine was given up with a game open and is back;
(b) the serial engine says so: a game message (MOVE, GAMEEND, BACKREQ, BACKACC) with no
    game open here, before this run gave it anything to answer;
(c) where a GAMEACC should come, a refusal, a game message, or silence.

On (a) the GAMEREQ waits while the bridge ends the old game (GAMEEND 0, stop 0, its own,
its answer consumed); on (b) that game is ended; on (c) it is ended and the GAMEREQ
offered again, once.  Each of these names its evidence in the log and the trace.
:meth:`SerialCheck.remember` says when the bridge's record changes (a game starts, ends).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from dxserial.bridge.closeout import Closeouts
from dxserial.bridge.judge import SERIAL, TCP, Judge, Side
from dxserial.bridge.records import Item, Records, Resume, Say
from dxserial.drive.actions import Remember
from dxserial.protocol.messages import (
    AcceptCode,
    BackAccept,
    BackRequest,
    Chat,
    EndReason,
    GameAccept,
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
#: The bridge's own end of a game the serial engine may have open.
_END = GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)


@dataclass
class _Offer:
    """A TCP engine's GAMEREQ delivered to the serial engine, waiting for its GAMEACC."""

    msg: GameRequest
    deadline: float | None = None  # set once the line delivered it
    again: bool = False  # offered a second time: whatever comes now is forwarded


class SerialCheck:
    """The evidence of an open game on the serial engine, and what the bridge does on it.

    ``say`` sends the bridge's own messages, ``resume`` judges and routes a held message:
    both are the relay's.  ``left_open``: the state file's evidence from the previous run.
    """

    def __init__(
        self, records: Records, judge: Judge, present: dict[Side, bool], closeouts: Closeouts,
        *, enabled: bool, timeout: float, accept_timeout: float, say: Say, resume: Resume,
        left_open: str | None = None,
    ) -> None:
        self._records = records
        self._judge = judge
        self._present = present
        self._closeouts = closeouts
        self._enabled = enabled
        self._timeout = timeout  # seconds the serial engine has to answer the bridge's GAMEEND
        self._accept_timeout = accept_timeout  # ... and to answer a GAMEREQ
        self._say = say
        self._resume = resume
        #: Why a game may be open on the serial engine (evidence (a)), or None.
        self.evidence: str | None = left_open if enabled else None
        self._from_previous_run = self.evidence is not None  # else this run gave it up
        self._recorded = self.evidence is not None  # what the state file says now
        # Known once it sends a GAMEREQ or a GAMEACC, or answers.
        self.known = not enabled
        # The bridge's GAMEEND is out: its deadline (None until the line delivered it: the
        # engine's time to answer runs from when it has it) and what is held meanwhile.
        self.probe: tuple[float | None, deque[tuple[Item, Message]]] | None = None
        self._offer: _Offer | None = None
        self._reoffer: GameRequest | None = None  # offered again once the probe is over
        self._frozen = False  # the bridge stops: the record stays as the wire left it
        # The messages held for the serial engine while it was away wait for the probe;
        # this releases them (the relay's), called once the old game is ended.
        self._release: Callable[[], None] | None = None

    # ------------------------------------------------------------------ the record

    def remember(self, pending: bool) -> Remember | None:
        """The record to write if it changed: a game is open on the serial engine (or
        may be, on evidence) or it is not.  Only at a game's start and end, never per move.

        ``pending``: messages for the serial engine not yet delivered (a game's last
        GAMEEND): until it has them, its game is not over for it."""
        if not self._enabled or self._frozen:
            return None
        now_open = (self._judge.game_open or self.evidence is not None or self.probe is not None
                    or (pending and self._recorded))
        if now_open == self._recorded:
            return None
        self._recorded = now_open
        why = "a game started" if now_open else "no game is open on the serial engine"
        return Remember({"game": "open" if now_open else "closed"}, why)

    # ------------------------------------------------------------------ inputs

    def freeze(self) -> None:
        """The bridge stops: what was not delivered is lost, so the record is not touched."""
        self._frozen = True

    def rejoined(self) -> None:
        """The serial engine is back after it was given up: it may be anywhere."""
        self.known = not self._enabled

    def returned(self, now: float, held: int, release: Callable[[], None]) -> bool:
        """The serial engine is back with ``held`` messages kept for it: on the bridge's own
        evidence (a), the end of its old game goes first, its answer consumed; ``release``
        sends what was held after that.  True if the release waits for that."""
        if self.probe is not None and self._release is not None:
            return True  # back again while the end of its old game is under way
        if not self._enabled or self.evidence is None or not held or self.probe is not None:
            return False
        self._release = release
        self._start(now, deque(), f"ending the game the serial engine may still have "
                    f"({self.evidence}) before the {held} message(s) held for it while it "
                    "was away")
        return True

    def deadline(self) -> float | None:
        probe, offer = self.probe, self._offer
        if probe is not None:
            return probe[0]
        return offer.deadline if offer is not None else None

    def delivered(self, side: Side, raw: bytes, now: float) -> None:
        """The line delivered ``raw``: the bridge's GAMEEND, or a GAMEREQ watched for its
        GAMEACC, starts the serial engine's time to answer."""
        probe = self.probe
        if side == SERIAL and probe is not None and probe[0] is None and raw == _END.wire:
            self.probe = (now + self._timeout, probe[1])
        offer = self._offer
        if side == SERIAL and offer is not None and offer.deadline is None and (
            raw == offer.msg.wire
        ):
            offer.deadline = now + self._accept_timeout

    def intercepts(self, item: Item, msg: Message, now: float) -> bool:
        """Act on evidence of an open game (see the module docstring).  True if ``item``
        was taken care of here (held, consumed or lost), else the relay routes it."""
        if not self._enabled:
            return False
        if item.sender == SERIAL:
            return self._from_serial(item, msg, now)
        if self.probe is not None:
            self.probe[1].append((item, msg))
            return True
        if not isinstance(msg, Chat):
            # What the serial engine says next may answer this: no longer evidence (b).
            self.known = True
        if (
            not isinstance(msg, GameRequest) or not self._present[SERIAL]
            or self._closeouts.current is not None or self._judge.game_open
        ):
            return False
        if self.evidence is not None:
            whose = ("game left open by the previous run" if self._from_previous_run
                     else "the game the serial engine may still have")
            self._start(now, deque([(item, msg)]),
                        f"ending {whose} ({self.evidence}) before the tcp engine's GAMEREQ")
            return True
        self._offer = _Offer(msg)  # evidence (c) may come where its GAMEACC should
        return False

    def _from_serial(self, item: Item, msg: Message, now: float) -> bool:
        if self.probe is not None:
            self._records.arrival(
                item, "dropped", reason="consumed",
                because="answers the bridge, which ended a game the serial engine may have had",
            )
            self._records.log(logging.INFO, f"serial->tcp: '{escape(item.raw)}' answers the "
                              "bridge (consumed)")
            if isinstance(msg, GameEnd):
                self._end(now)
            return True
        if isinstance(msg, GameRequest):
            self.evidence = None  # it offers a game: it has none open
        offer = self._offer
        if offer is not None and not offer.again and not isinstance(msg, Chat):
            if isinstance(msg, GameAccept) and msg.code is AcceptCode.ACCEPT:
                self._offer = None
            elif isinstance(msg, GameAccept):
                self._retry(item, now, f"the serial engine refused the GAMEREQ (GAMEACC code "
                            f"{msg.code.value})")
                return True
            elif isinstance(msg, GameEnd):  # it ended its old game itself: answered, and
                self._answer_old(item, offer)  # the GAMEREQ offered again at once
                return True
            elif isinstance(msg, _GAME_MESSAGES):
                self._retry(item, now, f"the serial engine sent {msg.NAME} where its GAMEACC "
                            "should come")
                return True
            self.known = True
            return False
        if offer is not None and offer.again and isinstance(msg, GameAccept):
            self._offer = None
        if self.known or isinstance(msg, Chat):
            return False
        if isinstance(msg, _GAME_MESSAGES) and self._judge.phase is Phase.IDLE:
            self._left_over(item, msg, now)
            return True
        self.known = True  # it spoke: whatever it says is judged from here
        return False

    def left(self, side: Side, gone: str, *, undelivered: bool = False,
             unheard_offer: bool = False) -> None:
        """The engine on ``side`` left: its messages held behind the check are lost; a
        serial engine given up with a game open (or with messages of ours it never got)
        may still be in it when it comes back.  ``unheard_offer``: the game was only
        offered to it and the GAMEREQ never delivered: none is open on it for that."""
        opened = self._judge.game_open and not unheard_offer
        if side == SERIAL and self._enabled and (opened or (
                undelivered and self._recorded and not unheard_offer)):
            self.evidence = "the serial engine had a game open when it was given up"
            self._from_previous_run = False
        if side == TCP or self._offer is not None:
            self._offer = None
        if self.probe is None:
            return
        probe_held = self.probe[1]
        for held_item, held_msg in [p for p in probe_held if p[0].sender == side]:
            probe_held.remove((held_item, held_msg))
            self._records.arrival(
                held_item, "lost", reason=f"{gone} (its message was held)", judged=False
            )
        if side == TCP:
            self._reoffer = None  # its GAMEREQ goes with it

    def poll(self, now: float) -> None:
        if self.probe is not None:
            due = self.probe[0]
            if due is not None and now >= due:
                self._records.log(logging.INFO, "the serial engine did not answer the "
                                  "bridge's GAMEEND; taken to be idle")
                self._end(now)
            return
        offer = self._offer
        if offer is None or offer.deadline is None or now < offer.deadline:
            return
        if not offer.again:
            self._retry(None, now, f"the serial engine did not answer the GAMEREQ within "
                        f"{self._accept_timeout:g} s")
            return
        self._offer = None
        self._records.log(logging.WARNING, "the serial engine did not answer the GAMEREQ "
                          "offered again either; the tcp engine waits for its GAMEACC")

    # ------------------------------------------------------------------ actions

    def _retry(self, item: Item | None, now: float, why: str) -> None:
        """Evidence (c): end any game the serial engine may have, then offer again, once."""
        offer = self._offer
        assert offer is not None
        self._offer = None
        if item is not None:
            self._records.arrival(item, "dropped", reason="consumed",
                                  because=f"{why}: it may still be in a game; the GAMEREQ is "
                                  "offered again")
            self._records.log(logging.INFO, f"serial->tcp: '{escape(item.raw)}' not "
                              f"delivered: {why}")
        self._reoffer = offer.msg
        self._start(now, deque(), f"{why}: it may still be in a game; it is ended, then the "
                    "GAMEREQ is offered again (once)")

    def _answer_old(self, item: Item, offer: _Offer) -> None:
        """Evidence (c), a GAMEEND where the GAMEACC should come: the serial engine ended a
        game it still had.  Its GAMEEND is answered, and the GAMEREQ offered again, once."""
        why = "the serial engine sent GAMEEND where its GAMEACC should come"
        self._records.arrival(item, "dropped", reason="consumed",
                              because=f"{why}: it ended a game it still had")
        self._records.log(logging.INFO, f"serial->tcp: '{escape(item.raw)}' not delivered: {why}")
        self._say(SERIAL, GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE),
                  f"answers the serial engine's GAMEEND '{escape(item.raw)}' of a game it still "
                  f"had ({why})", judged=False)
        self._say(SERIAL, offer.msg, "offers the tcp engine's GAMEREQ again, now that the "
                  "serial engine's old game is ended", judged=False)
        self._offer = _Offer(offer.msg, again=True)
        self.known = True

    def _start(self, now: float, held: deque[tuple[Item, Message]], why: str) -> None:
        self.probe = (None, held)  # its time runs once the line has delivered the GAMEEND
        self._say(SERIAL, _END, why, judged=False)

    def _left_over(self, item: Item, msg: Message, now: float) -> None:
        """Evidence (b): a game message from a serial engine of unknown state while no game
        runs here belongs to a game of the bridge's earlier run, which no TCP engine has.
        Not given to anyone; that game is ended (the bridge answers its GAMEEND, or sends
        one)."""
        why = "from a game of the bridge's earlier run, which no tcp engine has"
        self._records.arrival(item, "lost", reason=why)
        self._records.log(logging.INFO, f"serial->tcp: '{escape(item.raw)}' not delivered: {why}")
        if isinstance(msg, GameEnd):
            self.known = True
            self.evidence = None
            self._say(
                SERIAL, GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE),
                f"answers the serial engine's GAMEEND '{escape(item.raw)}' of a game of the "
                "bridge's earlier run", judged=False,
            )
            return
        said = f"the serial engine sent {msg.NAME} '{escape(item.raw)}' with no game open here"
        if self.evidence is not None:
            said += f"; ending game left open by the previous run ({self.evidence})"
        else:
            said += ": that game of an earlier run is ended"
        self._start(now, deque(), said)

    def _end(self, now: float) -> None:
        assert self.probe is not None
        held = self.probe[1]
        self.probe = None
        self.known = True
        self.evidence = None
        release, self._release = self._release, None
        if release is not None:
            release()  # what was held while it was away: older than anything held here
        again, self._reoffer = self._reoffer, None
        if again is not None:
            self._say(SERIAL, again, "offers the tcp engine's GAMEREQ again, now that any game "
                      "the serial engine had is ended", judged=False)
            self._offer = _Offer(again, again=True)
        while held:
            item, msg = held.popleft()
            self._resume(item, msg, now)


__all__ = ["SerialCheck"]
