"""Stand-in engines that misbehave the way real ones do, for supervision tests.

Run as ``python -m dxserial.testing.standins MODE ENDPOINT`` where ENDPOINT is
``listen://HOST:PORT`` (it serves one connection: a DXP server) or ``tcp://HOST:PORT``
(it connects once: a DXP client).  It plays as the built-in follower (depth 1) and:

* ``once``: exits when its one connection ends (Scan 2.0 as a DXP server);
* ``never-notices``: when its connection ends it stays, and ignores SIGTERM (Moby Dam);
* ``crash``: at its second move of its first run it dies (exit status 134), once;
* ``hang``: at its second move of its first run it stops answering, once;
* ``slow``: waits ``DXSERIAL_STANDIN_DELAY`` seconds (0 when unset) before each move (a
  host where an engine loses on time, when its environment sets it longer than the move
  timeout).

"Once" is remembered by a file ``misbehaved`` in its working directory, so the engine the
director starts again plays normally.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from dxserial.engine.player import PeerError, Player, PlayerConfig
from dxserial.errors import MessageError
from dxserial.protocol.messages import Move, parse
from dxserial.protocol.session import Role

MODES = ("once", "never-notices", "crash", "hang", "slow")
MARK = Path("misbehaved")


def _open(endpoint: str) -> socket.socket:
    scheme, _, rest = endpoint.partition("://")
    host, _, port = rest.rpartition(":")
    if scheme == "listen":
        server = socket.create_server((host, int(port)))
        conn, _ = server.accept()
        server.close()
        return conn
    return socket.create_connection((host, int(port)), timeout=30)


def _forever() -> None:
    threading.Event().wait()


def play(mode: str, endpoint: str) -> int:
    sock = _open(endpoint)
    sock.settimeout(None)
    player = Player(PlayerConfig(role=Role.FOLLOWER, name=f"standin {mode}", depth=1, seed=1))
    misbehave = mode in ("crash", "hang") and not MARK.exists()
    delay = float(os.environ.get("DXSERIAL_STANDIN_DELAY", "0")) if mode == "slow" else 0.0
    moves = 0
    buffer = b""
    while not player.done:
        data = sock.recv(4096)
        if not data:
            break
        buffer += data
        while b"\0" in buffer:
            raw, buffer = buffer.split(b"\0", 1)
            try:
                out = player.receive(parse(raw, strict=False))
            except (MessageError, PeerError) as exc:
                print(f"standin: {exc}", flush=True)
                continue
            for msg in out:
                if isinstance(msg, Move):
                    moves += 1
                    time.sleep(delay)
                    if misbehave and moves == 2:
                        MARK.touch()
                        print(f"standin: {mode} now", flush=True)
                        if mode == "crash":
                            os._exit(134)
                        _forever()
                sock.sendall(msg.wire + b"\0")
    print("standin: connection ended", flush=True)
    if mode == "never-notices":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _forever()
    return 0


def command(mode: str, endpoint: str) -> list[str]:
    """The argv a tournament file gives for this stand-in."""
    return [sys.executable, "-m", "dxserial.testing.standins", mode, endpoint]


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in MODES:
        sys.exit(f"usage: python -m dxserial.testing.standins {{{','.join(MODES)}}} ENDPOINT")
    sys.exit(play(sys.argv[1], sys.argv[2]))
