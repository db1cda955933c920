"""A stand-in engine that reads its console as Moby Dam does: select() on stdin and the socket,
then read() what is ready.

Run as ``python -m dxserial.testing.console_reader ENDPOINT`` (``listen://HOST:PORT``: it
serves one connection; ``tcp://HOST:PORT``: it connects once) and it plays as the built-in
follower (depth 1).  On a console that is /dev/null, select() says "readable" and read()
returns end-of-file at once, for ever: it spins a CPU, as Moby Dam does.  It says so once
in its output (``console: end of file``), and ``console: LINE`` for each line it reads.
"""

from __future__ import annotations

import os
import select
import socket
import sys

from dxserial.engine.player import PeerError, Player, PlayerConfig
from dxserial.errors import MessageError
from dxserial.protocol.messages import parse
from dxserial.protocol.session import Role


def _open(endpoint: str) -> socket.socket:
    scheme, _, rest = endpoint.partition("://")
    host, _, port = rest.rpartition(":")
    if scheme == "listen":
        with socket.create_server((host, int(port))) as server:
            return server.accept()[0]
    return socket.create_connection((host, int(port)), timeout=30)


def play(endpoint: str) -> int:
    sock = _open(endpoint)
    sock.settimeout(None)
    player = Player(PlayerConfig(role=Role.FOLLOWER, name="console reader", depth=1, seed=1))
    buffer = b""
    told_eof = False
    while not player.done:
        ready, _, _ = select.select([0, sock.fileno()], [], [])
        if 0 in ready:
            line = os.read(0, 4096)
            if not line and not told_eof:
                told_eof = True
                print("console: end of file", flush=True)
            elif line:
                print(f"console: {line.decode(errors='replace').strip()}", flush=True)
        if sock.fileno() in ready:
            data = sock.recv(4096)
            if not data:
                break
            buffer += data
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                try:
                    out = player.receive(parse(raw, strict=False))
                except (MessageError, PeerError) as exc:
                    print(f"console reader: {exc}", flush=True)
                    continue
                for msg in out:
                    sock.sendall(msg.wire + b"\0")
    print("console reader: connection ended", flush=True)
    return 0


def command(endpoint: str) -> list[str]:
    """The argv an engine table gives for this stand-in."""
    return [sys.executable, "-m", "dxserial.testing.console_reader", endpoint]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m dxserial.testing.console_reader ENDPOINT")
    sys.exit(play(sys.argv[1]))
