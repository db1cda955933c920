"""A whole ``Match`` in one process: the runner, its desk on the one driver, the conductor.

The engines are built-in players behind TCP listeners on 127.0.0.1 in this same event loop
(no processes): what the match does with real connections, without starting programs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dxserial.engine.player import Player, PlayerConfig
from dxserial.game.pdn import read_pdn
from dxserial.match.rules import FailurePolicy, MatchConfig
from dxserial.match.runner import Match
from dxserial.protocol.messages import Move, parse
from dxserial.protocol.session import Role
from dxserial.transports.endpoints import EngineEndpoint, parse_engine_endpoint

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


class Follower:
    """A built-in follower on a TCP listener; with ``crash``, its first connection closes at
    the first MOVE it gets (an engine that died mid-game); it takes the next one."""

    def __init__(self, seed: int, crash: bool = False) -> None:
        self.seed = seed
        self.crash = crash
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"tcp://127.0.0.1:{port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        player = Player(PlayerConfig(role=Role.FOLLOWER, depth=1, seed=self.seed))
        try:
            while not player.done:
                msg = parse((await reader.readuntil(b"\0"))[:-1], strict=False)
                if self.crash and isinstance(msg, Move):
                    self.crash = False
                    break
                for answer in player.receive(msg):
                    writer.write(answer.wire + b"\0")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


def test_an_engine_that_died_mid_game_forfeits_it_and_is_reached_again_for_the_next(
    tmp_path: Path,
) -> None:
    async def main() -> tuple[Match, bool, int]:
        a, b = Follower(1), Follower(2, crash=True)
        try:
            ends = [
                EngineEndpoint(parse_engine_endpoint(await engine.start())) for engine in (a, b)
            ]
            config = MatchConfig(
                games=2, moves=6, pdn_dir=tmp_path, move_timeout=10.0, connect_timeout=5.0,
                on_engine_failure=FailurePolicy.CONTINUE,
            )
            match = Match(ends[0], ends[1], config)
            completed = await asyncio.wait_for(match.run(), 60)
            return match, completed, b.connections
        finally:
            a.close()
            b.close()

    match, completed, connections = asyncio.run(main())
    assert completed and match.stopped is None
    first, second = match.summaries
    assert first.result.result == "2-0"  # B (Black) forfeits game 1
    assert first.result.reason == (
        "Black dxserial 0.1.0 (B) forfeits: link lost: the engine closed the connection"
    )
    assert connections == 2  # reached again for game 2, played to the move limit
    assert second.result.result == "1-1" and second.plies == 12
    assert second.pdn is not None
    (record,) = read_pdn(second.pdn)
    assert record.plies == 12 and record.white == "dxserial 0.1.0"
    standing = match.standings["A"]
    assert (standing.wins, standing.draws, standing.losses) == (1, 1, 0)
