"""The strict stand-in (dxserial/standins/strict.py) and the built-in engine's defaults: in
each state it takes only what DXP allows there and ends, naming what it got, on anything
else (as GWD 8.100's dxp.c does); the built-in engine, as ``dxserial engine`` runs it by
default, plays whole games with it in either role."""

from __future__ import annotations

from collections import deque

import pytest

from dxserial.engine.player import Player, PlayerConfig
from dxserial.protocol.dxp_moves import to_dxp_move
from dxserial.protocol.messages import GameEnd, GameRequest, Message, parse
from dxserial.protocol.session import Role
from dxserial.standins.strict import StrictError, StrictPlayer, Wait

NAME = "Tester".ljust(32)
REQ = f"R01{NAME}Z001010A".encode()  # the strict follower plays Black


def strict(role: Role = Role.FOLLOWER, **config: object) -> StrictPlayer:
    return StrictPlayer(PlayerConfig(role=role, depth=1, seed=5, **config))  # type: ignore[arg-type]


def feed(player: Player, raw: bytes) -> list[Message]:
    return player.receive(parse(raw, strict=False))


def duel(a: Player, b: Player, limit: int = 2000) -> int:
    """Wire two players together until neither has anything to say; the messages carried."""
    wire: deque[tuple[Player, Message]] = deque()
    wire.extend((b, m) for m in a.start())
    wire.extend((a, m) for m in b.start())
    carried = 0
    while wire and carried < limit:
        to, msg = wire.popleft()
        carried += 1
        sender = a if to is b else b
        wire.extend((sender, m) for m in to.receive(parse(msg.wire, strict=False)))
    return carried


def test_a_gameend_while_it_waits_for_a_gamereq_ends_it_with_a_line_naming_it() -> None:
    player = strict()
    assert player.waiting_for is Wait.GAMEREQ
    with pytest.raises(StrictError, match="got GAMEEND 'E00' while waiting for a GAMEREQ"):
        feed(player, b"E00")


@pytest.mark.parametrize(
    ("raw", "what"),
    [(REQ, "got GAMEREQ"), (b"A" + NAME.encode() + b"0", "got GAMEACC"),
     (b"B001W", "got BACKREQ")],
)
def test_in_a_game_only_a_move_a_gameend_or_a_backreq_may_come(raw: bytes, what: str) -> None:
    player = strict()
    feed(player, REQ)
    assert player.waiting_for is Wait.MOVE
    if raw.startswith(b"B"):
        assert [m.NAME for m in feed(player, raw)] == ["BACKACC"]  # allowed: declined
        return
    with pytest.raises(StrictError, match=rf"{what} .* while waiting for a MOVE or a GAMEEND"):
        feed(player, raw)


def test_an_illegal_move_and_a_message_off_the_layout_end_it() -> None:
    player = strict()
    feed(player, REQ)
    with pytest.raises(StrictError, match="illegal MOVE 'M0000322200'"):
        feed(player, b"M0000322200")
    other = strict()
    with pytest.raises(StrictError, match="not exactly to the layout"):
        feed(other, f"R01{'Tester'.ljust(32, '0')}Z001010A".encode())


def test_its_own_gameend_waits_for_the_answer_and_nothing_else() -> None:
    player = strict(Role.INITIATOR, games=1, moves=1)
    [request] = player.start()
    assert isinstance(request, GameRequest) and player.waiting_for is Wait.GAMEACC
    out = feed(player, b"A" + NAME.encode() + b"0")  # the follower plays White: we wait
    assert out == [] and player.waiting_for is Wait.MOVE
    out = feed(player, b"M0000322800")
    assert [m.NAME for m in out] == ["MOVE"]
    position = player.position
    assert position is not None
    reply = to_dxp_move(position.legal_moves()[0], 0).wire
    out = feed(player, reply)  # the move limit (1) is reached: it ends the game
    assert isinstance(out[-1], GameEnd) and player.waiting_for is Wait.ANSWER
    feed(player, b"Cwell played")  # a CHAT is read past, anywhere
    with pytest.raises(StrictError, match=r"got MOVE .* while waiting for the answer to its GAMEEND"):
        feed(player, reply)


def test_an_answer_that_never_comes_ends_it_with_status_1_not_a_wait_for_ever() -> None:
    now = [0.0]
    player = StrictPlayer(PlayerConfig(role=Role.INITIATOR, depth=1, answer_timeout=2.0),
                          clock=lambda: now[0])
    player.start()
    now[0] = 1.9
    assert player.poll(now[0]) == [] and not player.done
    now[0] = 2.1
    assert player.poll(now[0]) == []  # never sent twice
    assert player.done and not player.ok
    assert player.refused == ("strict engine: waited 2 s for the GAMEACC to its GAMEREQ in vain")


@pytest.mark.parametrize("strict_role", [Role.FOLLOWER, Role.INITIATOR])
def test_the_built_in_engine_s_defaults_play_whole_games_with_it(strict_role: Role) -> None:
    stand_in = strict(strict_role, games=2, moves=10)
    engine = Player(PlayerConfig(role=strict_role.other, depth=1, seed=9, moves=10))
    duel(stand_in, engine)
    assert stand_in.refused is None
    assert stand_in.games_finished == engine.games_finished == 2
    assert stand_in.done and engine.done and stand_in.ok and engine.ok
