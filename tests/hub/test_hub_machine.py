"""The Hub adapter as the driver's machine (hub/machine.py), on a fake clock:
Hub lines in and out on the raw side, DXP messages on the link side, how it ends."""

from __future__ import annotations

import logging

from dxserial.drive.actions import Action, Done, Forget, Hangup, Log, Send
from dxserial.hub.adapter import SILENT_MIN, AdapterConfig, HubAdapter
from dxserial.hub.machine import DXP, HUB, HubMachine
from dxserial.protocol.messages import AcceptCode, Chat, GameAccept, Move

START = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"


def machine() -> HubMachine:
    return HubMachine(HubAdapter(AdapterConfig(grace=2.0, answer_timeout=5.0)))


def sent(actions: list[Action], side: str) -> list[bytes]:
    return [a.raw for a in actions if isinstance(a, Send) and a.side == side]


def test_hub_lines_are_answered_line_by_line_and_blank_ones_ignored() -> None:
    hub = machine()
    assert sent(hub.line(HUB, b"init\n", 0.0), HUB) == [b"ready\n"]
    assert sent(hub.line(HUB, b"ping\n", 0.0), HUB) == [b"pong\n"]
    assert hub.line(HUB, b"  \n", 0.0) == []
    error = sent(hub.line(HUB, b"pos pos=nonsense\n", 0.0), HUB)
    assert len(error) == 1 and error[0].startswith(b"error message=")


def test_a_go_is_played_through_the_engine_and_its_move_is_done() -> None:
    hub = machine()
    hub.line(HUB, f"pos pos={START}\n".encode(), 0.0)
    hub.line(HUB, b"level move-time=1\n", 0.0)
    out = hub.line(HUB, b"go think\n", 0.0)
    (request,) = sent(out, DXP)
    assert request.startswith(b"R01")
    hub.receive(DXP, GameAccept(name="DXENG", code=AcceptCode.ACCEPT).wire, 0.1)
    assert sent(hub.receive(DXP, Move(from_square=32, to_square=28).wire, 0.5), HUB) == [b"done move=32-28\n"]


def test_a_gamereq_unanswered_gets_a_fresh_connection_then_a_move_of_our_own() -> None:
    hub = machine()
    hub.receive(DXP, Chat(text="hello").wire, 0.0)  # an engine that has spoken on this line
    hub.line(HUB, f"pos pos={START}\n".encode(), 0.0)
    hub.line(HUB, b"go think\n", 0.0)
    assert hub.next_deadline() == 5.0
    out = hub.poll(5.0)
    assert [type(a) for a in out if isinstance(a, Forget | Hangup)] == [Forget, Hangup]
    assert hub.starting_over and not sent(out, HUB)  # nothing to the client yet
    assert hub.left(DXP, 5.1, "closed") == []  # the old connection ending is expected
    (request,) = sent(hub.reconnected(5.2), DXP)
    assert request.startswith(b"R01")  # the game offered again, on the fresh connection
    out = hub.poll(10.2)
    lines = sent(out, HUB)
    assert lines[0].startswith(b'error message="the engine did not answer the GAMEREQ on a fresh')
    assert lines[-1].startswith(b"done move=")
    assert any(isinstance(a, Log) and a.level == logging.WARNING for a in out)


def test_a_silent_line_gets_no_fresh_connection_the_go_its_answer_in_time_and_quit_at_once(
) -> None:
    """Issue 38 point 9: an engine that never said anything: the go is answered within the
    client's move time (not two 10 s waits), the GAMEREQ withdrawn (no link lost later),
    and a quit during the wait leaves at once."""
    hub = machine()
    hub.line(HUB, f"pos pos={START}\n".encode(), 0.0)
    hub.line(HUB, b"level move-time=1\n", 0.0)
    hub.line(HUB, b"go think\n", 0.0)
    assert hub.next_deadline() == SILENT_MIN  # not answer_timeout: the client waits 1 s
    out = hub.poll(SILENT_MIN)
    assert [type(a) for a in out if isinstance(a, Forget | Hangup)] == [Forget]
    lines = sent(out, HUB)
    assert b"has said nothing since the connection opened" in lines[0]
    assert b"dxserial probe" in lines[0] and lines[-1].startswith(b"done move=")
    hub.line(HUB, b"go think\n", 10.0)  # the next go offers a game again
    out = hub.line(HUB, b"quit\n", 10.5)
    assert out[-1] == Done(0, "quit") and not sent(out, DXP)


def test_a_fresh_connection_that_cannot_be_had_is_the_engine_lost() -> None:
    hub = machine()
    hub.receive(DXP, Chat(text="hello").wire, 0.0)
    hub.line(HUB, f"pos pos={START}\n".encode(), 0.0)
    hub.line(HUB, b"go think\n", 0.0)
    hub.poll(5.0)
    out = hub.reconnect_failed("connection refused", 5.5)
    assert sent(out, HUB) == [b'error message="lost the DXP engine: connection refused"\n']
    assert out[-1] == Done(1, "lost the DXP engine: connection refused")


def test_end_of_input_quits_with_0_and_the_last_messages_are_drained() -> None:
    hub = machine()
    assert hub.left(HUB, 0.0, "end of input")[-1] == Done(0, "quit")
    assert hub.drain
    assert hub.line(HUB, b"ping\n", 0.0) == []  # over: nothing more is answered


def test_a_lost_engine_is_told_to_the_client_and_exits_1() -> None:
    hub = machine()
    out = hub.link_down(DXP, [], "no echo after 5 attempts", 0.0)
    why = "lost the DXP engine: the engine stopped answering: no echo after 5 attempts"
    assert sent(out, HUB) == [f'error message="{why}"\n'.encode()]
    assert out[-1] == Done(1, why)
    assert machine().left(DXP, 0.0)[-1] == Done(
        1, "lost the DXP engine: the engine closed the connection"
    )


def test_a_signal_leaves_at_once_without_draining() -> None:
    hub = machine()
    assert hub.stop(0.0) == [Done(1, "stopped by a signal")]
    assert not hub.drain
    assert hub.stop(0.0) == [] and hub.next_deadline() is None
