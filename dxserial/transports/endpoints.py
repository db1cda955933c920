"""Where ``dxserial engine`` and ``dxserial match`` find an engine: one ENDPOINT string,
read here and opened here (a serial port, a TCP connection or a listening socket).

Three forms, told apart by their prefix:

* ``tcp://HOST:PORT`` connects to an engine that listens there.  PORT defaults to 27531
  (the DXP port), HOST to 127.0.0.1; IPv6 as ``tcp://[::1]:27531``.  Connecting is retried
  for ``connect_timeout`` seconds, since the engine may still be starting.
* ``listen://HOST:PORT`` listens there and serves the first engine that connects
  (``listen://127.0.0.1:0`` takes a free port; :meth:`EngineEndpoint.prepare` says which).
  While one peer is served, others are turned away; once it has left, the next one is
  taken (a restarted engine finds the same port).
* Anything else is a serial port exactly as ``dxserial bridge`` takes it: a device path
  (``/dev/ttyUSB0``, a ``dxserial vpair`` end) or a serial URL (``socket://``,
  ``dosbox://``, ``dosbox-listen://``, ``hwgrep://``).  Its layer 1 is the NULMODEM echo
  handshake or NUL frames, as chosen with ``link``.

TCP endpoints always carry NUL-terminated frames.  Every endpoint hands out a
:class:`~dxserial.transports.base.Port` and a fresh layer-1 link for it, which is all
:class:`~dxserial.transports.linkdriver.LinkDriver` needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from dataclasses import dataclass, field

from dxserial.errors import ConfigError, PortError
from dxserial.protocol.links import Layer1Link, LinkKind, NulModemSettings, make_link
from dxserial.transports.base import Port
from dxserial.transports.openers import open_serial
from dxserial.transports.schemes import lookup, split_scheme
from dxserial.transports.serial import SerialSettings
from dxserial.transports.tcp import (
    DXP_PORT,
    Endpoint,
    TcpPort,
    parse_endpoint,
    tcp_connect,
    tcp_listen,
)

__all__ = [
    "EndpointKind",
    "EndpointSpec",
    "EngineEndpoint",
    "LinkKind",
    "LinkOptions",
    "parse_engine_endpoint",
]

log = logging.getLogger("dxserial.transports.endpoints")

_RETRY = 0.2


class EndpointKind(enum.StrEnum):
    SERIAL = "serial"
    TCP = "tcp"
    LISTEN = "listen"


@dataclass(frozen=True)
class EndpointSpec:
    """A parsed ENDPOINT: ``port`` for a serial port, ``address`` for the TCP forms."""

    kind: EndpointKind
    text: str
    port: str = ""
    address: Endpoint | None = None

    def __str__(self) -> str:
        return self.text


def parse_engine_endpoint(text: str) -> EndpointSpec:
    """Read an ENDPOINT (see the module docstring); :class:`ConfigError` if malformed."""
    raw = text.strip()
    if not raw:
        raise ConfigError(
            "empty endpoint: expected a serial port, tcp://HOST:PORT or listen://HOST:PORT"
        )
    scheme = lookup(raw, endpoints=True)
    if scheme is None or scheme.serial:
        return EndpointSpec(EndpointKind.SERIAL, raw, port=raw)
    kind = EndpointKind.TCP if scheme.kind == "tcp" else EndpointKind.LISTEN
    rest = split_scheme(raw)[1].rstrip("/")
    if not rest:
        raise ConfigError(f"endpoint {text!r}: HOST:PORT missing after {scheme.name}://")
    address = parse_endpoint(rest, default_port=DXP_PORT)
    if kind is EndpointKind.TCP and address.port == 0:
        raise ConfigError(f"endpoint {text!r}: cannot connect to port 0")
    return EndpointSpec(kind, raw, address=address)


@dataclass(frozen=True)
class LinkOptions:
    """How to open an endpoint: the serial line and its layer 1 (TCP ignores both)."""

    link: LinkKind = "nulmodem"
    serial: SerialSettings = field(default_factory=SerialSettings)
    nulmodem: NulModemSettings = field(default_factory=NulModemSettings)
    connect_timeout: float = 10.0


class EngineEndpoint:
    """One ENDPOINT: ``prepare`` once, then ``open`` a peer, ``release`` it, ``open`` again."""

    def __init__(self, spec: EndpointSpec, options: LinkOptions | None = None) -> None:
        self.spec = spec
        self.options = options or LinkOptions()
        self._server: asyncio.Server | None = None
        self._clients: asyncio.Queue[tuple[TcpPort, asyncio.Event]] = asyncio.Queue()
        self._released: dict[int, asyncio.Event] = {}
        self._busy = False
        self._early: Port | None = None
        self.listen_address: Endpoint | None = None
        #: The engine tells its thinking by CHAT (dxserial's follower of a Hub engine).
        self.reports_thinking = False

    @property
    def layer1(self) -> LinkKind:
        """The framing used here: TCP endpoints always use NUL frames."""
        return self.options.link if self.spec.kind is EndpointKind.SERIAL else "nul"

    def make_link(self) -> Layer1Link:
        """A fresh layer-1 link for a newly opened port."""
        return make_link(self.layer1, self.options.nulmodem)

    def describe(self) -> str:
        """For log and ready lines: where the engine is and how it is spoken to."""
        if self.spec.kind is EndpointKind.SERIAL:
            return f"serial port {self.spec.port} ({self.layer1} link)"
        if self.spec.kind is EndpointKind.TCP:
            return f"connecting to {self.spec.address}"
        where = self.listen_address or self.spec.address
        return f"listening on {where}"

    async def prepare(self) -> str:
        """Start listening (``listen://``); return :meth:`describe` (with the real port)."""
        if self.spec.kind is EndpointKind.LISTEN and self._server is None:
            assert self.spec.address is not None
            host, port = self.spec.address
            self._server = await tcp_listen(host, port, self._on_client)
            sock = self._server.sockets[0].getsockname()
            self.listen_address = Endpoint(str(sock[0]), int(sock[1]))
        return self.describe()

    async def open_early(self) -> None:
        """Open a serial port now, so a wrong port fails before a ready line is printed.

        The next :meth:`open` hands this port out.  Other endpoints wait for :meth:`open`:
        a ``tcp://`` engine may not be started yet, and ``listen://`` fails in
        :meth:`prepare` already.
        """
        if self.spec.kind is EndpointKind.SERIAL and self._early is None:
            self._early = await open_serial(self.spec.port, self.options.serial)

    async def open(self, timeout: float | None = None) -> Port:
        """The next peer: open the port, connect, or wait for a client (up to ``timeout``)."""
        kind = self.spec.kind
        if self._early is not None:
            early, self._early = self._early, None
            return early
        if kind is EndpointKind.SERIAL:
            return await open_serial(self.spec.port, self.options.serial)
        if kind is EndpointKind.TCP:
            return await self._connect(timeout or self.options.connect_timeout)
        await self.prepare()
        try:
            async with asyncio.timeout(timeout):  # not wait_for: see tcp.tcp_connect
                link, released = await self._clients.get()
        except TimeoutError:
            raise PortError(
                f"no engine connected to {self.listen_address} within {timeout:g} s"
            ) from None
        self._released[id(link)] = released
        log.info("engine connected from %s", link.peer)
        return link

    async def _connect(self, timeout: float) -> TcpPort:
        assert self.spec.address is not None
        host, port = self.spec.address
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            try:
                return await tcp_connect(host, port, timeout=max(0.1, deadline - loop.time()))
            except PortError:
                if loop.time() + _RETRY >= deadline:
                    raise
            await asyncio.sleep(_RETRY)

    def failed(self, reason: str) -> str:
        """The engine here cost a game (``reason``); what the endpoint knows about why
        (a process's exit status and last log lines), or "" (nothing more to say)."""
        return ""

    async def release(self, port: Port) -> None:
        """Close ``port``; a ``listen://`` endpoint then takes the next client."""
        with contextlib.suppress(Exception):
            await port.close()
        released = self._released.pop(id(port), None)
        if released is not None:
            released.set()

    async def close(self) -> None:
        """Stop listening and let go of every waiting client (and an unused early port)."""
        if self._early is not None:
            early, self._early = self._early, None
            with contextlib.suppress(Exception):
                await early.close()
        if self._server is not None:
            self._server.close()
            self._server = None
        for released in self._released.values():
            released.set()
        while not self._clients.empty():
            link, released = self._clients.get_nowait()
            released.set()
            with contextlib.suppress(Exception):
                await link.close()

    async def _on_client(self, link: TcpPort) -> None:
        if self._busy:
            log.warning("turned away %s: an engine is already connected here", link.peer)
            return  # tcp_listen closes it
        self._busy = True
        released = asyncio.Event()
        try:
            self._clients.put_nowait((link, released))
            await released.wait()
        finally:
            self._busy = False

