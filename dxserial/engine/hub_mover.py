"""A Hub engine child process that the built-in DXP player asks for its moves.

:class:`HubMover` is what :class:`~dxserial.engine.player.Player` calls instead of its own
search (in the runner's worker thread, so blocking here never blocks the event loop's
NULMODEM echoes).  It moves lines between the child's pipes and the sans-I/O
:class:`~dxserial.engine.hub_client.HubClient`, with a deadline on every wait (the process is
started under a keeper by :func:`~dxserial.transports.child.start_piped`, like every engine):

* the move: the GAMEREQ's clock, as ``level time=<left> [moves=<left>]`` (or ``level
  depth=`` without a clock); past the time left (``max_wait`` without a clock) it sends
  ``stop`` and waits ``grace`` seconds more for ``done``;
* the handshake: ``start_timeout``.

Whatever goes wrong (the engine exits, says something out of protocol, plays an illegal
move, misses its deadline) raises :class:`MoverFailed` with one line saying so; the player
then ends its DXP game with a GAMEEND.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Sequence

from dxserial.draughts import LegalMove, Position
from dxserial.engine.hub_client import Done, Failed, HubClient, Info, Ready
from dxserial.engine.mover import MoverFailed
from dxserial.engine.search import SearchCancelled
from dxserial.errors import ConfigError
from dxserial.game.thinking import Thinking
from dxserial.protocol import hub
from dxserial.protocol.hub import say_seconds
from dxserial.transports.child import describe_status, start_piped, stop_piped

__all__ = ["HubMover", "MoverFailed", "check_hub_level", "hub_name", "reversible_tail"]

_POLL = 0.05  # seconds between looks at the cancel flag while waiting


class HubMover:
    """One Hub engine process, started by :meth:`start`, asked by :meth:`choose`."""

    def __init__(
        self,
        command: str,
        *,
        depth: int = 3,
        grace: float = 2.0,
        max_wait: float = 60.0,
        start_timeout: float = 30.0,
        increment: float = 0.0,
        move_time: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigError(f"--hub {command!r}: {exc}") from None
        if not self.argv:
            raise ConfigError("--hub: empty command")
        self.command = command
        self.depth = depth
        self.grace = grace
        self.max_wait = max_wait
        self.start_timeout = start_timeout
        #: What the director's clock keeps that a GAMEREQ cannot say: ``level inc=`` with
        #: the time left, or ``level move-time=`` instead of the clock.
        self.increment = increment
        self.move_time = move_time
        self.client = HubClient()
        self._clock = clock
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._game: int | None = None
        self._lock = threading.Lock()
        self.notes: list[str] = []  # the engine's error lines, for the log
        #: What the engine's ``info`` said of its last move (None: nothing).
        self.thinking: Thinking | None = None

    @property
    def name(self) -> str:
        return self.client.name

    def start(self) -> str:
        """Start the engine and do the handshake; its name.  :class:`MoverFailed` if not."""
        try:
            self._proc = start_piped(self.argv, grace=self.grace)
        except OSError as exc:
            raise MoverFailed(f"cannot start the Hub engine {self.command!r}: {exc}") from None
        self._send(self.client.start())
        deadline = self._clock() + self.start_timeout
        init_sent = False
        while True:
            for event in self._events(deadline, None, "the handshake (hub, init)"):
                if isinstance(event, Ready):
                    return event.name
            if self.client.initialising and not init_sent:
                self._send(["init"])
                init_sent = True

    def choose(
        self,
        game: int,
        positions: Sequence[Position],
        *,
        seconds_left: float | None,
        moves_left: int | None,
        cancel: threading.Event | None = None,
    ) -> LegalMove:
        """The engine's move after ``positions`` (game number ``game``: a new one gets
        new-game).  The ``pos`` line carries the moves since the last man move or capture,
        as the Hub GUI sends them, so that the engine can see repetitions."""
        with self._lock:
            if self._game != game:
                self._send(self.client.new_game())
                self._game = game
            if self.move_time is not None:
                level = hub.Level(move_time=self.move_time)
                wait = self.move_time
            elif seconds_left is None:
                level = hub.Level(depth=self.depth)
                wait = self.max_wait
            elif self.increment:
                level = hub.Level(time=round(seconds_left, 3), inc=self.increment)
                wait = seconds_left
            else:
                level = hub.Level(time=round(seconds_left, 3), moves=moves_left or None)
                wait = seconds_left
            start, moves = reversible_tail(positions)
            self._send(self.client.think(start, level, moves))
            stop_at = self._clock() + wait
            stopped = False
            while True:
                deadline = stop_at + (self.grace if stopped else 0.0)
                try:
                    events = self._events(deadline, cancel, "its move")
                except _Timeout:
                    if stopped:
                        raise MoverFailed(
                            f"the Hub engine gave no move in {say_seconds(wait)}, nor "
                            f"{say_seconds(self.grace)} after 'stop'"
                        ) from None
                    self._send(self.client.stop())
                    stopped = True
                    continue
                for event in events:
                    if isinstance(event, Done):
                        self.thinking = event.thinking
                        return event.move

    def _events(
        self, deadline: float, cancel: threading.Event | None, what: str
    ) -> list[Ready | Done | Info]:
        """The events of the next line(s), waiting until ``deadline`` at most."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        while b"\n" not in self._buffer:
            if cancel is not None and cancel.is_set():
                raise SearchCancelled("search cancelled")
            left = deadline - self._clock()
            if left <= 0:
                if what == "its move":
                    raise _Timeout
                raise MoverFailed(
                    f"the Hub engine did not finish {what} in {say_seconds(self.start_timeout)}"
                )
            ready, _, _ = select.select([proc.stdout], [], [], min(left, _POLL))
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                code = proc.wait()
                raise MoverFailed(f"the Hub engine ended ({describe_status(code)}) during {what}")
            self._buffer += chunk
            if len(self._buffer) > hub.MAX_LINE and b"\n" not in self._buffer:
                self._buffer = b"x" * (hub.MAX_LINE + 1) + b"\n"
        raw, _, self._buffer = self._buffer.partition(b"\n")
        out: list[Ready | Done | Info] = []
        for event in self.client.receive(raw.decode("utf-8", "replace")):
            if isinstance(event, Failed):
                raise MoverFailed(f"the Hub engine broke the protocol: {event.reason}")
            if isinstance(event, Info):
                self.notes.append(event.text)
            out.append(event)
        return out

    def _send(self, lines: list[str]) -> None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write("".join(f"{line}\n" for line in lines).encode())
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            code = proc.poll()
            raise MoverFailed(
                f"the Hub engine ended ({describe_status(code)})"
                if code is not None
                else "the Hub engine closed its input"
            ) from None

    def close(self, timeout: float = 2.0) -> int | None:
        """Send quit, give it ``timeout`` seconds, then kill it; its exit code."""
        proc = self._proc
        if proc is None:
            return None
        with contextlib.suppress(MoverFailed):
            self._send(self.client.quit())
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        code = stop_piped(proc, timeout)
        if proc.stdout is not None:
            proc.stdout.close()
        return code


