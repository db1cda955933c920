"""TCP links for the DXP SOCKET layer: connect, listen, one message per send.

Defaults are the DXP port 27531 on 127.0.0.1: a bridge is reachable from other machines
only when asked for (an engine such as Moby Dam runs commands from CHAT messages).
Every connection gets TCP_NODELAY (a message leaves at once, never waiting for Nagle) and
SO_KEEPALIVE (a peer that vanished without a FIN is noticed within minutes, not hours).
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from dxserial.errors import ConfigError, PortError
from dxserial.transports.base import (
    PortProtocol,
    StreamPort,
    open_connection,
    os_reason,
    start_server,
)

log = logging.getLogger("dxserial.transports.tcp")

#: The DamExchange port.
DXP_PORT = 27531
#: Listen and connect here unless told otherwise.
DEFAULT_HOST = "127.0.0.1"
#: Keep-alive: first probe after this many idle seconds, then every KEEPINTVL, KEEPCNT times.
KEEPIDLE, KEEPINTVL, KEEPCNT = 60, 10, 6


class Endpoint(NamedTuple):
    """A host and port; ``str()`` gives ``host:port`` (IPv6 in brackets)."""

    host: str
    port: int

    def __str__(self) -> str:
        return format_address(self.host, self.port)


def format_address(host: str, port: int) -> str:
    """``host:port``, with an IPv6 address in brackets so the port stays readable."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def parse_endpoint(
    text: str, *, default_host: str = DEFAULT_HOST, default_port: int = DXP_PORT
) -> Endpoint:
    """Read ``HOST:PORT``, ``HOST``, ``PORT``, ``:PORT``, ``[IPV6]`` or ``[IPV6]:PORT``.

    A missing host is ``default_host`` and a missing port ``default_port``.  Port 0 is
    accepted (listening on it picks a free port).
    """
    raw = text.strip()
    example = "expected HOST:PORT, e.g. 127.0.0.1:27531 or [::1]:27531"
    if not raw:
        raise ConfigError(f"empty address: {example}")
    if raw.startswith("["):
        close = raw.find("]")
        if close < 0:
            raise ConfigError(f"bad address {text!r}: missing ']' after the IPv6 address")
        host, rest = raw[1:close], raw[close + 1 :]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ConfigError(f"bad address {text!r}: {host!r} is not an IPv6 address") from None
        if rest and not rest.startswith(":"):
            raise ConfigError(f"bad address {text!r}: {example}")
        port_text = rest[1:] if rest else ""
    elif raw.count(":") > 1:
        raise ConfigError(f"bad address {text!r}: write an IPv6 address in brackets, [::1]:27531")
    elif ":" in raw:
        host, port_text = raw.split(":")
        if not port_text:
            raise ConfigError(f"bad address {text!r}: port missing after ':'; {example}")
    elif raw.isdigit():
        host, port_text = "", raw
    else:
        host, port_text = raw, ""
    if any(c.isspace() for c in host):
        raise ConfigError(f"bad address {text!r}: {example}")
    if port_text:
        if not port_text.isdigit() or int(port_text) > 65535:
            raise ConfigError(
                f"bad port {port_text!r} in {text!r}: expected a number from 0 to 65535"
            )
        port = int(port_text)
    else:
        port = default_port
    return Endpoint(host or default_host, port)


def tune_socket(sock: Any) -> None:
    """TCP_NODELAY and keep-alive on a connected TCP socket (no-op for other sockets)."""
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (
        ("TCP_KEEPIDLE", KEEPIDLE),
        ("TCP_KEEPINTVL", KEEPINTVL),
        ("TCP_KEEPCNT", KEEPCNT),
    ):
        option = getattr(socket, name, None)
        if option is not None:
            sock.setsockopt(socket.IPPROTO_TCP, option, value)


