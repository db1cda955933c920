"""The bridge: an engine on a serial line plays an engine on TCP.

Each message is forwarded byte for byte as received; only the layer-1 framing changes
(NULMODEM or NUL on the serial line, NUL on TCP).  The rules (sessions, judging, what is
held, dropped or lost) live in the sans-I/O :mod:`~dxserial.bridge.relay`; the asyncio
shell in :mod:`~dxserial.bridge.runner` applies them to ports, sockets and files.

``relay``   sessions and every rule, sans-I/O (unit-tested with a fake clock); its helpers:
``records``  counts, trace records and log lines of each message
``fate``     what is held for a side, in flight to it, delivered (``recent``: the last ones)
``closeout`` what the bridge says on behalf of an engine that left, and that close-out
``serialcheck`` the serial engine's state, checked before a GAMEREQ reaches it
``gameend``  an unanswered GAMEEND answered for, a TCP engine's stop code 1
``judge``   dialogue, referee, game record and the live view's news, once per message
``runner``  the asyncio shell: ports and peers, run by the one driver (``drive.driver``)
``files``   trace and PDN writing in a thread of its own
``policy``  which CHATs are blocked (who may connect: ``transports.access``)
``settings`` the bridge's configuration
"""

from dxserial.bridge.runner import Bridge
from dxserial.bridge.settings import BridgeConfig
from dxserial.drive.flood import FloodGuard
from dxserial.protocol.links import NulModemSettings

__all__ = ["Bridge", "BridgeConfig", "FloodGuard", "NulModemSettings"]
