"""The director of a tournament whose games are tasks on a Dask cluster.

It is the tournament of :class:`~dxserial.tournament.runner.Tournament` (the schedule, the
state file, the crosstable, Elo, the SPRT and ``--resume`` are its own), with the games
handed to the workers of a Dask scheduler instead of played here.  Each game is one task
(:func:`dxserial.cluster.play.play_game`) placed by its engines' ``worker`` and
``resources``; what a worker sends back is recorded exactly as a local game.  Faults:

* a worker lost mid-game: the scheduler gives the task to another worker; the second start
  is named in the log (evidence: the worker's start event), the lost attempt never scored;
* an engine that crashes in a game: a forfeit, decided on the worker as today;
* an engine that cannot be started on a worker: one retry, then the event stops (resumable);
* the scheduler gone: its games are not recorded and the event stops, resumable.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from pathlib import Path
from typing import Any

from dxserial.cluster.jobs import (
    STARTED_TOPIC,
    GameJob,
    GameOutcome,
    Placement,
    place,
    placement,
)
from dxserial.cluster.play import play_game
from dxserial.errors import ConfigError
from dxserial.match.rules import GameStart
from dxserial.match.standings import Progress
from dxserial.tournament.event import GameResultEntry, Pairing
from dxserial.tournament.runner import Tournament
from dxserial.tournament.spec import TournamentSpec
from dxserial.transports.endpoints import LinkOptions

try:
    from distributed import Client, Future
    from distributed.client import FutureCancelledError
except ImportError:  # the optional extra is not installed
    raise ConfigError(
        "a cluster needs Dask distributed: pip install 'dxserial[cluster]' "
        "(on the director and on every worker host)"
    ) from None

__all__ = ["ClusterTournament"]

log = logging.getLogger("dxserial.cluster.director")

#: A task that raised (an engine not started) is tried once more, maybe on another worker.
RETRIES = 1


class ClusterTournament(Tournament):
    """A :class:`Tournament` whose games run on the workers of the scheduler at ``address``."""

    def __init__(
        self,
        spec: TournamentSpec,
        options: LinkOptions,
        *,
        address: str,
        progress: Progress,
        resume: bool = False,
        concurrency: int | None = None,
        name: str = "dxserial",
        log_messages: bool = False,
    ) -> None:
        super().__init__(spec, options, progress=progress, resume=resume, concurrency=1,
                         name=name, log_messages=log_messages)
        self.address = address
        self.options = options
        #: --concurrency: at most this many games in flight (default: the workers' threads).
        self.cap = concurrency
        self.entries = {e.name: e for e in spec.engines}
        # Engines started per game may play many games at once; those that write their
        # files into one shared folder, and endpoint engines, one at a time (as here).
        self.parallel = {
            e.name for e in spec.engines
            if e.command is not None and not (e.command.cwd and e.command.files)
        }
        self.placements: dict[tuple[str, str], Placement] = {}
        for game in self.schedule.games:
            key = (game.white, game.black)
            if key not in self.placements:
                try:
                    self.placements[key] = place(self.entries[game.white],
                                                 self.entries[game.black])
                except ValueError as exc:
                    raise ConfigError(f"{spec.event}: {exc}") from None
        self.client: Client | None = None
        self._tasks: dict[asyncio.Task[GameOutcome | BaseException], Pairing] = {}
        self._futures: dict[int, Future] = {}
        self._starts: dict[int, list[str]] = {}
        self._failed: dict[int, str] = {}
        #: Games started again after the worker playing them was lost.
        self.replays = 0
        self._lost_scheduler = False

    # ------------------------------------------------------------------ the cluster

    def _at_once(self) -> str:
        cap = f", at most {self.cap} at once" if self.cap else ""
        return f"games on the workers of {self.address}{cap}"

    async def _open(self) -> bool:
        timeout = self.spec.connect_timeout
        try:
            client = await Client(self.address, asynchronous=True, timeout=timeout,
                                  set_as_default=False)
        except (OSError, TimeoutError) as exc:
            self.stopped = (f"cannot reach the Dask scheduler at {self.address}: {exc}; "
                            "start it (dask scheduler) and run again")
            return False
        self.client = client
        client.subscribe_topic(STARTED_TOPIC, self._started)
        try:
            await client.wait_for_workers(1, timeout=timeout)
        except TimeoutError:
            self.stopped = (f"no worker joined the scheduler at {self.address} within "
                            f"{timeout:g} s: start one with dask worker {self.address}")
            return False
        workers = (await client.scheduler.identity(n_workers=-1))["workers"]
        self.progress.line(f"cluster: scheduler {self.address}, {len(workers)} worker(s): "
                           + "; ".join(_worker_text(w) for w in workers.values()))
        for entry in self.spec.engines:
            what = entry.endpoint
            if entry.command is not None:
                program = Path(entry.command.command[0]).name if entry.command.command else "dosbox"
                what = f"runs {program} ({entry.command.speaks})"
            self.progress.line(f"engine {entry.name}: {what} on "
                               f"{placement(entry).text()}")
        for where in sorted({p.text() for p in self.placements.values() if not _fits(p, workers)}):
            self.progress.line(f"cluster: no worker has {where} yet: those games wait for one "
                               "(dask worker --name NAME --resources \"NAME=N\")")
        return True

    async def _close(self) -> None:
        await self.desk.shutdown()
        client, self.client = self.client, None
        for task in self._tasks:
            task.cancel()
        if client is not None:
            with contextlib.suppress(Exception, asyncio.TimeoutError):
                await asyncio.wait_for(client.close(timeout=5), 10)

    def stop(self) -> None:
        """Stop: the games in flight are cancelled (not recorded: --resume plays them)."""
        self._stopping = True
        for future in self._futures.values():
            future.cancel()

    def _started(self, event: tuple[float, Any]) -> None:
        """A worker's word that it started a game: a second start is named, with why."""
        msg = event[1]
        if not isinstance(msg, dict) or not isinstance(msg.get("game"), int):
            return
        number, worker = msg["game"], str(msg.get("name"))
        if msg.get("failed"):
            self._failed[number] = str(msg["failed"])
            return
        before = self._starts.setdefault(number, [])
        if before:
            failed = self._failed.pop(number, None)
            if failed is not None:
                why = f"{failed}; tried once more"
            else:
                why = (f"worker {before[-1]} was lost while playing it (the scheduler gave "
                       "it to another worker); the lost attempt is not scored")
                self.replays += 1
            self.progress.line(f"game {number}: started again on worker {worker}: {why}")
        before.append(worker)
        if number in self._futures:  # (the event may come after the game's result)
            game = self.schedule.games[number - 1]
            self.game_status(number, f"{number}: {game.white}-{game.black} on {worker}")

    async def _limit(self) -> int:
        """Games in flight: the workers' threads (each plays one game), capped by
        --concurrency."""
        assert self.client is not None
        threads = int(sum((await self.client.nthreads()).values()))
        return max(1, min(threads, self.cap) if self.cap else threads)

    # ------------------------------------------------------------------ the games

    async def _loop(self) -> None:
        while True:
            if not (self._stopping or self.decided or self.stopped):
                try:
                    limit = await self._limit()
                except OSError as exc:
                    self._scheduler_lost(f"{type(exc).__name__}: {exc.strerror or exc}")
                    limit = 0
                running = list(self._tasks.values())
                ready = self.schedule.ready(self.state.games, running, self.parallel)
                for game in ready[: max(0, limit - len(running))]:
                    self._submit(game)
            if not self._tasks:
                return
            done, _ = await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                game = self._tasks.pop(task)
                self._futures.pop(game.number, None)
                self._status.pop(game.number, None)
                self._collect(game, task.result())
            if self.decided is not None:  # the SPRT decided: games not started are dropped
                for number, future in self._futures.items():
                    if number not in self._starts:
                        future.cancel()

    def _job(self, game: Pairing) -> GameJob:
        opening = self.spec.openings[game.opening]
        start = GameStart()
        if opening.position is not None:
            start = GameStart(opening.position.pieces(), opening.position.turn, opening.text)
        # An engine started for this game alone hears stop code 1: it is stopped after it.
        last = self.schedule.last_for(game, self.state.games) | {
            n for n in (game.white, game.black) if self.entries[n].command is not None
        }
        return GameJob(game.number, self.entries[game.white], self.entries[game.black],
                       self.options, self.config, start, frozenset(last))

    def _submit(self, game: Pairing) -> None:
        assert self.client is not None
        where = self.placements[(game.white, game.black)]
        future = self.client.submit(
            play_game, self._job(game), key=f"dxserial-game-{game.number}-{uuid.uuid4().hex[:8]}",
            pure=False, retries=RETRIES, workers=list(where.workers) or None,
            resources=where.resources or None,
        )
        self._futures[game.number] = future
        self._tasks[asyncio.create_task(_outcome(future))] = game

    def _collect(self, game: Pairing, outcome: GameOutcome | BaseException) -> None:
        if isinstance(outcome, GameOutcome):
            self._save(game, outcome)
            return
        if isinstance(outcome, FutureCancelledError) and outcome.reason != "unknown" \
                and "scheduler" in outcome.reason:
            self._scheduler_lost(outcome.reason)
        elif isinstance(outcome, asyncio.CancelledError):
            log.info("game %d cancelled: it is played again on --resume", game.number)
        elif not (self.stopped or self._stopping):
            self.stopped = (f"game {game.number}: {outcome}; fix it and go on with --resume"
                            if type(outcome).__name__ == "EngineNotStarted" else
                            f"game {game.number} failed on the cluster: "
                            f"{type(outcome).__name__}: {outcome}; go on with --resume")
            self.stop()

    def _scheduler_lost(self, why: str) -> None:
        if not self._lost_scheduler:
            self._lost_scheduler = True
            self.stopped = (
                f"the Dask scheduler at {self.address} went away ({why}) after "
                f"{len(self.state.games)} of {len(self.schedule.games)} game(s); the games "
                "in flight are not scored: start it and its workers again and go on with --resume"
            )
        self._stopping = True

    def _save(self, game: Pairing, outcome: GameOutcome) -> None:
        """The worker's record, as a local game's: PDN file, engine logs, state."""
        from dxserial.files import write_atomic

        if outcome.pdn_name:
            write_atomic(self.spec.pdn / outcome.pdn_name, outcome.pdn_text)
        for engine, text in outcome.logs.items():
            _append(self.spec.pdn / f"{engine}.log",
                    f"--- game {game.number} on worker {outcome.worker}\n{text}")
        entry = GameResultEntry(
            game.number, game.white, game.black, outcome.result, outcome.reason,
            outcome.pdn_name, outcome.white_name, outcome.black_name, outcome.plies,
        )
        self._record(game, entry, where=f" on {outcome.worker}")


async def _outcome(future: Future) -> GameOutcome | BaseException:
    """The task's result, or what it raised (a cancelled future included)."""
    try:
        result = await future
    except (asyncio.CancelledError, Exception) as exc:  # FutureCancelledError is the first
        return exc
    assert isinstance(result, GameOutcome)
    return result


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as out:
        out.write(text if text.endswith("\n") else text + "\n")


def _fits(where: Placement, workers: dict[str, Any]) -> bool:
    """Whether one of the workers (the scheduler's identity of each) can run such a game."""
    for info in workers.values():
        have = info.get("resources") or {}
        if where.workers and str(info.get("name")) not in where.workers:
            continue
        if all(have.get(k, 0) >= v for k, v in where.resources.items()):
            return True
    return False


def _worker_text(info: dict[str, Any]) -> str:
    extra = ", ".join(f"{k}={v:g}" for k, v in sorted((info.get("resources") or {}).items()))
    return f"{info.get('name')} ({info.get('nthreads')} thread(s){', ' + extra if extra else ''})"
