"""Real engines' dialects through the sans-I/O relay, from GWD's recorded exchanges.

The view follows the wire: what one engine sent and the other received is what the bridge
believes, so a habit such as an echoed GAMEEND reason is named once and never turns into a
flood of violations, a game appended to the previous one's record, or a dropped message.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from test_relay import ACC, M1, M2, REQ_Z, Rig

from dxserial.bridge.judge import SERIAL, TCP, Side
from dxserial.bridge.relay import Relay, RelaySettings

GWD = Path(__file__).parent.parent / "data" / "gwd"


def recorded(name: str) -> list[tuple[Side, bytes]]:
    rows = [json.loads(line) for line in (GWD / f"{name}.jsonl").read_text().splitlines()]
    return [(SERIAL if r["from"] == "serial" else TCP, r["raw"].encode()) for r in rows]


def replay(rig: Rig, messages: list[tuple[Side, bytes]]) -> None:
    """Each engine's messages in order; every one must reach the other engine unchanged."""
    for side, raw in messages:
        receiver: Side = TCP if side == SERIAL else SERIAL
        before = len(rig.got[receiver])
        rig.send(side, raw)
        assert rig.got[receiver][before:] == [raw], (side, raw)


def notes(rig: Rig) -> list[str]:
    return [text for level, text in rig.logs if level == logging.INFO and "note:" in text]


@pytest.mark.parametrize("referee", ["warn", "strict"])
def test_gwd_server_initiator_echoing_the_reason_plays_two_games_with_two_records(
    referee: str,
) -> None:
    rig = Rig(referee)
    rig.join(TCP)
    messages = recorded("gwd-server-initiator")
    replay(rig, messages)
    assert messages[-1] == (SERIAL, b"E10")  # game 2's real E10: delivered, not a 'duplicate'
    assert rig.warnings() == []  # nobody blamed for a habit
    assert rig.relay.counts["violations"] == 0 and rig.relay.counts["dropped"] == 0
    assert [r.game_number for r in rig.records] == [1]  # game 2 waits for GWD's answer
    assert rig.records[0].result == "2-0"
    rig.send(TCP, b"E10")  # GWD's answer to game 2's end, echoed as ever
    assert [(r.game_number, r.result) for r in rig.records] == [(1, "2-0"), (2, "0-2")]
    assert rig.records[1].plies > 50 and not rig.records[1].violations()
    echo = [n for n in notes(rig) if "answers a GAMEEND with the reason" in n]
    assert len(echo) == 1  # once per session
    dialects = [r for r in rig.trace if r["kind"] == "dialect"]
    assert [(r["side"], r["habit"]) for r in dialects] == [
        ("tcp", "cumulative-times"), ("tcp", "gameend-reason-echo")  # GWD's totals: M0023...
    ]
    rig.check_counts()


@pytest.mark.parametrize("referee", ["warn", "strict"])
def test_gwd_server_follower_two_games_without_a_stall(referee: str) -> None:
    rig = Rig(referee)
    rig.join(TCP)
    replay(rig, recorded("gwd-server-follower"))
    assert rig.warnings() == [] and rig.messages("sent-by-bridge") == []
    assert [r.game_number for r in rig.records] == [1, 2]  # two files, -g1 and -g2
    rig.check_counts()


@pytest.mark.parametrize("referee", ["warn", "strict"])
def test_gwd_initiator_that_never_answers_sends_the_next_gamereq_as_its_answer(
    referee: str,
) -> None:
    rig = Rig(referee)
    rig.join(TCP)
    messages = recorded("gwd-server-initiator-nonstrict")
    upto = max(i for i, (side, raw) in enumerate(messages) if raw.startswith(b"R"))
    replay(rig, messages[: upto + 1])
    assert len(rig.records) == 1 and rig.records[0].result == "2-0"
    rig.send(SERIAL, messages[1][1])  # the built-in follower accepts game 2
    assert rig.relay.judge.phase.game_running
    assert rig.warnings() == []
    assert any("does not answer a GAMEEND" in n for n in notes(rig))
    rig.tick(60.0)
    assert rig.messages("sent-by-bridge") == []  # nothing to answer: the GAMEREQ did
    rig.check_counts()


@pytest.mark.parametrize("referee", ["warn", "strict"])
def test_gwd_follower_that_never_answers_is_answered_for_by_the_bridge(referee: str) -> None:
    rig = Rig(referee)
    rig.join(TCP)
    messages = recorded("gwd-client-follower-nonstrict")
    replay(rig, messages)
    assert messages[-1] == (SERIAL, b"E10")  # the built-in initiator waits for the answer
    assert rig.relay.next_deadline() == pytest.approx(3.0)
    rig.tick(2.9)
    assert rig.messages("sent-by-bridge") == []
    rig.tick(0.2)
    [answer] = rig.messages("sent-by-bridge")
    assert answer["raw"] == "E00" and answer["on_behalf_of"] == "tcp"
    assert rig.got[SERIAL][-1] == b"E00"
    assert len(rig.records) == 1 and rig.records[0].result == "2-0"
    rig.send(SERIAL, REQ_Z)  # the initiator's next game goes to GWD
    assert rig.got[TCP][-1] == REQ_Z
    rig.send(TCP, b"E00")  # a late answer after all: the bridge gave it already
    assert rig.got[SERIAL][-1] == b"E00" and rig.messages("dropped")[-1]["reason"] == "consumed"
    rig.send(TCP, ACC)
    assert rig.got[SERIAL][-1] == ACC and rig.relay.judge.phase.game_running
    assert rig.warnings() == []
    rig.check_counts()


