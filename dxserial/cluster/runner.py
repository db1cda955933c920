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
* the scheduler gone: its games are not recorded and the event stops, resumable;
* a worker hung (stopped, not dead): the game's silence beyond the bound its time control
  allows (:func:`~dxserial.cluster.jobs.silence_bound`) is the evidence; the director has
  the scheduler remove the worker, which gives the game to another, scored once.

Engines are kept on the workers between games (:mod:`dxserial.cluster.house`, held by the
worker plugin :mod:`dxserial.cluster.plugin`); a game goes preferably to a worker that keeps
both its engines, as a loose Dask restriction (``allow_other_workers``).  Each worker's
health (:mod:`dxserial.cluster.health`) is shown under the crosstable and kept in the state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from pathlib import Path
from typing import Any

from dxserial.cluster.health import Health
from dxserial.cluster.house import table_key
from dxserial.cluster.jobs import (
    PLAYING_TOPIC,
    SLACK,
    STARTED_TOPIC,
    GameJob,
    GameOutcome,
    Placement,
    place,
    placement,
    silence_bound,
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

    from dxserial.cluster.plugin import EngineKeeping, drop_worker, release, warm
except ImportError:  # the optional extra is not installed
    raise ConfigError(
        "a cluster needs Dask distributed: pip install 'dxserial[cluster]' "
        "(on the director and on every worker host)"
    ) from None

__all__ = ["ClusterTournament"]

log = logging.getLogger("dxserial.cluster.runner")

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
        #: --concurrency: at most this many games in flight (default: see _limit).
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
        self.health = Health()
        self._standing_out: set[str] = set()
        #: Game in flight -> where it plays (worker name, address), when it was last heard
        #: of and whether it said a word since it started.
        self._heard: dict[int, tuple[str, str, float, bool]] = {}
        #: Workers found hung (name -> why), and the engines each worker keeps.
        self._hung: dict[str, str] = {}
        self._warm: dict[str, set[str]] = {}
        self._hints: dict[int, str] = {}
        #: The scheduler's word on each worker (address -> name, threads...), as last asked.
        self._workers: dict[str, Any] = {}

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
        client.subscribe_topic(PLAYING_TOPIC, self._playing_word)
        await client.register_plugin(EngineKeeping())
        try:
            await client.wait_for_workers(1, timeout=timeout)
        except TimeoutError:
            self.stopped = (f"no worker joined the scheduler at {self.address} within "
                            f"{timeout:g} s: start one with dask worker {self.address}")
            return False
        workers = (await client.scheduler.identity(n_workers=-1))["workers"]
        self._workers = dict(workers)
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
        await self._start_ahead()
        self.progress.line(
            f"cluster: engines kept on the workers between games; a game silent for "
            f"{silence_bound(self.config, first=False):g} s "
            f"({silence_bound(self.config, first=True):g} s before its first move: the move "
            "timeout, the clock and the engines' start) is taken for a hung worker"
        )
        return True

    async def _start_ahead(self) -> None:
        """Every worker starts the engines whose games may run there, all at once, before
        the first game (as the director does on one machine); one that fails is named, and
        its games there try again (a second failure stops the event, as before)."""
        assert self.client is not None
        began = time.monotonic()
        bound = 2 * self.spec.connect_timeout + SLACK  # (a worker hung from the start)
        try:
            started = await asyncio.wait_for(
                self.client.run(warm, list(self.spec.engines), self.options,
                                on_error="return"), bound)
        except (OSError, TimeoutError) as exc:
            self.progress.line(f"cluster: the workers did not start their engines within "
                               f"{bound:g} s ({type(exc).__name__}): each game starts them")
            return
        names = {str(w.get("address", a)): str(w.get("name")) for a, w in self._workers.items()}
        shown = []
        for address, answer in sorted(started.items()):
            worker = names.get(address, address)
            if isinstance(answer, BaseException) or not isinstance(answer, (tuple, list)):
                self.progress.line(f"cluster: worker {worker} did not start its engines: "
                                   f"{answer}; its games start them")
                continue
            kept, failed = answer
            self._warm[worker] = set(kept)
            shown.append(f"{worker} ({', '.join(kept) or 'none'})")
            for why in failed:
                self.progress.line(f"cluster: {why}; its games there try again")
        if shown:
            self.progress.line(f"cluster: engines started on {'; '.join(shown)} in "
                               f"{time.monotonic() - began:.1f} s")

    async def _close(self) -> None:
        await self.desk.shutdown()
        client, self.client = self.client, None
        for task in self._tasks:
            task.cancel()
        if client is not None:
            keys = sorted({table_key(e, self.options) for e in self.spec.engines})
            with contextlib.suppress(Exception, asyncio.TimeoutError):  # (gone: nothing kept)
                await asyncio.wait_for(client.run(release, keys, on_error="ignore"), 30)
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
        game = self.schedule.games[number - 1]
        before = self._starts.setdefault(number, [])
        if before:
            failed = self._failed.pop(number, None)
            if failed is not None:
                why = f"{failed}; tried once more"
            elif before[-1] in self._hung:
                why = (f"worker {before[-1]} hung while playing it ({self._hung[before[-1]]}); "
                       "the hung attempt is not scored")
                self.replays += 1
            else:
                why = (f"worker {before[-1]} was lost while playing it (the scheduler gave "
                       "it to another worker); the lost attempt is not scored")
                self.replays += 1
                self.health.lose(before[-1])
            self.progress.line(f"game {number}: started again on worker {worker}: {why}")
        elif number in self._futures:
            self.progress.line(f"game {number}: White {game.white} vs Black {game.black} "
                               f"on worker {worker}")
        before.append(worker)
        if number in self._futures:  # (the event may come after the game's result)
            self._heard[number] = (worker, str(msg.get("address")), time.monotonic(), False)
            self.game_status(number, f"{number}: {game.white}-{game.black} on {worker}")

    def _playing_word(self, event: tuple[float, Any]) -> None:
        """A worker's word that a game goes on there: the silence watch starts again."""
        msg = event[1]
        if not isinstance(msg, dict) or not isinstance(msg.get("game"), int):
            return
        heard = self._heard.get(msg["game"])
        if heard is not None and heard[0] == str(msg.get("name")):
            self._heard[msg["game"]] = (heard[0], heard[1], time.monotonic(), True)

    async def _watch_silence(self) -> None:
        """A game silent beyond its bound: its worker is hung (stopped, not dead); the
        scheduler is asked to remove it, which gives its games to other workers."""
        now = time.monotonic()
        for number, (worker, address, since, spoke) in list(self._heard.items()):
            bound = silence_bound(self.config, first=not spoke)
            if now - since <= bound or worker in self._hung:
                continue
            self._hung[worker] = f"game {number} silent for {now - since:.0f} s"
            self.health.lose(worker)
            self.progress.line(
                f"worker {worker}: game {number} silent for {now - since:.0f} s (its time "
                f"control allows {bound:g} s): taken for hung (stopped, not dead); the "
                "scheduler removes it and gives its games to another worker"
            )
            for other, heard in list(self._heard.items()):
                if heard[0] == worker:
                    del self._heard[other]
            if self.client is not None:
                with contextlib.suppress(Exception, asyncio.TimeoutError):
                    await asyncio.wait_for(self.client.run_on_scheduler(drop_worker, address), 30)

    async def _limit(self) -> int:
        """Games in flight: the workers' threads (each plays one game) and one more per
        worker, waiting there to start as soon as a game ends (not after the director's
        round trip); capped by --concurrency."""
        assert self.client is not None
        identity = await self.client.scheduler.identity(n_workers=-1)
        self._workers = dict(identity.get("workers") or {})
        threads = int(sum(int(w.get("nthreads") or 0) for w in self._workers.values()))
        threads += len(self._workers)
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
            done, _ = await asyncio.wait(self._tasks, timeout=1.0,
                                         return_when=asyncio.FIRST_COMPLETED)
            await self._watch_silence()
            for task in done:
                game = self._tasks.pop(task)
                self._futures.pop(game.number, None)
                self._status.pop(game.number, None)
                self._heard.pop(game.number, None)
                self._hints.pop(game.number, None)
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
        # Engines are kept on the worker: stop code 1 only in an engine's last game.
        last = self.schedule.last_for(game, self.state.games)
        return GameJob(game.number, self.entries[game.white], self.entries[game.black],
                       self.options, self.config, start, frozenset(last))

    def _prefer(self, game: Pairing) -> str | None:
        """A worker that keeps both engines of ``game`` and has a thread free for it (as
        far as this director's games go), else None: any worker."""
        engines = {game.white, game.black}
        busy: dict[str, int] = {}
        for number in self._futures:
            starts = self._starts.get(number)
            where = starts[-1] if starts else self._hints.get(number)
            if where is not None:
                busy[where] = busy.get(where, 0) + 1
        for info in sorted(self._workers.values(), key=lambda i: str(i.get("name"))):
            name = str(info.get("name"))
            if name in self._hung or not engines <= self._warm.get(name, set()):
                continue
            if busy.get(name, 0) < int(info.get("nthreads") or 1) + 1:  # (one waiting)
                return name
        return None

    def _submit(self, game: Pairing) -> None:
        assert self.client is not None
        where = self.placements[(game.white, game.black)]
        workers, loose = list(where.workers) or None, False
        if workers is None and (hint := self._prefer(game)) is not None:
            workers, loose = [hint], True  # preferably there; elsewhere when it cannot
            self._hints[game.number] = hint
        future = self.client.submit(
            play_game, self._job(game), key=f"dxserial-game-{game.number}-{uuid.uuid4().hex[:8]}",
            pure=False, retries=RETRIES, workers=workers, allow_other_workers=loose,
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
        self._warm[outcome.worker] = set(outcome.kept)
        self.health.add(outcome.worker, plies=outcome.plies, seconds=outcome.seconds,
                        forfeits=outcome.forfeits, time_losses=outcome.time_losses,
                        crashes=outcome.crashes)
        self.state.workers = self.health.state()
        self._record(game, entry, where=f" on {outcome.worker}")
        for line in self.health.standing_out():
            if line not in self._standing_out:
                self._standing_out.add(line)
                self.progress.line(line)

    def _load(self) -> None:
        super()._load()
        self.health.load(self.state.workers)

    def _restart_lines(self) -> list[str]:
        """Under the crosstable (live line, web view, the end): each worker's health."""
        return super()._restart_lines() + self.health.table() + self.health.standing_out()


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
