"""The engine's machine for the driver, on a fake clock: what it sends, says and ends with.

Work jobs (the search) are run inline here, as the driver would run them in a thread.
"""

from __future__ import annotations

import logging
import threading

from dxserial.drive.actions import Action, Done, Hangup, Log, Say, Send, Work
from dxserial.engine.machine import NOTHING_PLAYED, PEER, EngineMachine
from dxserial.engine.player import MAX_VIOLATIONS, Player, PlayerConfig
from dxserial.engine.search import SearchCancelled
from dxserial.errors import FramingError
from dxserial.protocol.nulmodem import LinkProblem
from dxserial.protocol.session import Role

INI, FOL = Role.INITIATOR, Role.FOLLOWER
REQUEST = f"R01{'Tester':<32}W005010A".encode()


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def machine(role: Role, clock: Clock, *, repeat: bool = True, **config: object) -> EngineMachine:
    player = Player(PlayerConfig(role=role, depth=1, seed=1, **config), clock=clock)  # type: ignore[arg-type]
    return EngineMachine(player, repeat=repeat)


def run(actions: list[Action]) -> list[Action]:
    """``actions`` with every Work job's actions in its place, as the driver applies them."""
    out: list[Action] = []
    for action in actions:
        if isinstance(action, Work):
            out += run(action.job())
        else:
            out.append(action)
    return out


def sends(actions: list[Action]) -> list[bytes]:
    return [a.raw for a in actions if isinstance(a, Send)]


def logs(actions: list[Action], level: int = logging.DEBUG) -> list[str]:
    return [a.text for a in actions if isinstance(a, Log) and a.level >= level]


def done(actions: list[Action]) -> Done | None:
    ends = [a for a in actions if isinstance(a, Done)]
    assert len(ends) <= 1
    return ends[0] if ends else None


def test_two_machines_play_their_games_and_both_end_cleanly() -> None:
    clock = Clock()
    ini = machine(INI, clock, games=2, moves=3)
    fol = machine(FOL, clock)
    said: list[str] = []
    ends: dict[str, Done] = {}
    queue = [(fol, raw) for raw in sends(ini.joined(PEER, clock.t, "tcp://x"))]
    for _ in range(1000):
        if not queue:
            break
        to, raw = queue.pop(0)
        out = run(to.receive(PEER, raw, clock.t))
        said += [a.text for a in out if isinstance(a, Say) and to is ini]
        end = done(out)
        if end is not None:
            ends["ini" if to is ini else "fol"] = end
        queue += [(fol if to is ini else ini, reply) for reply in sends(out)]
    assert sorted(ends) == ["fol", "ini"]
    assert all(end.code == 0 and end.message.startswith("session ended: ") for end in
               ends.values())
    assert [line.split(":")[0] for line in said] == ["game 1", "game 2"]
    assert [g.number for g in ini.results] == [1, 2]
    assert ini.next_deadline() is None and fol.receive(PEER, REQUEST, clock.t) == []


def test_an_unanswered_gamereq_is_hinted_and_sent_again_on_a_nul_link() -> None:
    clock = Clock()
    ini = machine(INI, clock)
    first = sends(ini.joined(PEER, clock.t, "tcp://127.0.0.1:27531"))
    assert len(first) == 1 and first[0].startswith(b"R01")
    deadline = ini.next_deadline()
    assert deadline == clock.t + 10.0
    assert ini.poll(clock.t + 5) == []  # not yet
    clock.t = deadline
    out = ini.poll(clock.t)
    assert sends(out) == first
    assert logs(out, logging.WARNING) == [
        "nothing answered on tcp://127.0.0.1:27531 after 10 s: is the other side running, "
        "and on the same link type? (GAMEREQ sent again)"
    ]
    assert ini.next_deadline() == clock.t + 10.0


def test_on_a_retransmitting_link_the_gamereq_is_not_repeated() -> None:
    clock = Clock()
    ini = machine(INI, clock, repeat=False)
    ini.joined(PEER, clock.t, "/dev/ttyS0", serial=True)
    clock.t += 10.0
    out = ini.poll(clock.t)
    assert sends(out) == []
    # Issue 38 point 17: on a serial line the speed is named, and the probe that finds it.
    assert logs(out, logging.WARNING)[0].endswith(
        "at the same speed, link type and start and end bytes? (dxserial probe /dev/ttyS0 "
        "finds how it speaks)")


