"""A rig file read and checked: every line's bridge settings, no two lines on one port or address.

A line's keys are the bridge's settings as :class:`~dxserial.bridge.settings.BridgeConfig`
declares them (``baud``, ``peer_grace`` ...; the same keys as ``dxserial bridge --config``),
checked by the same declaration, plus the line's own (:data:`~dxserial.serve.keys.EXTRA`).
Nothing here opens a port or creates a folder: the daemon does that when a line starts.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dxserial.bridge import statefile
from dxserial.bridge.settings import BridgeConfig, bridge_config
from dxserial.config import did_you_mean, read_toml, unknown_key
from dxserial.errors import ConfigError
from dxserial.serve.keys import EXTRA, LINE_SETTINGS, OWN, TOP
from dxserial.setting import file_values
from dxserial.tomltext import parse_toml
from dxserial.transports.access import parse_networks
from dxserial.transports.schemes import lookup
from dxserial.transports.tcp import Endpoint

#: A line's name: it heads each of its log records, names its status row and ``{line}``.
LINE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
RIG_HINT = "name a rig file such as /etc/dxserial/rig.toml (dxserial serve --keys shows one)"

#: Where a line's keys are listed, for the error about one it does not know.
KEYS_HINT = "dxserial serve --keys lists them"


def line_keys() -> list[str]:
    """Every key a line takes, in the order ``dxserial serve --keys`` shows them."""
    return list(LINE_SETTINGS)


@dataclass(frozen=True)
class LineSpec:
    """One line: its bridge's settings (``port`` empty while a serial number names it)."""

    name: str
    config: BridgeConfig
    serial_number: str | None = None
    trace: Path | None = None

    @property
    def where(self) -> str:
        """The port as the file names it."""
        if self.serial_number is not None:
            return f"USB serial number {self.serial_number}"
        return self.config.port


@dataclass(frozen=True)
class RigSpec:
    path: Path
    lines: dict[str, LineSpec]
    web: str | None = None
    web_allow: tuple[str, ...] = ()
    status: Path | None = None


def read_rig(path: Path) -> RigSpec:
    """Read and check ``path``; :class:`ConfigError` names the line and key of a mistake."""
    return rig_spec(read_toml(path, "rig file", RIG_HINT), path)


def parse_rig(text: str, path: Path) -> RigSpec:
    """The rig file ``text`` (read from ``path``), checked."""
    return rig_spec(parse_toml(text, str(path)), path)


def rig_spec(data: dict[str, Any], path: Path) -> RigSpec:
    """A rig file's table, checked."""
    allowed_top = {*TOP, "defaults", "lines"}
    for key in data:
        if key not in allowed_top:
            raise unknown_key(str(path), key, allowed_top)
    base = path.resolve().parent
    defaults = _table(path, data, "defaults")
    for key in defaults:
        if key not in LINE_SETTINGS:
            raise ConfigError(f"{path}: [defaults]: unknown key '{key}'"
                              f"{did_you_mean(key, [*LINE_SETTINGS, *TOP])} ({KEYS_HINT})")
        if key in OWN:
            raise ConfigError(f"{path}: [defaults]: '{key}' belongs to each line, not to "
                              "[defaults]")
    tables = _table(path, data, "lines")
    if not tables:
        raise ConfigError(f"{path}: no lines: add a [lines.NAME] table with port and listen "
                          "(dxserial serve --keys)")
    lines: dict[str, LineSpec] = {}
    for name, table in tables.items():
        if not LINE_NAME.fullmatch(name):
            raise ConfigError(f"{path}: line name {name!r}: use up to 32 letters, digits, '-' "
                              "and '_'")
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: 'lines.{name}' must be a table ([lines.{name}])")
        lines[name] = line_spec(name, {**defaults, **table}, path, base)
    _check_distinct(path, lines)
    web = data.get("web")
    if web is not None and not isinstance(web, str):
        raise ConfigError(f"{path}: key 'web': expected a string HOST:PORT, got {web!r}")
    allow = data.get("web_allow", [])
    if isinstance(allow, str):
        allow = [allow]
    if not isinstance(allow, list) or not all(isinstance(a, str) for a in allow):
        raise ConfigError(f"{path}: key 'web_allow': expected a list of ranges, got {allow!r}")
    parse_networks(allow)
    status = data.get("status")
    if status is not None and not isinstance(status, str):
        raise ConfigError(f"{path}: key 'status': expected a path, got {status!r}")
    return RigSpec(path, lines, web, tuple(allow), base / status if status else None)


