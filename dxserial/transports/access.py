"""Who may connect: address ranges (``--allow``) and a peer's address checked against them.

The bridge and the web view both turn away peers with these rules, so they live with the
transports rather than in either program.
"""

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


__all__ = ["IPNetwork", "allowed", "is_loopback", "parse_networks"]
