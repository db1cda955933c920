"""Every ``SCHEME://`` a serial port or an engine endpoint may start with, in one table.

:func:`~dxserial.transports.serial.open_serial` (bridge PORT, selftest, serial endpoints)
and :func:`~dxserial.engine.endpoint.parse_engine_endpoint` (engine, match) both decide with this
table, so a typo such as ``tcpp://`` gets the same one-line answer everywhere, and the
choices that answer lists are the ones the code really accepts.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from dxserial.errors import ConfigError

Kind = Literal["tcp", "listen", "socket", "dosbox", "rfc2217", "hwgrep"]


class Scheme(NamedTuple):
    """One URL scheme: ``serial`` if it names a serial port (else an engine endpoint only)."""

    name: str
    kind: Kind
    serial: bool
    about: str


SCHEMES: tuple[Scheme, ...] = (
    Scheme("tcp", "tcp", False, "connect to an engine listening at HOST:PORT"),
    Scheme("listen", "listen", False, "wait for one engine to connect to HOST:PORT"),
    Scheme("socket", "socket", True, "DOSBox nullmodem with transparent:1, as a serial port"),
    Scheme("dosbox", "dosbox", True, "DOSBox's nullmodem protocol, connecting to DOSBox"),
    Scheme("dosbox-listen", "dosbox", True, "DOSBox's nullmodem protocol, DOSBox connects"),
    Scheme("rfc2217", "rfc2217", True, "a serial port on another host, exported by ser2net"),
    Scheme("hwgrep", "hwgrep", True, "the first serial port whose description matches REGEX"),
)
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
    names = [f"{s.name}://" for s in SCHEMES if endpoints or s.serial]
    return f"{', '.join(names)} or a device path"


def lookup(text: str, *, endpoints: bool) -> Scheme | None:
    """The scheme ``text`` starts with (``None``: a device path); :class:`ConfigError` if
    it is unknown, or an endpoint scheme where only a serial port will do."""
    name, _ = split_scheme(text)
    if not name:
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
        raise ConfigError(f"{text}: '{name}://' is an engine endpoint, not a serial port; {offer}")
    raise ConfigError(f"unknown scheme '{name}://' in {text}; {offer}")
