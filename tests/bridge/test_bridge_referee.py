"""The referee in the real bridge: warn and strict, duplicates, and the PDN records.

The bridge runs in process on an in-process cable (:class:`~dxserial.testing.inproc.BridgeThread`),
its NULMODEM engine on the other end, a DXP client over TCP.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from pdn_check import both_read

from dxserial.draughts import Position, parse_pdn_move
from dxserial.game.pdn import read_pdn
from dxserial.testing.inproc import BridgeThread
from dxserial.testing.peers import DxpClient, SerialPeer
from dxserial.testing.process import wait_until

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

CableRigs = Callable[..., BridgeThread]

NAME = "Probe".ljust(32)
GAMEREQ = f"R01{NAME}Z001075A".encode()  # the serial engine (initiator) plays White
GAMEACC = f"A{'Tcp'.ljust(32)}0".encode()


def open_game(peer: SerialPeer, client: DxpClient) -> None:
    peer.send(GAMEREQ)
    assert client.expect() == GAMEREQ
    client.send(GAMEACC)
    assert peer.expect() == GAMEACC
    peer.send(b"M0000342900")  # 34-29
    assert client.expect() == b"M0000342900"


def test_warn_forwards_an_illegal_move_and_logs_it_with_the_position(cable_rig_factory: CableRigs) -> None:
    rig = cable_rig_factory(referee="warn", seed=1)
    peer = rig.peer
    with DxpClient("127.0.0.1", rig.port) as client:
        open_game(peer, client)
        client.send(b"M0000252000")  # 25-20: backwards for a black man, never legal
        assert peer.expect() == b"M0000252000"  # warn: the serial engine still gets it
    wait_until(lambda: "referee:" in rig.log(), what="the referee's verdict")
    line = next(x for x in rig.log().splitlines() if "referee:" in x)
    assert "25-20" in line and "illegal move" in line
    assert "position B:" in line and line.endswith("(forwarded)")


def test_strict_refuses_an_illegal_move_and_tells_its_sender(cable_rig_factory: CableRigs) -> None:
    rig = cable_rig_factory(referee="strict", seed=2)
    peer = rig.peer
    with DxpClient("127.0.0.1", rig.port) as client:
        open_game(peer, client)
        client.send(b"M0000252000")  # 25-20: backwards for Black, never legal
        chat = client.expect()
        assert chat.startswith(b"Creferee: ")
        client.send(b"M0000192400")  # 19-24: legal
        assert peer.expect() == b"M0000192400"  # the first thing the serial engine sees
    log = rig.log()
    assert "not forwarded; told the sender" in log


def test_strict_refuses_a_move_out_of_turn(cable_rig_factory: CableRigs) -> None:
    rig = cable_rig_factory(referee="strict", seed=3)
    peer = rig.peer
    with DxpClient("127.0.0.1", rig.port) as client:
        open_game(peer, client)
        peer.send(b"M0000322800")  # White again: Black is to move
        assert peer.expect().startswith(b"Creferee: ")
        client.send(b"M0000192400")
        assert peer.expect() == b"M0000192400"
        peer.send(b"M0000322800")  # now it is White's turn: forwarded
        assert client.expect() == b"M0000322800"


def test_nulmodem_duplicate_is_dropped_in_both_modes(cable_rig_factory: CableRigs) -> None:
    for mode in ("warn", "strict"):
        rig = cable_rig_factory(referee=mode, seed=4)
        peer = rig.peer
        with DxpClient("127.0.0.1", rig.port) as client:
            open_game(peer, client)
            peer.send(b"M0000342900")  # the same move again, as a retransmission delivers it
            peer.send(b"Cafter")
            assert client.expect() == b"Cafter"  # the repeat never reached the TCP engine
        wait_until(lambda r=rig: "duplicate 'M0000342900' dropped" in r.log(), what="the drop")
        rig.stop()


@pytest.mark.parametrize("notes", [False, True])
def test_scan_game_is_refereed_clean_and_recorded(
    cable_rig_factory: CableRigs, scan_game: list[dict[str, str]], tmp_path: Path, notes: bool
) -> None:
    games = tmp_path / "games"
    games.mkdir(mode=0o700)
    rig = cable_rig_factory(referee="strict", pdn=games, seed=5, pdn_notes=notes)
    peer = rig.peer
    with DxpClient("127.0.0.1", rig.port) as client:
        for entry in scan_game[:155]:  # the game, its GAMEEND exchange and Scan's CHAT
            raw = entry["message"].encode()
            if entry["from"] == "initiator":
                peer.send(raw)
                assert client.expect() == raw
            else:
                client.send(raw)
                assert peer.expect() == raw
        wait_until(lambda: any(games.glob("*.pdn")), what="the PDN file")  # not its .tmp
    # No violation; the one thing the referee says is the 5-move rule that drew the game at
    # ply 130 (the bridge observes: Scan plays on, and its E20 claim is borne out).
    said = [line.split("referee: ", 1)[1] for line in rig.log().splitlines() if "referee:" in line]
    assert len(said) == 1 and said[0].startswith("game over: draw by the 5-move rule")
    (path,) = list(games.glob("*.pdn"))
    assert path.stat().st_mode & 0o777 == 0o600
    (record,) = read_pdn(path)
    assert record.result == "1-1"  # E20: a draw
    assert record.termination == "draw claimed by White (initiator), borne out: 5-move rule"
    text = " ".join(path.read_text().split())  # the reason is the tag's
    if notes:  # --pdn-notes: the referee's note too, where it saw the rule apply
        assert re.search(r" 65\. \S+ \S+ \{game over: draw by the 5-move rule", text)  # ply 130
    else:
        assert "game over" not in text and "{" not in text  # no clock ran, nothing to say
    (read,) = both_read(path)  # pydraughts reads the bridge's file, every move legal
    assert len(read.moves) == 150
    position = Position.start()
    for move in record.moves:
        position = position.play(parse_pdn_move(position, move.text))
    assert position.to_fen() == "W:WK7:BK6,35"


def test_game_cut_short_is_written_with_a_star(cable_rig_factory: CableRigs, tmp_path: Path) -> None:
    games = tmp_path / "games"
    games.mkdir(mode=0o700)
    rig = cable_rig_factory(pdn=games, peer_grace=0.2, seed=6)
    peer = rig.peer
    with DxpClient("127.0.0.1", rig.port) as client:
        open_game(peer, client)
    # Black (the TCP engine) was to move: the bridge ends the game on its behalf...
    assert peer.expect() == b"E00"
    peer.send(b"E00")  # ...and the serial engine's answer closes it
    wait_until(lambda: any(games.glob("*.pdn")), what="the PDN file")  # not its .tmp
    (path,) = list(games.glob("*.pdn"))
    (record,) = read_pdn(path)
    assert record.result == "*"
    assert [m.text for m in record.moves] == ["34-29"]
    assert "the tcp engine went away" in path.read_text()  # the bridge's action, kept
    both_read(path)
