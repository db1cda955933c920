"""Events of an unattended rig, on the sans-I/O relay: the serial engine is the long-lived
party, so a TCP engine's stop code, a bridge restart or a silent serial engine must leave it
ready for the next TCP engine."""

from __future__ import annotations

import json
from pathlib import Path

from test_relay import ACC, M1, M2, REQ_W, REQ_Z, Rig

from dxserial.bridge.judge import SERIAL, TCP
from dxserial.bridge.relay import Relay, RelaySettings
from dxserial.game.replay import load_games


def test_a_tcp_engine_s_stop_code_ends_its_session_not_the_serial_engine_s() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.begin(moves=True)
    rig.send(TCP, b"E21")  # dxserial engine --games 1: the last game says stop
    assert rig.got[SERIAL][-1] == b"E20"  # towards the serial engine: stop code 0
    rig.send(SERIAL, b"E00")
    assert rig.got[TCP][-1] == b"E01"  # its answer goes back with the stop the TCP engine asked
    changed = rig.messages("sent-by-bridge")
    assert [(r["raw"], r["on_behalf_of"]) for r in changed] == [("E20", "tcp"), ("E01", "serial")]
    assert [r["reason"] for r in rig.messages("dropped")] == ["replaced", "replaced"]
    assert len(rig.records) == 1 and rig.records[0].result == "1-1"
    rig.leave(TCP)
    rig.join(TCP)  # the next TCP engine plays the same serial engine
    rig.send(TCP, REQ_W)
    assert rig.got[SERIAL][-1] == REQ_W
    rig.send(SERIAL, ACC)
    rig.send(SERIAL, M1)
    assert rig.got[TCP] == [ACC, M1] and rig.warnings() == []
    rig.check_counts()


def test_a_stop_code_in_the_answer_is_changed_too_and_the_serial_initiator_waits() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.send(SERIAL, REQ_W)  # the serial engine is the initiator; the TCP follower has White
    rig.send(TCP, ACC)
    rig.send(TCP, M1)
    rig.send(SERIAL, b"E10")
    rig.send(TCP, b"E01")  # the TCP engine answers and stops
    assert rig.got[SERIAL][-1] == b"E00"
    rig.send(SERIAL, REQ_Z)  # the next game: for the next TCP engine, not for this one
    assert rig.got[TCP][-1] == b"E10"
    rig.leave(TCP)
    rig.join(TCP)
    assert rig.got[TCP] == [REQ_Z]
    rig.check_counts()


def test_pass_stop_forwards_the_stop_code_unchanged() -> None:
    rig = Rig()
    rig.relay = Relay(RelaySettings(record=True, pass_stop=True))
    rig.join(TCP)
    for side, raw in [(TCP, REQ_Z), (SERIAL, ACC), (TCP, M1), (SERIAL, M2), (TCP, b"E21")]:
        rig.send(side, raw)
    assert rig.got[SERIAL][-1] == b"E21" and rig.messages("sent-by-bridge") == []
    rig.check_counts()


LEFT_OPEN = "state file /var/lib/dxserial/serial-dev-ttyUSB0.json: a game was open"


def checked(**settings: object) -> Relay:
    """A relay whose state file says the previous run left the serial engine's game open."""
    return Relay(RelaySettings(check_serial_state=True, **settings),  # type: ignore[arg-type]
                 left_open=LEFT_OPEN)


def test_a_game_left_open_by_the_previous_run_is_ended_before_a_gamereq() -> None:
    rig = Rig()
    rig.relay = checked(record=True)
    rig.join(TCP)
    rig.send(TCP, REQ_Z)  # the bridge just started: its record says the engine is mid-game
    assert rig.got[SERIAL] == [b"E00"]
    [probe] = rig.messages("sent-by-bridge")
    assert probe["direction"] == "bridge->serial" and "on_behalf_of" not in probe
    assert f"ending game left open by the previous run ({LEFT_OPEN})" in probe["why"]
    rig.send(SERIAL, b"Cno game is running")  # what an idle engine may say: consumed
    rig.send(SERIAL, b"E00")
    assert rig.got[TCP] == [] and rig.got[SERIAL] == [b"E00", REQ_Z]
    rig.send(SERIAL, ACC)
    assert rig.got[TCP] == [ACC] and rig.warnings() == []
    rig.check_counts()


def test_a_gameend_answered_for_a_departed_engine_is_not_answered_again_later() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.begin()
    rig.send(TCP, M1)
    rig.send(SERIAL, b"E10")  # the TCP engine leaves instead of answering (GWD's default)
    rig.leave(TCP)
    assert rig.got[SERIAL][-1] == b"E00"  # answered on its behalf at once: the game is over
    rig.join(TCP)  # the next TCP engine
    rig.tick(10.0)  # past --gameend-timeout
    assert rig.got[SERIAL].count(b"E00") == 1  # no second answer to a closed game
    assert not [t for _, t in rig.logs if "does not answer a GAMEEND" in t]  # nobody blamed
    rig.check_counts()


