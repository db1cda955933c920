"""``[engines.NAME]`` tables made endpoints: one factory for ``dxserial match --engines``,
the tournament and the cluster worker, so one table means one endpoint everywhere.

The tables are the tournament file's engine tables (``spec.engine_entry`` checks each), so
they live beside it; ``processes`` only runs the commands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from dxserial.config import read_toml, unknown_key
from dxserial.errors import ConfigError
from dxserial.processes.endpoint import CommandEndpoint
from dxserial.tournament.spec import KEYS_HINT, KNOWN_KEYS, EngineEntry, engine_entry
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions, parse_engine_endpoint

__all__ = ["engine_endpoint", "entry_endpoint", "load_engines", "table_options"]


def load_engines(path: Path) -> dict[str, EngineEntry]:
    """The ``[engines.NAME]`` tables of a TOML file (``dxserial match --engines``)."""
    data = read_toml(path, "engines file", "give the path of a TOML file of [engines.NAME]")
    for key in data:  # a tournament file's keys may stand beside the tables
        if key not in KNOWN_KEYS:
            raise unknown_key(str(path), key, KNOWN_KEYS, KEYS_HINT, word="setting")
    tables = data.get("engines")
    if not isinstance(tables, dict) or not tables:
        raise ConfigError(f"{path}: no [engines.NAME] table")
    return {str(n): engine_entry(str(n), e, str(path), path.parent) for n, e in tables.items()}


def table_options(entry: EngineEntry, options: LinkOptions) -> LinkOptions:
    """``options`` with what the table says for itself (its ``link`` and ``baud``)."""
    these = options
    if entry.link is not None:
        these = dataclasses.replace(these, link=entry.link)
    if entry.baud is not None:
        these = dataclasses.replace(
            these, serial=dataclasses.replace(these.serial, baudrate=entry.baud)
        )
    return these


def entry_endpoint(
    entry: EngineEntry,
    options: LinkOptions,
    folder: Path,
    notify: Callable[[CommandEndpoint, str], None] | None = None,
    *,
    slot: int | None = None,
) -> EngineEndpoint:
    """An engine table as an endpoint, with the table's link and speed: its endpoint, or
    its command run in ``folder/engines/NAME`` with its log in ``folder/NAME.log``.

    ``slot`` (2, 3 ...): another process of the same engine for a concurrent game, with a
    folder, log and port of its own (``NAME-2``).
    """
    these = table_options(entry, options)
    if entry.command is None:
        return EngineEndpoint(parse_engine_endpoint(entry.endpoint), these)
    label = entry.name if slot is None else f"{entry.name}-{slot}"
    return CommandEndpoint(
        entry.command,
        these,
        label=label,
        workdir=folder / "engines" / label,
        log_path=folder / f"{label}.log",
        notify=notify,
    )


def engine_endpoint(
    text: str, named: dict[str, EngineEntry], options: LinkOptions, folder: Path
) -> EngineEndpoint:
    """ENDPOINT, or the name of a table of ``named`` (:func:`entry_endpoint`)."""
    entry = named.get(text)
    if entry is None:
        return EngineEndpoint(parse_engine_endpoint(text), options)
    return entry_endpoint(entry, options, folder)
