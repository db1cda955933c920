"""The bridge's session rules, tested on the sans-I/O relay: a fake clock, no processes.

Each test is a story an unattended rig lives through (engines starting in another order,
leaving mid-game, reconnecting, restarting) and checks what each *engine* receives, what
the trace says, and which games are recorded.  Every test ends by checking that the
relay's counts match its trace record for record.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import pytest

from dxserial.bridge.judge import SERIAL, TCP, Side
from dxserial.bridge.relay import Relay, RelaySettings
from dxserial.draughts import Position
from dxserial.draughts.notation import parse_pdn_move
from dxserial.drive.actions import (
    Action,
    Forget,
    Log,
    News,
    Observed,
    Remember,
    Send,
    Trace,
    WriteRecord,
)
from dxserial.errors import FramingError
from dxserial.game.news import GameClosed, GameNews, GameOpened, MoveMade, TakenBack
from dxserial.game.record import GameRecord

NAME = "Probe".ljust(32)
REQ_W = f"R01{NAME}W005075A".encode()  # the follower plays White (moves first)
REQ_Z = f"R01{NAME}Z005075A".encode()  # the follower plays Black
ACC = f"A{'Other'.ljust(32)}0".encode()
M1 = b"M0000322800"  # White 32-28
M2 = b"M0000172100"  # Black 17-21
M3 = b"M0000373200"  # White 37-32
E00 = b"E00"
REFEREES = ["warn", "strict"]


class Rig:
    """A relay and two engines that receive whatever the relay delivers to them."""

    def __init__(
        self,
        referee: str = "warn",
        *,
        grace: float = 3.0,
        check: Any = None,
        deliver: bool = True,
        news: bool = False,
    ) -> None:
        self.relay = Relay(
            RelaySettings(referee=referee, record=True, grace={SERIAL: 0.0, TCP: grace}, news=news),  # type: ignore[arg-type]
            check=check,
        )
        self.now = 0.0
        self.deliver = deliver
        self.got: dict[Side, list[bytes]] = {SERIAL: [], TCP: []}
        self.unconfirmed: dict[Side, list[bytes]] = {SERIAL: [], TCP: []}
        self.trace: list[dict[str, Any]] = []
        self.logs: list[tuple[int, str]] = []
        self.records: list[GameRecord] = []
        self.observed: list[str] = []
        self.forgotten: list[Side] = []
        self.news: list[GameNews] = []
        self.remembered: list[str] = []  # the record of the serial engine's game, each write

    def apply(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, Send):
                if self.deliver:
                    self.got[action.side].append(action.raw)
                    self.apply(self.relay.delivered(action.side, action.raw, self.now))
                else:
                    self.unconfirmed[action.side].append(action.raw)
            elif isinstance(action, Forget):
                self.forgotten.append(action.side)
                self.unconfirmed[action.side] = []
            elif isinstance(action, Trace):
                self.trace.append(action.fields)
            elif isinstance(action, Log):
                self.logs.append((action.level, action.text))
            elif isinstance(action, WriteRecord):
                self.records.append(action.record)
            elif isinstance(action, Observed):
                self.observed.append(action.direction)
            elif isinstance(action, News):
                self.news.append(action.news)
            elif isinstance(action, Remember):
                self.remembered.append(action.fields["game"])

    def send(self, side: Side, raw: bytes) -> None:
        self.apply(self.relay.receive(side, raw, self.now))
        self.apply(self.relay.settle())  # as the bridge does, after the write

    def begin(self, *, moves: bool = False) -> None:
        """The TCP engine offers a game (REQ_Z), the serial engine accepts; with ``moves``
        each plays its first move (M1, M2): a game under way."""
        self.send(TCP, REQ_Z)
        self.send(SERIAL, ACC)
        if moves:
            self.send(TCP, M1)
            self.send(SERIAL, M2)

    def join(self, side: Side = TCP) -> None:
        self.got[side] = []  # a new engine: it has received nothing yet
        self.apply(self.relay.joined(side, self.now, "127.0.0.1:40000"))

    def leave(self, side: Side = TCP) -> None:
        self.apply(self.relay.left(side, self.now, "closed"))

    def tick(self, seconds: float) -> None:
        self.now += seconds
        self.apply(self.relay.poll(self.now))

    def confirm(self, side: Side) -> None:
        """The link delivers what it was handed (with ``deliver=False``)."""
        for raw in self.unconfirmed[side]:
            self.got[side].append(raw)
            self.apply(self.relay.delivered(side, raw, self.now))
        self.unconfirmed[side] = []

    def warnings(self) -> list[str]:
        return [text for level, text in self.logs if level >= logging.WARNING]

    def messages(self, action: str) -> list[dict[str, Any]]:
        return [r for r in self.trace if r["kind"] == "message" and r["action"] == action]

    def check_counts(self) -> None:
        """The closing counts say exactly what the trace says."""
        traced = Counter(r["action"] for r in self.trace if r["kind"] == "message")
        for action in ("queued", "delivered", "dropped", "lost", "sent-by-bridge"):
            assert self.relay.counts[action] == traced[action], action
        # Each direction counts what reached the other engine: nothing lost, nothing of ours.
        arrived = Counter(
            r["direction"] for r in self.trace
            if r["kind"] == "message" and r["action"] == "delivered"
        )
        for direction in ("serial->tcp", "tcp->serial"):
            assert self.relay.counts[direction] == arrived[direction], direction


@pytest.fixture
def scan_messages(scan_game: list[dict[str, str]]) -> list[tuple[str, bytes]]:
    return [(m["from"], m["message"].encode("ascii")) for m in scan_game]


def play(rig: Rig, messages: list[tuple[str, bytes]], serial_role: str) -> None:
    """Each engine sends its messages in turn; the other must receive each one unchanged."""
    for sender, raw in messages:
        side: Side = SERIAL if sender == serial_role else TCP
        receiver: Side = TCP if side == SERIAL else SERIAL
        rig.send(side, raw)
        assert rig.got[receiver][-1] == raw, (sender, raw)


def first_game(messages: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """The messages up to and including the first GAMEEND exchange."""
    ends = [i for i, (_, raw) in enumerate(messages) if raw.startswith(b"E")]
    return messages[: ends[1] + 1]


# --------------------------------------------------------------------------- who starts first


@pytest.mark.parametrize("referee", REFEREES)
def test_serial_gamereq_before_any_peer_is_judged_as_delivered_to_it(
    referee: str, scan_messages: list[tuple[str, bytes]]
) -> None:
    rig = Rig(referee)
    sender, request = scan_messages[0]
    assert sender == "initiator" and request.startswith(b"R")
    rig.send(SERIAL, request)
    assert rig.messages("queued")[0]["raw"] == request.decode()
    assert rig.got[TCP] == []
    rig.join(TCP)
    assert rig.got[TCP] == [request]  # kept, and delivered to the first peer
    play(rig, first_game(scan_messages)[1:], serial_role="initiator")
    assert rig.warnings() == []  # nobody blamed: the referee saw what the peer received
    assert len(rig.records) == 1 and rig.records[0].result == "1-1"
    rig.check_counts()


@pytest.mark.parametrize("referee", REFEREES)
def test_tcp_initiator_game_is_clean(referee: str, scan_messages: list[tuple[str, bytes]]) -> None:
    rig = Rig(referee)
    rig.join(TCP)
    play(rig, first_game(scan_messages), serial_role="follower")
    assert rig.warnings() == []
    assert len(rig.records) == 1
    assert rig.relay.counts["tcp->serial"] + rig.relay.counts["serial->tcp"] == len(
        first_game(scan_messages)
    )
    rig.check_counts()


# --------------------------------------------------------------------------- engines that leave


@pytest.mark.parametrize("referee", REFEREES)
def test_messages_for_a_departed_peer_never_reach_the_next_one(referee: str) -> None:
    rig = Rig(referee)
    rig.join(TCP)
    rig.send(TCP, REQ_W)
    assert rig.got[SERIAL] == [REQ_W]
    rig.leave(TCP)
    rig.send(SERIAL, ACC)  # the answer to a peer that is gone
    rig.send(SERIAL, M1)
    lost = rig.messages("lost")
    assert [r["raw"] for r in lost] == [ACC.decode(), M1.decode()]
    assert any("NOT delivered" in w and ACC.decode() in w for w in rig.warnings())
    rig.join(TCP)  # a new engine connects and asks for a game at once (before the grace ends)
    rig.send(TCP, REQ_Z)
    assert rig.got[TCP] == []  # nothing of the old session reached it
    assert rig.got[SERIAL][-1] == E00  # the bridge ends the old game for the departed peer
    bridge = rig.messages("sent-by-bridge")
    assert bridge and bridge[-1]["raw"] == "E00" and bridge[-1]["direction"] == "bridge->serial"
    rig.send(SERIAL, E00)  # the serial engine's answer is consumed
    assert rig.got[TCP] == []
    assert rig.messages("dropped")[-1]["reason"] == "consumed"
    assert rig.got[SERIAL][-1] == REQ_Z  # then the new peer's GAMEREQ goes on
    assert len(rig.records) == 1 and rig.records[0].result == "*"
    comments = [c for texts in rig.records[0].comments.values() for c in texts]
    assert any("went away" in c for c in comments)
    rig.send(SERIAL, ACC)
    assert rig.got[TCP] == [ACC]
    assert not [w for w in rig.warnings() if "referee" in w or "broke" in w]
    rig.check_counts()


@pytest.mark.parametrize("referee", REFEREES)
@pytest.mark.parametrize("serial_role", ["initiator", "follower"])
def test_a_peer_gone_mid_game_is_ended_after_the_grace_period(
    referee: str, serial_role: str
) -> None:
    rig = Rig(referee, grace=3.0)
    rig.join(TCP)
    serial_first = serial_role == "initiator"
    start: Side = SERIAL if serial_first else TCP
    answer: Side = TCP if serial_first else SERIAL
    rig.send(start, REQ_W)  # the follower (answer side) plays White
    rig.send(answer, ACC)
    rig.send(answer, M1)
    rig.send(start, M2)  # now the follower (White) is to move
    rig.leave(TCP)
    if answer == SERIAL:
        rig.tick(2.9)
        assert rig.got[SERIAL][-1] == M2  # not yet: a quick reconnect is not punished
        rig.send(SERIAL, M3)  # the serial engine answers the departed peer's move: lost
        assert rig.messages("lost")[-1]["raw"] == M3.decode()
        rig.tick(0.2)
        assert rig.got[SERIAL][-1] == E00  # TCP to move: the bridge ends the game for it
    else:
        rig.tick(3.1)
        assert rig.got[SERIAL][-1] == E00
    rig.send(SERIAL, E00)
    assert len(rig.records) == 1 and rig.records[0].result == "*"
    assert rig.relay.closing is None
    # The serial engine is ready for the next game; its GAMEREQ waits for the next peer.
    if serial_first:
        rig.send(SERIAL, REQ_Z)
        rig.join(TCP)
        assert rig.got[TCP] == [REQ_Z]
    assert not [w for w in rig.warnings() if "referee" in w or "broke" in w]
    rig.check_counts()


def test_a_peer_that_owes_a_gameacc_is_answered_for_with_refuse_this_game() -> None:
    rig = Rig()
    rig.send(SERIAL, REQ_W)
    rig.join(TCP)
    rig.leave(TCP)  # it got the GAMEREQ and left without answering
    rig.tick(3.0)
    assert rig.got[SERIAL][-1] == f"A{'dxserial bridge'.ljust(32)}2".encode()
    assert rig.records == []  # no game was started
    rig.send(SERIAL, REQ_W)  # asks again: held for the next peer
    rig.join(TCP)
    assert rig.got[TCP] == [REQ_W]
    rig.check_counts()


def test_a_peer_that_owes_the_gameend_answer_is_answered_for() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.send(SERIAL, REQ_Z)  # serial initiator plays White and moves first
    rig.send(TCP, ACC)
    rig.send(SERIAL, b"E20")  # a draw offer... then the TCP engine vanishes
    rig.leave(TCP)
    rig.tick(3.0)
    assert rig.got[SERIAL][-1] == E00  # the answer the departed peer owed
    assert rig.relay.closing is None
    assert len(rig.records) == 1 and rig.records[0].result == "1-1"
    rig.check_counts()


def test_a_take_back_request_to_a_departed_peer_is_declined_then_the_game_ended() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.send(TCP, REQ_W)  # serial follower plays White
    rig.send(SERIAL, ACC)
    rig.send(SERIAL, M1)
    rig.send(TCP, M2)
    rig.send(SERIAL, b"B001W")  # asks to go back to the start
    rig.leave(TCP)
    rig.tick(3.0)
    assert rig.got[SERIAL][-1] == b"K1"  # take-back not supported
    rig.send(SERIAL, M3)  # so White plays on: for the departed engine, lost
    assert rig.got[SERIAL][-1] == E00  # then the bridge ends the game
    rig.send(SERIAL, E00)
    assert rig.relay.closing is None
    rig.check_counts()


@pytest.mark.parametrize("referee", REFEREES)
def test_a_new_peer_that_speaks_within_the_grace_period_ends_the_old_game_at_once(
    referee: str,
) -> None:
    rig = Rig(referee, grace=60.0)
    rig.join(TCP)
    rig.send(TCP, REQ_Z)  # the TCP initiator plays White
    rig.send(SERIAL, ACC)
    rig.send(TCP, M1)
    rig.leave(TCP)
    rig.tick(0.5)
    rig.join(TCP)
    assert rig.got[TCP] == []
    rig.send(TCP, REQ_Z)
    assert rig.got[SERIAL][-1] == M1  # the serial engine (Black) is to move: wait for it
    rig.send(SERIAL, M2)  # for the departed engine: lost
    assert rig.got[TCP] == []
    assert rig.got[SERIAL][-1] == E00  # now the bridge ends it, without waiting 60 s
    rig.send(SERIAL, E00)
    assert rig.got[SERIAL][-1] == REQ_Z
    rig.send(SERIAL, ACC)
    rig.send(TCP, M1)
    assert rig.got[TCP] == [ACC] and rig.got[SERIAL][-1] == M1
    assert not [w for w in rig.warnings() if "referee" in w or "broke" in w]
    assert len(rig.records) == 1
    rig.check_counts()


def test_a_closeout_that_gets_no_answer_gives_up_and_lets_the_next_game_start() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.begin(moves=True)
    rig.leave(TCP)
    rig.tick(3.0)
    assert rig.got[SERIAL][-1] == E00
    rig.join(TCP)
    rig.send(TCP, REQ_Z)  # held: the old game is not closed yet
    assert rig.got[SERIAL][-1] == E00
    rig.tick(30.0)  # the serial engine never answers
    assert any("did not answer the bridge" in w for w in rig.warnings())
    assert rig.got[SERIAL][-1] == REQ_Z
    assert len(rig.records) == 1 and rig.records[0].result == "*"
    rig.check_counts()


# --------------------------------------------------------------------------- the serial side


@pytest.mark.parametrize("referee", REFEREES)
def test_a_serial_engine_that_restarts_mid_game(referee: str) -> None:
    rig = Rig(referee)
    rig.join(TCP)
    rig.send(SERIAL, REQ_W)  # the TCP follower plays White
    rig.send(TCP, ACC)
    rig.send(TCP, M1)
    rig.send(SERIAL, M2)
    rig.send(TCP, M3)
    # The DOS engine is restarted: it knows nothing of the game and asks for a new one.
    rig.send(SERIAL, REQ_W)
    assert rig.got[TCP][-1] == E00  # the bridge ends the old game on its behalf
    rig.send(TCP, E00)
    assert rig.got[TCP][-1] == REQ_W  # then the new GAMEREQ goes on
    rig.send(TCP, ACC)
    assert rig.got[SERIAL][-1] == ACC
    assert not [w for w in rig.warnings() if "referee" in w or "broke" in w]
    assert len(rig.records) == 1 and rig.records[0].result == "*"
    rig.check_counts()


def test_a_gamereq_repeated_after_the_answer_came_is_a_duplicate_not_a_restart() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.send(SERIAL, REQ_Z)
    rig.send(TCP, ACC)
    # A garbled echo of E: the serial engine sends its GAMEREQ again although it arrived.
    rig.send(SERIAL, REQ_Z)
    assert rig.got[TCP] == [REQ_Z]
    assert rig.messages("dropped")[-1]["reason"] == "duplicate"
    assert rig.relay.closing is None
    rig.send(SERIAL, M1)
    assert rig.got[TCP] == [REQ_Z, M1]
    rig.check_counts()


def test_a_repeated_gamereq_while_waiting_for_the_answer_is_a_duplicate_not_a_restart() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.send(SERIAL, REQ_W)
    rig.send(SERIAL, REQ_W)  # NULMODEM retransmission after a garbled echo
    assert rig.got[TCP] == [REQ_W]
    assert rig.messages("dropped")[-1]["reason"] == "duplicate"
    rig.check_counts()


@pytest.mark.parametrize("tcp_to_move", [True, False])
def test_a_serial_port_given_up_mid_game_is_ended_towards_the_tcp_engine(
    tcp_to_move: bool,
) -> None:
    rig = Rig(deliver=False)
    rig.join(TCP)
    rig.send(TCP, REQ_Z)  # TCP initiator plays White
    rig.confirm(SERIAL)
    rig.send(SERIAL, ACC)
    rig.confirm(TCP)
    rig.send(TCP, M1)
    rig.confirm(SERIAL)
    if tcp_to_move:
        rig.send(SERIAL, M2)
        rig.confirm(TCP)
    else:
        rig.send(SERIAL, b"Cthinking")
        rig.confirm(TCP)
    rig.send(TCP, b"Cstill there?")  # on its way to a port that has vanished
    rig.leave(SERIAL)  # the adapter stayed away longer than --serial-grace
    assert rig.messages("lost")[-1]["raw"] == "Cstill there?"
    assert rig.forgotten == [SERIAL]  # the link must not send it to the next engine
    if tcp_to_move:
        rig.send(TCP, M3)  # for the serial engine that left: lost
        assert rig.messages("lost")[-1]["raw"] == M3.decode()
    rig.confirm(TCP)
    assert rig.got[TCP][-1] == E00
    rig.send(TCP, E00)
    assert rig.relay.closing is None
    assert len(rig.records) == 1
    rig.check_counts()


def test_a_gamereq_held_for_a_peer_is_lost_if_its_sender_goes() -> None:
    rig = Rig()
    rig.send(SERIAL, REQ_W)  # no TCP engine yet: held
    rig.leave(SERIAL)
    rig.join(TCP)
    assert rig.got[TCP] == []  # no game offered by an engine that is gone
    assert rig.messages("lost")[-1]["raw"] == REQ_W.decode()
    rig.join(SERIAL)
    rig.send(SERIAL, REQ_W)  # the serial engine is back and asks again
    assert rig.got[TCP] == [REQ_W]
    rig.check_counts()


# --------------------------------------------------------------------------- the trace tells the truth


def test_a_message_the_line_cannot_carry_is_refused_before_anyone_counts_it() -> None:
    def check(side: Side, raw: bytes) -> None:
        if side == SERIAL and any(b < 0x20 for b in raw):
            raise FramingError("byte 0x0a would be read as framing")

    rig = Rig(check=check)
    rig.join(TCP)
    rig.begin()
    rig.send(TCP, b"Cgood luck\nhave fun")
    assert rig.got[SERIAL] == [REQ_Z]
    dropped = rig.messages("dropped")[-1]
    assert dropped["reason"] == "cannot-cross" and "0x0a" in dropped["error"]
    assert rig.got[TCP][-1].startswith(b"Cdxserial: your last message cannot cross")
    rig.send(TCP, M1)  # the game goes on, judged as if the CHAT had never been sent
    assert rig.got[SERIAL][-1] == M1
    assert not [w for w in rig.warnings() if "referee" in w]
    rig.check_counts()


def test_queued_is_not_delivered_and_every_undelivered_message_is_named_at_shutdown() -> None:
    rig = Rig()
    rig.send(SERIAL, REQ_W)
    rig.send(SERIAL, b"Chello")
    assert [r["action"] for r in rig.trace if r["kind"] == "message"] == ["queued", "queued"]
    rig.apply(rig.relay.shutdown(rig.now))
    lost = rig.messages("lost")
    assert [r["raw"] for r in lost] == [REQ_W.decode(), "Chello"]
    errors = [text for level, text in rig.logs if level >= logging.ERROR]
    assert any(REQ_W.decode() in e for e in errors) and any("Chello" in e for e in errors)
    assert rig.relay.counts["lost"] == 2
    rig.check_counts()


def test_delivery_is_confirmed_by_the_link_not_assumed() -> None:
    rig = Rig(deliver=False)
    rig.join(TCP)
    rig.send(SERIAL, REQ_W)
    assert rig.messages("delivered") == []
    rig.confirm(TCP)
    delivered = rig.messages("delivered")
    assert [r["id"] for r in delivered] == [rig.messages("queued")[0]["id"]]
    assert rig.relay.counts["serial->tcp"] == 1
    rig.check_counts()


@pytest.mark.parametrize("referee", ["off", "warn", "strict"])
def test_the_forward_waits_for_the_referee_only_when_its_verdict_could_stop_it(
    referee: str,
) -> None:
    """warn/off: a move goes out first and is judged on settle(), after the write; a
    possible repeat, a GAMEREQ (it may change the roles) and everything under strict are
    judged before anything goes out.  The records are the same either way."""
    rig = Rig(referee)
    rig.join(TCP)
    first = rig.relay.receive(SERIAL, REQ_Z, rig.now)
    kinds = [type(a) for a in first]
    assert kinds.index(Trace) < kinds.index(Send)  # its record (judged) before the forward
    rig.apply(first)
    rig.send(TCP, ACC)
    out = rig.relay.receive(SERIAL, b"M0000322800", rig.now)  # White 32-28, in turn
    if referee == "strict":
        kinds = [type(a) for a in out]
        assert kinds.index(Trace) < kinds.index(Send)
    else:
        assert out == [Send(TCP, b"M0000322800")]  # no record yet: nothing judged
    rig.apply(out)
    rig.apply(rig.relay.settle())
    assert rig.messages("queued")[-1]["raw"] == "M0000322800"
    again = rig.relay.receive(SERIAL, b"M0000322800", rig.now)  # a NULMODEM repeat
    assert not any(isinstance(a, Send) for a in again)  # judged first, and dropped
    rig.apply(again)
    assert rig.messages("dropped")[-1]["reason"] == "duplicate"
    assert rig.got[TCP] == [REQ_Z, b"M0000322800"]
    assert rig.relay.counts["violations"] == 0
    rig.check_counts()


@pytest.mark.parametrize("referee", ["off", "warn", "strict"])
def test_out_of_turn_is_reported_once_and_refused_only_when_strict(referee: str) -> None:
    rig = Rig(referee)
    rig.join(TCP)
    rig.send(SERIAL, REQ_Z)
    rig.send(TCP, ACC)
    rig.send(TCP, M2)  # Black moves while White is to move
    warnings = [w for w in rig.warnings() if "tcp engine broke the dialogue" in w]
    assert len(warnings) == 1
    if referee == "strict":
        assert rig.got[SERIAL] == [ACC]
        assert rig.messages("dropped")[-1]["reason"] == "refused"
        assert rig.got[TCP][-1].startswith(b"Creferee: ")
    else:
        assert rig.got[SERIAL] == [ACC, M2]
    assert rig.relay.counts["violations"] == 1
    rig.check_counts()


def test_a_new_peer_with_the_other_role_starts_a_clean_dialogue() -> None:
    rig = Rig()
    rig.join(TCP)
    rig.send(SERIAL, REQ_Z)
    rig.send(TCP, ACC)
    rig.send(SERIAL, b"E01")
    rig.send(TCP, b"E01")  # stop: the session is over
    rig.leave(TCP)
    rig.join(TCP)
    rig.send(TCP, REQ_W)  # this engine is an initiator
    assert rig.got[SERIAL][-1] == REQ_W
    rig.send(SERIAL, ACC)
    rig.send(SERIAL, M1)
    assert rig.got[TCP] == [ACC, M1]
    assert rig.warnings() == []
    assert any("the tcp engine is the initiator" in text for _, text in rig.logs)
    rig.check_counts()


def test_a_move_on_its_way_to_a_serial_engine_that_restarts_is_not_given_to_the_new_one() -> None:
    rig = Rig(deliver=False)
    rig.join(TCP)
    rig.send(SERIAL, REQ_W)
    rig.confirm(TCP)
    rig.send(TCP, ACC)
    rig.send(TCP, M1)  # still on the line when the DOS PC reboots: never echoed
    # The restarted engine asks for a new game (identical bytes to its last message would
    # be taken for a NULMODEM retransmission: see the test above).
    rig.send(SERIAL, REQ_Z)
    assert rig.forgotten == [SERIAL]
    assert [r["raw"] for r in rig.messages("lost")] == [ACC.decode(), M1.decode()]
    rig.confirm(TCP)
    assert rig.got[TCP][-1] == E00
    rig.send(TCP, E00)
    rig.confirm(TCP)
    assert rig.got[TCP][-1] == REQ_Z
    assert rig.got[SERIAL] == []  # the new serial engine got nothing of the old game
    rig.check_counts()


def test_messages_written_but_never_taken_by_a_reset_peer_are_reported() -> None:
    rig = Rig()
    rig.join(TCP)
    for text in (b"Cone", b"Ctwo", b"Cthree"):
        rig.send(SERIAL, text)
    assert len(rig.messages("delivered")) == 3  # written to the socket
    # The peer reset its connection with 12 bytes still unacknowledged: the last two
    # messages ("Ctwo" + NUL and "Cthree" + NUL) are what those bytes were.
    rig.apply(rig.relay.unacknowledged(TCP, 12, "the connection was reset", rig.now))
    lost = rig.messages("lost")
    assert [r["raw"] for r in lost] == ["Ctwo", "Cthree"]
    assert all(r["error"].startswith("possibly: ") for r in lost)
    assert any("NOT delivered" in w and "Cthree" in w for w in rig.warnings())
    rig.check_counts()


def test_a_message_the_serial_line_dropped_is_counted_and_named_as_lost() -> None:
    # The NULMODEM link reports a message it dropped that the serial engine may count as
    # delivered (LinkProblem.lost): it never reaches the TCP engine, and the bridge says so
    # like any other lost message, with its bytes, in the counts and the trace.
    rig = Rig()
    rig.join(TCP)
    rig.send(SERIAL, b"Cone")
    rig.apply(rig.relay.dropped_by_line(SERIAL, b"Ctwo", "cut off, not sent again", rig.now))
    rig.send(SERIAL, b"Cthree")
    assert rig.got[TCP] == [b"Cone", b"Cthree"]
    (lost,) = rig.messages("lost")
    assert lost["raw"] == "Ctwo" and lost["direction"] == "serial->tcp"
    assert lost["error"] == "possibly: cut off, not sent again"
    assert lost["judged"] is False  # the bridge never had it: a replay must not judge it
    assert any("serial->tcp: message 'Ctwo' NOT delivered" in w for w in rig.warnings())
    assert rig.relay.counts["lost"] == 1
    rig.check_counts()


def test_a_long_session_remembers_only_the_last_messages_for_a_reset_peer() -> None:
    """What is kept to name a reset peer's unread messages is bounded (memory stays flat in a
    long session); older unread bytes are still reported, as a count."""
    from dxserial.bridge.recent import RECENT_MESSAGES

    rig = Rig(referee="off")
    rig.join(TCP)
    total = RECENT_MESSAGES + 500
    for n in range(total):
        rig.send(SERIAL, f"C{n:06d}".encode())
    assert len(rig.messages("delivered")) == total
    # Every byte ever written was unread: 8 bytes a message ("C" + 6 digits + NUL).
    rig.apply(rig.relay.unacknowledged(TCP, 8 * total, "the connection was reset", rig.now))
    lost = rig.messages("lost")
    assert len(lost) == RECENT_MESSAGES  # the newest ones, each named
    assert lost[-1]["raw"] == f"C{total - 1:06d}"
    assert any(
        "4000 more byte(s) of older messages possibly lost too" in text for _, text in rig.logs
    )
    rig.check_counts()


def test_only_a_chat_starting_with_the_console_command_is_blocked() -> None:
    rig = Rig()
    rig.relay.settings = RelaySettings(block_console=True)
    rig.join(TCP)
    rig.send(TCP, b"Cconsole ls")  # Moby Dam would run "ls"
    rig.send(TCP, b"Cconsoles are fun")  # just talk
    assert rig.got[SERIAL] == [b"Cconsoles are fun"]
    assert rig.messages("dropped")[-1]["reason"] == "blocked"
    rig.check_counts()


# --------------------------------------------------------------------------- live view


def test_a_watched_game_is_told_move_by_move_as_the_record_has_it() -> None:
    rig = Rig("warn", news=True)
    rig.join(TCP)
    rig.send(TCP, REQ_W)  # the serial follower (Other) plays White, 5 minutes
    rig.send(SERIAL, ACC)
    (opened,) = rig.news
    assert isinstance(opened, GameOpened)
    assert (opened.white, opened.black, opened.white_side, opened.minutes) == ("Other", "Probe", SERIAL, 5)
    assert opened.event()["white"] == "Other (serial)"
    rig.send(SERIAL, b"M0012322800")  # 32-28 after 12 seconds
    rig.send(TCP, M2)
    moves = rig.news[1:]
    assert [(m.pdn, m.seconds) for m in moves if isinstance(m, MoveMade)] == [("32-28", 12), ("17-21", 0)]
    after = Position.start()
    for text in ("32-28", "17-21"):
        after = after.play(parse_pdn_move(after, text))
    assert isinstance(moves[-1], MoveMade) and moves[-1].fen == after.to_fen()
    rig.send(SERIAL, b"B001W")  # back to the start, accepted
    rig.send(TCP, b"K0")
    assert rig.news[-1] == TakenBack(1, 0, opened.fen)
    rig.send(SERIAL, b"M0000322300")  # 32-23 is no move: forwarded (warn), position unknown
    assert isinstance(rig.news[-1], MoveMade) and rig.news[-1].fen is None
    rig.send(TCP, b"E20")  # Black ends it as a draw (GAMEEND reason 2)
    rig.send(SERIAL, E00)
    assert isinstance(rig.news[-1], GameClosed) and rig.news[-1].result == "1-1"
    assert rig.news[-1].result == rig.records[-1].result
    assert opened.fen == Position.start().to_fen()
    rig.check_counts()


def test_a_game_cut_short_is_told_with_the_record_s_result() -> None:
    rig = Rig("strict", news=True)
    rig.join(TCP)
    rig.send(TCP, REQ_W)
    rig.send(SERIAL, ACC)
    rig.send(SERIAL, b"M0000322300")  # refused under strict: nothing happened on the board
    assert [type(n) for n in rig.news] == [GameOpened]
    rig.send(SERIAL, M1)
    rig.apply(rig.relay.shutdown(rig.now))
    assert rig.news[-1] == GameClosed(1, "*", "the bridge stopped") and rig.records[-1].result == "*"
    assert Rig("warn").news == []  # nobody watching: no news


def test_a_stop_code_1_the_bridge_replaces_is_observed_as_said_by_it() -> None:
    """Issue 38 point 6: an observer counting games (serve's status) sees the game end
    when the TCP engine's GAMEEND with stop code 1 goes on as the bridge's own."""
    rig = Rig()
    rig.begin(moves=True)
    rig.observed.clear()
    rig.send(TCP, b"E01")
    assert rig.observed == ["tcp->serial (by the bridge)"]
    assert rig.got[SERIAL][-1] == b"E00"  # stop code 0 for the serial engine, as documented


# ------------------------------------------------ an unanswered GAMEREQ (issue 36 point 5)


def test_an_offer_whose_sender_left_before_the_serial_engine_had_it_is_withdrawn() -> None:
    """Its GAMEREQ waited on a silent line; the next engine's GAMEREQ went out only 30 s
    later (or was lost), and the stale one reached the engine once it started."""
    rig = Rig(deliver=False)  # the serial engine is not running yet: nothing is echoed
    rig.join()
    rig.send(TCP, REQ_Z)
    rig.tick(7.0)
    rig.leave()
    assert rig.forgotten == [SERIAL]  # the line's queue: the stale GAMEREQ never goes out
    (lost,) = rig.messages("lost")
    assert lost["raw"] == REQ_Z.decode() and "withdrawn" in lost["error"]
    rig.deliver = True  # the engine is started
    rig.join()
    rig.send(TCP, REQ_W)
    assert rig.got[SERIAL] == [REQ_W]  # at once, not held
    rig.send(SERIAL, ACC)
    assert rig.got[TCP] == [ACC]  # its answer is the new engine's
    rig.check_counts()


def test_an_offer_delivered_but_unanswered_costs_seconds_not_the_line() -> None:
    rig = Rig()
    rig.join()
    rig.send(TCP, REQ_Z)  # delivered; the serial engine says nothing
    rig.tick(7.0)
    rig.leave()
    rig.tick(1.0)
    rig.join()  # the next engine, a moment later
    rig.send(TCP, REQ_W)
    assert REQ_W not in rig.got[SERIAL]  # held while the first offer may still be answered
    waited = 0.0
    while REQ_W not in rig.got[SERIAL] and waited < 30.0:
        rig.tick(0.5)
        waited += 0.5
    assert waited <= 8.0  # the grace (3 s) and the patience for a GAMEACC (5 s)
    assert rig.got[SERIAL].count(REQ_W) == 1
    rig.send(SERIAL, ACC)
    assert rig.got[TCP] == [ACC]  # the serial engine's GAMEACC is not dropped
    rig.check_counts()


# ---------------------------------- a serial engine given up, and back (issue 36 point 2)


def test_a_serial_engine_back_after_the_grace_first_gets_the_end_of_its_old_game() -> None:
    """It was unplugged mid-game and given up: the TCP engine's game was closed for it. Back,
    it got the held GAMEREQ inside its still-open game, its GAMEEND went to the TCP engine,
    and a game later a GAMEEND reached it idle."""
    rig = Rig()
    rig.relay = Relay(RelaySettings(
        referee="warn", record=True, grace={SERIAL: 0.0, TCP: 3.0}, check_serial_state=True,
    ))
    rig.join()
    rig.begin(moves=True)  # the serial engine (Black) has played M2; White is to move
    rig.leave(SERIAL)  # given up after --serial-grace
    rig.tick(0.1)
    rig.send(TCP, M3)  # White's move, for an engine that is gone
    assert rig.got[TCP][-1:] == [E00]  # the bridge ends the game for the departed engine
    rig.send(TCP, E00)  # its answer, consumed
    rig.send(TCP, REQ_W)  # the next game: held for the serial engine
    rig.join(SERIAL)  # back, still inside the old game
    assert rig.got[SERIAL] == [E00]  # the end of its old game first, nothing else
    ended = [t for lvl, t in rig.logs if "bridge -> serial: 'E00'" in t][-1]
    assert "given up" in ended  # the evidence, named
    rig.send(SERIAL, E00)  # its answer: consumed, not forwarded
    assert rig.got[TCP].count(E00) == 1
    assert rig.got[SERIAL] == [E00, REQ_W]  # then the held GAMEREQ
    rig.send(SERIAL, ACC)
    assert rig.got[TCP][-1] == ACC
    # The game after: no GAMEEND of the bridge's own reaches the idle engine.
    rig.send(TCP, M1)
    rig.send(SERIAL, E00)
    rig.send(TCP, E00)
    rig.got[SERIAL] = []
    rig.send(TCP, REQ_W)
    assert rig.got[SERIAL] == [REQ_W]
    rig.check_counts()


@pytest.mark.parametrize("gap", [0.0, 1.0, 4.0])  # the next engine within the grace, or after
@pytest.mark.parametrize("heard", [False, True])  # the first GAMEREQ reached the serial engine
def test_the_next_engine_s_same_gamereq_is_its_own_not_a_repeat(gap: float, heard: bool) -> None:
    """The same program connects again with the same GAMEREQ: it was taken for the first
    client's repeat, and the serial engine's GAMEACC and first MOVE were dropped."""
    rig = Rig(deliver=heard)
    rig.relay = Relay(RelaySettings(
        referee="warn", record=True, grace={SERIAL: 0.0, TCP: 3.0}, check_serial_state=True,
    ))
    rig.join()
    rig.send(TCP, REQ_Z)
    rig.tick(7.0)  # unanswered: offered again once, then the client gives up
    rig.leave()
    rig.tick(gap)
    rig.deliver = True
    rig.join()
    rig.got[SERIAL] = []
    rig.send(TCP, REQ_Z)
    waited = 0.0
    while REQ_Z not in rig.got[SERIAL] and waited < 40.0:
        rig.tick(0.5)
        waited += 0.5
    assert waited <= 8.0
    assert rig.got[SERIAL] == [REQ_Z]
    rig.send(SERIAL, ACC)
    rig.send(TCP, M1)
    rig.send(SERIAL, M2)
    assert rig.got[TCP] == [ACC, M2]  # its GAMEACC and first MOVE reach the new engine
    assert rig.got[SERIAL] == [REQ_Z, M1]
    assert not [t for t in rig.warnings() if "sent again" in t]
    rig.check_counts()


def test_a_serial_engine_given_up_before_an_offer_reached_it_gets_no_gameend_back() -> None:
    """Found by the line soak: given up with a GAMEREQ still on its way (never delivered),
    it was taken to have a game open, and got a GAMEEND while it waited for a GAMEREQ."""
    rig = Rig(deliver=False)
    rig.relay = Relay(RelaySettings(
        referee="warn", record=True, grace={SERIAL: 0.0, TCP: 3.0}, check_serial_state=True,
    ))
    rig.join()
    rig.send(TCP, REQ_Z)  # never echoed: the line is in trouble, then the port is lost
    rig.leave(SERIAL)
    rig.tick(0.1)
    rig.deliver = True
    rig.confirm(TCP)
    assert rig.got[TCP][-1:] == [f"A{'dxserial bridge'.ljust(32)}2".encode()]  # refused for it
    rig.send(TCP, REQ_Z)  # the next game, held for the serial engine
    rig.join(SERIAL)
    assert rig.got[SERIAL] == [REQ_Z]  # the GAMEREQ at once, no GAMEEND first
    rig.check_counts()


def test_a_move_the_serial_engine_answered_is_not_sent_again() -> None:
    """Found by the line soak: the cable pulled just after the engine had a MOVE but before
    its last echo came back; the link sent the MOVE again once the port was back, and a
    strict engine took the repeat for an illegal move.  Its answer is the evidence."""
    from dxserial.drive.actions import Withdraw

    rig = Rig()
    rig.join()
    rig.begin()  # REQ_Z: the TCP engine (initiator) plays White, moves first
    rig.deliver = False  # M1 is written, its last echo never comes back
    rig.send(TCP, M1)
    assert rig.unconfirmed[SERIAL] == [M1]
    actions = rig.relay.receive(SERIAL, M2, rig.now) + rig.relay.settle()
    assert Withdraw(SERIAL, M1) in actions  # the link stops sending it again
    rig.deliver = True
    rig.apply(actions)
    assert rig.got[TCP][-1] == M2  # the answer goes on
    delivered = [r for r in rig.messages("delivered") if r["raw"] == M1.decode()]
    assert len(delivered) == 1
    assert any("taken as delivered: the serial engine answered it" in w for w in rig.warnings())
    rig.check_counts()


def test_a_move_in_flight_is_kept_when_the_answer_does_not_prove_it() -> None:
    rig = Rig()
    rig.join()
    rig.begin()
    rig.deliver = False
    rig.send(TCP, M1)
    actions = rig.relay.receive(SERIAL, b"Cthinking", rig.now) + rig.relay.settle()
    assert not [a for a in actions if type(a).__name__ == "Withdraw"]  # a CHAT proves nothing


def test_a_gamereq_repeated_while_the_first_is_still_on_its_way_is_sent_once() -> None:
    """Found by the line soak: a noisy line held the GAMEREQ up for 10 s, the TCP engine sent
    it again, both reached the serial engine, and a strict one died of the second."""
    rig = Rig(deliver=False)
    rig.join()
    rig.send(TCP, REQ_Z)
    rig.tick(10.0)
    rig.send(TCP, REQ_Z)  # the TCP engine's repeat: the first is not delivered yet
    assert rig.unconfirmed[SERIAL] == [REQ_Z]  # one on the line
    (dup,) = rig.messages("dropped")
    assert dup["raw"] == REQ_Z.decode() and dup["reason"] == "duplicate"
    rig.deliver = True
    rig.confirm(SERIAL)
    rig.send(SERIAL, ACC)
    assert rig.got[TCP] == [ACC]
    rig.check_counts()
