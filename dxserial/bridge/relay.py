"""The bridge's rules as a sans-I/O object: messages and engine comings and goings in,
actions out (like h11's connection).  No asyncio, no sockets, no files, no clock of its
own: the one driver (:mod:`dxserial.drive.driver`) applies the actions.

A *session* is one engine's stay on one side; messages for a side with no engine are held,
messages to an engine that left are lost, and a game an engine left is closed on its
behalf after ``grace``.  The judge follows the wire; under ``warn`` and ``off`` a message is
forwarded first and judged by :meth:`Relay.settle`; each message gets one trace record on
arrival and one when its fate is known (:attr:`Relay.counts`).  The rules in full:
docs/bridge.md.
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from dxserial.bridge.closeout import Closeouts
from dxserial.bridge.fate import MessageFate
from dxserial.bridge.gameend import GameEnds
from dxserial.bridge.judge import SERIAL, TCP, Judge, Judgement, RefereeMode, Side, other
from dxserial.bridge.records import Item, Records, direction
from dxserial.bridge.serialcheck import SerialCheck
from dxserial.drive.actions import Action, News, Observed, WriteRecord
from dxserial.errors import FramingError, MessageError
from dxserial.protocol.dialects import BRIDGE_GAMEEND_TIMEOUT, GAMEEND_NOT_AWAITED, NAME_FIELD
from dxserial.protocol.messages import (
    Chat,
    GameEnd,
    GameRequest,
    Message,
    Move,
    escape,
    parse,
)
from dxserial.protocol.session import Phase, Role

#: How long after a CHAT from a NULMODEM engine an identical one, with no other message from
#: that engine in between, is still taken for its retransmission.
REPEAT_WINDOW = 300.0


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class RelaySettings:
    on_invalid: Literal["drop", "forward"] = "drop"
    referee: RefereeMode = "warn"
    record: bool = False
    block_console: bool = False
    #: NULMODEM on the serial line: an identical CHAT right after one is a retransmission.
    serial_repeats: bool = True
    #: Seconds an engine that left mid-game has before the bridge closes its game.
    grace: dict[Side, float] = field(default_factory=lambda: {SERIAL: 0.0, TCP: 3.0})
    #: Seconds the engine that stayed has to answer the bridge while it closes a game.
    closeout_timeout: float = 30.0
    #: Build trace records (counts are kept either way).
    trace: bool = True
    #: Emit :class:`Observed` for each message queued (someone displays them).
    observe: bool = True
    #: Tell each game's story as :class:`News` actions (a live view is watching); this
    #: keeps a referee even with ``referee="off"``.
    news: bool = False
    #: Seconds a GAMEEND waits for its answer before the bridge answers it on the silent
    #: engine's behalf (0: never); an initiator's next GAMEREQ is an answer too.
    gameend_timeout: float = BRIDGE_GAMEEND_TIMEOUT
    #: Forward a TCP engine's stop code 1 as it is (else: towards the serial engine it is 0).
    pass_stop: bool = False
    #: End a game the serial engine may have open, on evidence only (serialcheck.py).
    check_serial_state: bool = False
    #: Seconds a GAMEREQ delivered to the serial engine waits for its GAMEACC before the
    #: silence counts as evidence of an old game (then ended, and the GAMEREQ sent again).
    accept_timeout: float = 5.0


def _is_console(text: str) -> bool:
    return text.lstrip().lower().startswith("console ")


class Relay:
    """Sessions, judging and message fate for one bridge (see the module docstring).

    Its helpers, each with a job and the state of its own: :class:`Records` (counts, trace
    records, log lines), :class:`MessageFate` (what is held, in flight, delivered),
    :class:`Closeouts` (a game closed for a departed engine), :class:`SerialCheck` (the
    serial engine's state before a GAMEREQ) and :class:`GameEnds` (an unanswered GAMEEND,
    stop code 1).  What stays here: a message's way from arrival to its route.
    """

    def __init__(
        self,
        settings: RelaySettings | None = None,
        *,
        check: Callable[[Side, bytes], None] | None = None,
        left_open: str | None = None,
    ) -> None:
        """``left_open``: the evidence (a state file) that the serial engine's game was
        open when the bridge's previous run ended."""
        self.settings = settings = settings or RelaySettings()
        self._check = check  # raises FramingError if that side's line cannot carry it
        self.judge = Judge(
            settings.referee,
            record=settings.record,
            news=settings.news,
            repeats=frozenset({SERIAL}) if settings.serial_repeats else frozenset(),
        )
        self.present: dict[Side, bool] = {SERIAL: True, TCP: False}
        self.session: dict[Side, int] = {SERIAL: 1, TCP: 0}
        self._records = records = Records(trace=settings.trace)
        self.counts = records.counts
        self._fate = MessageFate(records, self.present, checked=check is not None)
        self._closeouts = Closeouts(
            records, self.judge, self.present, timeout=settings.closeout_timeout,
            say=self._bridge_sends, resume=self._judge_and_route,
            accept_timeout=settings.accept_timeout,
        )
        self._serial = SerialCheck(
            records, self.judge, self.present, self._closeouts,
            enabled=settings.check_serial_state,
            timeout=settings.gameend_timeout or BRIDGE_GAMEEND_TIMEOUT,
            accept_timeout=settings.accept_timeout,
            say=self._bridge_sends, resume=self._after_check, left_open=left_open,
        )
        self._gameend = GameEnds(
            records, self.judge, self.present, self.session, self._closeouts, self._fate,
            timeout=settings.gameend_timeout, pass_stop=settings.pass_stop,
            say=self._bridge_sends,
        )
        self._ids = itertools.count(1)
        self._last_from_serial: tuple[bytes, float] | None = None
        self._previous: dict[Side, bytes] = {SERIAL: b"", TCP: b""}  # last message per side
        # Forwarded before being judged (see settle()); judged in order, before anything else.
        self._unjudged: deque[tuple[Item, Message, float]] = deque()

    # ------------------------------------------------------------------ inputs

    def receive(self, sender: Side, raw: bytes, now: float) -> list[Action]:
        """A complete message arrived from ``sender``'s engine.

        When judging cannot stop it (``warn``/``off``, not a possible repeat, no game being
        closed), only its :class:`Send` comes out here: apply that, then call
        :meth:`settle` for the judgement, so the referee's work is done after the write
        instead of on the message's way.  Any other call settles first as well.
        """
        if self._unjudged:
            self._settle()
        self._arrive(Item(next(self._ids), sender, bytes(raw), None), now)
        return self._take()

    def settle(self) -> list[Action]:
        """Judge the messages forwarded ahead of their judgement (records, logs, counts)."""
        self._settle()
        return self._take()

    def _settle(self) -> None:
        while self._unjudged:
            item, msg, now = self._unjudged.popleft()
            self._judge_and_route(item, msg, now, forwarded=True)

    def delivered(self, side: Side, raw: bytes, now: float) -> list[Action]:
        """``side``'s link confirmed that its engine got ``raw``."""
        if self._unjudged:
            self._settle()
        self._fate.delivered(side, raw)
        self._serial.delivered(side, raw, now)
        return self._take()

    def undelivered(self, side: Side, raws: list[bytes], why: str, now: float) -> list[Action]:
        """``side``'s link gave up on these messages (the line is down, the queue full)."""
        self._settle()
        self._fate.undelivered(side, raws, why)
        return self._take()

    def dropped_by_line(self, sender: Side, raw: bytes, why: str, now: float) -> list[Action]:
        """``sender``'s line dropped ``raw``, which that engine may count as delivered (a
        NULMODEM message cut off and not sent again): lost, and said so with its bytes."""
        self._settle()
        item = Item(next(self._ids), sender, bytes(raw), None)
        # Never judged: the bridge never had it (a replay of the trace must not judge it).
        self._records.arrival(item, "lost", error=f"possibly: {why}", judged=False)
        self._records.say_lost(direction(sender), item.raw, f"possibly: {why}")
        return self._take()

    def unacknowledged(self, side: Side, nbytes: int, why: str, now: float) -> list[Action]:
        """``side``'s link ended with ``nbytes`` written but never taken by the other end:
        the last messages delivered there (as far as the bytes go) are possibly lost."""
        self._settle()
        self._fate.unacknowledged(side, nbytes, why)
        return self._take()

    def joined(self, side: Side, now: float, who: str = "") -> list[Action]:
        """A new engine session starts on ``side`` (a TCP peer connected, a port reopened)."""
        self._settle()
        self.session[side] += 1
        self.present[side] = True
        if self._gameend.answered_for == side:  # a new engine owes no late answer
            self._gameend.answered_for = None
        if side == TCP:
            self._fate.tcp_stopped = False
        else:
            self._serial.rejoined()
        held = len(self._fate.held[side])
        self._records.session(side, self.session[side], "joined", who)
        self._records.log(
            logging.INFO,
            f"{side} engine {who + ' ' if who else ''}connected (session {self.session[side]}); "
            f"{held} message(s) held for it",
            kind=f"{side} sessions",  # a client reconnecting in a loop must not flood the log
        )
        if side == SERIAL and self._serial.returned(
            now, held, lambda: self._fate.release(SERIAL)
        ):
            return self._take()
        self._fate.release(side)
        return self._take()

    def left(self, side: Side, now: float, why: str = "") -> list[Action]:
        """The engine on ``side`` is gone (peer closed, port given up)."""
        self._settle()
        if not self.present[side]:
            return []
        self.present[side] = False
        self._records.session(side, self.session[side], "left", why)
        gone = f"the {side} engine went away"
        if side == TCP and self._withdraw_offer(gone):
            return self._take()
        undelivered = self._fate.pending(side)
        # A game only offered to it, its GAMEREQ never delivered: none open on the engine.
        unheard = (side == SERIAL and self.judge.phase is Phase.REQUESTED
                   and self._fate.unheard_offer(SERIAL, TCP))
        self._fate.left(side, gone)
        # Held behind the bridge's check of the serial engine; its game, if it had one.
        self._serial.left(side, gone, undelivered=undelivered, unheard_offer=unheard)
        if self._closeouts.left(side, gone, self.settings.grace[side], now):
            self._poll(now)
        return self._take()

    def _after_check(
        self, item: Item, msg: Message, now: float, *, forwarded: bool = False
    ) -> None:
        """A message held behind the serial check goes on: behind a close-out for its side's
        departed engine too (a newcomer's GAMEREQ is never judged as its predecessor's
        repeat)."""
        co = self._closeouts.current
        if co is not None and item.sender == co.departed:
            self._closeouts.hold(item, now)
            return
        self._judge_and_route(item, msg, now, forwarded=forwarded)

    def _withdraw_offer(self, gone: str) -> bool:
        """The TCP engine that offered a game left before the serial engine had its GAMEREQ:
        the offer is withdrawn (never delivered, so nothing to close) and the line is free
        at once for the next engine's GAMEREQ (docs/bridge.md, "An unanswered GAMEREQ")."""
        judge = self.judge
        if judge.phase is not Phase.REQUESTED or judge.side_of(Role.INITIATOR) != TCP:
            return False
        if not self._fate.unheard_offer(SERIAL, TCP) or self._closeouts.current is not None:
            return False
        why = f"withdrawn: {gone} before the serial engine had its GAMEREQ"
        self._fate.left(TCP, gone)
        self._fate.withdraw(SERIAL, TCP, why)
        self._serial.left(TCP, gone)
        record = judge.restart(why)
        if record is not None:
            self._records.out.append(WriteRecord(record))
        self._records.log(logging.WARNING, f"{gone} before its GAMEREQ reached the serial "
                          "engine: the offer is withdrawn; the line is free for the next one")
        return True

    def poll(self, now: float) -> list[Action]:
        """Fire the timers that are due (the grace period, the close-out's patience)."""
        self._settle()
        self._poll(now)
        return self._take()

    def _poll(self, now: float) -> None:
        self._serial.poll(now)
        self._gameend.poll(now)
        self._closeouts.poll(now)

    def next_deadline(self) -> float | None:
        # Asked after every message: nothing waiting (the usual case) costs three tests.
        co, check, ending = self._closeouts.current, self._serial.deadline(), self._gameend.ending
        if co is None and check is None and ending is None:
            return None
        return min(
            t for t in (
                co.deadline if co is not None else None,
                check,
                ending[1] if ending is not None else None,
            ) if t is not None
        )

    def shutdown(self, now: float) -> list[Action]:
        """The bridge stops: whatever was not delivered is lost, each one named."""
        self._settle()
        why = "the bridge stopped"
        self._serial.freeze()  # its record stays: a game open, or its last GAMEEND undelivered
        self._fate.shutdown(why)
        self._closeouts.shutdown(why)
        record = self.judge.abort(why)
        if record is not None:
            self._records.out.append(WriteRecord(record))
        return self._take()

    @property
    def tcp_stopped(self) -> bool:
        """The TCP engine ended its session with stop code 1 (the serial engine goes on)."""
        return self._fate.tcp_stopped

    @property
    def tcp_ended(self) -> bool:
        """The TCP engine ended the session (stop code 1): a gone TCP engine is no surprise."""
        return self.judge.phase is Phase.STOPPED or self._fate.tcp_stopped

    @property
    def closing(self) -> Side | None:
        """The departed side the bridge is speaking for, if it is closing a game."""
        co = self._closeouts.current
        return co.departed if co is not None else None

    # ------------------------------------------------------------------ arrival

    def _arrive(self, item: Item, now: float) -> None:
        assert item.sender is not None
        sender = item.sender
        try:
            msg = parse(item.raw, strict=False)
        except MessageError as exc:
            self._invalid(item, exc)
            return
        item.msg = msg
        if (sender == SERIAL and isinstance(msg, Move) and self._fate.move_in_flight(SERIAL)
                and self.judge.phase is Phase.PLAYING and self.judge.would_accept(SERIAL, msg)):
            self._fate.answered(SERIAL)  # its answer proves it has the MOVE in flight
        for warning in msg.warnings:
            self._habit(sender, NAME_FIELD, f"{warning} (read leniently, forwarded)")
        if self._gameend.answered_for == sender and self._gameend.late(item, msg):
            return
        if self._dropped(item, msg, now):
            return
        if not self._carried(item):
            return
        if self._serial.intercepts(item, msg, now):
            return
        co = self._closeouts.current
        if co is not None and sender == co.departed:
            self._closeouts.hold(item, now)
            return
        previous, self._previous[sender] = self._previous[sender], item.raw
        if (
            co is None
            and sender == SERIAL
            and isinstance(msg, GameRequest)
            and item.raw != previous  # else a NULMODEM retransmission: the judge drops it
            and self.judge.phase in (Phase.PLAYING, Phase.BACK_REQUESTED, Phase.ENDING)
            and not self.judge.would_accept(SERIAL, msg)  # an unanswered GAMEEND's answer
        ):
            self._records.log(
                logging.WARNING,
                "the serial engine sent a GAMEREQ in the middle of a game: it restarted; the "
                "bridge closes the old game towards the tcp engine first",
            )
            self._fate.forget(SERIAL, "the serial engine restarted before it was delivered")
            self._closeouts.restart(item, now)
            return
        if (
            co is None and isinstance(msg, GameEnd)
            and self._gameend.stop_for_tcp_only(item, msg, now)
        ):
            return
        if co is None and not self.judge.may_keep_back(sender, msg):
            self._fate.route(other(sender), item)  # judged by settle(), after the write
            self._unjudged.append((item, msg, now))
            return
        self._judge_and_route(item, msg, now)

    def _dropped(self, item: Item, msg: Message, now: float) -> bool:
        """A message not passed on: a TCP GAMEREQ repeated while the first is still on its
        way, a CHAT's NULMODEM retransmission, or a console command blocked."""
        assert item.sender is not None
        if item.sender == TCP and isinstance(msg, GameRequest) and self._fate.on_its_way(
            SERIAL, item.raw
        ):
            self._records.drop(
                item, "duplicate",
                "the same GAMEREQ is still on its way to the serial engine (not delivered yet): "
                "it gets one",
            )
            return True
        if self._repeated_chat(item.sender, msg, now):
            self._records.drop(
                item, "duplicate",
                "the same CHAT again right after it was received (NULMODEM retransmission "
                "after a garbled echo)",
            )
            return True
        if self.settings.block_console and isinstance(msg, Chat) and _is_console(msg.text):
            dir_ = direction(item.sender)
            self.counts["blocked"] += 1
            self._records.drop(
                item, "blocked",
                "it would make some engines run a command (--allow-console lets it through)",
                text=f"{dir_}: CHAT '{escape(item.raw)}' blocked: it would make some engines "
                "run a command (--allow-console lets it through)",
                kind=f"console {dir_}",
            )
            return True
        return False

    def _judge_and_route(
        self, item: Item, msg: Message, now: float, *, forwarded: bool = False
    ) -> None:
        assert item.sender is not None
        sender = item.sender
        verdict = self.judge.judge(sender, msg, now)
        if verdict.initiator is not None:
            self._records.log(logging.INFO, f"the {verdict.initiator} engine is the initiator")
        if verdict.record is not None:
            self._records.out.append(WriteRecord(verdict.record))
        for side, habit in verdict.habits:
            self._habit(side, habit)
            if habit == GAMEEND_NOT_AWAITED:  # the answer may be on its way: not for it
                self._gameend.answered_for = other(side)
        try:
            self._route_judged(item, msg, verdict, now, forwarded)
        finally:
            for note in verdict.notes:
                self._records.log(logging.INFO, f"referee: {note}")
            self._gameend.watch(now)

    def _habit(self, side: Side, habit: str, detail: str | None = None) -> None:
        """Name an engine's dialect once per session: a note, never a violation."""
        self._records.habit(side, self.session[side], habit, detail)

    def _route_judged(
        self, item: Item, msg: Message, verdict: Judgement, now: float, forwarded: bool
    ) -> None:
        assert item.sender is not None
        sender = item.sender
        dir_ = direction(sender)
        if forwarded:
            # On its way already: judge.may_keep_back() said no verdict could stop it.
            assert verdict.forward, verdict
            self._judged_on_its_way(item, msg, verdict)
            return
        if verdict.duplicate is not None:
            self._records.drop(
                item, "duplicate", verdict.duplicate,
                text=f"{dir_}: duplicate '{escape(item.raw)}' dropped: {verdict.duplicate}",
                kind=f"duplicate {dir_}",
            )
            return
        if verdict.refused is not None:
            self.counts["violations"] += 1
            self._records.drop(
                item, "refused", verdict.refused,
                text=f"{dir_}: referee: {verdict.refused} (not forwarded; told the sender)",
                kind=f"referee {dir_}",
            )
            if verdict.chat is not None:
                self._bridge_sends(sender, verdict.chat, "tells the sender why", judged=False)
            return
        error = self._violation(dir_, verdict)
        co = self._closeouts.current
        if co is not None and sender != co.departed:
            self._closeouts.stayer_spoke(item, now)
            return
        self._records.arrival(item, "queued", error=error)
        if self.settings.observe:
            self._records.out.append(Observed(dir_, msg))
        self._fate.route(other(sender), item)

    def _judged_on_its_way(self, item: Item, msg: Message, verdict: Judgement) -> None:
        """The records of a message that was forwarded before it was judged."""
        assert item.sender is not None
        dir_ = direction(item.sender)
        error = self._violation(dir_, verdict)
        self._records.arrival(item, "queued", error=error)
        if self.settings.observe:
            self._records.out.append(Observed(dir_, msg))
    def _violation(self, dir_: str, verdict: Judgement) -> str | None:
        """Count and log a violation the message is forwarded with; its text for the trace."""
        if verdict.violation is None:
            return None
        self.counts["violations"] += 1
        prefix = "referee: " if self.judge.mode != "off" else ""
        self._records.log(
            logging.WARNING,
            f"{dir_}: {prefix}{verdict.violation} (forwarded)",
            kind=f"referee {dir_}",
        )
        return verdict.violation

    def _invalid(self, item: Item, exc: MessageError) -> None:
        assert item.sender is not None
        dir_ = direction(item.sender)
        self.counts["invalid"] += 1
        if self.settings.on_invalid == "drop":
            self._records.drop(
                item, "invalid", str(exc),
                text=f"{dir_}: invalid message '{escape(item.raw)}' dropped: {exc}",
                kind=f"invalid {dir_}",
            )
            return
        if not self._carried(item):
            return
        self._records.log(
            logging.WARNING,
            f"{dir_}: invalid message '{escape(item.raw)}' forwarded: {exc}",
            kind=f"invalid {dir_}",
        )
        self._records.arrival(item, "queued", error=str(exc))
        self._fate.route(other(item.sender), item)

    def _carried(self, item: Item) -> bool:
        """Refuse, before anything counts it, a message the receiving line cannot carry."""
        assert item.sender is not None
        if self._check is None:
            return True
        try:
            self._check(other(item.sender), item.raw)
        except FramingError as exc:
            dir_ = direction(item.sender)
            self._records.drop(
                item, "cannot-cross", str(exc),
                text=f"{dir_}: '{escape(item.raw)}' cannot cross to the {other(item.sender)} "
                f"engine, not forwarded, sender told: {exc}",
                level=logging.ERROR,
                kind=f"cannot cross {dir_}",
            )
            if item.sender is not None:
                note = Chat.carrying(f"dxserial: your last message cannot cross: {exc}")
                self._bridge_sends(item.sender, note, "tells the sender why", judged=False)
            return False
        return True

    def _repeated_chat(self, sender: Side, msg: Message, now: float) -> bool:
        """A NULMODEM repeat of a CHAT, which the dialogue cannot tell from a new one.

        When the echo of E is garbled the receiver has delivered the message but the
        sender starts it over, so it arrives twice, back to back.  For every other message
        the dialogue tells (it would be out of turn); a CHAT is allowed at any time, so an
        identical CHAT with no other message from the serial engine in between, within
        ``REPEAT_WINDOW`` seconds, is taken for one.
        """
        if sender != SERIAL or not self.settings.serial_repeats:
            return False
        last, self._last_from_serial = self._last_from_serial, (msg.wire, now)
        if not isinstance(msg, Chat) or last is None or last[0] != msg.wire:
            return False
        return now - last[1] <= REPEAT_WINDOW

    # ------------------------------------------------------------------ routing

    def _bridge_sends(
        self, to: Side, msg: Message, why: str, *, judged: bool, on_behalf_of: Side | None = None
    ) -> None:
        """A message of the bridge's own: traced as such, never as the engine's."""
        item = Item(next(self._ids), None, msg.wire, msg)
        speaks_for = on_behalf_of
        if judged:
            speaks_for = other(to)
            verdict = self.judge.judge(speaks_for, msg)
            if verdict.record is not None:
                self._records.out.append(WriteRecord(verdict.record))
        # judged: false marks a change the bridge made to a message that was judged as sent.
        unjudged = False if speaks_for is not None and not judged else None
        self._records.arrival(
            item, "sent-by-bridge", to=to, why=why, on_behalf_of=speaks_for, judged=unjudged
        )
        self._records.log(
            logging.INFO, f"bridge -> {to}: '{escape(msg.wire)}' ({why})", kind=f"bridge -> {to}"
        )
        if self.settings.observe and speaks_for is not None:
            # Said for an engine (a GAMEEND replaced or answered for it): what the other
            # engine receives from it, so an observer counting games sees the game end.
            self._records.out.append(Observed(f"{direction(speaks_for)} (by the bridge)", msg))
        self._fate.route(to, item)

    def _take(self) -> list[Action]:
        """The actions so far; the judge's news go last (no rule depends on them)."""
        records = self._records
        remember = self._serial.remember(self._fate.pending(SERIAL))
        if remember is not None:  # before the message that starts the game goes out
            records.out.insert(0, remember)
        if self.judge.has_news:
            records.out.extend(News(item) for item in self.judge.take_news())
        out, records.out = records.out, []
        return out


__all__ = ["REPEAT_WINDOW", "Relay", "RelaySettings"]
