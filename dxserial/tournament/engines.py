"""``[engines.NAME]`` tables for ``dxserial match --engines``: read, and made endpoints.

They are the tournament file's engine tables (``spec.engine_entry`` checks each), so they
live beside it; ``hosting`` only runs the commands.
"""

from __future__ import annotations

from pathlib import Path

from dxserial.errors import ConfigError
from dxserial.hosting.host import CommandEndpoint
from dxserial.tournament.spec import EngineEntry, engine_entry
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions, parse_engine_endpoint

__all__ = ["engine_endpoint", "load_engines"]


def load_engines(path: Path) -> dict[str, EngineEntry]:
    """The ``[engines.NAME]`` tables of a TOML file (``dxserial match --engines``)."""
    from dxserial.files import read_text
    from dxserial.tomltext import MAX_TOML_BYTES, parse_toml

    text = read_text(path, "engines file", "give the path of a TOML file of [engines.NAME]",
                     limit=MAX_TOML_BYTES)
    data = parse_toml(text, str(path))
    tables = data.get("engines")
    if not isinstance(tables, dict) or not tables:
        raise ConfigError(f"{path}: no [engines.NAME] table")
    return {str(n): engine_entry(str(n), e, str(path), path.parent) for n, e in tables.items()}


def engine_endpoint(
    text: str, named: dict[str, EngineEntry], options: LinkOptions, pdn: Path
) -> EngineEndpoint:
    """ENDPOINT, or an engine of ``named``: a command the director runs (log in ``pdn``)."""
    entry = named.get(text)
    if entry is None:
        return EngineEndpoint(parse_engine_endpoint(text), options)
    if entry.command is None:
        return EngineEndpoint(parse_engine_endpoint(entry.endpoint), options)
    return CommandEndpoint(
        entry.command,
        options,
        label=entry.name,
        workdir=pdn / "engines" / entry.name,
        log_path=pdn / f"{entry.name}.log",
    )