def _table(path: Path, data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: '{key}' must be a table ([{key}])")
    return value


def line_spec(name: str, table: Mapping[str, Any], path: Path, base: Path) -> LineSpec:
    """One line's table, checked and turned into the bridge's settings."""
    where = f"{path}: line '{name}'"
    for key in table:
        if key not in LINE_SETTINGS:
            raise unknown_key(where, key, LINE_SETTINGS, KEYS_HINT)
    if ("port" in table) == ("serial_number" in table):
        raise ConfigError(f"{where}: name its port: port = \"/dev/...\" or serial_number = "
                          "\"...\" (one of them)")
    if ("listen" in table) == ("connect" in table):
        raise ConfigError(f"{where}: say where the TCP engine is: listen = \"HOST:PORT\" or "
                          "connect = \"HOST:PORT\" (one of them)")
    values = file_values({k: _placed(name, v) for k, v in table.items()}, LINE_SETTINGS, where)
    serial_number = trace = None
    if "serial_number" in values:
        serial_number = values.pop("serial_number").strip()
        if not serial_number:
            raise ConfigError(f"{where}: key 'serial_number': expected a serial number, got an "
                              "empty string")
    if "trace" in values:
        trace = base / values.pop("trace")
    port = values.get("port", "")
    if port:
        try:
            lookup(port, endpoints=False)  # a typo'd scheme is refused now, not at the open
        except ConfigError as exc:
            raise ConfigError(f"{where}: key 'port': {exc}") from None
    try:
        config = bridge_config({**values, "port": port}, option=False)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return LineSpec(name, _placed_paths(config, base, listens="listen" in table), serial_number,
                    trace)


def _placed(name: str, value: Any) -> Any:
    """``{line}`` in a string value is the line's name (one PDN folder per line)."""
    return value.replace("{line}", name) if isinstance(value, str) else value


def _placed_paths(config: BridgeConfig, base: Path, *, listens: bool) -> BridgeConfig:
    """Folders relative to the rig file's; no listening address for a line that connects
    (every line says for itself where its TCP engine is)."""
    moved: dict[str, Any] = {
        f.name: base / value
        for f in dataclasses.fields(config)
        if isinstance(value := getattr(config, f.name), Path)
    }
    return dataclasses.replace(config, **moved, listen=config.listen if listens else None)


def port_identity(line: LineSpec) -> str:
    """What two lines must not share: the device behind a path (its by-id link where udev
    gives one), a serial number, a URL; it names the line's state file too."""
    return statefile.port_identity(line.config.port, line.serial_number)


_WILDCARDS = {"0.0.0.0", "::", ""}


def _clash(a: Endpoint | tuple[str, int], b: Endpoint | tuple[str, int]) -> bool:
    if a[1] != b[1] or a[1] == 0:  # port 0: each gets a free port of its own
        return False
    return a[0] == b[0] or a[0] in _WILDCARDS or b[0] in _WILDCARDS


def _check_distinct(path: Path, lines: dict[str, LineSpec]) -> None:
    """Two lines on one port, one listening address, one engine address or one trace: no."""
    seen: dict[str, str] = {}
    for line in lines.values():
        # Its identity, and the device behind a link (a udev link and its tty are one port).
        ident = port_identity(line)
        device = ident if "://" in ident or ident.startswith("usb-serial:") else (
            os.path.realpath(ident))
        for key in {ident, device}:
            if key in seen:
                raise ConfigError(f"{path}: lines '{seen[key]}' and '{line.name}' both name "
                                  f"the port {line.where}: one line per port")
            seen[key] = line.name
    _check_state_files(path, lines)
    items = list(lines.values())
    for i, one in enumerate(items):
        for other in items[i + 1:]:
            pairs = (
                ("listen on", one.config.listen, other.config.listen, _clash),
                ("connect to", one.config.connect, other.config.connect,
                 lambda a, b: tuple(a) == tuple(b)),
            )
            for what, a, b, same in pairs:
                if a is not None and b is not None and same(a, b):
                    raise ConfigError(f"{path}: lines '{one.name}' and '{other.name}' both "
                                      f"{what} {a[0]}:{a[1]}: one address per line")
            if one.trace is not None and one.trace == other.trace:
                raise ConfigError(f"{path}: lines '{one.name}' and '{other.name}' both trace "
                                  f"to {one.trace}: one trace file per line ({{line}} in the "
                                  "path names it)")


def _check_state_files(path: Path, lines: dict[str, LineSpec]) -> None:
    """Two lines must never read one state file: each would end the other's game."""
    seen: dict[Path, str] = {}
    for line in lines.values():
        if not line.config.serial_check:
            continue
        folder = statefile.state_dir(line.config.state_dir, os.environ).path
        where = statefile.state_file(folder, port_identity(line))
        if where in seen:
            raise ConfigError(f"{path}: lines '{seen[where]}' and '{line.name}' would share the "
                              f"state file {where}: give one of them another state_dir")
        seen[where] = line.name


__all__ = ["EXTRA", "LINE_NAME", "LineSpec", "RigSpec", "line_keys", "line_spec",
           "parse_rig", "port_identity", "read_rig"]