@pytest.mark.parametrize("referee", ["off", "warn"])
def test_only_a_nulmodem_line_repeats_a_message_anything_else_is_forwarded(referee: str) -> None:
    rig = Rig(referee)
    rig.join(TCP)
    rig.send(SERIAL, REQ_Z)
    rig.send(TCP, ACC)
    rig.send(TCP, ACC)  # a TCP engine's repeat is its own message: forwarded and reported
    assert rig.got[SERIAL] == [ACC, ACC] and rig.relay.counts["duplicates"] == 0
    rig.send(SERIAL, REQ_Z)  # the serial line's repeat: the one thing dropped
    assert rig.got[TCP] == [REQ_Z] and rig.relay.counts["duplicates"] == 1
    rig.check_counts()


def test_a_broken_rule_is_reported_once_and_the_next_game_is_clean() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.begin()
    rig.send(TCP, M1)
    rig.send(TCP, b"E00")  # out of turn: Black is to move; the serial engine will answer it
    rig.send(SERIAL, b"E00")
    rig.begin(moves=True)
    assert len(rig.warnings()) == 1
    assert [r.game_number for r in rig.records] == [1]
    assert rig.relay.judge.phase.game_running and rig.relay.judge.dialogue.plies == 2
    rig.check_counts()


def test_a_gamereq_delivered_mid_game_starts_a_new_game_with_its_own_record() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.begin(moves=True)
    rig.send(TCP, REQ_Z)  # forwarded under warn: the serial engine takes it as a new game
    assert [(r.game_number, r.result) for r in rig.records] == [(1, "*")]
    rig.send(SERIAL, ACC)
    rig.send(TCP, M1)
    assert rig.relay.judge.dialogue.plies == 1 and len(rig.warnings()) == 1
    rig.check_counts()


def test_no_gameend_on_behalf_of_a_departed_engine_for_a_game_both_closed() -> None:
    rig = Rig()
    rig.join(TCP)
    replay(rig, recorded("gwd-server-initiator")[:116])
    rig.send(TCP, b"E10")  # game 1 closed by GWD's echo
    rig.leave(TCP)
    rig.tick(10.0)
    assert rig.messages("sent-by-bridge") == []
    assert len(rig.records) == 1
    rig.check_counts()


def test_without_a_gameend_timeout_the_bridge_never_answers() -> None:
    relay = Relay(RelaySettings(gameend_timeout=0.0))
    relay.joined(TCP, 0.0)
    for side, raw in [(SERIAL, REQ_Z), (TCP, ACC), (SERIAL, b"E00")]:
        relay.receive(side, raw, 0.0)
        relay.settle()
    assert relay.next_deadline() is None


def test_an_initiator_that_does_not_wait_for_the_answer_to_its_gameend_never_gets_it() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.begin(moves=True)
    rig.send(TCP, b"E00")  # GWD past its move limit: GAMEEND, then at once the next GAMEREQ
    rig.send(TCP, REQ_Z)
    rig.send(SERIAL, b"E00")  # the serial engine's answer crossed it: GWD would read it for
    assert rig.got[TCP] == [ACC, M2]  # the GAMEACC and stop, so it is not given to it
    assert rig.messages("dropped")[-1]["reason"] == "consumed"
    rig.send(SERIAL, ACC)
    assert rig.got[TCP][-1] == ACC and rig.relay.judge.phase.game_running
    assert any("without waiting for the answer" in n for n in notes(rig))
    assert rig.warnings() == [] and len(rig.records) == 1
    rig.check_counts()


def test_an_engine_that_leaves_instead_of_answering_a_gameend_is_answered_for_at_once() -> None:
    rig = Rig()
    rig.join(TCP)
    replay(rig, recorded("gwd-client-follower-nonstrict"))  # ends with the serial E10
    rig.leave(TCP)  # GWD's games are over: it hangs up without a word
    assert rig.got[SERIAL][-1] == b"E00"  # no grace to wait for: the game was over
    assert rig.messages("sent-by-bridge")[-1]["on_behalf_of"] == "tcp"
    assert rig.warnings() == [] and len(rig.records) == 1
    rig.check_counts()


def test_a_late_answer_is_taken_only_from_the_engine_the_bridge_answered_for() -> None:
    rig = Rig("warn")
    rig.join(TCP)
    replay(rig, recorded("gwd-client-follower-nonstrict"))
    rig.tick(3.1)  # the bridge answered GWD's GAMEEND on its behalf
    assert [m["raw"] for m in rig.messages("sent-by-bridge")] == ["E00"]
    rig.leave(TCP)  # GWD goes without ever sending its late answer
    rig.join(TCP)  # another engine
    rig.send(SERIAL, REQ_Z)
    assert rig.got[TCP][-1] == REQ_Z
    before = len(rig.got[SERIAL])
    rig.send(TCP, b"E00")  # the newcomer's own GAMEEND: its message, not GWD's late answer
    assert rig.got[SERIAL][before:] == [b"E00"]
    assert not [m for m in rig.messages("dropped") if m.get("reason") == "consumed"]
    rig.check_counts()
