"""The Hub adapter's rules (hub/adapter.py), sans-I/O with a fake clock."""

from __future__ import annotations

from dxserial.draughts import Position
from dxserial.hub.adapter import (
    AdapterConfig,
    HubAdapter,
    Log,
    SendDxp,
    SendHub,
    Stop,
    game_clock,
)
from dxserial.protocol import hub
from dxserial.protocol.messages import (
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    Colour,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Move,
    StopCode,
)

START = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"
ACCEPT = GameAccept(name="DXENG", code=AcceptCode.ACCEPT)


def hub_out(actions: list[object]) -> list[str]:
    return [hub.format_line(a.line) for a in actions if isinstance(a, SendHub)]


def dxp_out(actions: list[object]) -> list[object]:
    return [a.message for a in actions if isinstance(a, SendDxp)]


def started(moves: str = "", level: str = "level move-time=1") -> tuple[HubAdapter, GameRequest]:
    """An adapter whose engine has accepted the game of the first go."""
    adapter = HubAdapter(AdapterConfig(grace=2.0, answer_timeout=5.0))
    adapter.hub_line(f'pos pos={START} moves="{moves}"' if moves else f"pos pos={START}", 0.0)
    adapter.hub_line(level, 0.0)
    (request,) = dxp_out(adapter.hub_line("go think", 0.0))
    assert isinstance(request, GameRequest)
    adapter.dxp(ACCEPT, 0.1)
    return adapter, request


def test_a_go_from_the_start_offers_a_form_a_game_and_the_engines_move_is_done() -> None:
    adapter = HubAdapter()
    assert hub_out(adapter.hub_line("hub", 0.0))[-1] == "wait"
    assert hub_out(adapter.hub_line("init", 0.0)) == ["ready"]
    adapter.hub_line(f"pos pos={START}", 0.0)
    adapter.hub_line("level move-time=3", 0.0)
    (request,) = dxp_out(adapter.hub_line("go think", 0.0))
    assert isinstance(request, GameRequest)
    assert request.position is None and request.follower_colour is Colour.WHITE
    assert (request.minutes, request.moves) == (2, 40)  # 40 moves of 3 s
    adapter.dxp(ACCEPT, 0.5)
    out = adapter.dxp(Move(from_square=32, to_square=28), 1.0)
    assert hub_out(out) == ["done move=32-28"]
    assert adapter.engine_name == "DXENG"


def test_the_next_pos_is_sent_as_the_opponents_move_and_captures_map_one_to_one() -> None:
    adapter, _ = started()
    adapter.dxp(Move(from_square=32, to_square=28), 1.0)
    adapter.hub_line(f'pos pos={START} moves="32-28 19-23"', 2.0)
    (move,) = dxp_out(adapter.hub_line("go think", 2.0))
    assert move == Move(from_square=19, to_square=23)
    out = adapter.dxp(Move(from_square=28, to_square=19, captured=(23,)), 2.5)
    assert hub_out(out) == ["done move=28x19x23"]


def test_a_pos_that_does_not_continue_the_game_ends_it_and_offers_that_position() -> None:
    adapter, _ = started()
    adapter.dxp(Move(from_square=32, to_square=28), 1.0)
    adapter.hub_line(f'pos pos={START} moves="34-29 19-23"', 2.0)
    (end,) = dxp_out(adapter.hub_line("go think", 2.0))
    assert end == GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)
    (request,) = dxp_out(adapter.dxp(GameEnd(), 2.1))
    assert isinstance(request, GameRequest) and request.position is not None
    expected = Position.start().play(Position.start().legal_moves()[0])
    assert request.to_move is Colour.WHITE and request.follower_colour is Colour.WHITE
    assert request.position != expected.pieces()  # 34-29 19-23, not the first move
    assert Position.from_dxp(request.position, Colour.WHITE).piece_at(29).value == "w"


