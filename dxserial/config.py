"""Settings from a TOML file, checked against what the command accepts.

A service runs ``dxserial bridge --config /etc/dxserial/NAME.toml``; the file uses the
command's long option names (``echo_timeout`` for ``--echo-timeout``).  A typo must not
be ignored on an unattended rig, so an unknown key or a value of the wrong kind is an
error naming the key and the file.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from dxserial.errors import ConfigError
from dxserial.files import read_text
from dxserial.tomltext import MAX_TOML_BYTES, parse_toml

#: What a user should name instead of a file that is not a configuration file.
CONFIG_HINT = "name a TOML file such as /etc/dxserial/NAME.toml (dxserial udev print config)"
#: A configuration file is a few lines; more is a mistaken path (/dev/zero, a log).
MAX_CONFIG_BYTES = MAX_TOML_BYTES

_KIND_NAMES = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}


def layered(
    values: Mapping[str, Any],
    explicit: Collection[str],
    config_file: Path | None,
    schema: Mapping[str, type],
) -> dict[str, Any]:
    """Settings from every source, one key at a time: the command line over the environment
    (both in ``values``, named in ``explicit`` when the user gave them) over the file over
    the defaults (``values`` for the keys nobody gave)."""
    merged = {key: values[key] for key in schema}
    if config_file is None:
        return merged
    for key, value in load_config(config_file, schema).items():
        if key not in explicit:
            merged[key] = value
    return merged


def read_toml(path: Path, what: str, hint: str) -> dict[str, Any]:
    """The TOML file at ``path`` as a table: every settings file is read here (``what``
    names it in errors, ``hint`` says which file to name instead)."""
    return parse_toml(read_text(path, what, hint, limit=MAX_CONFIG_BYTES), str(path))


def did_you_mean(key: str, known: Iterable[str]) -> str:
    """`` (did you mean 'baud'?)`` for a mistyped key, or "" when nothing is close."""
    close = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def unknown_key(
    where: str, key: str, known: Iterable[str], listed: str = "", *, word: str = "key"
) -> ConfigError:
    """The one line for a key a file may not hold: ``where``, the key, the closest known key,
    then ``listed`` (where the keys are told, e.g. "dxserial serve --keys lists them")."""
    known = list(known)
    tail = listed or f"known keys: {', '.join(sorted(known))}"
    return ConfigError(f"{where}: unknown {word} '{key}'{did_you_mean(key, known)} ({tail})")


def load_config(path: Path, schema: Mapping[str, type]) -> dict[str, Any]:
    """Read ``path`` and return its settings; ``schema`` maps each allowed key to its type."""
    data = read_toml(path, "config file", CONFIG_HINT)
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in schema:
            raise unknown_key(str(path), key, schema)
        out[key] = _check(path, key, value, schema[key])
    return out


def _check(path: Path, key: str, value: Any, kind: type) -> Any:
    try:
        return plain(value, kind)
    except ConfigError as exc:
        raise ConfigError(f"{path}: key '{key}': {exc}") from None


def plain(value: Any, kind: type) -> Any:
    """``value`` as ``kind`` (a whole number where a number is asked is one); else the
    problem ("expected a whole number, got 'fast'")."""
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, kind) and not (kind in (int, float) and isinstance(value, bool)):
        return value
    raise ConfigError(f"expected {_KIND_NAMES.get(kind, kind.__name__)}, got {value!r}")
