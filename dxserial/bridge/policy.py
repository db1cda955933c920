"""Who may connect and what may pass: the bridge's security rules, apart from its plumbing."""

from __future__ import annotations

import ipaddress

from dxserial.errors import ConfigError

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def allowed(host: str, networks: tuple[IPNetwork, ...]) -> bool:
    """Whether a client at ``host`` is inside one of ``networks`` (IPv4-mapped included)."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in networks)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: assume it reaches beyond this machine


def console_blocked_by_default(
    block_console: bool | None,
    listen: tuple[str, int] | None,
    connect: tuple[str, int] | None,
) -> bool:
    """On unless told otherwise whenever someone beyond this machine could send a CHAT."""
    if block_console is not None:
        return block_console
    if connect is not None:
        return not is_loopback(connect[0])
    host = listen[0] if listen is not None else "127.0.0.1"
    return not is_loopback(host)


def parse_networks(values: list[str] | str | None) -> tuple[IPNetwork, ...]:
    """Address ranges from --allow (repeated or comma-separated) or a config's string."""
    if not values:
        return ()
    items = [values] if isinstance(values, str) else values
    out: list[IPNetwork] = []
    for item in items:
        for text in item.split(","):
            text = text.strip()
            if not text:
                continue
            try:
                out.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                raise ConfigError(
                    f"--allow: {text!r} is not an address or range (e.g. 10.0.0.0/8)"
                ) from None
    return tuple(out)


__all__ = [
    "IPNetwork",
    "allowed",
    "console_blocked_by_default",
    "is_loopback",
    "parse_networks",
]
