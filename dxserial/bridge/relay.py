"""The bridge's rules as a sans-I/O object: messages and engine comings and goings in,
actions out (like h11's connection).  No asyncio, no sockets, no files, no clock of its
own: the asyncio driver (:mod:`dxserial.bridge.core`) applies the actions.

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
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from dxserial.bridge.closeout import DONE, WAIT, next_step
from dxserial.bridge.judge import (
    SERIAL,
    TCP,
    Judge,
    Judgement,
    RefereeMode,
    Side,
    other,
)
from dxserial.drive.actions import (
    Action,
    Forget,
    Log,
    News,
    Observed,
    Send,
    Trace,
    WriteRecord,
)
from dxserial.errors import FramingError, MessageError
from dxserial.protocol.dialects import (
    BRIDGE_GAMEEND_TIMEOUT,
    GAMEEND_NOT_AWAITED,
    GAMEEND_UNANSWERED,
    NAME_FIELD,
    habit_text,
)
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
    parse,
)
from dxserial.protocol.session import Phase

#: How much of what was delivered to a side is remembered, to name the messages a peer that
#: reset its connection never took (a full socket send buffer is about this much), and at
#: most how many messages (each costs some 150 bytes of memory besides its own).
RECENT_BYTES = 256 * 1024
RECENT_MESSAGES = 2048

#: How long after a CHAT from a NULMODEM engine an identical one, with no other message from
#: that engine in between, is still taken for its retransmission.
REPEAT_WINDOW = 300.0


_DIRECTIONS: dict[Side, str] = {SERIAL: "serial->tcp", TCP: "tcp->serial"}


def direction(sender: Side) -> str:
    return _DIRECTIONS[sender]




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
    #: The serial engine's state is not known until it speaks (a bridge that starts, a
    #: serial engine that comes back): end any game it may have before a GAMEREQ for it.
    check_serial_state: bool = False


@dataclass
class _Msg:
    id: int
    sender: Side | None  # None: the bridge's own
    raw: bytes
    msg: Message | None


@dataclass
class _Closeout:
    """The bridge speaking for ``departed`` towards the other side, until the game is closed."""

    departed: Side
    why: str
    deadline: float
    started: bool = False
    spoke: bool = False  # the bridge has sent something: what follows answers it
    held: deque[tuple[_Msg, float]] = field(default_factory=deque)


#: What only a running game explains (from a serial engine still in an old one).
_GAME_MESSAGES = (Move, GameEnd, BackRequest, BackAccept)


def _is_console(text: str) -> bool:
    return text.lstrip().lower().startswith("console ")


class Relay:
    """Sessions, judging and message fate for one bridge (see the module docstring)."""

    def __init__(
        self,
        settings: RelaySettings | None = None,
        *,
        check: Callable[[Side, bytes], None] | None = None,
    ) -> None:
        self.settings = settings or RelaySettings()
        self._check = check  # raises FramingError if that side's line cannot carry it
        self.judge = Judge(
            self.settings.referee,
            record=self.settings.record,
            news=self.settings.news,
            repeats=frozenset({SERIAL}) if self.settings.serial_repeats else frozenset(),
        )
        self.present: dict[Side, bool] = {SERIAL: True, TCP: False}
        self.session: dict[Side, int] = {SERIAL: 1, TCP: 0}
        self._held: dict[Side, deque[_Msg]] = {SERIAL: deque(), TCP: deque()}
        self._flight: dict[Side, deque[_Msg]] = {SERIAL: deque(), TCP: deque()}
        # The last messages delivered to each side, in case the other end's machine turns
        # out not to have taken them (see :meth:`unacknowledged`).
        # Bounded (RECENT_BYTES, RECENT_MESSAGES), holding no parsed message: kept all along.
        self._recent: dict[Side, deque[_Msg]] = {SERIAL: deque(), TCP: deque()}
        self._recent_bytes: dict[Side, int] = {SERIAL: 0, TCP: 0}
        self._closeout: _Closeout | None = None
        self._ids = itertools.count(1)
        self._last_from_serial: tuple[bytes, float] | None = None
        self._previous: dict[Side, bytes] = {SERIAL: b"", TCP: b""}  # last message per side
        self.counts: Counter[str] = Counter()
        self._out: list[Action] = []
        # Forwarded before being judged (see settle()); judged in order, before anything else.
        self._unjudged: deque[tuple[_Msg, Message, float]] = deque()
        self._habits: set[tuple[Side, int, str]] = set()  # (side, session, habit) named
        # A GAMEEND waiting for its answer: (the side that owes it, when the bridge answers).
        self._ending: tuple[Side, float] | None = None
        self._answered_for: Side | None = None  # the bridge answered its GAMEEND for it
        # The serial engine may still be inside a game of the bridge's previous run (or of
        # before its line went quiet): the first GAMEREQ for it waits until any such game is
        # ended (see _probing).  Known once it sends a GAMEREQ or a GAMEACC, or answers.
        self._serial_known = not self.settings.check_serial_state
        self._probe: tuple[float, deque[tuple[_Msg, Message]]] | None = None  # deadline, held
        self._tcp_stopped = False  # its stop code 1 ended its session: serial's news wait
        self._stop_back = False  # the serial engine's answer goes back with stop code 1

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
        self._arrive(_Msg(next(self._ids), sender, bytes(raw), None), now)
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
        self._settle()
        flight = self._flight[side]
        for i, item in enumerate(flight):
            if item.raw == raw:
                del flight[i]
                self._fate(item, side, "delivered")
                self._remember(side, item)
                break
        else:
            self._log(logging.DEBUG, f"{side}: delivery of '{escape(raw)}' not expected")
        return self._take()

    def undelivered(self, side: Side, raws: list[bytes], why: str, now: float) -> list[Action]:
        """``side``'s link gave up on these messages (the line is down, the queue full)."""
        self._settle()
        for raw in raws:
            flight = self._flight[side]
            item = next((m for m in flight if m.raw == raw), None)
            if item is None:
                continue
            flight.remove(item)
            self._fate(item, side, "lost", why)
        return self._take()

    def dropped_by_line(self, sender: Side, raw: bytes, why: str, now: float) -> list[Action]:
        """``sender``'s line dropped ``raw``, which that engine may count as delivered (a
        NULMODEM message cut off and not sent again): lost, and said so with its bytes."""
        self._settle()
        item = _Msg(next(self._ids), sender, bytes(raw), None)
        dir_ = direction(sender)
        # Never judged: the bridge never had it (a replay of the trace must not judge it).
        self._arrival_record(item, "lost", error=f"possibly: {why}", judged=False)
        self._say_lost(dir_, item.raw, f"possibly: {why}")
        return self._take()

    def unacknowledged(self, side: Side, nbytes: int, why: str, now: float) -> list[Action]:
        """``side``'s link ended with ``nbytes`` written but never taken by the other end:
        the last messages delivered there (as far as the bytes go) are possibly lost."""
        self._settle()
        recent = self._recent[side]
        covered = 0
        gone: list[_Msg] = []
        while recent and covered < nbytes:
            item = recent.pop()
            covered += len(item.raw) + 1
            gone.append(item)
        self._recent_bytes[side] -= covered
        if covered < nbytes:
            self._log(
                logging.ERROR,
                f"{direction(other(side))}: {nbytes - covered} more byte(s) of older messages "
                f"possibly lost too (not named: more than {RECENT_BYTES} bytes or "
                f"{RECENT_MESSAGES} messages back)",
            )
        for item in reversed(gone):
            self._fate(item, side, "lost", f"possibly: {why}")
        return self._take()

    def _remember(self, side: Side, item: _Msg) -> None:
        """Keep the last RECENT_BYTES / RECENT_MESSAGES of what was delivered to ``side``
        (see :meth:`unacknowledged`)."""
        recent = self._recent[side]
        item.msg = None  # delivered: only its bytes are kept
        recent.append(item)
        total = self._recent_bytes[side] + len(item.raw) + 1
        while total > RECENT_BYTES or len(recent) > RECENT_MESSAGES:
            total -= len(recent.popleft().raw) + 1
        self._recent_bytes[side] = total

    def joined(self, side: Side, now: float, who: str = "") -> list[Action]:
        """A new engine session starts on ``side`` (a TCP peer connected, a port reopened)."""
        self._settle()
        self.session[side] += 1
        self.present[side] = True
        if side == TCP:
            self._tcp_stopped = False
        else:
            # Back after it was given up: it may be anywhere.
            self._serial_known = not self.settings.check_serial_state
        held = self._held[side]
        self._trace_session(side, "joined", who)
        self._log(
            logging.INFO,
            f"{side} engine {who + ' ' if who else ''}connected (session {self.session[side]}); "
            f"{len(held)} message(s) held for it",
            kind=f"{side} sessions",  # a client reconnecting in a loop must not flood the log
        )
        while held:
            self._dispatch(side, held.popleft())
        return self._take()

    def left(self, side: Side, now: float, why: str = "") -> list[Action]:
        """The engine on ``side`` is gone (peer closed, port given up)."""
        self._settle()
        if not self.present[side]:
            return []
        self.present[side] = False
        self._trace_session(side, "left", why)
        gone = f"the {side} engine went away"
        self._forget(side, f"{gone} before it was delivered")
        self._recent[side].clear()
        self._recent_bytes[side] = 0
        waiting = self._held[other(side)]
        for item in [m for m in waiting if m.sender == side]:
            # Its sender's session is over: it must not start anything with the next engine.
            waiting.remove(item)
            self._fate(item, other(side), "lost", f"{gone} before anyone received it")
        if self._probe is not None:  # held behind the bridge's check of the serial engine
            probe_held = self._probe[1]
            for held_item, held_msg in [p for p in probe_held if p[0].sender == side]:
                probe_held.remove((held_item, held_msg))
                self._arrival_record(
                    held_item, "lost", reason=f"{gone} (its message was held)", judged=False
                )
        co = self._closeout
        if co is not None and co.departed == side:
            while co.held:  # the newcomer left before the old game was closed
                item, _ = co.held.popleft()
                self._arrival_record(
                    item, "lost", reason=f"{gone} (its message was held)", judged=False
                )
        if co is not None and co.departed != side:
            self._finish_closeout(f"{gone} too", now, abort=True)
        elif co is None and self.judge.game_open:
            grace = self.settings.grace[side]
            d = self.judge.dialogue
            if d.phase is Phase.ENDING and d.awaiting is self.judge.roles[side]:
                # It left instead of answering the GAMEEND (engines that never answer one do
                # when their games are over): the game is over; answer for it at once.
                grace = 0.0
                self._log(logging.INFO, f"{gone} without answering the GAMEEND; the bridge "
                          f"answers it on its behalf")
            self._closeout = _Closeout(side, gone, now + grace)
            if grace > 0:
                self._log(
                    logging.WARNING,
                    f"{gone} during a game ({self.judge.phase}); the bridge closes the game "
                    f"towards the {other(side)} engine in {grace:g} s unless it is closed before",
                )
            self._poll(now)
        return self._take()

    def poll(self, now: float) -> list[Action]:
        """Fire the timers that are due (the grace period, the close-out's patience)."""
        self._settle()
        self._poll(now)
        return self._take()

    def _poll(self, now: float) -> None:
        if self._probe is not None and now >= self._probe[0]:
            self._log(logging.INFO, "the serial engine did not answer the bridge's GAMEEND; "
                      "taken to be idle")
            self._end_probe(now)
        if self._ending is not None and now >= self._ending[1]:
            self._answer_for_silent(now)
        co = self._closeout
        if co is not None and now >= co.deadline:
            if not co.started:
                self._start_closeout(now)
            else:
                self._log(
                    logging.WARNING,
                    f"the {other(co.departed)} engine did not answer the bridge within "
                    f"{self.settings.closeout_timeout:g} s; both engines are taken to start "
                    "afresh",
                )
                self._finish_closeout("no answer to the bridge", now, abort=True)

    def next_deadline(self) -> float | None:
        # Asked after every message: nothing waiting (the usual case) costs three tests.
        co, probe, ending = self._closeout, self._probe, self._ending
        if co is None and probe is None and ending is None:
            return None
        return min(
            t for t in (
                co.deadline if co is not None else None,
                probe[0] if probe is not None else None,
                ending[1] if ending is not None else None,
            ) if t is not None
        )

    def shutdown(self, now: float) -> list[Action]:
        """The bridge stops: whatever was not delivered is lost, each one named."""
        self._settle()
        why = "the bridge stopped"
        for side in (SERIAL, TCP):
            while self._flight[side]:
                self._fate(self._flight[side].popleft(), side, "lost", why)
            while self._held[side]:
                self._fate(self._held[side].popleft(), side, "lost", why)
        if self._closeout is not None:
            while self._closeout.held:
                item, _ = self._closeout.held.popleft()
                self._arrival_record(item, "lost", reason=why, judged=False)
            self._closeout = None
        record = self.judge.abort(why)
        if record is not None:
            self._out.append(WriteRecord(record))
        return self._take()

    @property
    def tcp_stopped(self) -> bool:
        """The TCP engine ended its session with stop code 1 (the serial engine goes on)."""
        return self._tcp_stopped

    @property
    def closing(self) -> Side | None:
        """The departed side the bridge is speaking for, if it is closing a game."""
        return self._closeout.departed if self._closeout is not None else None

    # ------------------------------------------------------------------ arrival

    def _arrive(self, item: _Msg, now: float) -> None:
        assert item.sender is not None
        sender = item.sender
        dir_ = _DIRECTIONS[sender]
        try:
            msg = parse(item.raw, strict=False)
        except MessageError as exc:
            self._invalid(item, exc)
            return
        item.msg = msg
        for warning in msg.warnings:
            self._habit(sender, NAME_FIELD, f"{warning} (read leniently, forwarded)")
        if self._answered_for == sender and not isinstance(msg, Chat):
            self._answered_for = None
            if isinstance(msg, GameEnd):  # late: the bridge answered for it already
                self._arrival_record(
                    item, "dropped", reason="consumed",
                    error="a late answer to a GAMEEND whose game is over already",
                )
                self._log(logging.INFO, f"{dir_}: late GAMEEND answer '{escape(item.raw)}' "
                          "consumed: that game is over already")
                return
        if self._repeated_chat(sender, msg, now):
            self._drop(
                item, "duplicate",
                "the same CHAT again right after it was received (NULMODEM retransmission "
                "after a garbled echo)",
            )
            return
        if self.settings.block_console and isinstance(msg, Chat) and _is_console(msg.text):
            self.counts["blocked"] += 1
            self._drop(
                item, "blocked",
                "it would make some engines run a command (--allow-console lets it through)",
                text=f"{dir_}: CHAT '{escape(item.raw)}' blocked: it would make some engines "
                "run a command (--allow-console lets it through)",
                kind=f"console {dir_}",
            )
            return
        if not self._carried(item):
            return
        if self._probing(item, msg, now):
            return
        co = self._closeout
        if co is not None and sender == co.departed:
            if not co.held:
                self._log(
                    logging.INFO,
                    f"{dir_}: '{escape(item.raw)}' held until the {other(sender)} engine's "
                    "old game is closed",
                )
            co.held.append((item, now))
            if not co.started:
                self._start_closeout(now)
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
            self._log(
                logging.WARNING,
                "the serial engine sent a GAMEREQ in the middle of a game: it restarted; the "
                "bridge closes the old game towards the tcp engine first",
            )
            self._forget(SERIAL, "the serial engine restarted before it was delivered")
            self._closeout = _Closeout(SERIAL, "the serial engine restarted", now)
            self._closeout.held.append((item, now))
            self._start_closeout(now)
            return
        if co is None and isinstance(msg, GameEnd) and self._stop_for_tcp_only(item, msg, now):
            return
        if co is None and not self.judge.may_keep_back(sender, msg):
            self._route(other(sender), item)  # judged by settle(), after the write
            self._unjudged.append((item, msg, now))
            return
        self._judge_and_route(item, msg, now)

    def _judge_and_route(
        self, item: _Msg, msg: Message, now: float, *, forwarded: bool = False
    ) -> None:
        assert item.sender is not None
        sender = item.sender
        verdict = self.judge.judge(sender, msg, now)
        if verdict.initiator is not None:
            self._log(logging.INFO, f"the {verdict.initiator} engine is the initiator")
        if verdict.record is not None:
            self._out.append(WriteRecord(verdict.record))
        for side, habit in verdict.habits:
            self._habit(side, habit)
            if habit == GAMEEND_NOT_AWAITED:  # the answer may be on its way: not for it
                self._answered_for = other(side)
        try:
            self._route_judged(item, msg, verdict, now, forwarded)
        finally:
            for note in verdict.notes:
                self._log(logging.INFO, f"referee: {note}")
            self._watch_ending(now)

    def _habit(self, side: Side, habit: str, detail: str | None = None) -> None:
        """Name an engine's dialect once per session: a note, never a violation."""
        key = (side, self.session[side], detail or habit)
        if key in self._habits:
            return
        self._habits.add(key)
        text = detail or habit_text(habit)
        self._log(logging.INFO, f"note: the {side} engine {text}" if detail is None
                  else f"note: the {side} engine's habit: {text}")
        if self.settings.trace:
            self._out.append(Trace({
                "kind": "dialect", "side": side, "session": self.session[side],
                "habit": habit, "text": text,
            }))

    def _watch_ending(self, now: float) -> None:
        """Arm (or clear) the wait for a GAMEEND's answer (see ``gameend_timeout``)."""
        d = self.judge.dialogue
        if d.phase is not Phase.ENDING or d.awaiting is None or not self.settings.gameend_timeout:
            self._ending = None
            return
        silent = self.judge.side_of(d.awaiting)
        if self._ending is None or self._ending[0] != silent:
            self._ending = (silent, now + self.settings.gameend_timeout)

    def _answer_for_silent(self, now: float) -> None:
        """The GAMEEND waited ``gameend_timeout`` s: answer it for the silent engine."""
        assert self._ending is not None
        silent, _ = self._ending
        self._ending = None
        d = self.judge.dialogue
        if (
            self._closeout is not None or not self.present[other(silent)]
            or d.phase is not Phase.ENDING or d.awaiting is not self.judge.roles[silent]
        ):  # answered meanwhile another way (a close-out for a departed engine)
            return
        self._habit(silent, GAMEEND_UNANSWERED)
        self._answered_for = silent
        self._bridge_sends(
            other(silent), GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE),
            f"on behalf of the {silent} engine, which did not answer the GAMEEND within "
            f"{self.settings.gameend_timeout:g} s",
            judged=True,
        )
        self._watch_ending(now)

    def _route_judged(
        self, item: _Msg, msg: Message, verdict: Judgement, now: float, forwarded: bool
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
            self._drop(
                item, "duplicate", verdict.duplicate,
                text=f"{dir_}: duplicate '{escape(item.raw)}' dropped: {verdict.duplicate}",
                kind=f"duplicate {dir_}",
            )
            return
        if verdict.refused is not None:
            self.counts["violations"] += 1
            self._drop(
                item, "refused", verdict.refused,
                text=f"{dir_}: referee: {verdict.refused} (not forwarded; told the sender)",
                kind=f"referee {dir_}",
            )
            if verdict.chat is not None:
                self._bridge_sends(sender, verdict.chat, "tells the sender why", judged=False)
            return
        error = self._violation(dir_, verdict)
        co = self._closeout
        if co is not None and sender != co.departed:
            # The engine that stayed speaks to the one that left: nobody receives it.
            if co.spoke:
                self._arrival_record(
                    item, "dropped", reason="consumed",
                    error=f"the answer to the bridge, which speaks for the departed "
                    f"{co.departed} engine",
                )
                self._log(
                    logging.INFO,
                    f"{dir_}: '{escape(item.raw)}' answers the bridge (consumed)",
                )
            else:
                self._arrival_record(item, "lost", reason=co.why)
                self._log(
                    logging.WARNING,
                    f"{dir_}: message '{escape(item.raw)}' NOT delivered: {co.why}",
                )
            if co.started:
                self._step_closeout(now)
            return
        self._arrival_record(item, "queued", error=error)
        if self.settings.observe:
            self._out.append(Observed(dir_, msg))
        self._route(other(sender), item)

    def _judged_on_its_way(self, item: _Msg, msg: Message, verdict: Judgement) -> None:
        """The records of a message that was forwarded before it was judged."""
        assert item.sender is not None
        dir_ = direction(item.sender)
        error = self._violation(dir_, verdict)
        self._arrival_record(item, "queued", error=error)
        if self.settings.observe:
            self._out.append(Observed(dir_, msg))

    def _violation(self, dir_: str, verdict: Judgement) -> str | None:
        """Count and log a violation the message is forwarded with; its text for the trace."""
        if verdict.violation is None:
            return None
        self.counts["violations"] += 1
        prefix = "referee: " if self.judge.mode != "off" else ""
        self._log(
            logging.WARNING,
            f"{dir_}: {prefix}{verdict.violation} (forwarded)",
            kind=f"referee {dir_}",
        )
        return verdict.violation

    def _invalid(self, item: _Msg, exc: MessageError) -> None:
        assert item.sender is not None
        dir_ = direction(item.sender)
        self.counts["invalid"] += 1
        if self.settings.on_invalid == "drop":
            self._drop(
                item, "invalid", str(exc),
                text=f"{dir_}: invalid message '{escape(item.raw)}' dropped: {exc}",
                kind=f"invalid {dir_}",
            )
            return
        if not self._carried(item):
            return
        self._log(
            logging.WARNING,
            f"{dir_}: invalid message '{escape(item.raw)}' forwarded: {exc}",
            kind=f"invalid {dir_}",
        )
        self._arrival_record(item, "queued", error=str(exc))
        self._route(other(item.sender), item)

    def _carried(self, item: _Msg) -> bool:
        """Refuse, before anything counts it, a message the receiving line cannot carry."""
        assert item.sender is not None
        if self._check is None:
            return True
        try:
            self._check(other(item.sender), item.raw)
        except FramingError as exc:
            dir_ = direction(item.sender)
            self._drop(
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

    def _route(self, to: Side, item: _Msg) -> None:
        if to == TCP and self._tcp_stopped and item.sender == SERIAL:
            self._held[to].append(item)  # for the next TCP engine: this one has stopped
            return
        if self.present[to]:
            self._dispatch(to, item)
            return
        if not self._held[to]:
            self._log(logging.INFO, f"no {to} engine: keeping messages until one connects")
        self._held[to].append(item)

    def _forget(self, side: Side, why: str) -> None:
        """What is on its way to ``side``'s engine was for one that is gone: lost, each named."""
        flight = self._flight[side]
        if flight:
            self._out.append(Forget(side))
        while flight:
            self._fate(flight.popleft(), side, "lost", why)

    def _dispatch(self, to: Side, item: _Msg) -> None:
        self._flight[to].append(item)
        # A forwarded message was checked against the receiving line (see _carried).
        self._out.append(Send(to, item.raw, item.sender is not None and self._check is not None))

    def _bridge_sends(
        self, to: Side, msg: Message, why: str, *, judged: bool, on_behalf_of: Side | None = None
    ) -> None:
        """A message of the bridge's own: traced as such, never as the engine's."""
        item = _Msg(next(self._ids), None, msg.wire, msg)
        speaks_for = on_behalf_of
        if judged:
            speaks_for = other(to)
            verdict = self.judge.judge(speaks_for, msg)
            if verdict.record is not None:
                self._out.append(WriteRecord(verdict.record))
        # judged: false marks a change the bridge made to a message that was judged as sent.
        unjudged = False if speaks_for is not None and not judged else None
        self._arrival_record(
            item, "sent-by-bridge", to=to, why=why, on_behalf_of=speaks_for, judged=unjudged
        )
        self._log(
            logging.INFO, f"bridge -> {to}: '{escape(msg.wire)}' ({why})", kind=f"bridge -> {to}"
        )
        self._route(to, item)

    # ------------------------------------------------------------------ rig events

    def _probing(self, item: _Msg, msg: Message, now: float) -> bool:
        """The serial engine's state is unknown when a TCP engine's GAMEREQ is for it: end
        any game it may still have open (GAMEEND 0, stop 0, the bridge's own), consume its
        answer, then forward the GAMEREQ.  True if ``item`` was taken care of here."""
        sender = item.sender
        if sender == SERIAL and self._probe is None:
            if self._serial_known or isinstance(msg, Chat):
                return False
            if isinstance(msg, _GAME_MESSAGES) and self.judge.phase is Phase.IDLE:
                self._left_over(item, msg, now)
                return True
            self._serial_known = True  # it spoke: whatever it says is judged from here
            return False
        if sender == SERIAL:
            self._arrival_record(
                item, "dropped", reason="consumed",
                error="answers the bridge, which ended a game the serial engine may have had",
            )
            self._log(logging.INFO, f"serial->tcp: '{escape(item.raw)}' answers the bridge "
                      "(consumed)")
            if isinstance(msg, GameEnd):
                self._end_probe(now)
            return True
        if self._probe is not None:
            self._probe[1].append((item, msg))
            return True
        if (
            self._serial_known or not isinstance(msg, GameRequest) or not self.present[SERIAL]
            or self._closeout is not None or self.judge.game_open
        ):
            return False
        self._start_probe(now, deque([(item, msg)]), "any such game is ended before the tcp "
                          "engine's GAMEREQ")
        return True

    def _start_probe(self, now: float, held: deque[tuple[_Msg, Message]], what: str) -> None:
        self._probe = (now + (self.settings.gameend_timeout or BRIDGE_GAMEEND_TIMEOUT), held)
        self._bridge_sends(
            SERIAL, GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE),
            f"the bridge cannot know whether the serial engine is still in a game of an earlier "
            f"run: {what}",
            judged=False,
        )

    def _left_over(self, item: _Msg, msg: Message, now: float) -> None:
        """A game message from a serial engine of unknown state while no game runs here: it
        belongs to a game of the bridge's earlier run, which no TCP engine has.  Not given
        to anyone; that game is ended (the bridge answers its GAMEEND, or sends one)."""
        why = "from a game of the bridge's earlier run, which no tcp engine has"
        self._arrival_record(item, "lost", reason=why)
        self._log(logging.INFO, f"serial->tcp: '{escape(item.raw)}' not delivered: {why}")
        if isinstance(msg, GameEnd):
            self._serial_known = True
            self._bridge_sends(
                SERIAL, GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE),
                "answers the GAMEEND of a game of the bridge's earlier run", judged=False,
            )
            return
        self._start_probe(now, deque(), "that game is ended")

    def _end_probe(self, now: float) -> None:
        assert self._probe is not None
        held = self._probe[1]
        self._probe = None
        self._serial_known = True
        while held:
            item, msg = held.popleft()
            self._judge_and_route(item, msg, now)

    def _stop_for_tcp_only(self, item: _Msg, msg: GameEnd, now: float) -> bool:
        """A TCP engine's stop code 1 ends its own session, not the serial engine's: the
        serial engine gets the GAMEEND with stop code 0 and its answer goes back with stop
        code 1, both as the bridge's changes (``--pass-stop`` forwards it unchanged)."""
        if self.settings.pass_stop:
            return False
        d = self.judge.dialogue
        if item.sender == SERIAL:
            if not (self._stop_back and d.phase is Phase.ENDING
                    and d.awaiting is self.judge.roles[SERIAL]):
                return False
            self._stop_back = False
            verdict = self.judge.judge(SERIAL, msg)  # what the serial engine said, as it said it
            if verdict.record is not None:
                self._out.append(WriteRecord(verdict.record))
            for note in verdict.notes:
                self._log(logging.INFO, f"referee: {note}")
            self._replaced(item, GameEnd(reason=msg.reason, stop=StopCode.STOP), TCP,
                           "the tcp engine asked to stop: the serial engine's answer goes back "
                           "with stop code 1", on_behalf_of=SERIAL, judged_as_sent=True)
            self._watch_ending(now)
            return True
        if msg.stop is not StopCode.STOP or not self.judge.would_accept(TCP, msg):
            return False
        self._tcp_stopped = True
        self._stop_back = d.phase is not Phase.ENDING  # it starts the exchange: answer owed
        self._replaced(item, GameEnd(reason=msg.reason, stop=StopCode.CONTINUE), SERIAL,
                       "stop code 1 ends the tcp engine's session only; the serial engine gets "
                       "stop code 0 and stays ready for the next one (--pass-stop: unchanged)",
                       on_behalf_of=TCP, judged=True)
        self._watch_ending(now)
        return True

    def _replaced(
        self, item: _Msg, new: GameEnd, to: Side, why: str, *, on_behalf_of: Side,
        judged: bool = False, judged_as_sent: bool = False,
    ) -> None:
        """``item`` goes on as ``new``: the engine's message is traced as replaced (judged,
        if the judge took it as sent) and ``new`` as the bridge's, on its sender's behalf."""
        self._arrival_record(item, "dropped", reason="replaced", error=why,
                             judged=True if judged_as_sent else None)
        self._bridge_sends(to, new, why, judged=judged, on_behalf_of=on_behalf_of)

    # ------------------------------------------------------------------ close-out

    def _start_closeout(self, now: float) -> None:
        co = self._closeout
        assert co is not None
        co.started = True
        co.deadline = now + self.settings.closeout_timeout
        stayer = other(co.departed)
        if not self.present[stayer]:
            self._finish_closeout(f"{co.why}, and no {stayer} engine is there", now, abort=True)
            return
        self.judge.comment(
            f"{co.why}: the bridge ended the game towards the {stayer} engine on its behalf"
        )
        self._step_closeout(now)

    def _step_closeout(self, now: float) -> None:
        co = self._closeout
        assert co is not None
        stayer = other(co.departed)
        while True:
            step = next_step(self.judge.dialogue, self.judge.roles[co.departed])
            if step is DONE:
                self._finish_closeout(co.why, now, abort=False)
                return
            if step is WAIT:
                co.deadline = now + self.settings.closeout_timeout
                return
            assert isinstance(step, Message)
            co.spoke = True
            self._bridge_sends(
                stayer, step, f"on behalf of the departed {co.departed} engine: {co.why}",
                judged=True,
            )

    def _finish_closeout(self, why: str, now: float, *, abort: bool) -> None:
        co = self._closeout
        assert co is not None
        self._closeout = None
        if abort:
            record = self.judge.restart(why)
            if record is not None:
                self._out.append(WriteRecord(record))
        self._log(
            logging.INFO,
            f"the old game is closed ({why}); {len(co.held)} held message(s) go on",
        )
        while co.held:
            item, _ = co.held.popleft()
            if self._closeout is not None:
                self._closeout.held.append((item, now))
                continue
            assert item.msg is not None
            self._judge_and_route(item, item.msg, now)

    # ------------------------------------------------------------------ records

    def _drop(
        self,
        item: _Msg,
        reason: str,
        error: str,
        *,
        text: str | None = None,
        level: int = logging.WARNING,
        kind: str | None = None,
    ) -> None:
        assert item.sender is not None
        dir_ = direction(item.sender)
        if reason == "duplicate":
            self.counts["duplicates"] += 1
        self._arrival_record(item, "dropped", reason=reason, error=error)
        self._log(
            level,
            text or f"{dir_}: {reason} '{escape(item.raw)}' dropped: {error}",
            kind=kind or f"{reason} {dir_}",
        )

    def _arrival_record(self, item: _Msg, action: str, **extra: Any) -> None:
        self.counts[action] += 1
        if not self.settings.trace:
            return
        to = extra.pop("to", None)
        dir_ = direction(item.sender) if item.sender is not None else f"bridge->{to}"
        fields: dict[str, Any] = {
            "kind": "message",
            "id": item.id,
            "direction": dir_,
            "raw": escape(item.raw),
            "action": action,
        }
        if item.msg is not None:
            fields["type"] = item.msg.NAME
            fields["fields"] = item.msg.fields()
            if item.msg.warnings:
                fields["warnings"] = list(item.msg.warnings)
        for key, value in extra.items():
            if value is not None:
                fields[key] = value
        self._out.append(Trace(fields))

    def _fate(self, item: _Msg, receiver: Side, action: str, why: str | None = None) -> None:
        """The second record of a queued message: ``delivered`` or ``lost``."""
        sender = item.sender
        dir_ = _DIRECTIONS[sender] if sender is not None else f"bridge->{receiver}"
        self.counts[action] += 1
        if action == "delivered" and sender is not None:
            self.counts[dir_] += 1
        if action == "lost":
            self._say_lost(dir_, item.raw, why)
        if not self.settings.trace:
            return
        fields: dict[str, Any] = {
            "kind": "message",
            "id": item.id,
            "direction": dir_,
            "raw": escape(item.raw),
            "action": action,
        }
        if why is not None:
            fields["error"] = why
        self._out.append(Trace(fields))

    def _say_lost(self, dir_: str, raw: bytes, why: str | None) -> None:
        self._log(
            logging.ERROR, f"{dir_}: message '{escape(raw)}' NOT delivered: {why}",
            kind=f"lost {dir_}",
        )

    def _trace_session(self, side: Side, action: str, who: str) -> None:
        if not self.settings.trace:
            return
        fields: dict[str, Any] = {
            "kind": "session",
            "side": side,
            "session": self.session[side],
            "action": action,
        }
        if who:
            fields["detail"] = who
        self._out.append(Trace(fields))

    def _log(self, level: int, text: str, *, kind: str | None = None) -> None:
        self._out.append(Log(level, text, kind))

    def _take(self) -> list[Action]:
        """The actions so far; the judge's news go last (no rule depends on them)."""
        if self.judge.has_news:
            self._out.extend(News(item) for item in self.judge.take_news())
        out, self._out = self._out, []
        return out


__all__ = ["REPEAT_WINDOW", "Relay", "RelaySettings", "direction"]
