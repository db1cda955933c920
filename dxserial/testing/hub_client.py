"""A Hub client as the Hub GUI is one (written from Scan's protocol.txt), for the tests and
for measuring ``dxserial hub`` in front of a real DXP engine.

:class:`ScriptedHubClient` runs a Hub engine command, does the handshake and asks for moves
with ``pos``/``level``/``go think``, optionally ``stop`` after some seconds; each answer
is a :class:`Answer` that says whether the move was the engine's or one dxserial chose
itself (dxserial names those in an ``info text=`` line).  :func:`play_game` plays one side
of a game against a move chooser; :func:`stop_then_go` is the sequence of issue 29.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from dxserial.draughts import LegalMove, Position
from dxserial.protocol import hub

__all__ = ["Answer", "GameTally", "ScriptedHubClient", "play_game", "stop_then_go"]

#: The words dxserial puts in the info line of a move it chose itself.
OURS = "dxserial played"


@dataclass(frozen=True)
class Answer:
    move: LegalMove
    ours: bool  # dxserial's own move, not the engine's
    seconds: float  # from 'go' to 'done'
    lines: tuple[str, ...]  # what came before 'done'


@dataclass
class GameTally:
    answers: list[Answer] = field(default_factory=list)

    @property
    def engine_moves(self) -> int:
        return sum(not a.ours for a in self.answers)

    @property
    def replaced(self) -> int:
        return sum(a.ours for a in self.answers)


class ScriptedHubClient:
    """One Hub engine process, spoken to line by line with a deadline on every read."""

    def __init__(
        self, argv: Sequence[str], *, stderr: IO[bytes] | int | None = None,
        cwd: Path | None = None, timeout: float = 120.0,
    ) -> None:
        self.proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else subprocess.DEVNULL, cwd=cwd, bufsize=0,
        )
        self.timeout = timeout
        self._buffer = b""

    def send(self, *lines: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(f"{line}\n" for line in lines).encode())

    def read_line(self, timeout: float | None = None) -> str:
        stdout = self.proc.stdout
        assert stdout is not None
        deadline = time.monotonic() + (timeout or self.timeout)
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no line from the Hub engine in {timeout or self.timeout} s")
            ready, _, _ = select.select([stdout], [], [], left)
            if ready:
                chunk = os.read(stdout.fileno(), 65536)
                if not chunk:
                    raise EOFError(f"the Hub engine ended ({self.proc.wait()})")
                self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\n")
        return raw.decode("utf-8", "replace").strip()

    def handshake(self) -> str:
        """``hub`` ... ``wait``, ``init`` ... ``ready``; the engine's ``id name=``."""
        self.send("hub")
        name = ""
        while (line := self.read_line()) != "wait":
            if line.startswith("id "):
                name = hub.parse_line(line).get("name") or ""
        self.send("init")
        while self.read_line() != "ready":
            pass
        return name

    def go(
        self, start: Position, moves: Sequence[LegalMove], level: str,
        *, stop_after: float | None = None,
    ) -> Answer:
        """Ask for a move in ``start`` after ``moves``; ``stop`` after ``stop_after`` s."""
        position = start
        for move in moves:
            position = position.play(move)
        self.send(hub.format_line(hub.pos_line(start, moves)), level, "go think")
        began = time.monotonic()
        stop_at = None if stop_after is None else began + stop_after
        lines: list[str] = []
        while not (lines and lines[-1].startswith("done")):
            if stop_at is None:
                lines.append(self.read_line())
                continue
            left = stop_at - time.monotonic()
            if left <= 0:
                self.send("stop")
                stop_at = None
                continue
            try:
                lines.append(self.read_line(left))
            except TimeoutError:
                continue
        took = time.monotonic() - began
        text, _ponder = hub.parse_done(hub.parse_line(lines[-1]))
        move = hub.parse_hub_move(position, text)
        ours = any(OURS in line for line in lines[:-1])
        return Answer(move, ours, took, tuple(lines[:-1]))

    def quit(self, timeout: float = 15.0) -> int:
        with contextlib.suppress(OSError):
            self.send("quit")
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def play_game(
    client: ScriptedHubClient, level: str, opponent: Callable[[Position], LegalMove],
    *, engine_is_white: bool = True, max_plies: int = 200,
) -> GameTally:
    """The engine plays one side from the start, ``opponent`` the other."""
    client.send("new-game")
    start = position = Position.start()
    moves: list[LegalMove] = []
    tally = GameTally()
    while not position.is_lost() and len(moves) < max_plies:
        if (position.turn.value == "W") == engine_is_white:
            answer = client.go(start, moves, level)
            tally.answers.append(answer)
            move = answer.move
        else:
            move = opponent(position)
        moves.append(move)
        position = position.play(move)
    return tally


def stop_then_go(
    client: ScriptedHubClient, *, first: str = "level move-time=5", stop_after: float = 1.0,
    then: str = "level move-time=1",
) -> tuple[Answer, Answer]:
    """A search stopped ``stop_after`` s in, then a ``go`` on the next position (the
    stopped move and the opponent's first legal reply)."""
    client.send("new-game")
    start = Position.start()
    stopped = client.go(start, [], first, stop_after=stop_after)
    reply = start.play(stopped.move).legal_moves()[0]
    return stopped, client.go(start, [stopped.move, reply], then)
