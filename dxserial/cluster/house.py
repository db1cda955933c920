"""The engines one worker keeps from game to game (docs/cluster.md, "Engines kept on a
worker").

A worker's games used to start both engines and stop them after each game; a real engine
pays its opening book and tables at every start.  :class:`EngineHouse` keeps each engine
table's processes (keyed by the table and the link settings: :func:`table_key`) with their
connections open on one :class:`~dxserial.match.links.EngineDesk`, on an event loop of its
own in one thread of the worker, and plays each game over them with the director's
:meth:`~dxserial.match.runner.Match.game`: the game ends with the same GAMEEND exchange as
played here (stop code 0, the engine stays; 1 for its last game of the event).  An engine
is started again only after a crash, a hang or a lost link (``Match.game`` closes an
engine that failed, and its endpoint starts a new process), or when its table changed.

Nothing outlives the worker: the processes run under the keeper
(:mod:`dxserial.transports.keeper`), whose PDEATHSIG fires when the thread that started
them ends (this house's thread, which lives as long as the worker), and the worker
plugin's teardown (:mod:`dxserial.cluster.plugin`) stops them all.  No Dask import here.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dxserial.cluster.jobs import EngineNotStarted, GameJob, GameOutcome, tally
from dxserial.errors import DxSerialError
from dxserial.match.links import EngineDesk, MatchEngine
from dxserial.match.runner import Match
from dxserial.processes.endpoint import CommandEndpoint
from dxserial.tournament.spec import EngineEntry
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions

__all__ = ["EngineHouse", "make_endpoint", "table_key"]

log = logging.getLogger("dxserial.cluster.house")

#: The least time between two "still playing" words of one game to the director.
WORD_EVERY = 1.0


def make_endpoint(entry: EngineEntry, options: LinkOptions, folder: Path) -> EngineEndpoint:
    """An engine table as an endpoint (its process's folder and log under ``folder``): the
    one place the cluster calls the endpoint factory."""
    from dxserial.tournament.engines import entry_endpoint

    return entry_endpoint(entry, options, folder)


def table_key(entry: EngineEntry, options: LinkOptions) -> str:
    """What an engine kept on a worker is known by: its table (not where it may run) and
    the link settings; any change is another engine, started afresh."""
    what = (entry.name, entry.endpoint, entry.link, entry.baud, entry.command, options)
    return hashlib.sha256(repr(what).encode()).hexdigest()[:16]


@dataclass(eq=False)
class Kept:
    """One engine process slot kept on the worker (one per game it plays at once)."""

    key: str
    side: MatchEngine
    prepared: bool = False
    busy: bool = False
    retired: bool = False
    #: How much of the engine's log went to the director (with a game's record).
    logged: int = 0


Tell = Callable[[dict[str, Any]], None]


class EngineHouse:
    """The engines of one worker, and the games played over them (:meth:`play`, from any
    thread; the engines live on the house's own loop)."""

    def __init__(self, folder: Path | None = None) -> None:
        self._root = folder
        self._own_root = folder is None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._desk: EngineDesk | None = None
        self.kept: dict[str, list[Kept]] = {}
        self._keys: dict[str, str] = {}  # engine name -> the key its table has now
        self._slots = 0
        #: Engine processes started on this worker, and started again (crash, hang, link).
        self.starts = 0

    # ------------------------------------------------------------------ threads

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                if self._root is None:
                    self._root = Path(tempfile.mkdtemp(prefix="dxserial-engines-"))
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="dxserial-engines",
                                          daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def play(self, job: GameJob, where: str, tell: Tell) -> GameOutcome:
        """Play ``job`` with this worker's engines (started if none is kept); ``tell``
        gets a word as the game goes (the director's evidence that this worker lives)."""
        loop = self._running_loop()
        return asyncio.run_coroutine_threadsafe(self._play(job, where, tell), loop).result()

    def warm(self, entries: list[EngineEntry], options: LinkOptions, where: str) -> list[str]:
        """Start the engines of ``entries`` that are not kept yet, all at once (as the local
        director starts its engines before the first game); why each that failed did."""
        loop = self._running_loop()
        return asyncio.run_coroutine_threadsafe(self._warm(entries, options, where),
                                                loop).result()

    def release(self, keys: set[str] | None = None) -> int:
        """Stop the idle engines of ``keys`` (all when None); how many were stopped."""
        loop = self._loop
        if loop is None:
            return 0
        return asyncio.run_coroutine_threadsafe(self._release(keys), loop).result(60)

    def close(self) -> None:
        """Stop every engine and the house's thread (the worker is going away)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._close(), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._loop = self._thread = None
        if self._own_root and self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)

    def names(self) -> list[str]:
        """The engines kept here (their table names), for the director's routing."""
        return sorted({k.side.label for slots in self.kept.values() for k in slots
                       if not k.retired})

    # ------------------------------------------------------------------ the engines

    def _seat(self, entry: EngineEntry, options: LinkOptions) -> Kept:
        key = table_key(entry, options)
        old = self._keys.get(entry.name)
        if old is not None and old != key:  # the table changed: its engines go
            for kept in self.kept.get(old, []):
                kept.retired = True
        self._keys[entry.name] = key
        slots = self.kept.setdefault(key, [])
        for kept in slots:
            if not kept.busy:
                kept.busy = True
                return kept
        assert self._root is not None
        self._slots += 1
        folder = self._root / f"{entry.name}-{self._slots}"
        endpoint = make_endpoint(entry, options, folder)
        kept = Kept(key, MatchEngine(entry.name, endpoint=endpoint), busy=True)
        slots.append(kept)
        return kept

    async def _drop(self, kept: Kept) -> None:
        slots = self.kept.get(kept.key, [])
        if kept in slots:
            slots.remove(kept)
        if not slots:
            self.kept.pop(kept.key, None)
        if self._desk is not None:
            await self._desk.close(kept.side)
        await kept.side.endpoint.close()

    async def _release(self, keys: set[str] | None) -> int:
        idle = [k for key, slots in self.kept.items() if keys is None or key in keys
                for k in slots if not k.busy]
        await asyncio.gather(*(self._drop(k) for k in idle))  # each may wait for its exit
        return len(idle)

    async def _retire(self) -> None:
        for kept in [k for slots in self.kept.values() for k in slots]:
            if kept.retired and not kept.busy:
                await self._drop(kept)

    async def _close(self) -> None:
        await asyncio.gather(*(self._drop(k) for slots in list(self.kept.values())
                               for k in list(slots)), return_exceptions=True)
        if self._desk is not None:
            await self._desk.shutdown()
            self._desk = None

    async def _ready(self, kept: Kept, where: str) -> None:
        """The engine's process running and connected: kept from the last game, or started
        now (first game, or the last one ended in a crash, hang or lost link)."""
        side = kept.side
        assert self._desk is not None
        if not kept.prepared:
            await side.endpoint.prepare()
            kept.prepared = True
        if side.connected and side.usable:
            return
        if side.connected:
            await self._desk.close(side)
        if isinstance(side.endpoint, CommandEndpoint):
            try:
                await side.endpoint.open_early()
            except DxSerialError as exc:
                raise EngineNotStarted(
                    f"engine {side.label} could not be started on worker {where}: {exc}"
                ) from None
            self.starts += 1

    async def _warm(self, entries: list[EngineEntry], options: LinkOptions,
                    where: str) -> list[str]:
        if self._desk is None:
            self._desk = EngineDesk()
        await self._retire()
        seats = [self._seat(e, options) for e in entries]
        try:
            done = await asyncio.gather(*(self._ready(k, where) for k in seats),
                                        return_exceptions=True)
        finally:
            for kept in seats:
                kept.busy = False
        failed = [(k, str(r)) for k, r in zip(seats, done, strict=True)
                  if isinstance(r, BaseException)]
        for kept, _ in failed:
            await self._drop(kept)
        return [why for _, why in failed]

    # ------------------------------------------------------------------ a game

    async def _play(self, job: GameJob, where: str, tell: Tell) -> GameOutcome:
        if self._desk is None:
            self._desk = EngineDesk()
        await self._retire()
        seats = (self._seat(job.white, job.options), self._seat(job.black, job.options))
        white, black = (k.side for k in seats)
        lost: list[Kept] = []
        try:
            started = await asyncio.gather(*(self._ready(k, where) for k in seats),
                                           return_exceptions=True)
            for failure in started:  # both done (none left starting while one is closed)
                if isinstance(failure, BaseException):
                    lost = list(seats)
                    raise failure
            with tempfile.TemporaryDirectory(prefix=f"dxserial-game{job.number}-") as tmp:
                config = dataclasses.replace(job.config, pdn_dir=Path(tmp))
                match = Match(white, black, config, desk=self._desk,
                              watch=_words(job.number, tell))
                began = time.monotonic()
                summary = await match.game(job.number, white, black, last=set(job.last),
                                           start=job.start)
                seconds = time.monotonic() - began
                pdn = summary.pdn if summary is not None else None
                pdn_text = pdn.read_text(encoding="utf-8") if pdn else ""
            lost = [k for k in seats if k.side.failure
                    and k.side.failure.startswith("cannot reach")]
            if summary is None or lost:
                why = lost[0].side.failure if lost else "the game did not start"
                raise EngineNotStarted(f"game {job.number} on worker {where}: {why}")
            forfeits, time_losses, crashes = tally(
                summary.result.reason, [s.failure for s in (white, black)])
            return GameOutcome(
                number=job.number,
                result=summary.result.result,
                reason=summary.result.reason,
                plies=summary.plies,
                white_name=white.name,
                black_name=black.name,
                worker=where,
                pdn_name=pdn.name if pdn else None,
                pdn_text=pdn_text,
                logs={k.side.label: text for k in seats if (text := _log_since(k))},
                seconds=seconds,
                forfeits=forfeits,
                time_losses=time_losses,
                crashes=crashes,
                kept=tuple(self.names()),
            )
        finally:
            for kept in seats:
                kept.busy = False
                # Stop code 1 (its last game), an engine not reached, or an old table.
                if kept.side.label in job.last or kept in lost or kept.retired:
                    await self._drop(kept)


def _words(number: int, tell: Tell) -> Callable[[dict[str, Any]], None]:
    """The game's news as words to the director: one at most every WORD_EVERY s."""
    last = [0.0]

    def watch(event: dict[str, Any]) -> None:
        if event.get("kind") not in ("game", "move"):
            return
        now = time.monotonic()
        if now - last[0] >= WORD_EVERY:
            last[0] = now
            tell({"game": number, "ply": int(event.get("ply") or 0)})

    return watch


def _log_since(kept: Kept) -> str:
    """What the engine's process wrote to its log since the last game's record (its start
    included, when it was started ahead or again)."""
    endpoint = kept.side.endpoint
    if not isinstance(endpoint, CommandEndpoint):
        return ""
    try:
        with endpoint.log_path.open("rb") as handle:
            handle.seek(kept.logged)
            data = handle.read()
    except OSError:
        return ""
    kept.logged += len(data)
    return data.decode("utf-8", errors="replace")
