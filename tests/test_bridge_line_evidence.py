"""The bridge at the line's worst (issue 36): noise on an idle line, a TCP engine that
leaves before the serial engine's answer, a silent client holding the only slot.

Each test reads as a dialogue between the serial engine on an in-process cable and an engine
on TCP (tests/test_bridge_inproc.py has the rig); docs/bridge.md has the rules they hold.
"""

from __future__ import annotations

from dxserial.testing.inproc import BridgeThread
from dxserial.testing.peers import DxpClient
from dxserial.testing.process import wait_until

NAME = "Probe".ljust(32)
GAMEREQ = f"R01{NAME}Z001075A".encode()
GAMEACC = f"A{NAME}0".encode()
NOISE = b"\x07CL\x03"  # a PC powering up: what made 0x07 the start byte for good


def test_noise_on_an_idle_line_is_neither_a_message_nor_the_framing(
    cable_rig: BridgeThread,
) -> None:
    rig = cable_rig
    with DxpClient("127.0.0.1", rig.port) as client:
        rig.call(lambda: rig.run.cable.send("b", NOISE))
        wait_until(lambda: "0x07" in rig.log(), what="the noise seen")
        client.send(GAMEREQ)
        assert rig.peer.expect() == GAMEREQ  # framed with STX: the engine heard it
        rig.peer.send(GAMEACC)
        assert client.expect() == GAMEACC  # no CHAT 'L' before it
    assert "taking it as the peer's start byte" not in rig.log()
    assert not [r for r in rig.trace() if r.get("message") == "CL"]
