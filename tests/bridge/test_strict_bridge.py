"""The bridge's defaults play whole games with the strict stand-in on either end, in every
direction: the serial engine follower or initiator, on NULMODEM or NUL frames, the TCP
engine dialled or listened for.  In process: the bridge on an in-process cable, the engines
run as ``dxserial engine`` runs them, in the same loop; the TCP side on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from dxserial import demo
from dxserial.engine.player import Player, PlayerConfig
from dxserial.engine.runner import RunResult
from dxserial.protocol.links import NulModemSettings
from dxserial.protocol.session import Role
from dxserial.standins.strict import StrictPlayer
from dxserial.testing.inproc import bridge_on_cable, engine_task
from dxserial.testing.process import free_port
from dxserial.transports.endpoints import LinkOptions

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

GAMES = 2
MOVES = 8  # a short game: a draw at the move limit, or earlier


def player(strict: bool, role: Role, seed: int) -> Player:
    config = PlayerConfig(role=role, depth=1, seed=seed, games=GAMES, moves=MOVES, minutes=1)
    return StrictPlayer(config) if strict else Player(config)


def own_messages(trace: Path) -> list[str]:
    """What the bridge said of its own accord (not a stop code changed on someone's behalf)."""
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    return [r["raw"] for r in records
            if r.get("action") == "sent-by-bridge" and "on_behalf_of" not in r]


async def finish(task: asyncio.Task[RunResult], within: float = 60.0) -> RunResult:
    return await asyncio.wait_for(task, within)


async def stop(task: asyncio.Task[RunResult]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize("link", ["nulmodem", "nul"])
@pytest.mark.parametrize(
    ("serial_role", "serial_strict", "tcp_strict"),
    [
        (Role.FOLLOWER, True, False),  # the strict engine on the serial end, follower
        (Role.INITIATOR, True, False),  # ... initiator
        (Role.FOLLOWER, False, True),  # on the TCP end, initiator
        (Role.INITIATOR, False, True),  # ... follower
        (Role.FOLLOWER, True, True),  # on both ends
    ],
)
async def test_the_bridge_s_defaults_play_whole_games_with_a_strict_engine(
    tmp_path: Path, link: str, serial_role: Role, serial_strict: bool, tcp_strict: bool
) -> None:
    serial = player(serial_strict, serial_role, 1)
    tcp = player(tcp_strict, serial_role.other, 2)
    options = LinkOptions(link=link, nulmodem=NulModemSettings(timeout=0.3,  # type: ignore[arg-type]
                                                                max_attempts=1000))
    async with bridge_on_cable(tmp_path, link=link, serial_check=True) as run:
        serial_task = engine_task(serial, run.cable.open("b"), options)
        tcp_task = engine_task(tcp, f"tcp://127.0.0.1:{run.port}")
        try:
            result = await finish(tcp_task)
            if serial_role is Role.INITIATOR:
                assert (await finish(serial_task)).code == 0  # it stopped the session
        finally:
            await stop(serial_task)
            await stop(tcp_task)
        counts = await run.stop()
    refused = [p.refused for p in (serial, tcp) if isinstance(p, StrictPlayer) and p.refused]
    assert refused == [] and result.code == 0, (refused, result, run.log()[-3000:])
    assert serial.games_finished == tcp.games_finished == GAMES
    assert counts["lost"] == 0
    assert own_messages(run.trace_path) == []  # no evidence, so nothing of the bridge's own
    [state] = tmp_path.glob("serial-memory-*.json")
    assert json.loads(state.read_text())["game"] == "closed"  # its record: no game left open


async def test_the_bridge_dialling_a_strict_engine_plays_whole_games(tmp_path: Path) -> None:
    port = free_port()
    strict = player(True, Role.FOLLOWER, 3)
    serial = player(False, Role.INITIATOR, 4)
    async with bridge_on_cable(tmp_path, serial_check=True, listen=None,
                               connect=("127.0.0.1", port)) as run:
        tcp_task = engine_task(strict, f"listen://127.0.0.1:{port}")
        serial_task = engine_task(serial, run.cable.open("b"))
        try:
            assert (await finish(serial_task)).code == 0
            assert (await finish(tcp_task)).code == 0, strict.refused
        finally:
            await stop(serial_task)
            await stop(tcp_task)
    assert strict.refused is None and strict.games_finished == GAMES


async def test_the_demo_plays_its_game_with_strict_engines_on_both_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[StrictPlayer] = []

    class Made(StrictPlayer):  # the demo's two engines, made strict
        def __init__(self, config: PlayerConfig) -> None:
            super().__init__(config)
            made.append(self)

    monkeypatch.setattr(demo, "Player", Made)
    lines: list[str] = []
    result = await demo.run_demo(
        demo.DemoOptions(moves=6, baud=None, board=False, depth=1, pdn_dir=tmp_path),
        out=lines.append,
    )
    assert len(made) == 2 and [p.refused for p in made] == [None, None], lines
    assert [p.games_finished for p in made] == [1, 1]
    assert result.result.startswith("game 1: ") and result.pdn_path is not None, lines
