"""A rig file read and checked: every line's bridge settings, no two lines on one port or address.

A line's table maps onto :class:`~dxserial.bridge.settings.BridgeConfig` key by key: a key
that names one of its fields is converted by that field's type (so a bridge setting added
later is a key of the rig file at once), and the bridge's option names for the nested serial
and NULMODEM settings (``baud``, ``start_byte`` ...) are mapped by :data:`NESTED`.  Nothing
here opens a port or creates a folder: the daemon does that when a line starts.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from dxserial.bridge import statefile
from dxserial.bridge.settings import BridgeConfig
from dxserial.config import MAX_CONFIG_BYTES
from dxserial.errors import ConfigError
from dxserial.files import read_text
from dxserial.protocol.links import NulModemSettings
from dxserial.serve.keys import LINE, OWN, TOP
from dxserial.tomltext import parse_toml
from dxserial.transports.access import parse_networks
from dxserial.transports.schemes import address, lookup
from dxserial.transports.serial import SerialSettings
from dxserial.transports.tcp import Endpoint, parse_endpoint

#: A line's name: it heads each of its log records, names its status row and ``{line}``.
LINE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
RIG_HINT = "name a rig file such as /etc/dxserial/rig.toml (dxserial serve --keys shows one)"

#: The bridge's option names for its nested settings: key -> (part, field, type).
NESTED: dict[str, tuple[str, str, type]] = {
    "baud": ("serial", "baudrate", int),
    "bytesize": ("serial", "bytesize", int),
    "parity": ("serial", "parity", str),
    "stopbits": ("serial", "stopbits", float),
    "rtscts": ("serial", "rtscts", bool),
    "xonxoff": ("serial", "xonxoff", bool),
    "dtr": ("serial", "dtr", int),
    "rts": ("serial", "rts", int),
    "start_byte": ("nulmodem", "start", str),
    "end_byte": ("nulmodem", "end", str),
    "echo_timeout": ("nulmodem", "timeout", float),
    "max_attempts": ("nulmodem", "max_attempts", int),
}
#: Keys of a line that are not bridge settings: the daemon's own.
EXTRA: dict[str, type] = {"serial_number": str, "trace": str}
_NESTED_PARTS = {"serial", "nulmodem"}
_HINTS = typing.get_type_hints(BridgeConfig)
#: Fields every line must say for itself (a default would put every line on one address).
_NO_DEFAULT = {"listen"}


def line_keys() -> list[str]:
    """Every key a line takes: the documented ones first, then any newer bridge setting."""
    fields_now = [f.name for f in fields(BridgeConfig) if f.name not in _NESTED_PARTS]
    known = {*fields_now, *NESTED, *EXTRA}
    return [k for k in LINE if k in known] + sorted(known - set(LINE))


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
    text = read_text(path, "rig file", RIG_HINT, limit=MAX_CONFIG_BYTES)
    return parse_rig(text, path)


def parse_rig(text: str, path: Path) -> RigSpec:
    data = parse_toml(text, str(path))
    allowed_top = {*TOP, "defaults", "lines"}
    for key in data:
        if key not in allowed_top:
            raise ConfigError(f"{path}: unknown key '{key}'{_meant(key, allowed_top)} (known "
                              f"keys: {', '.join(sorted(allowed_top))})")
    base = path.resolve().parent
    defaults = _table(path, data, "defaults")
    for key in defaults:
        if key not in line_keys():
            raise ConfigError(f"{path}: [defaults]: unknown key '{key}'"
                              f"{_meant(key, [*line_keys(), *TOP])} (dxserial serve --keys "
                              "lists them)")
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


def _meant(key: str, known: typing.Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def line_spec(name: str, table: Mapping[str, Any], path: Path, base: Path) -> LineSpec:
    """One line's table, checked and turned into the bridge's settings."""
    where = f"{path}: line '{name}'"
    keys = line_keys()
    for key in table:
        if key not in keys:
            raise ConfigError(f"{where}: unknown key '{key}'{_meant(key, keys)} (dxserial serve "
                              "--keys lists them)")
    if ("port" in table) == ("serial_number" in table):
        raise ConfigError(f"{where}: name its port: port = \"/dev/...\" or serial_number = "
                          "\"...\" (one of them)")
    if ("listen" in table) == ("connect" in table):
        raise ConfigError(f"{where}: say where the TCP engine is: listen = \"HOST:PORT\" or "
                          "connect = \"HOST:PORT\" (one of them)")
    values = {key: _placed(name, value) for key, value in table.items()}
    kwargs: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {"serial": {}, "nulmodem": {}}
    serial_number = trace = None
    for key, value in values.items():
        try:
            if key in NESTED:
                part, field_name, kind = NESTED[key]
                nested[part][field_name] = _nested(key, value, kind)
            elif key == "serial_number":
                serial_number = _plain(value, str).strip()
                if not serial_number:
                    raise ConfigError("expected a serial number, got an empty string")
            elif key == "trace":
                trace = base / _plain(value, str)
            else:
                kwargs[key] = _convert(key, value, _HINTS[key], base)
        except ConfigError as exc:
            raise ConfigError(f"{where}: key '{key}': {exc}") from None
    try:
        serial = SerialSettings(**nested["serial"])
        nulmodem = NulModemSettings(**nested["nulmodem"])
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if nulmodem.start == nulmodem.end:
        raise ConfigError(f"{where}: start_byte and end_byte must differ")
    if not nulmodem.timeout > 0 or nulmodem.max_attempts < 1:
        raise ConfigError(f"{where}: echo_timeout must be > 0 and max_attempts >= 1")
    kwargs.setdefault("listen", None)
    port = str(kwargs.pop("port", ""))
    if port:
        try:
            lookup(port, endpoints=False)  # a typo'd scheme is refused now, not at the open
        except ConfigError as exc:
            raise ConfigError(f"{where}: key 'port': {exc}") from None
    config = BridgeConfig(port=port, serial=serial, nulmodem=nulmodem, **kwargs)
    return LineSpec(name, config, serial_number, trace)


def _placed(name: str, value: Any) -> Any:
    """``{line}`` in a string value is the line's name (one PDN folder per line)."""
    return value.replace("{line}", name) if isinstance(value, str) else value