def check_hub_level(increment: float, move_time: float | None, hub: bool) -> None:
    """``--increment`` and ``--move-time``: numbers, one of them, and only for a Hub engine
    (the built-in DXP player knows only the GAMEREQ's clock)."""
    if not (increment >= 0 and math.isfinite(increment)):
        raise ConfigError(f"--increment {increment:g}: must be seconds >= 0")
    if move_time is not None and not (move_time > 0 and math.isfinite(move_time)):
        raise ConfigError(f"--move-time {move_time:g}: must be seconds > 0")
    if increment and move_time is not None:
        raise ConfigError("--increment and --move-time: give one of the two")
    if (increment or move_time is not None) and not hub:
        raise ConfigError("--increment/--move-time: need --hub (a DXP GAMEREQ carries only "
                          "minutes and moves; only a Hub engine is told more, by 'level')")


def reversible_tail(positions: Sequence[Position]) -> tuple[Position, list[LegalMove]]:
    """The position after the last man move or capture, and the king moves since."""
    moves: list[LegalMove] = []
    for before, after in zip(reversed(positions[:-1]), reversed(positions[1:]), strict=True):
        move = next((m for m in before.legal_moves() if before.play(m) == after), None)
        if move is None or not move.king or move.captured:
            return after, moves[::-1]
        moves.append(move)
    return positions[0], moves[::-1]


def hub_name(name: str) -> str:
    """A Hub engine's ``id name=`` as a DXP name (printable, at most 32 characters)."""
    clean = "".join(c for c in name.strip().strip('"') if 0x20 <= ord(c) < 0x7F).strip()
    return clean[:32].rstrip()


class _Timeout(Exception):
    """Internal: the move's deadline passed."""
