"""The worker plugin that holds a worker's :class:`~dxserial.cluster.house.EngineHouse`.

Registered by the director (idempotent: a second director on the same cluster leaves the
engines of the first alone); Dask sets it up on every worker, those that join later
included, and tears it down when the worker closes: every engine kept there is stopped.
"""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from dxserial.cluster.house import EngineHouse
from dxserial.tournament.spec import EngineEntry
from dxserial.transports.endpoints import LinkOptions

__all__ = ["PLUGIN_NAME", "EngineKeeping", "drop_worker", "release", "warm"]

PLUGIN_NAME = "dxserial-engines"


class EngineKeeping(WorkerPlugin):  # type: ignore[misc]  # (Dask is untyped)
    """Keeps engine processes on a worker between games (docs/cluster.md)."""

    idempotent = True
    name = PLUGIN_NAME

    def __init__(self) -> None:
        self.house: EngineHouse | None = None

    def setup(self, worker: Any) -> None:
        self.house = EngineHouse()

    def teardown(self, worker: Any) -> None:
        house, self.house = self.house, None
        if house is not None:
            house.close()


def warm(entries: list[EngineEntry], options: LinkOptions, dask_worker: Any = None
         ) -> tuple[list[str], list[str]]:
    """Run on every worker by the director before the first game (``Client.run``): the
    command engines whose games may run on this worker (its name, its resources) are
    started; the names started or kept, and why each that failed did."""
    plugin = getattr(dask_worker, "plugins", {}).get(PLUGIN_NAME)
    house = getattr(plugin, "house", None)
    if not isinstance(house, EngineHouse):
        return [], []
    name = str(dask_worker.name)
    have = dict(getattr(dask_worker.state, "total_resources", None) or {})
    fits = [e for e in entries if e.command is not None
            and e.worker in (None, name)
            and all(have.get(k, 0) >= v for k, v in e.resources)]
    failed = house.warm(fits, options, name)
    return house.names(), failed


def release(keys: list[str], dask_worker: Any = None) -> int:
    """Run on every worker by the director at its end (``Client.run``): the engines of
    its tables stop; how many did here."""
    plugin = getattr(dask_worker, "plugins", {}).get(PLUGIN_NAME)
    house = getattr(plugin, "house", None)
    return house.release(set(keys)) if isinstance(house, EngineHouse) else 0


async def drop_worker(address: str, dask_scheduler: Any = None) -> str:
    """Run on the scheduler by the director (``Client.run_on_scheduler``) for a worker
    found hung: removed as a lost one, so its tasks go to other workers."""
    if dask_scheduler is None:
        return "no scheduler"
    return str(await dask_scheduler.remove_worker(
        address=address, stimulus_id=f"dxserial-hung-{address}", close=True))