def test_a_tcp_engine_gone_during_the_check_leaves_no_gamereq_for_the_serial_engine() -> None:
    rig = Rig()
    rig.relay = checked(record=True)
    rig.join(TCP)
    rig.send(TCP, REQ_Z)  # held behind the bridge's E00 to the serial engine
    rig.leave(TCP)  # before the serial engine answered it
    rig.send(SERIAL, b"E00")
    assert rig.got[SERIAL] == [b"E00"]  # no game started for an engine that has gone
    [lost] = rig.messages("lost")
    assert lost["raw"] == REQ_Z.decode() and "went away" in lost["reason"]
    rig.check_counts()


def test_a_serial_engine_that_does_not_answer_the_check_gets_the_gamereq_after_a_while() -> None:
    rig = Rig()
    rig.relay = checked(gameend_timeout=2.0)
    rig.join(TCP)
    rig.send(TCP, REQ_Z)
    rig.send(TCP, b"Chello")  # held behind the GAMEREQ
    assert rig.got[SERIAL] == [b"E00"]
    rig.tick(2.5)
    assert rig.got[SERIAL] == [b"E00", REQ_Z, b"Chello"]
    rig.check_counts()


def test_a_serial_initiator_that_speaks_first_is_not_checked() -> None:
    rig = Rig()
    rig.relay = Relay(RelaySettings(check_serial_state=True))
    rig.join(TCP)
    rig.send(SERIAL, b"Chello")  # a CHAT tells nothing of its state
    rig.send(SERIAL, REQ_W)  # a GAMEREQ does: it is idle, and the initiator
    rig.send(TCP, ACC)
    assert rig.got[SERIAL] == [ACC] and rig.messages("sent-by-bridge") == []
    rig.check_counts()


def test_a_move_left_over_from_the_bridge_s_earlier_run_is_not_given_to_a_tcp_engine() -> None:
    rig = Rig()
    rig.relay = Relay(RelaySettings(record=True, check_serial_state=True))
    rig.send(SERIAL, M2)  # the bridge restarted; the serial engine was mid-game
    assert rig.messages("lost")[-1]["raw"] == M2.decode()
    assert rig.got[SERIAL] == [b"E00"]  # the bridge ends that game
    rig.send(SERIAL, b"E00")  # its answer: consumed
    rig.join(TCP)
    assert rig.got[TCP] == []  # nothing of the old game reaches the new TCP engine
    rig.send(TCP, REQ_Z)
    assert rig.got[SERIAL][-1] == REQ_Z  # known now: no second check
    assert rig.warnings() == []
    rig.check_counts()


def test_a_silent_serial_engine_given_up_mid_game_and_back_is_a_new_session() -> None:
    rig = Rig()
    rig.relay = checked(record=True)
    rig.join(TCP)
    rig.send(TCP, REQ_Z)
    rig.send(SERIAL, b"E00")  # the check on the bridge's start
    rig.send(SERIAL, ACC)
    rig.send(TCP, M1)
    rig.leave(SERIAL)  # silent past --serial-grace: gone, its game ended towards the TCP engine
    assert rig.got[TCP][-1] == b"E00" and rig.messages("sent-by-bridge")[-1]["on_behalf_of"] == (
        "serial"
    )
    rig.send(TCP, b"E00")
    assert len(rig.records) == 1 and rig.records[0].result == "*"
    rig.join(SERIAL)  # it speaks again
    rig.send(TCP, REQ_Z)  # the next game: it was given up mid-game, so that game is ended first
    assert rig.got[SERIAL][-1] == b"E00"
    rig.send(SERIAL, b"E00")
    assert rig.got[SERIAL][-1] == REQ_Z
    rig.check_counts()


def test_a_trace_with_the_bridge_s_changes_replays_as_the_bridge_judged_it(tmp_path: Path) -> None:
    rig = Rig()
    rig.join(TCP)
    for side, raw in [(TCP, REQ_Z), (SERIAL, ACC), (TCP, M1), (SERIAL, M2), (TCP, b"E21"),
                      (SERIAL, b"E00"), (TCP, REQ_W), (SERIAL, ACC), (SERIAL, M1)]:
        rig.send(side, raw)
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in rig.trace))
    games, _ = load_games(trace, board=False)
    assert [g.violations for g in games] == [0, 0]  # as the bridge saw it: nobody broke a rule
    assert games[0].result.startswith("1-1")
    # The serial engine's answer as it sent it; the TCP engine's session did not stop the
    # dialogue, so game 2 is the same connection's next game.
    assert any("sent GAMEEND" in e and e.endswith("[E00]") for e in games[0].entries)
    assert not any("new connection" in e for g in games for e in g.entries)
