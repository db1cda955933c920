"""The bridge ends a serial engine's game only on evidence, on the sans-I/O relay: with none
the first GAMEREQ goes out at once, byte for byte; a refusal, a game message or silence
where its GAMEACC should come has the old game ended and the GAMEREQ offered once more;
the record that survives a restart is written when a game starts and ends, never per move."""

from __future__ import annotations

from test_relay import ACC, M1, M2, REQ_W, REQ_Z, Rig
from test_relay_rig_events import LEFT_OPEN

from dxserial.bridge.judge import SERIAL, TCP
from dxserial.bridge.relay import Relay, RelaySettings

REFUSE = ACC[:-1] + b"2"  # refuse this game, play a next one


def rig(**settings: object) -> Rig:
    """The bridge's defaults: the check on, no record of an open game."""
    made = Rig()
    made.relay = Relay(RelaySettings(record=True, check_serial_state=True, **settings))  # type: ignore[arg-type]
    made.join(TCP)
    return made


def test_with_no_evidence_the_first_gamereq_goes_out_at_once_byte_for_byte() -> None:
    r = rig()
    r.send(TCP, REQ_Z)
    assert r.got[SERIAL] == [REQ_Z] and r.messages("sent-by-bridge") == []
    r.send(SERIAL, ACC)
    r.tick(60.0)  # the GAMEACC came: no timer of the check's is left running
    assert r.got[TCP] == [ACC] and r.messages("sent-by-bridge") == [] and r.warnings() == []
    r.check_counts()


def test_the_record_is_written_when_a_game_starts_and_when_it_ends_never_per_move() -> None:
    r = rig()
    r.apply(r.relay.receive(TCP, REQ_Z, r.now))
    assert r.remembered == ["open"]  # written before the GAMEREQ left: a crash finds it
    r.apply(r.relay.settle())
    for side, raw in [(SERIAL, ACC), (TCP, M1), (SERIAL, M2), (TCP, b"M0000312700"),
                      (SERIAL, b"M0000211700")]:
        r.send(side, raw)
    assert r.remembered == ["open"]
    r.send(TCP, b"E00")
    assert r.remembered == ["open"]  # its answer is still owed
    r.send(SERIAL, b"E00")
    assert r.remembered == ["open", "closed"]
    r.check_counts()


def test_no_check_at_all_writes_no_record_and_never_speaks_first() -> None:
    r = Rig()
    r.relay = Relay(RelaySettings(check_serial_state=False), left_open=LEFT_OPEN)
    r.join(TCP)
    r.begin()
    assert r.got[SERIAL] == [REQ_Z] and r.remembered == []


def test_a_refused_gamereq_has_the_old_game_ended_and_is_offered_again_once() -> None:
    r = rig()
    r.send(TCP, REQ_Z)
    r.send(SERIAL, REFUSE)  # an engine still in a game of the bridge's last run
    assert r.got[TCP] == [] and r.got[SERIAL] == [REQ_Z, b"E00"]
    said = r.messages("sent-by-bridge")
    assert "refused the GAMEREQ (GAMEACC code 2)" in said[0]["why"]
    r.send(SERIAL, b"E00")  # its answer: consumed
    assert r.got[SERIAL] == [REQ_Z, b"E00", REQ_Z] and r.got[TCP] == []
    r.send(SERIAL, REFUSE)  # once only: a second refusal is the engine's answer
    assert r.got[TCP] == [REFUSE] and r.got[SERIAL].count(b"E00") == 1
    r.check_counts()


def test_a_gamereq_unanswered_has_the_old_game_ended_and_is_offered_again() -> None:
    r = rig(accept_timeout=5.0, gameend_timeout=3.0)
    r.send(TCP, REQ_Z)
    r.tick(4.9)
    assert r.got[SERIAL] == [REQ_Z]
    r.tick(0.2)
    assert r.got[SERIAL] == [REQ_Z, b"E00"]
    assert "did not answer the GAMEREQ within 5 s" in r.messages("sent-by-bridge")[0]["why"]
    r.send(TCP, b"Care you there?")  # held while the bridge ends the old game
    r.tick(3.1)  # its GAMEEND is not answered either: taken to be idle
    assert r.got[SERIAL] == [REQ_Z, b"E00", REQ_Z, b"Care you there?"]
    r.send(SERIAL, ACC)
    assert r.got[TCP] == [ACC]
    r.tick(60.0)
    assert r.got[SERIAL].count(b"E00") == 1
    r.check_counts()


def test_a_move_where_the_gameacc_should_come_is_evidence_of_an_old_game() -> None:
    r = rig()
    r.send(TCP, REQ_W)
    r.send(SERIAL, M2)  # still in the old game: it played its move there
    assert r.got[TCP] == [] and r.got[SERIAL] == [REQ_W, b"E00"]
    r.send(SERIAL, b"E00")
    r.send(SERIAL, ACC)
    assert r.got[TCP] == [ACC] and r.got[SERIAL] == [REQ_W, b"E00", REQ_W]
    r.check_counts()


def test_the_time_for_the_gameacc_starts_when_the_line_delivered_the_gamereq() -> None:
    r = Rig(deliver=False)
    r.relay = Relay(RelaySettings(check_serial_state=True, accept_timeout=5.0))
    r.join(TCP)
    r.send(TCP, REQ_Z)
    r.tick(30.0)  # a NULMODEM line still retrying: the engine has not got it
    assert r.unconfirmed[SERIAL] == [REQ_Z]
    r.confirm(SERIAL)
    r.tick(4.0)
    assert r.unconfirmed[SERIAL] == []
    r.tick(1.5)
    assert r.unconfirmed[SERIAL] == [b"E00"]


