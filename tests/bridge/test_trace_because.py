"""The trace's ``error`` only for errors (issue 33): what the bridge consumed or replaced by
design says why in ``because``, and traces written before still replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_relay import ACC, M1, REQ_W, REQ_Z, Rig

from dxserial.bridge.judge import SERIAL, TCP
from dxserial.bridge.relay import Relay, RelaySettings
from dxserial.game.replay import load_games


def departed_peer(rig: Rig) -> None:
    """A TCP engine leaves mid-game; the bridge ends the game for it and eats the answer."""
    rig.join(TCP)
    rig.begin(moves=True)
    rig.leave(TCP)
    rig.join(TCP)
    rig.send(TCP, REQ_W)  # the next engine asks at once: the old game is closed first
    rig.send(SERIAL, b"E00")


def stop_code(rig: Rig) -> None:
    """A TCP engine's stop code 1 is rewritten to 0 towards the serial engine, and back."""
    rig.join(TCP)
    rig.begin(moves=True)
    rig.send(TCP, b"E21")
    rig.send(SERIAL, b"E00")


def serial_check(rig: Rig) -> None:
    """After a restart: the serial engine answers the first GAMEREQ with a GAMEEND of a game
    it still had; the bridge answers it and eats it."""
    rig.relay = Relay(RelaySettings(record=True, check_serial_state=True))
    rig.join(TCP)
    rig.send(TCP, REQ_Z)
    rig.send(SERIAL, b"E00")


def late_answer(rig: Rig) -> None:
    """A GAMEEND the bridge answered for after the timeout; the late answer is eaten."""
    rig.join(TCP)
    rig.begin(moves=True)
    rig.send(TCP, b"E10")  # its turn: it ends the game; the serial engine says nothing
    rig.tick(3.1)
    rig.send(SERIAL, b"E00")


@pytest.mark.parametrize(
    ("scenario", "reason", "words"),
    [
        (departed_peer, "consumed", "speaks for the departed tcp engine"),
        (stop_code, "replaced", "stop"),
        (serial_check, "consumed", "ended a game"),
        (late_answer, "consumed", "late answer"),
    ],
)
def test_the_bridge_s_own_acts_say_because_not_error(
    scenario: Any, reason: str, words: str
) -> None:
    rig = Rig()
    scenario(rig)
    acts = [r for r in rig.messages("dropped") if r["reason"] == reason]
    assert acts, rig.trace
    for record in acts:
        assert "error" not in record, record
        assert words in record["because"], record
    # What a script counting errors finds: nothing, since nobody did anything wrong.
    assert [r for r in rig.trace if "error" in r] == []


def test_a_real_fault_still_carries_error() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.begin()
    rig.send(SERIAL, b"M00123X2800")  # not DXP
    [dropped] = rig.messages("dropped")
    assert dropped["reason"] == "invalid" and "error" in dropped and "because" not in dropped


def replay_lines(path: Path) -> list[str]:
    games, _ = load_games(path, board=False)
    return [entry for game in games for entry in game.entries]


def test_old_and_new_traces_replay_the_same(tmp_path: Path) -> None:
    rig = Rig()
    departed_peer(rig)
    rig.send(SERIAL, ACC)
    rig.send(TCP, M1)
    new = tmp_path / "new.jsonl"
    new.write_text("".join(json.dumps(r) + "\n" for r in rig.trace))
    # The same trace as a bridge wrote it before issue 33: the explanation under "error".
    old_records = []
    for record in rig.trace:
        if "because" in record:
            record = dict(record)
            record["error"] = record.pop("because")
        old_records.append(record)
    assert old_records != rig.trace
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(r) + "\n" for r in old_records))
    lines = replay_lines(new)
    assert lines == replay_lines(old)
    assert any(
        "not forwarded (dropped), not applied: the answer to the bridge" in line for line in lines
    ), lines


OLD_TRACE = """\
{"time": 1.0, "kind": "event", "level": "info", "text": "bridge started"}
{"time": 1.1, "kind": "message", "id": 1, "direction": "tcp->serial", "raw": "R01Ini                             Z005000A", "action": "queued"}
{"time": 1.2, "kind": "message", "id": 1, "direction": "tcp->serial", "raw": "R01Ini                             Z005000A", "action": "delivered"}
{"time": 1.3, "kind": "message", "id": 2, "direction": "serial->tcp", "raw": "AFol                             0", "action": "queued"}
{"time": 1.4, "kind": "message", "id": 2, "direction": "serial->tcp", "raw": "AFol                             0", "action": "delivered"}
{"time": 2.0, "kind": "message", "id": 3, "direction": "bridge->serial", "raw": "E00", "action": "sent-by-bridge", "why": "ends the game for the departed tcp engine", "on_behalf_of": "tcp"}
{"time": 2.1, "kind": "message", "id": 4, "direction": "serial->tcp", "raw": "E00", "action": "dropped", "reason": "consumed", "error": "the answer to the bridge, which speaks for the departed tcp engine"}
"""


def test_a_trace_written_before_because_existed_still_replays(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(OLD_TRACE)
    games, _ = load_games(path, board=False)
    [game] = games
    assert any(
        "[E00]: not forwarded (dropped), not applied: the answer to the bridge" in entry
        for entry in game.entries
    ), game.entries
