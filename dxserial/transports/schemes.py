"""Every ``SCHEME://`` a serial port or an engine endpoint may start with, in one table.

Each serial scheme names its opener by module path, imported only when used (as
python-can's backend table does), so the openers may import the serial link freely.
:func:`~dxserial.transports.openers.open_serial` (bridge PORT, selftest, serial endpoints)
and :func:`~dxserial.transports.endpoints.parse_engine_endpoint` (engine, match) both decide
with this table, so a typo such as ``tcpp://`` gets the same one-line answer everywhere, and the
choices that answer lists are the ones the code really accepts.
"""

from __future__ import annotations

import os
import re
from typing import Literal, NamedTuple

from dxserial.errors import ConfigError

Kind = Literal["tcp", "listen", "socket", "dosbox", "rfc2217", "hwgrep", "memory"]


class Scheme(NamedTuple):
    """One URL scheme: ``serial`` if it names a serial port (else an engine endpoint only)."""

    name: str
    kind: Kind
    serial: bool
    about: str
    #: ``module:function`` that opens a port of this scheme (serial schemes only).
    opener: str = ""
    #: Offered to users in help and error messages (``False``: for tests only).
    listed: bool = True


_SERIAL = "dxserial.transports.serial"
_DOSBOX = "dxserial.transports.dosbox:open_dosbox"

SCHEMES: tuple[Scheme, ...] = (
    Scheme("tcp", "tcp", False, "connect to an engine listening at HOST:PORT"),
    Scheme("listen", "listen", False, "wait for one engine to connect to HOST:PORT"),
    Scheme(
        "socket",
        "socket",
        True,
        "DOSBox nullmodem with transparent:1, as a serial port",
        f"{_SERIAL}:open_socket",
    ),
    Scheme(
        "dosbox", "dosbox", True, "DOSBox's nullmodem protocol, connecting to DOSBox", _DOSBOX
    ),
    Scheme(
        "dosbox-listen", "dosbox", True, "DOSBox's nullmodem protocol, DOSBox connects", _DOSBOX
    ),
    Scheme(
        "rfc2217",
        "rfc2217",
        True,
        "a serial port on another host, exported by ser2net",
        "dxserial.transports.rfc2217:open_rfc2217",
    ),
    Scheme(
        "hwgrep",
        "hwgrep",
        True,
        "the first serial port whose description matches REGEX",
        f"{_SERIAL}:open_hwgrep",
    ),
    Scheme(
        "memory",
        "memory",
        True,
        "an in-process cable a test made (dxserial.sim.memory): no pty, no process",
        "dxserial.sim.memory:open_memory",
        listed=False,
    ),
)
#: The opener of a device path (no scheme).
DEVICE_OPENER = f"{_SERIAL}:open_device"
BY_NAME = {scheme.name: scheme for scheme in SCHEMES}

#: pyserial URL schemes dxserial cannot use: their ports have no file descriptor for the
#: event loop to watch, so they would fail silently.
PYSERIAL_ONLY = ("loop", "spy", "alt", "cp2110")


def split_scheme(text: str) -> tuple[str, str]:
    """``(scheme, rest)`` of ``SCHEME://rest`` (scheme lower-cased); ``("", text)`` else."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        return "", text
    return scheme.lower(), rest


def choices(*, endpoints: bool) -> str:
    """The schemes to offer, as a user reads them: "tcp://, ..., hwgrep:// or a device path"."""
    names = [f"{s.name}://" for s in SCHEMES if s.listed and (endpoints or s.serial)]
    return f"{', '.join(names)} or a device path"


def lookup(text: str, *, endpoints: bool) -> Scheme | None:
    """The scheme ``text`` starts with (``None``: a device path); :class:`ConfigError` if
    it is unknown, or an endpoint scheme where only a serial port will do."""
    name, _ = split_scheme(text)
    if not name:
        _typo(text, endpoints=endpoints)
        return None
    scheme = BY_NAME.get(name)
    if scheme is not None and (endpoints or scheme.serial):
        return scheme
    offer = f"use one of: {choices(endpoints=endpoints)}"
    if name in PYSERIAL_ONLY:
        raise ConfigError(
            f"{text}: {name}:// ports have no file descriptor the event loop can watch; {offer}"
        )
    if scheme is not None:
        raise _endpoint_for_a_port(text, name, split_scheme(text)[1])
    raise ConfigError(f"unknown scheme '{name}://' in {text}; {offer}")


# "tcp:/h:p", "tcp:h:p" (socat's spelling): a scheme name, then ":" with fewer than 2 slashes.
_SHORT_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+-]*):/?(?!/)(.+)")
# "127.0.0.1:27531", "localhost:27531", "[::1]:27531": an address, where a path was expected.
_BARE_ADDRESS = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]*[A-Za-z0-9]):\d{1,5}")


def _endpoint_for_a_port(text: str, name: str, rest: str) -> ConfigError:
    """An engine's address where a serial port goes: where it belongs instead."""
    where = ""
    if name == "tcp":  # `dxserial bridge tcp:h:p` (socat's spelling of an engine)
        where = (f"; a TCP engine goes in --connect {rest} (it listens) or --listen {rest} "
                 "(it connects)")
    offer = f"a serial port is one of: {choices(endpoints=False)}"
    return ConfigError(f"{text}: '{name}://' is an engine endpoint, not a serial port{where}; "
                       f"{offer}")


def _typo(text: str, *, endpoints: bool) -> None:
    """:class:`ConfigError` "did you mean ...?" for a URL mistyped as a device path."""
    if os.path.exists(text):
        return
    short = _SHORT_SCHEME.fullmatch(text)
    if short is not None and short.group(1).lower() in BY_NAME:
        name, rest = short.group(1).lower(), short.group(2)
        if not endpoints and not BY_NAME[name].serial:  # the user's text, not ours
            raise _endpoint_for_a_port(text, name, rest)
        meant = f"{name}://{rest}"
        lookup(meant, endpoints=endpoints)  # a pyserial-only scheme: that answer instead
        raise ConfigError(f"{text}: not a device; did you mean {meant}?")
    if _BARE_ADDRESS.fullmatch(text):
        meant = (f"tcp://{text}" if endpoints else f"socket://{text} or rfc2217://{text} (a "
                 f"serial port over TCP; a TCP engine goes in --connect {text})")
        raise ConfigError(f"{text}: not a device; did you mean {meant}?")


def address(text: str, option: str, schemes: tuple[str, ...], form: str = "HOST:PORT") -> str:
    """``HOST:PORT`` for an option that takes one, accepting ``SCHEME://`` for the
    ``schemes`` that say the same (``--connect tcp://h:p``, ``--web http://h:p/``);
    :class:`ConfigError` naming the form expected for any other URL."""
    name, rest = split_scheme(text.strip())
    if not name:
        short = _SHORT_SCHEME.fullmatch(text.strip())  # tcp:/h:p, tcp:h:p: not a host
        if short is not None and short.group(1).lower() in schemes and ":" in short.group(2):
            meant = f"{short.group(1).lower()}://{short.group(2)}"
            raise ConfigError(f"{option} {text}: did you mean {meant}?")
        return text
    if name in schemes:
        return rest.rstrip("/")
    also = " or ".join(f"{s}://{form}" for s in schemes)
    raise ConfigError(f"{option} {text}: expected {form} (or {also}), not {name}://")
