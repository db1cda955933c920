"""EngineRunner in one event loop, no processes: two built-in engines on 127.0.0.1 play,
and a stop that comes before the peer (or during its search) is obeyed at once."""

from __future__ import annotations

import asyncio

import pytest
from helpers import until

from dxserial.engine.player import MAX_DEPTH, Player, PlayerConfig
from dxserial.engine.runner import EngineRunner, RunResult
from dxserial.protocol.messages import Move
from dxserial.protocol.session import Role
from dxserial.transports.endpoints import EngineEndpoint, parse_engine_endpoint

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


def endpoint(text: str) -> EngineEndpoint:
    return EngineEndpoint(parse_engine_endpoint(text))


def test_two_runners_play_their_games_over_tcp_and_both_exit_0() -> None:
    async def main() -> tuple[RunResult, RunResult, list[str]]:
        lines: list[str] = []
        follower = EngineRunner(
            Player(PlayerConfig(role=Role.FOLLOWER, depth=1, seed=1)),
            endpoint("listen://127.0.0.1:0"), on_line=lines.append,
        )
        listening = asyncio.create_task(follower.run())
        await until(lambda: follower.endpoint.listen_address is not None)
        address = follower.endpoint.listen_address
        assert address is not None
        initiator = EngineRunner(
            Player(PlayerConfig(role=Role.INITIATOR, depth=1, seed=2, games=2, moves=3)),
            endpoint(f"tcp://{address.host}:{address.port}"), on_line=lines.append,
        )
        ours = await asyncio.wait_for(initiator.run(), 60)
        theirs = await asyncio.wait_for(listening, 60)
        assert [g.number for g in initiator.results] == [1, 2]
        return ours, theirs, lines

    ours, theirs, lines = asyncio.run(main())
    assert ours.code == 0 and ours.message.startswith("session ended: ")
    assert theirs.code == 0 and theirs.message.startswith("session ended: ")
    assert sum(line.startswith("game ") for line in lines) == 4


def test_a_stop_before_any_peer_came_ends_the_wait_with_1() -> None:
    async def main() -> RunResult:
        runner = EngineRunner(
            Player(PlayerConfig(role=Role.FOLLOWER)), endpoint("listen://127.0.0.1:0"),
            on_line=lambda _line: None,
        )
        task = asyncio.create_task(runner.run())
        await until(lambda: runner.endpoint.listen_address is not None)
        runner.stop()
        return await asyncio.wait_for(task, 10)

    assert asyncio.run(main()) == RunResult(1, "stopped before any game was played")


def test_a_stop_during_a_deep_search_ends_it_at_once_and_the_game_with_it() -> None:
    async def main() -> tuple[RunResult, bytes]:
        runner = EngineRunner(
            Player(PlayerConfig(role=Role.FOLLOWER, depth=MAX_DEPTH, seed=1)),
            endpoint("listen://127.0.0.1:0"), on_line=lambda _line: None,
        )
        task = asyncio.create_task(runner.run())
        await until(lambda: runner.endpoint.listen_address is not None)
        address = runner.endpoint.listen_address
        assert address is not None
        reader, writer = await asyncio.open_connection(address.host, address.port)
        writer.write(f"R01{'Tester':<32}Z005075A".encode() + b"\0")  # it plays Black
        accept = await asyncio.wait_for(reader.readuntil(b"\0"), 10)
        writer.write(Move(from_square=32, to_square=28).wire + b"\0")
        await until(lambda: runner.machine.thinking)  # at the deepest depth: minutes
        runner.stop()
        result = await asyncio.wait_for(task, 10)
        writer.close()
        await writer.wait_closed()
        return result, accept

    result, accept = asyncio.run(main())
    assert accept.startswith(b"A")
    assert result == RunResult(1, "stopped during game 1, before any game was played to its end")
