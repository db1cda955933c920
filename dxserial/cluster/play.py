"""What a worker runs for one game: its engines started on this host, the game played with
the director's own conductor and arbiter (:meth:`Match.game`), the record handed back.

Each game runs in a fresh temporary folder (the engines' working folders, logs and the
PDN) removed afterwards, on an event loop of its own in the worker's task thread, so a
game shares nothing with the worker's Dask machinery or with another game on the host.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket
import tempfile
from pathlib import Path

from dxserial.cluster.jobs import STARTED_TOPIC, EngineNotStarted, GameJob, GameOutcome
from dxserial.errors import DxSerialError
from dxserial.hosting.host import CommandEndpoint
from dxserial.match.links import EngineDesk, MatchEngine
from dxserial.match.runner import Match
from dxserial.tournament.engines import entry_endpoint

__all__ = ["play_game", "worker_name"]

log = logging.getLogger("dxserial.cluster.play")


def worker_name() -> str:
    """This worker's ``--name`` (its address when it has none); the host name outside Dask."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return socket.gethostname()
    return str(worker.name)


def _announce(number: int, where: str, failed: str = "") -> None:
    """Tell the director this worker started game ``number`` (a second start is a replay),
    or that it gave up on it (``failed``: why; the task is then tried once more)."""
    msg: dict[str, object] = {"game": number, "name": where}
    if failed:
        msg["failed"] = failed
    try:
        from distributed import get_worker

        get_worker().log_event(STARTED_TOPIC, msg)
    except (ImportError, ValueError):
        pass


def play_game(job: GameJob) -> GameOutcome:
    """The task: play ``job`` here and return its outcome (EngineNotStarted if an engine
    could not be started or reached on this host)."""
    where = worker_name()
    _announce(job.number, where)
    try:
        with tempfile.TemporaryDirectory(prefix=f"dxserial-game{job.number}-") as folder:
            return asyncio.run(_play(job, Path(folder), where))
    except EngineNotStarted as exc:
        _announce(job.number, where, failed=str(exc))
        raise


async def _start(side: MatchEngine, where: str) -> None:
    await side.endpoint.prepare()
    if isinstance(side.endpoint, CommandEndpoint):
        try:
            await side.endpoint.open_early()
        except DxSerialError as exc:
            raise EngineNotStarted(
                f"engine {side.label} could not be started on worker {where}: {exc}"
            ) from None


async def _close(desk: EngineDesk, side: MatchEngine) -> None:
    await desk.close(side)
    await side.endpoint.close()


async def _play(job: GameJob, folder: Path, where: str) -> GameOutcome:
    config = dataclasses.replace(job.config, pdn_dir=folder)
    white = MatchEngine(job.white.name, endpoint=entry_endpoint(job.white, job.options, folder))
    black = MatchEngine(job.black.name, endpoint=entry_endpoint(job.black, job.options, folder))
    desk = EngineDesk()
    match = Match(white, black, config, desk=desk)
    try:
        # Both engines start at once: a process's start-up is most of a short game.
        started = await asyncio.gather(*(_start(side, where) for side in (white, black)),
                                       return_exceptions=True)
        for failure in started:  # both done (none left starting while they are closed)
            if isinstance(failure, BaseException):
                raise failure
        summary = await match.game(job.number, white, black, last=set(job.last), start=job.start)
    finally:
        await asyncio.gather(*(_close(desk, side) for side in (white, black)),
                             return_exceptions=True)
        await desk.shutdown()
    lost = [s for s in (white, black) if s.failure and s.failure.startswith("cannot reach")]
    if summary is None or lost:
        why = lost[0].failure if lost else "the game did not start"
        raise EngineNotStarted(f"game {job.number} on worker {where}: {why}")
    logs = {}
    for side in (white, black):
        if isinstance(side.endpoint, CommandEndpoint) and side.endpoint.log_path.exists():
            logs[side.label] = side.endpoint.log_path.read_text(encoding="utf-8", errors="replace")
    pdn = summary.pdn
    return GameOutcome(
        number=job.number,
        result=summary.result.result,
        reason=summary.result.reason,
        plies=summary.plies,
        white_name=white.name,
        black_name=black.name,
        worker=where,
        pdn_name=pdn.name if pdn else None,
        pdn_text=pdn.read_text(encoding="utf-8") if pdn else "",
        logs=logs,
    )
