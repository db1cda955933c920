"""-v, -vv and -q mean the same on every command (issue 24, item 3).

-v logs each message crossing (direction, what it is, its bytes), like ``socat -v``;
-vv adds the link's detail (debug); -q shows only warnings and errors.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.cli.app import COMMANDS
from dxserial.testing.fdio import read_exactly, write_all
from dxserial.testing.peers import DxpClient, NulModemPeer
from dxserial.testing.process import wait_until
from dxserial.testing.rig import Bridge, Vpair

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

GAMEREQ = f"R01{'Probe'.ljust(32)}Z001075A".encode()


def test_bridge_v_logs_each_message_crossing_and_q_silences_info(tmp_path: Path) -> None:
    """Issue 24: 'bridge -v does nothing (INFO with or without it)'."""
    with Vpair(tmp_path) as vpair, NulModemPeer(vpair.path_b, seed=1) as peer:
        bridge = Bridge(tmp_path, vpair.path_a, "--echo-timeout", "2", "-v", trace=False)
        with bridge, DxpClient("127.0.0.1", bridge.port) as client:
            client.send(GAMEREQ)
            assert peer.expect() == GAMEREQ
            line = f"tcp->serial GAMEREQ '{GAMEREQ.decode()}' ({len(GAMEREQ)} bytes)"
            wait_until(lambda: line in bridge.log(), what="the -v line of the GAMEREQ")
        (tmp_path / "bridge.log").unlink()
        with Bridge(tmp_path, vpair.path_a, "--echo-timeout", "2", "-q", trace=False) as quiet:
            with DxpClient("127.0.0.1", quiet.port) as client:
                client.send(GAMEREQ)
                assert peer.expect() == GAMEREQ
            quiet.close()
            assert "GAMEREQ" not in quiet.log() and " INFO " not in quiet.log()


def test_vpair_v_logs_each_chunk_crossing(tmp_path: Path) -> None:
    with Vpair(tmp_path, "-v") as vpair:
        a, b = (os.open(p, os.O_RDWR | os.O_NOCTTY) for p in (vpair.path_a, vpair.path_b))
        try:
            write_all(a, b"\x02R")
            assert read_exactly(b, 2) == b"\x02R"
        finally:
            os.close(a)
            os.close(b)
        log = tmp_path / "vpair.log"
        wait_until(lambda: "a->b 2 bytes: " in log.read_text(), what="the -v line of the chunk")


@pytest.mark.parametrize("name", [name for name in COMMANDS if name != "udev"] + ["udev install"])
def test_every_command_has_v_and_q(name: str) -> None:
    """New commands and options get them from the app (cli.common.add_shared_options)."""
    result = run_in_process(*name.split(), "--help", columns=200)
    assert re.search(r"--verbose +-v ", result.stdout), result.stdout
    assert re.search(r"--quiet +-q ", result.stdout), result.stdout
