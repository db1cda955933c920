"""What a worker runs for one game: the game played on this worker's engines, kept from
game to game (:mod:`dxserial.cluster.house`), with the director's own conductor and arbiter
(:meth:`Match.game`), the record handed back.

The engines live in the worker plugin's house (:mod:`dxserial.cluster.plugin`); outside a
worker that has it (a test calling :func:`play_game` itself) in a house of this process.
The task's thread waits for the game, which runs on the house's own event loop.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from dxserial.cluster.house import EngineHouse
from dxserial.cluster.jobs import (
    PLAYING_TOPIC,
    STARTED_TOPIC,
    EngineNotStarted,
    GameJob,
    GameOutcome,
)

__all__ = ["play_game", "worker_name"]

PLUGIN_NAME = "dxserial-engines"  # (as dxserial.cluster.plugin, which imports Dask)
_spare: EngineHouse | None = None
_spare_lock = threading.Lock()


def _worker() -> Any:
    try:
        from distributed import get_worker

        return get_worker()
    except (ImportError, ValueError):
        return None


def worker_name() -> str:
    """This worker's ``--name`` (its address when it has none); the host name outside Dask."""
    worker = _worker()
    return socket.gethostname() if worker is None else str(worker.name)


def _house() -> EngineHouse:
    """The worker plugin's house, else this process's own."""
    global _spare
    plugin = getattr(_worker(), "plugins", {}).get(PLUGIN_NAME)
    house = getattr(plugin, "house", None)
    if isinstance(house, EngineHouse):
        return house
    with _spare_lock:
        if _spare is None:
            _spare = EngineHouse()
        return _spare


def _tell(topic: str, msg: dict[str, Any]) -> None:
    worker = _worker()
    if worker is not None:
        worker.log_event(topic, {**msg, "name": str(worker.name), "address": worker.address})


def _announce(number: int, where: str, failed: str = "") -> None:
    """Tell the director this worker started game ``number`` (a second start is a replay),
    or that it gave up on it (``failed``: why; the task is then tried once more)."""
    msg: dict[str, Any] = {"game": number}
    if failed:
        msg["failed"] = failed
    _tell(STARTED_TOPIC, msg)


def play_game(job: GameJob) -> GameOutcome:
    """The task: play ``job`` here and return its outcome (EngineNotStarted if an engine
    could not be started or reached on this host)."""
    where = worker_name()
    _announce(job.number, where)
    try:
        return _house().play(job, where, lambda msg: _tell(PLAYING_TOPIC, msg))
    except EngineNotStarted as exc:
        _announce(job.number, where, failed=str(exc))
        raise
