"""Where each message the relay forwards is until its fate is known.

A message for a side with no engine (no TCP peer yet, or one that ended its session with
stop code 1) is *held* for that side's next session; one written to an engine is *in
flight* until its link confirms it (``delivered``) or gives up on it (``lost``); a message
on its way to an engine that leaves is lost, each one named, never delivered to the next
engine.  What was delivered is remembered for a while (:mod:`~dxserial.bridge.recent`).
"""

from __future__ import annotations

import logging
from collections import deque

from dxserial.bridge.judge import SERIAL, TCP, Side, other
from dxserial.bridge.recent import RECENT_BYTES, RECENT_MESSAGES, Recent
from dxserial.bridge.records import Item, Records, direction
from dxserial.drive.actions import Forget, Send, Withdraw
from dxserial.protocol.messages import escape


class MessageFate:
    """The messages held for each side and in flight to it (``present``: the relay's)."""

    def __init__(
        self, records: Records, present: dict[Side, bool], *, checked: bool = False
    ) -> None:
        self._records = records
        self._present = present
        # The relay checks each engine's message against the receiving line on arrival
        # (its _carried): the link need not check it again.  The bridge's own are not.
        self._checked = checked
        self.held: dict[Side, deque[Item]] = {SERIAL: deque(), TCP: deque()}
        self._flight: dict[Side, deque[Item]] = {SERIAL: deque(), TCP: deque()}
        self._recent = Recent()
        self.tcp_stopped = False  # its stop code 1 ended its session: serial's news wait

    def route(self, to: Side, item: Item) -> None:
        if to == TCP and self.tcp_stopped and item.sender == SERIAL:
            self.held[to].append(item)  # for the next TCP engine: this one has stopped
            return
        if self._present[to]:
            self._flight[to].append(item)
            self._records.out.append(Send(to, item.raw, self._checked and item.sender is not None))
            return
        if not self.held[to]:
            self._records.log(logging.INFO, f"no {to} engine: keeping messages until one "
                              "connects")
        self.held[to].append(item)

    def pending(self, side: Side) -> bool:
        """Messages for ``side`` are held or in flight: its engine has not got them yet."""
        return bool(self._flight[side] or self.held[side])

    def unheard_offer(self, side: Side, sender: Side) -> bool:
        """A GAMEREQ from ``sender`` is on its way to ``side``'s engine, not yet delivered."""
        return any(
            item.sender == sender and item.raw[:1] == b"R"
            for item in (*self._flight[side], *self.held[side])
        )

    def release(self, side: Side) -> None:
        """A new engine on ``side``: what was held for it goes out."""
        held, flight, out = self.held[side], self._flight[side], self._records.out
        while held:
            item = held.popleft()
            flight.append(item)
            out.append(Send(side, item.raw, self._checked and item.sender is not None))

    def delivered(self, side: Side, raw: bytes) -> None:
        """``side``'s link confirmed that its engine got ``raw``."""
        flight = self._flight[side]
        for i, item in enumerate(flight):
            if item.raw == raw:
                del flight[i]
                self._records.fate(item, side, "delivered")
                self._recent.remember(side, item)
                break
        else:
            self._records.log(logging.DEBUG, f"{side}: delivery of '{escape(raw)}' not expected")

    def on_its_way(self, side: Side, raw: bytes) -> bool:
        """``raw`` from the other engine is in flight to ``side``'s, not yet delivered."""
        return any(m.sender == other(side) and m.raw == raw for m in self._flight[side])

    def move_in_flight(self, side: Side) -> bool:
        """A MOVE from the other engine is on its way to ``side``'s, not yet confirmed."""
        return any(m.sender == other(side) and m.raw[:1] == b"M" for m in self._flight[side])

    def answered(self, side: Side) -> Item | None:
        """``side``'s engine answered with a MOVE in turn while the MOVE it answers is still
        in flight to it: it has that MOVE (its last echo was lost).  Taken as delivered, and
        returned, so the link stops sending it again."""
        flight = self._flight[side]
        item = next((m for m in flight if m.sender == other(side) and m.raw[:1] == b"M"), None)
        if item is None:
            return None
        flight.remove(item)
        self._records.fate(item, side, "delivered")
        self._recent.remember(side, item)
        self._records.log(
            logging.WARNING,
            f"{direction(other(side))}: '{escape(item.raw)}' taken as delivered: the {side} "
            "engine answered it, though its last echo never came back (not sent again)",
        )
        self._records.out.append(Withdraw(side, item.raw))
        return item

    def undelivered(self, side: Side, raws: list[bytes], why: str) -> None:
        """``side``'s link gave up on these messages (the line is down, the queue full)."""
        for raw in raws:
            flight = self._flight[side]
            item = next((m for m in flight if m.raw == raw), None)
            if item is None:
                continue
            flight.remove(item)
            self._records.fate(item, side, "lost", why)

    def unacknowledged(self, side: Side, nbytes: int, why: str) -> None:
        """``side``'s link ended with ``nbytes`` written but never taken by the other end:
        the last messages delivered there (as far as the bytes go) are possibly lost."""
        gone, older = self._recent.take_back(side, nbytes)
        if older:
            self._records.log(
                logging.ERROR,
                f"{direction(other(side))}: {older} more byte(s) of older messages "
                f"possibly lost too (not named: more than {RECENT_BYTES} bytes or "
                f"{RECENT_MESSAGES} messages back)",
            )
        for item in gone:
            self._records.fate(item, side, "lost", f"possibly: {why}")

    def forget(self, side: Side, why: str) -> None:
        """What is on its way to ``side``'s engine was for one that is gone: lost, each named."""
        flight = self._flight[side]
        if flight:
            self._records.out.append(Forget(side))
        while flight:
            self._records.fate(flight.popleft(), side, "lost", why)

    def withdraw(self, side: Side, sender: Side, why: str) -> None:
        """``sender`` is gone before ``side``'s engine had its messages: they are withdrawn
        (the line's queue forgotten; each one lost, named), what is held for ``side`` too."""
        self.forget(side, why)
        held = self.held[side]
        for item in [m for m in held if m.sender == sender]:
            held.remove(item)
            self._records.fate(item, side, "lost", why)

    def left(self, side: Side, gone: str) -> None:
        """The engine on ``side`` is gone: what was on its way to it, and what it sent that
        waits for the other side's next engine, is lost."""
        self.forget(side, f"{gone} before it was delivered")
        self._recent.clear(side)
        waiting = self.held[other(side)]
        for item in [m for m in waiting if m.sender == side]:
            # Its sender's session is over: it must not start anything with the next engine.
            waiting.remove(item)
            self._records.fate(item, other(side), "lost", f"{gone} before anyone received it")

    def shutdown(self, why: str) -> None:
        """The bridge stops: whatever was not delivered is lost, each one named."""
        for side in (SERIAL, TCP):
            while self._flight[side]:
                self._records.fate(self._flight[side].popleft(), side, "lost", why)
            while self.held[side]:
                self._records.fate(self.held[side].popleft(), side, "lost", why)


__all__ = ["MessageFate"]