def test_stop_before_any_game_and_during_the_first_game() -> None:
    clock = Clock()
    idle = machine(FOL, clock)
    assert idle.stop(clock.t) == [Done(1, NOTHING_PLAYED)]
    assert idle.stop(clock.t) == []  # a second signal adds nothing
    playing = machine(FOL, clock)
    moved = sends(run(playing.receive(PEER, REQUEST, clock.t)))  # White: accepts and moves
    assert [raw[:1] for raw in moved] == [b"A", b"M"]
    out = playing.stop(clock.t)
    assert sends(out) == []  # their move: not ours to end the game
    assert out[-1] == Done(1, "stopped during game 1, before any game was played to its end")


class Cancelled:
    """A move source whose search is always cut off by a stop."""

    def choose(self, game: int, positions: object, *, seconds_left: object,
               moves_left: object, cancel: threading.Event | None = None) -> object:
        assert cancel is not None and cancel.is_set()
        raise SearchCancelled


def test_a_stop_during_the_search_ends_it_and_the_session() -> None:
    clock = Clock()
    player = Player(PlayerConfig(role=FOL, seed=1), clock=clock, mover=Cancelled())  # type: ignore[arg-type]
    fol = EngineMachine(player, repeat=True)
    (work,) = [a for a in fol.receive(PEER, REQUEST, clock.t) if isinstance(a, Work)]
    assert fol.next_deadline() is None  # no timer while the player is busy
    player.cancel()  # what EngineRunner.stop does before its stop input
    out = work.job()
    assert out[-1] == Done(1, "stopped during game 1, before any game was played to its end")
    assert fol.stop(clock.t) == []  # the stop input, held behind the job, adds nothing


def test_a_lost_link_ends_with_1_and_says_why() -> None:
    clock = Clock()
    closed = machine(FOL, clock)
    assert closed.left(PEER, clock.t, "the peer closed the connection") == [
        Done(1, "link lost: the peer closed the connection")
    ]
    assert closed.lost
    silent = machine(FOL, clock)
    out = silent.link_down(PEER, [], "no echo after 5 attempts", clock.t)
    assert out == [Hangup(PEER), Done(1, "link lost: the peer stopped answering: no echo after 5 "
                                         "attempts")]


def test_a_peer_that_keeps_sending_garbage_is_given_up_on() -> None:
    clock = Clock()
    fol = machine(FOL, clock)
    end = None
    for _ in range(MAX_VIOLATIONS):
        out = run(fol.receive(PEER, b"\x01garbage", clock.t))
        assert logs(out)[0] == "in  \\x01garbage (invalid)"
        end = done(out)
    assert end is not None and end.code == 1 and end.message.startswith("protocol failure: ")


def test_a_habit_of_the_peer_is_noted_once() -> None:
    clock = Clock()
    fol = machine(FOL, clock)
    lenient = f"R01{'Tester':<10}W005010A".encode()  # a short name: read leniently
    habit = "note: the peer's habit: "
    first = [t for t in logs(run(fol.receive(PEER, lenient, clock.t))) if t.startswith(habit)]
    again = [t for t in logs(run(fol.receive(PEER, lenient, clock.t))) if t.startswith(habit)]
    assert len(first) == 1 and "initiator name" in first[0]
    assert again == []


def test_line_problems_are_logged_under_one_kind_for_the_flood_guard() -> None:
    fol = machine(FOL, Clock())
    problem = LinkProblem(FramingError("stray byte 0x41"), noise=True)
    assert fol.line_problem(PEER, problem, 0.0) == [
        Log(problem.level, "line: stray byte 0x41", "line")
    ]


def test_a_message_the_link_cannot_carry_is_an_error_for_the_caller() -> None:
    fol = machine(FOL, Clock())
    out = fol.undelivered(PEER, [b"Chello"], "too long for NULMODEM", 0.0)
    assert out == [Done(1, "cannot send CHAT: too long for NULMODEM")]
    assert str(fol.error) == "cannot send CHAT: too long for NULMODEM"


def test_a_refusal_in_words_is_printed_and_named_in_the_exit_line() -> None:
    """Issue 36 point 11: refused by a busy bridge, the engine said only "link lost: the
    peer closed the connection"; the bridge's CHAT said why."""
    clock = Clock()
    ini = machine(INI, clock)
    run(ini.joined(PEER, clock.t, "tcp://127.0.0.1:27531"))
    busy = b"Cdxserial bridge: busy: another engine is connected since 12:00:00; try later"
    said = run(ini.receive(PEER, busy, clock.t))
    assert any("busy: another engine is connected" in x for x in logs(said, logging.INFO))
    end = done(run(ini.left(PEER, clock.t, "")))
    assert end is not None and end.code == 1
    assert "busy: another engine is connected" in end.message
