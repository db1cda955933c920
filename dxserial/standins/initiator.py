"""A stand-in engine set up as initiator, as GWD is by default (``--dxp_initiator=true``).

Run as ``python -m dxserial.standins.initiator ENDPOINT [NAME]`` (``listen://HOST:PORT``:
it serves one connection; ``tcp://HOST:PORT``: it connects once).  Once connected it sends
its own GAMEREQ (form B, as GWD's are) under NAME ("GWD 8.100 material" unless given), then
waits for a GAMEACC, as GWD's ``dxp.c`` does.  Anything else it gets is printed and, like
GWD, it dies of it (``** FATAL ** ...``, exit status 1); a closed connection ends it
quietly (exit status 0).
"""

from __future__ import annotations

import socket
import sys

from dxserial.errors import MessageError
from dxserial.protocol.messages import GameAccept, escape, parse

DEFAULT_NAME = "GWD 8.100 material"
START = "z" * 20 + "e" * 10 + "w" * 20  # the start position, form B


def _open(endpoint: str) -> socket.socket:
    scheme, _, rest = endpoint.partition("://")
    host, _, port = rest.rpartition(":")
    if scheme == "listen":
        with socket.create_server((host, int(port))) as server:
            return server.accept()[0]
    return socket.create_connection((host, int(port)), timeout=30)


def run(endpoint: str, name: str) -> int:
    sock = _open(endpoint)
    sock.settimeout(None)
    # As GWD writes it: name padded to 32, follower colour Z (Black), 1 minute, 75 moves.
    request = f"R01{name[:32]:<32}Z001075BW{START}".encode()
    sock.sendall(request + b"\0")
    print(f"initiator: sent {escape(request)}", flush=True)
    buffer = b""
    while True:
        data = sock.recv(4096)
        if not data:
            print("initiator: connection ended", flush=True)
            return 0
        buffer += data
        while b"\0" in buffer:
            raw, buffer = buffer.split(b"\0", 1)
            print(f"initiator: received {escape(raw)}", flush=True)
            try:
                msg = parse(raw, strict=False)
            except MessageError as exc:
                print(f"** FATAL ** {exc}", flush=True)
                return 1
            if not isinstance(msg, GameAccept):
                print(f"** FATAL ** error=type != DXP_GAMEACC ({msg.NAME})", flush=True)
                return 1
            print("initiator: a GAMEACC: this stand-in plays no game", flush=True)
            return 0


def command(endpoint: str, name: str = DEFAULT_NAME) -> list[str]:
    """The argv an engine table gives for this stand-in."""
    return [sys.executable, "-m", "dxserial.standins.initiator", endpoint, name]


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python -m dxserial.standins.initiator ENDPOINT [NAME]")
    sys.exit(run(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else DEFAULT_NAME))
