#!/usr/bin/env python3
"""The plumbing floor: ``dxserial bridge --link nul`` with a relay that only forwards.

The real bridge core, link drivers, layer-1 links and transports, uvloop; the relay (parse,
sessions, judging, counts, records) replaced by one that hands every message straight to
the other side.  Beside the transport floor (bench/transport_floor.py: the transports
alone) and the real bridge, it splits dxserial's time per message into transports,
plumbing (events, actions, queues, delivery confirmations) and the relay's work.
A diagnostic for bench/run.py, never a way to run a bridge.

    python3 bench/plumbing_floor.py SERIAL_PATH TCP_PORT
"""

from __future__ import annotations

import sys

import dxserial.bridge.runner as core
from dxserial.bridge.judge import Side, other
from dxserial.bridge.relay import Relay
from dxserial.cli import main as cli_main
from dxserial.drive.actions import Action, Send


class _ForwardOnly(Relay):
    """Forwards every message at once; judges, counts and records nothing."""

    def receive(self, sender: Side, raw: bytes, now: float) -> list[Action]:
        return [Send(other(sender), bytes(raw))]

    def settle(self) -> list[Action]:
        return []

    def delivered(self, side: Side, raw: bytes, now: float) -> list[Action]:
        return []


def main() -> None:
    path, port = sys.argv[1], sys.argv[2]
    core.Relay = _ForwardOnly  # type: ignore[attr-defined]
    sys.argv = ["dxserial", "bridge", path, "--link", "nul", "--listen", f"127.0.0.1:{port}",
                "-q"]
    cli_main()


if __name__ == "__main__":
    main()