class TcpPort(StreamPort):
    """One TCP connection.  ``read()`` returns ``b""`` when the peer closes cleanly.

    ``peer`` is the other end's ``host:port`` for log lines.  Build one with
    :meth:`connected` (that applies the socket options and the one-send-per-write rule).
    """

    peer: str
    peer_host: str

    def __init__(self, transport: asyncio.Transport, protocol: PortProtocol) -> None:
        peername = transport.get_extra_info("peername")
        if isinstance(peername, tuple) and len(peername) >= 2:
            self.peer_host = str(peername[0])
            self.peer = format_address(self.peer_host, int(peername[1]))
        else:
            self.peer_host = self.peer = str(peername)
        super().__init__(f"tcp {self.peer}", transport, protocol)

    @classmethod
    def connected(cls, transport: asyncio.Transport, protocol: PortProtocol) -> TcpPort:
        """A port on a connected transport, with TCP_NODELAY and keep-alive set."""
        tune_socket(transport.get_extra_info("socket"))
        return cls(transport, protocol)

    @property
    def socket(self) -> Any:
        """The connected socket (asyncio's wrapper), for inspection."""
        return self.transport.get_extra_info("socket")

    def _lost(self, exc: BaseException) -> PortError:
        return PortError(f"TCP peer {self.peer}: {os_reason(exc)}")


async def tcp_connect(host: str, port: int, *, timeout: float = 10.0) -> TcpPort:
    """Connect to a DXP peer; :class:`~dxserial.errors.PortError` (one line) if it fails."""
    where = format_address(host, port)
    try:
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancellation
        # that arrives as the connect fails, and a caller's retry loop then retried on
        # (an engine that exited was taken for one not yet listening: issue 33).
        async with asyncio.timeout(timeout):
            transport, protocol = await open_connection(host, port)
    except TimeoutError:
        raise PortError(f"cannot connect to {where}: no answer within {timeout:g} s") from None
    except ConnectionRefusedError:
        raise PortError(
            f"cannot connect to {where}: connection refused — nothing is listening there "
            "(is the engine started, and on that port?)"
        ) from None
    except socket.gaierror as exc:
        raise PortError(f"cannot connect to {where}: unknown host ({exc.strerror})") from None
    except OSError as exc:
        raise PortError(f"cannot connect to {where}: {os_reason(exc)}") from None
    return TcpPort.connected(transport, protocol)


async def tcp_listen(
    host: str, port: int, on_client: Callable[[TcpPort], Awaitable[None]]
) -> asyncio.Server:
    """Accept DXP clients on ``host:port``; ``on_client(link)`` serves each one.

    The link is closed when ``on_client`` returns or fails (its error is logged).  Use
    port 0 for a free port (``server.sockets[0].getsockname()`` tells which).
    """
    where = format_address(host, port)

    async def serve(transport: asyncio.Transport, protocol: PortProtocol) -> None:
        link = TcpPort.connected(transport, protocol)
        try:
            await on_client(link)
        except asyncio.CancelledError:
            # The loop is shutting down: end normally; the link is closed below either way.
            log.debug("TCP client %s: handler cancelled", link.peer)
        except Exception:
            log.exception("TCP client %s: handler failed", link.peer)
        finally:
            await link.close()

    try:
        return await start_server(serve, host, port)
    except socket.gaierror as exc:
        raise PortError(f"cannot listen on {where}: unknown host ({exc.strerror})") from None
    except OSError as exc:
        raise listen_problem(where, exc) from None


def listen_problem(where: str, exc: OSError) -> PortError:
    """One line for a failed listen on ``where`` (the DXP port, the web view's)."""
    if exc.errno == errno.EADDRINUSE or "address already in use" in str(exc).lower():
        return PortError(
            f"cannot listen on {where}: address already in use — another program "
            "(another dxserial?) is listening there; choose another port"
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return PortError(
            f"cannot listen on {where}: permission denied (ports below 1024 need root)"
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return PortError(
            f"cannot listen on {where}: no interface of this machine has that address; "
            "use 127.0.0.1, 0.0.0.0 (every interface) or one of its own addresses"
        )
    return PortError(f"cannot listen on {where}: {os_reason(exc)}")
