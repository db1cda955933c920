"""Options made from declared settings: a command's signature (:func:`parameters`), one
option (:func:`option`), and what several commands share: --web, --allow, the endpoint's
help and the layer-1 options an endpoint is opened with.

The serial line's and NULMODEM's settings are declared in :mod:`dxserial.line_settings`, so
an option means the same and says so in the same words on every command; a command may put
one in a help panel of its own (``dataclasses.replace(one, panel=...)``), and ``bridge`` also
reads it from the environment.  The checks that turn the values into settings are the
declarations' (:func:`dxserial.setting.checked`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import typer

from dxserial.errors import ConfigError
from dxserial.line_settings import LINK, NULMODEM_LINE, check_nulmodem
from dxserial.protocol.links import NulModemSettings
from dxserial.setting import Setting, checked
from dxserial.transports.endpoints import LinkKind, LinkOptions
from dxserial.transports.serial import SerialSettings

__all__ = [
    "ALLOW",
    "ENDPOINT_HELP",
    "WEB",
    "annotation",
    "checked_link_options",
    "link_kind",
    "link_options",
    "nulmodem_settings",
    "option",
    "parameters",
    "said",
]

ENDPOINT_HELP = (
    "Where the peer is: a serial port (/dev/ttyUSB0, a 'dxserial vpair' end, socket://HOST:PORT "
    "...) spoken to with --link; tcp://HOST:PORT to connect; listen://HOST:PORT to wait for "
    "one peer (port 0: a free port, printed on the ready line)."
)


# The live view of a director's games (match, tournament; the bridge's --web is its own).

WEB = Setting("web", None, "Serve a live view of the games at HOST:PORT (needs dxserial[web]).")
ALLOW = Setting("allow", (), "With --web: networks that may connect (CIDR; repeatable).",
                many=True)


_SAME = object()


def option(one: Setting, panel: str | object | None = _SAME, *, env: bool = False) -> Any:
    """The typer option of a declared setting (``panel``: another help panel than its own;
    ``env``: also read from DXSERIAL_NAME, ``--echo-timeout``: ..._ECHO_TIMEOUT)."""
    flags = one.flags or (one.flag,)
    chosen = one.panel if panel is _SAME else panel
    return typer.Option(
        ... if one.required else one.typer_default,
        *flags,
        rich_help_panel=chosen if isinstance(chosen, str) else None,
        envvar=one.envvar if env else None,
        help=one.help,
        metavar=one.metavar,
        show_default=one.show_default,
        count=one.count,
        hidden=one.hidden,
        min=one.minimum if one.ranged else None,
        max=one.maximum if one.ranged else None,
        is_eager=one.action is not None,
        callback=one.action,
    )


def parameters(settings: Iterable[Setting]) -> list[inspect.Parameter]:
    """A command's signature made from its declared settings, in their order (typer reads
    it as any other): an ``argument`` setting is a required argument, the others options."""
    params = []
    for one in settings:
        if one.argument:
            made = typer.Argument(one.typer_default if one.optional else ...,
                                  metavar=one.metavar, help=one.help,
                                  show_default=one.show_default)
        else:
            made = option(one)
        params.append(inspect.Parameter(one.key, inspect.Parameter.KEYWORD_ONLY,
                                        annotation=annotation(one), default=made))
    return params


def annotation(one: Setting) -> Any:
    """The Python type typer reads the option's value as."""
    if one.many:
        return list[one.kind] | None  # type: ignore[name-defined]
    if one.typer_default is None:
        return one.kind | None
    return one.kind


def nulmodem_settings(
    start_byte: str,
    end_byte: str,
    echo_timeout: float,
    max_attempts: int,
    *,
    learn_start: bool = True,
) -> NulModemSettings:
    """The NULMODEM options every command that speaks the handshake takes, checked."""
    given = (start_byte, end_byte, echo_timeout, max_attempts)
    start, end, timeout, attempts = (
        checked(one, value, option=True) for one, value in zip(NULMODEM_LINE, given, strict=True)
    )
    settings = NulModemSettings(
        start=start, end=end, timeout=timeout, max_attempts=attempts, learn_start=learn_start
    )
    return check_nulmodem(settings, option=True)


def link_options(
    link: str,
    baud: int,
    start_byte: str,
    end_byte: str,
    echo_timeout: float,
    max_attempts: int,
    connect_timeout: float,
    *,
    learn_start: bool = True,
) -> LinkOptions:
    """Check the layer-1 options of the commands that open engine endpoints."""
    nulmodem = nulmodem_settings(
        start_byte, end_byte, echo_timeout, max_attempts, learn_start=learn_start
    )
    if not connect_timeout > 0:  # also refuses nan, which would wait forever
        raise ConfigError("--connect-timeout must be > 0")
    return LinkOptions(
        link=link_kind("--link", link),
        serial=SerialSettings(baudrate=baud),
        nulmodem=nulmodem,
        connect_timeout=connect_timeout,
    )


def checked_link_options(values: Mapping[str, Any], connect_timeout: float) -> LinkOptions:
    """The layer-1 options of an endpoint from a command's checked values (a NULMODEM
    setting the command does not take: the line's default)."""
    start, end, timeout, attempts = (values.get(one.key, one.default) for one in NULMODEM_LINE)
    nulmodem = NulModemSettings(start, end, timeout, attempts,
                                learn_start=values.get("learn_start", True))
    return LinkOptions(link=link_kind("--link", values["link"]),
                       serial=SerialSettings(baudrate=values["baud"]),
                       nulmodem=check_nulmodem(nulmodem, option=True),
                       connect_timeout=connect_timeout)


def said(check: Callable[[Any], Any]) -> Callable[[Any, str], Any]:
    """A check whose error names the value (``name 'x': ...``) as a ``parse`` whose error
    names the option (``--name 'x': ...``)."""
    def parse(value: Any, flag: str) -> Any:
        try:
            return check(value)
        except ConfigError as exc:
            raise ConfigError(f"--{exc}") from None
    return parse


def link_kind(option: str, value: str) -> LinkKind:
    """``--link`` (or ``--link-a``...) checked against the declared kinds."""
    if value in LINK.choices:
        return "nul" if value == "nul" else "nulmodem"
    raise ConfigError(f"{option}: {value!r} is not {' or '.join(map(repr, LINK.choices))}")
