"""The built-in Hub engine as a machine for the one driver: lines in, lines and searches out.

:class:`~dxserial.hub_engine.engine.HubEngine` holds the Hub session; this speaks the
driver's words.  A search is a :class:`~dxserial.drive.actions.Work` that does not hold the
other inputs back: ``ping`` is answered and ``stop`` cuts the search while it runs (the
search's clock jumps past its deadline, and it answers with its best move so far).
"""

from __future__ import annotations

import math
import random
import threading
import time

from dxserial.drive.actions import Action, Done, Log, Send, Work
from dxserial.drive.machine import BaseMachine
from dxserial.engine.search import SearchCancelled, Thought
from dxserial.engine.search import think as search_move
from dxserial.hub_engine import engine as hub_engine
from dxserial.hub_engine.engine import HubEngine, Think
from dxserial.protocol import hub

#: The Hub engine's one side: the client (a GUI) on stdin and stdout.
CLIENT = "client"


class _Search:
    """One search's job, run in a worker thread; ``cut`` makes its clock pass any deadline."""

    def __init__(self, think: Think, rng: random.Random, started: float) -> None:
        self.think = think
        self.rng = rng
        self.started = started
        self.cut = threading.Event()

    def _clock(self) -> float:
        return math.inf if self.cut.is_set() else time.monotonic()

    def run(self) -> Thought:
        think = self.think
        deadline = think.deadline if think.deadline is not None else math.inf
        try:
            return search_move(
                think.position, think.depth, self.rng, deadline=deadline, clock=self._clock
            )
        except SearchCancelled:
            return Thought(None)


class HubEngineMachine(BaseMachine[str]):
    def __init__(self, engine: HubEngine, seed: int | None = None) -> None:
        self.engine = engine
        self.rng = random.Random(seed)
        self.search: _Search | None = None

    def line(self, side: str, data: bytes, now: float) -> list[Action]:
        text = data.decode("utf-8", "replace").rstrip("\r\n")
        if not text.strip():
            return []
        return self._take(self.engine.receive(text, now), now)

    def searched(self, thought: Thought, now: float) -> list[Action]:
        """The search ended (in its thread) with ``thought``; back on the event loop."""
        search, self.search = self.search, None
        spent = now - search.started if search is not None else 0.0
        return self._take(
            self.engine.searched(thought.move, spent, score=thought.score, depth=thought.depth),
            now,
        )

    def stop(self, now: float) -> list[Action]:
        self.cut()
        return [Done(0, "stopped")]

    def cut(self) -> None:
        """End a running search now (leaving: the client quit or went away)."""
        if self.search is not None:
            self.search.cut.set()

    def _take(self, actions: list[hub_engine.Action], now: float) -> list[Action]:
        out: list[Action] = []
        for action in actions:
            if isinstance(action, hub_engine.Send):
                out.append(Send(CLIENT, f"{hub.format_line(action.line)}\n".encode()))
            elif isinstance(action, Think):
                self.search = _Search(action, self.rng, now)
                out.append(Work(self.search.run, then=self.searched, hold=False))
            elif isinstance(action, hub_engine.CutSearch):
                self.cut()
            elif isinstance(action, hub_engine.Log):
                out.append(Log(action.level, action.text))
            elif isinstance(action, hub_engine.Quit):
                self.cut()
                out.append(Done(0, "quit"))
        return out


__all__ = ["CLIENT", "HubEngineMachine"]