def test_black_to_move_is_offered_with_the_engine_as_black() -> None:
    adapter = HubAdapter()
    adapter.hub_line(f'pos pos={START} moves="32-28"', 0.0)
    adapter.hub_line("level time=300 moves=40", 0.0)
    (request,) = dxp_out(adapter.hub_line("go think", 0.0))
    assert isinstance(request, GameRequest)
    assert request.follower_colour is Colour.BLACK and request.to_move is Colour.BLACK
    assert (request.minutes, request.moves) == (5, 40)


def test_game_clock_never_offers_zero_minutes() -> None:
    assert game_clock(hub.Level(move_time=0.01), 5) == (1, 999)
    assert game_clock(hub.Level(time=59.0), 5) == (1, 0)
    assert game_clock(hub.Level(depth=6), 7) == (7, 0)
    assert game_clock(hub.Level(time=1e9, moves=5000), 5) == (999, 999)


def test_stop_ends_the_game_and_dxserial_answers_with_a_move_it_names_as_its_own() -> None:
    adapter, _ = started()
    out = adapter.hub_line("stop", 0.5)
    assert dxp_out(out) == [GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)]
    lines = hub_out(out)
    assert lines[-1].startswith("done move=") and "dxserial played" in lines[-2]
    # The engine's move crossed our GAMEEND: ignored; its answer closes the game.
    assert hub_out(adapter.dxp(Move(from_square=32, to_square=28), 0.6)) == []
    assert adapter.dxp(GameEnd(), 0.7) == []
    adapter.hub_line(f'pos pos={START} moves="32-28 19-23"', 1.0)
    (request,) = dxp_out(adapter.hub_line("go think", 1.0))
    assert isinstance(request, GameRequest)  # a fresh game from the client's position


def test_an_engine_that_runs_out_of_its_clock_loses_the_game_not_the_client() -> None:
    adapter, request = started(level="level move-time=1")
    assert (request.minutes, request.moves) == (1, 60)
    assert adapter.next_deadline() == 62.1  # its clock (60 s from the GAMEACC) + grace 2
    assert adapter.poll(62.0) == []
    out = adapter.poll(62.1)
    lines = hub_out(out)
    assert lines[0] == 'error message="the engine gave no move in 62 s (its clock ran out)"'
    assert lines[-1].startswith("done move=")
    assert dxp_out(out) == [GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)]
    # No answer to our GAMEEND either: we go on after the answer timeout.
    assert any("did not answer" in a.text for a in adapter.poll(67.1) if isinstance(a, Log))
    assert adapter.next_deadline() is None


def test_an_illegal_move_from_the_engine_is_one_error_and_the_game_ends() -> None:
    adapter, _ = started()
    out = adapter.dxp(Move(from_square=32, to_square=29), 0.5)
    lines = hub_out(out)
    assert lines[0].startswith("error message=") and "illegal move 32-29" in lines[0]
    assert lines[-1].startswith("done move=")
    assert dxp_out(out) == [GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)]


def test_the_engines_chat_is_info_text_and_its_resignation_is_answered() -> None:
    adapter, _ = started()
    assert hub_out(adapter.dxp(Chat(text="thinking = hard"), 0.2)) == [
        'info text="DXENG: thinking : hard"'
    ]
    out = adapter.dxp(GameEnd(reason=EndReason.RESIGN, stop=StopCode.CONTINUE), 0.3)
    assert dxp_out(out) == [GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)]
    assert "resigned" in hub_out(out)[0] and hub_out(out)[-1].startswith("done move=")


def test_a_refused_game_is_answered_without_the_engine() -> None:
    adapter = HubAdapter()
    adapter.hub_line(f"pos pos={START}", 0.0)
    adapter.hub_line("go think", 0.0)
    out = adapter.dxp(GameAccept(name="X", code=AcceptCode.REFUSE_ALL_GAMES), 0.1)
    assert "refused the game" in hub_out(out)[0] and hub_out(out)[-1].startswith("done ")


