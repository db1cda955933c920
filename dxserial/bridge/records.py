"""What the relay writes down about each message: its counts, trace records and log lines.

The relay and its helpers (:mod:`~dxserial.bridge.closeout`, :mod:`~dxserial.bridge.serialcheck`,
:mod:`~dxserial.bridge.gameend`) append their actions to one :class:`Records`, in the order
they happen.  Each message gets one record when it arrives (``queued``, ``dropped`` with a
``reason``, ``lost`` if its receiver is gone, or ``sent-by-bridge`` for the bridge's own)
and, once queued, one more when its fate is known (``delivered`` or ``lost``);
:attr:`Records.counts` counts exactly those records.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol

from dxserial.bridge.judge import SERIAL, TCP, Side
from dxserial.drive.actions import Action, Log, Trace
from dxserial.protocol.dialects import habit_text
from dxserial.protocol.messages import Message, escape

_DIRECTIONS: dict[Side, str] = {SERIAL: "serial->tcp", TCP: "tcp->serial"}


def direction(sender: Side) -> str:
    return _DIRECTIONS[sender]


@dataclass
class Item:
    """One message the relay carries, from its arrival to its fate."""

    id: int
    sender: Side | None  # None: the bridge's own
    raw: bytes
    msg: Message | None


class Say(Protocol):
    """The relay sending a message of the bridge's own (``Relay._bridge_sends``)."""

    def __call__(
        self, to: Side, msg: Message, why: str, *, judged: bool,
        on_behalf_of: Side | None = None,
    ) -> None: ...


class Resume(Protocol):
    """The relay judging and routing a message it held (``Relay._judge_and_route``)."""

    def __call__(self, item: Item, msg: Message, now: float, *, forwarded: bool = False) -> None:
        ...


class Records:
    """The relay's outbox of counts, trace records and log lines (see the module docstring)."""

    def __init__(self, *, trace: bool) -> None:
        self.trace = trace  # build trace records (counts are kept either way)
        self.counts: Counter[str] = Counter()
        self.out: list[Action] = []
        self._habits: set[tuple[Side, int, str]] = set()  # (side, session, habit) named

    def log(self, level: int, text: str, *, kind: str | None = None) -> None:
        self.out.append(Log(level, text, kind))

    def drop(
        self,
        item: Item,
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
        self.arrival(item, "dropped", reason=reason, error=error)
        self.log(
            level,
            text or f"{dir_}: {reason} '{escape(item.raw)}' dropped: {error}",
            kind=kind or f"{reason} {dir_}",
        )

    def arrival(self, item: Item, action: str, **extra: Any) -> None:
        """The first record of a message."""
        self.counts[action] += 1
        if not self.trace:
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
        self.out.append(Trace(fields))

    def fate(self, item: Item, receiver: Side, action: str, why: str | None = None) -> None:
        """The second record of a queued message: ``delivered`` or ``lost``."""
        sender = item.sender
        dir_ = _DIRECTIONS[sender] if sender is not None else f"bridge->{receiver}"
        self.counts[action] += 1
        if action == "delivered" and sender is not None:
            self.counts[dir_] += 1
        if action == "lost":
            self.say_lost(dir_, item.raw, why)
        if not self.trace:
            return
        # As in arrival(), written out: both are on every message's way.
        fields: dict[str, Any] = {
            "kind": "message",
            "id": item.id,
            "direction": dir_,
            "raw": escape(item.raw),
            "action": action,
        }
        if why is not None:
            fields["error"] = why
        self.out.append(Trace(fields))

    def say_lost(self, dir_: str, raw: bytes, why: str | None) -> None:
        self.log(
            logging.ERROR, f"{dir_}: message '{escape(raw)}' NOT delivered: {why}",
            kind=f"lost {dir_}",
        )

    def session(self, side: Side, session: int, action: str, who: str) -> None:
        if not self.trace:
            return
        fields: dict[str, Any] = {
            "kind": "session",
            "side": side,
            "session": session,
            "action": action,
        }
        if who:
            fields["detail"] = who
        self.out.append(Trace(fields))

    def habit(self, side: Side, session: int, habit: str, detail: str | None = None) -> None:
        """Name an engine's dialect once per session: a note, never a violation."""
        key = (side, session, detail or habit)
        if key in self._habits:
            return
        self._habits.add(key)
        text = detail or habit_text(habit)
        self.log(logging.INFO, f"note: the {side} engine {text}" if detail is None
                 else f"note: the {side} engine's habit: {text}")
        if self.trace:
            self.out.append(Trace({
                "kind": "dialect", "side": side, "session": session,
                "habit": habit, "text": text,
            }))


__all__ = ["Item", "Records", "Resume", "Say", "direction"]
