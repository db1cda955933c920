"""Stand-in engines that speak real engines' dialects (see ``../shared/interop``): the
built-in player with one habit bent into what it sends, to test the bridge, ``engine`` and
``match`` against engines no one here wrote.

* ``echo``: answers a GAMEEND with the reason it received (GWD, pydraughts).
* ``silent``: never answers a GAMEEND; as initiator it sends the next GAMEREQ at once (GWD's
  default); like GWD it plays 5 moves past the GAMEREQ's move limit before it ends a game.
* ``cumulative``: MOVE times are its total for the game, three seconds a move (GWD's times).
* ``wide``: a GAMEACC whose name is padded to 40 characters.

Run one as a process: ``python -m dxserial.standins.dialects DIALECT ENDPOINT [--role R]
[--games N] [--moves N] [--link L]`` (prints ``engine ready`` like ``dxserial engine``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import sys
import time
from collections.abc import Callable

from dxserial.engine.player import Player, PlayerConfig
from dxserial.engine.runner import EngineRunner
from dxserial.protocol.messages import GameAccept, GameEnd, GameRequest, Message, Move
from dxserial.protocol.session import Role
from dxserial.standins.strict import add_standin_arguments, standin_endpoint

__all__ = ["DIALECTS", "DialectPlayer", "main"]

DIALECTS = ("echo", "silent", "cumulative", "wide")
SECONDS_A_MOVE = 3  # what a 'cumulative' stand-in claims each of its moves took
WIDE = 40
GWD_MARGIN = 5  # moves GWD plays past the move limit before it ends the game


class DialectPlayer(Player):
    """The built-in player whose outgoing messages follow ``dialect``."""

    def __init__(
        self, config: PlayerConfig, dialect: str, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"dialect {dialect!r}: one of {', '.join(DIALECTS)}")
        super().__init__(config, clock=clock)
        self.dialect = dialect
        self._total = 0

    def _limit_reached(self) -> bool:
        if self.dialect != "silent":
            return super()._limit_reached()
        request = self.session.dialogue.game_request
        if request is None or not request.moves:
            return False
        return self.session.dialogue.plies >= 2 * (request.moves + GWD_MARGIN)

    def start(self) -> list[Message]:
        return self._speak(None, super().start())

    def receive(self, msg: Message) -> list[Message]:
        return self._speak(msg, super().receive(msg))

    def poll(self, now: float, *, repeat: bool = False) -> list[Message]:
        return self._speak(None, super().poll(now, repeat=repeat))

    def _speak(self, got: Message | None, out: list[Message]) -> list[Message]:
        said: list[Message] = []
        if isinstance(got, GameRequest):
            self._total = 0  # a new game (we follow)
        for msg in out:
            answer = isinstance(msg, GameEnd) and isinstance(got, GameEnd)
            if isinstance(msg, GameRequest):
                self._total = 0
            if self.dialect == "silent" and answer:
                continue
            if self.dialect == "echo" and answer:
                assert isinstance(got, GameEnd) and isinstance(msg, GameEnd)
                msg = dataclasses.replace(msg, reason=got.reason)
            elif self.dialect == "cumulative" and isinstance(msg, Move):
                self._total += SECONDS_A_MOVE
                msg = dataclasses.replace(msg, seconds=self._total)
            elif self.dialect == "wide" and isinstance(msg, GameAccept):
                raw = b"A" + msg.name.ljust(WIDE).encode("ascii") + msg.code.value.encode()
                msg = dataclasses.replace(msg, raw=raw)
            said.append(msg)
        return said


def main(argv: list[str] | None = None, *, line: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(prog="python -m dxserial.standins.dialects")
    parser.add_argument("dialect", choices=DIALECTS)
    add_standin_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    config = PlayerConfig(
        role=Role(args.role), name=f"Stand-in {args.dialect}", depth=args.depth,
        games=args.games, minutes=args.minutes, moves=args.moves, seed=args.seed,
        answer_timeout=1.0,
    )
    endpoint = standin_endpoint(args)

    async def run() -> int:
        await endpoint.open_early()
        runner = EngineRunner(DialectPlayer(config, args.dialect), endpoint, on_line=line)
        result = await runner.run()
        if result.code:
            print(f"stand-in: {result.message}", file=sys.stderr)
        return result.code

    return asyncio.run(run())


if __name__ == "__main__":
    sys.exit(main(line=lambda text: print(text, flush=True)))