_KIND_NAMES = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}


def _plain(value: Any, kind: type) -> Any:
    """``value`` as ``kind`` (an int where a number is asked is one); else the error."""
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        if isinstance(value, float) and (math.isnan(value) or value < 0):
            raise ConfigError(f"expected a number >= 0, got {value!r}")
        return value
    raise ConfigError(f"expected {_KIND_NAMES.get(kind, kind.__name__)}, got {value!r}")


def _nested(key: str, value: Any, kind: type) -> Any:
    if key in ("start_byte", "end_byte"):
        return _byte(value)
    if key in ("dtr", "rts"):
        if isinstance(value, bool) or value in (0, 1):
            return bool(value)
        raise ConfigError(f"expected 0 or 1, got {value!r}")
    if key == "parity":
        return _plain(value, str).upper()
    return _plain(value, kind)


def _byte(value: Any) -> int:
    """A byte written as 2, "0x02", "2" or one character."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        try:
            number = int(value, 0)
        except ValueError:
            if len(value) != 1:
                raise ConfigError(f"{value!r} is not a byte (e.g. \"0x02\")") from None
            number = ord(value)
    else:
        raise ConfigError(f"{value!r} is not a byte (e.g. \"0x02\")")
    if not 0 <= number <= 0xFF:
        raise ConfigError(f"{value!r} is not in 0..255")
    return number


def _convert(key: str, value: Any, hint: Any, base: Path) -> Any:
    """``value`` as the bridge's field of type ``hint`` wants it."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        if value is None:
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(key, value, inner[0], base) if len(inner) == 1 else value
    if origin is Literal:
        if value not in args:
            choices = " or ".join(repr(a) for a in args)
            raise ConfigError(f"expected {choices}, got {value!r}")
        return value
    if origin is tuple and args == (str, int):  # an address
        text = _plain(value, str)
        schemes = ("tcp", "listen") if key == "listen" else ("tcp",)
        return parse_endpoint(address(text, key, schemes))
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:  # address ranges
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return parse_networks(value)
        return parse_networks(_plain(value, str))
    if hint is Path:
        return base / _plain(value, str)
    if hint in (str, int, float, bool):
        return _plain(value, hint)
    raise ConfigError(f"cannot be set in a rig file (a {hint} setting)")  # pragma: no cover


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
        ident = port_identity(line)
        if ident in seen:
            raise ConfigError(f"{path}: lines '{seen[ident]}' and '{line.name}' both name the "
                              f"port {line.where}: one line per port")
        seen[ident] = line.name
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


__all__ = ["LINE_NAME", "NESTED", "LineSpec", "RigSpec", "line_keys", "line_spec",
           "parse_rig", "port_identity", "read_rig"]
