"""The bridge: an engine on a serial line plays an engine on TCP.

Each message is forwarded byte for byte as received; only the layer-1 framing changes
(NULMODEM or NUL on the serial line, NUL on TCP).  The rules (sessions, judging, what is
held, dropped or lost) live in the sans-I/O :mod:`~dxserial.bridge.relay`; the asyncio
driver in :mod:`~dxserial.bridge.core` applies them to ports, sockets and files.

``relay``   sessions and message fate, sans-I/O (the rules; unit-tested with a fake clock)
``judge``   dialogue, referee, game record and the live view's news, once per message
``closeout`` what the bridge says on behalf of an engine that left
``core``    the asyncio driver (ports, peers, timers)
``files``   trace and PDN writing in a thread of its own
``policy``  which CHATs are blocked (who may connect: ``transports.access``)
``settings`` the bridge's configuration
"""

from dxserial.bridge.core import Bridge
from dxserial.bridge.settings import BridgeConfig
from dxserial.drive.flood import FloodGuard
from dxserial.protocol.links import NulModemSettings

__all__ = ["Bridge", "BridgeConfig", "FloodGuard", "NulModemSettings"]