def test_quit_ends_the_game_with_stop_code_1_and_waits_for_the_answer() -> None:
    adapter, _ = started()
    adapter.dxp(Move(from_square=32, to_square=28), 1.0)
    out = adapter.hub_line("quit", 2.0)
    assert dxp_out(out) == [GameEnd(reason=EndReason.NONE, stop=StopCode.STOP)]
    assert not any(isinstance(a, Stop) for a in out)
    assert adapter.dxp(GameEnd(stop=StopCode.STOP), 2.1) == [Stop(0, "quit")]


def test_end_of_input_without_a_game_leaves_at_once() -> None:
    assert HubAdapter().hub_closed(0.0) == [Stop(0, "quit")]


def test_new_game_ends_the_running_game_cleanly() -> None:
    adapter, _ = started()
    adapter.dxp(Move(from_square=32, to_square=28), 1.0)
    assert dxp_out(adapter.hub_line("new-game", 2.0)) == [GameEnd()]
    assert adapter.dxp(GameEnd(), 2.1) == []


def test_garbage_hub_lines_are_one_error_each_and_the_session_goes_on() -> None:
    adapter = HubAdapter()
    for text in ('pos pos="W', "go think", "level fast", "pos pos=Wbad"):
        (line,) = hub_out(adapter.hub_line(text, 0.0))
        assert line.startswith("error message=")
    assert hub_out(adapter.hub_line("ping", 0.0)) == ["pong"]


def test_losing_the_engine_is_one_error_line_and_exit_1() -> None:
    adapter, _ = started()
    out = adapter.link_lost("serial port /dev/ttyUSB0 lost", 1.0)
    assert hub_out(out) == ['error message="lost the DXP engine: serial port /dev/ttyUSB0 lost"']
    assert out[-1] == Stop(1, "lost the DXP engine: serial port /dev/ttyUSB0 lost")


def test_a_bad_pos_is_not_played_from_the_previous_position() -> None:
    adapter, _ = started()
    adapter.dxp(Move(from_square=32, to_square=28), 1.0)
    (error,) = hub_out(adapter.hub_line(f'pos pos={START} moves="32-28 19-25"', 2.0))
    assert "no such move" in error
    (error,) = hub_out(adapter.hub_line("go think", 2.0))
    assert error == 'error message="go before pos"'


def test_a_take_back_request_is_declined_and_the_game_goes_on() -> None:
    adapter, _ = started()
    out = adapter.dxp(BackRequest(move=1, to_move=Colour.WHITE), 0.2)
    assert dxp_out(out) == [BackAccept(code=BackCode.NOT_SUPPORTED)]
    assert hub_out(adapter.dxp(Move(from_square=32, to_square=28), 0.3)) == ["done move=32-28"]


def test_pondering_waits_for_ponder_hit_and_a_wrong_guess_leaves_the_game_alone() -> None:
    adapter, _ = started()
    adapter.dxp(Move(from_square=32, to_square=28), 1.0)
    guess = f'pos pos={START} moves="32-28 19-23"'
    adapter.hub_line(guess, 1.1)
    assert adapter.hub_line("go ponder", 1.1) == []  # nothing to the engine yet
    assert hub_out(adapter.hub_line("ping", 1.2)) == ["pong"]
    (done,) = hub_out(adapter.hub_line("stop", 2.0))  # the guess was wrong
    assert done.startswith("done move=")
    adapter.hub_line(guess, 2.1)
    adapter.hub_line("go ponder", 2.1)
    (move,) = dxp_out(adapter.hub_line("ponder-hit", 3.0))  # the game goes on
    assert move == Move(from_square=19, to_square=23)
    # The engine's clock runs from ponder-hit: 60 s less the 0.9 s of its first move.
    assert adapter.next_deadline() == 3.0 + 59.1 + 2.0
