"""The one vocabulary every program's machine answers in; the driver carries each out.

A machine never does I/O: it returns these, in order, and the driver
(:mod:`dxserial.drive.driver`) applies them.  ``side`` is the machine's own name for one of
its ports ("serial"/"tcp" for the bridge, "A"/"B" for a match, "peer" for an engine).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dxserial.game.news import GameNews
from dxserial.game.record import GameRecord
from dxserial.protocol.messages import Message


@dataclass(frozen=True)
class Send:
    """Hand ``raw`` (one message, without framing) to ``side``'s layer-1 link.

    ``checked``: the machine already asked that link whether it can carry ``raw``
    (:meth:`~dxserial.protocol.links.Layer1Link.check`), so the link does not check again.
    """

    side: str
    raw: bytes
    checked: bool = False


@dataclass(frozen=True)
class Forget:
    """Empty ``side``'s link: what waits there was for an engine that is gone."""

    side: str


@dataclass(frozen=True)
class Withdraw:
    """Stop sending ``raw`` on ``side``'s link: its engine has it (it answered it), though
    the line never confirmed it (an echo lost to a replug)."""

    side: str
    raw: bytes


@dataclass(frozen=True)
class Log:
    """One log line; ``kind`` groups repeats for the flood guard."""

    level: int
    text: str
    kind: str | None = None


@dataclass(frozen=True)
class Trace:
    """One trace record (the writer adds the time)."""

    fields: dict[str, Any]


@dataclass(frozen=True)
class WriteRecord:
    """A finished game, to be written as PDN."""

    record: GameRecord


@dataclass(frozen=True)
class Observed:
    """A message on its way (for a live display such as ``dxserial demo``); ``direction``
    is ``"tcp->serial"``, with ``" (by the bridge)"`` after it for one the bridge sent on
    that engine's behalf (a GAMEEND it replaced or answered for it)."""

    direction: str
    message: Message


@dataclass(frozen=True)
class News:
    """What the referee made of the game so far (started, a move, ended), for a live view."""

    news: GameNews


@dataclass(frozen=True)
class Say:
    """A line for the user (the program's progress or result), not a log record."""

    text: str


@dataclass(frozen=True)
class Work:
    """Run ``job`` off the event loop (a search); its actions are applied when it returns.

    While it runs the driver holds the machine's other inputs back, in order, and feeds
    them after (a machine is never entered from two threads); the links keep working.
    With ``then``, ``job`` returns a result and ``then(result, now)`` is the machine's input
    that turns it into actions, on the event loop; ``hold=False`` (only with ``then``: the
    job must not touch the machine) lets the other inputs in meanwhile (a Hub engine answers
    ``ping`` and ``stop`` during its search).
    """

    job: Callable[[], Any]
    then: Callable[[Any, float], list[Action]] | None = None
    hold: bool = True


@dataclass(frozen=True)
class Reopen:
    """Close ``side``'s port and open it again with these serial settings (the probe)."""

    side: str
    baudrate: int


@dataclass(frozen=True)
class Hangup:
    """Close ``side``'s port (its engine failed, or its session is over)."""

    side: str
    why: str = ""


@dataclass(frozen=True)
class Remember:
    """State that must outlive the program's run (a crash, a restart): the runner writes
    ``fields`` atomically where the program keeps it; ``why`` says what changed."""

    fields: dict[str, Any]
    why: str


@dataclass(frozen=True)
class Done:
    """The program's job is over: ``code`` is the exit status, ``message`` the last line."""

    code: int
    message: str


Action = (
    Send | Forget | Log | Trace | WriteRecord | Observed | News | Say | Work | Reopen | Hangup
    | Remember | Done | Withdraw
)

__all__ = [
    "Action",
    "Done",
    "Forget",
    "Hangup",
    "Log",
    "News",
    "Observed",
    "Remember",
    "Reopen",
    "Say",
    "Send",
    "Trace",
    "Withdraw",
    "Work",
    "WriteRecord",
]