def test_a_serial_initiator_s_gamereq_outweighs_the_record_of_an_open_game() -> None:
    r = Rig()
    r.relay = Relay(RelaySettings(check_serial_state=True), left_open=LEFT_OPEN)
    r.join(TCP)
    r.send(SERIAL, REQ_W)  # it offers a game: it has none open
    r.send(TCP, ACC)
    assert r.got[SERIAL] == [ACC] and r.messages("sent-by-bridge") == []


def test_the_record_of_a_game_left_open_stays_until_that_game_is_ended() -> None:
    r = Rig()
    r.relay = Relay(RelaySettings(check_serial_state=True), left_open=LEFT_OPEN)
    r.join(TCP)
    r.tick(1.0)
    assert r.remembered == []  # the file says open already
    r.send(TCP, REQ_Z)
    r.send(SERIAL, b"E00")  # the old game is ended; the new one starts at once
    r.send(SERIAL, ACC)
    assert r.remembered == []  # open all along: the old game, then the new one
    r.send(TCP, M1)
    r.send(SERIAL, b"E10")
    r.send(TCP, b"E00")
    assert r.remembered == ["closed"]


def test_a_game_message_answering_one_of_this_run_s_is_not_taken_for_an_old_game() -> None:
    r = rig()
    r.send(TCP, M1)  # a MOVE with no game (a benchmark's echo peer): forwarded, judged
    r.send(SERIAL, M1)  # its echo answers this run's message: not evidence of an old game
    assert r.got[TCP] == [M1] and r.messages("sent-by-bridge") == []
    r.check_counts()


def test_a_game_message_before_this_run_said_anything_is_evidence_of_an_old_game() -> None:
    r = rig()
    r.send(SERIAL, M2)  # the bridge restarted; the serial engine was mid-game
    assert r.got[SERIAL] == [b"E00"] and r.got[TCP] == []
    assert "with no game open here" in r.messages("sent-by-bridge")[0]["why"]


def test_a_gameend_where_the_gameacc_should_come_is_answered_and_the_gamereq_sent_again() -> None:
    r = rig()
    r.send(TCP, REQ_Z)
    r.send(SERIAL, b"E00")  # the built-in engine, mid-game, ends that game instead
    assert r.got[SERIAL] == [REQ_Z, b"E00", REQ_Z] and r.got[TCP] == []
    r.send(SERIAL, ACC)
    assert r.got[TCP] == [ACC]
    r.tick(60.0)
    assert r.got[SERIAL] == [REQ_Z, b"E00", REQ_Z]
    r.check_counts()


def test_a_game_whose_last_gameend_never_reached_the_serial_engine_stays_open() -> None:
    r = Rig(deliver=False)
    r.relay = Relay(RelaySettings(check_serial_state=True))
    r.join(TCP)
    for side, raw in [(TCP, REQ_W), (SERIAL, ACC), (SERIAL, M1), (TCP, M2), (SERIAL, b"E20")]:
        r.send(side, raw)
        r.confirm(TCP if side == SERIAL else SERIAL)
    r.send(TCP, b"E00")  # its answer, on its way to the serial engine when the bridge stops
    assert r.remembered == ["open"]
    r.apply(r.relay.shutdown(r.now))
    assert r.remembered == ["open"]  # the next run ends the game it still waits to end
    r.confirm(SERIAL)


def test_the_record_closes_once_the_last_gameend_is_delivered() -> None:
    r = Rig(deliver=False)
    r.relay = Relay(RelaySettings(check_serial_state=True))
    r.join(TCP)
    for side, raw in [(TCP, REQ_W), (SERIAL, ACC), (SERIAL, M1), (TCP, M2), (SERIAL, b"E20"),
                      (TCP, b"E00")]:
        r.send(side, raw)
        assert r.remembered == ["open"]
        r.confirm(TCP if side == SERIAL else SERIAL)
    assert r.remembered == ["open", "closed"]


def test_the_serial_engine_s_time_to_answer_the_bridge_s_gameend_runs_once_it_has_it() -> None:
    """Found by the line soak under load: after a restart the bridge's GAMEEND (the record
    said a game was open) took longer than its 3 s to cross a slow line, the silence was
    taken for an idle engine, and the GAMEREQ reached the engine inside its old game."""
    r = Rig(deliver=False)  # the line delivers nothing yet (a slow or noisy line)
    r.relay = Relay(RelaySettings(check_serial_state=True), left_open=LEFT_OPEN)
    r.join(TCP)
    r.send(TCP, REQ_Z)
    assert r.unconfirmed[SERIAL] == [b"E00"]  # the old game is ended first
    r.tick(30.0)  # not delivered: no answer can be owed yet
    assert REQ_Z not in r.unconfirmed[SERIAL] and REQ_Z not in r.got[SERIAL]
    r.deliver = True
    r.confirm(SERIAL)  # the engine has the GAMEEND now
    r.send(SERIAL, b"E00")  # and answers it (consumed)
    assert r.got[SERIAL][-1] == REQ_Z and r.got[TCP] == []
    r.send(SERIAL, ACC)
    assert r.got[TCP] == [ACC]
    r.check_counts()
