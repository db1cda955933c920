"""A strict engine: the built-in player that accepts, in each state, only what DXP allows
there, and ends with a non-zero status and one line naming what it got on anything else.

Modelled on GWD 8.100 (``dxp.c``), the strictest engine seen: a follower that reads
anything but a GAMEREQ while it waits for one dies (``** FATAL ** error=type !=
DXP_GAMEREQ``), and so does one that gets anything but a MOVE or a GAMEEND in a game, or
anything but a GAMEEND while its own GAMEEND waits for the answer (``dxp_strict_gameend``
on).  Like GWD it ignores CHAT everywhere and never repeats a GAMEREQ; unlike GWD it
follows DXP where GWD bends it (it answers a GAMEEND with reason 0, honours stop codes,
declines a BACKREQ), and it also refuses what GWD would crash on: an illegal move, a
message not exactly to the layout.  Where it waits for an answer it waits
``gameend_timeout`` at most, then ends with status 1 (GWD waits for ever).

Run one as a process: ``python -m dxserial.standins.strict ENDPOINT [--role R] [--games N]
[--moves N] [--minutes N] [--link L]`` (prints ``engine ready`` like ``dxserial engine``;
ENDPOINT as there: a serial port, ``tcp://HOST:PORT``, ``listen://HOST:PORT``).
"""

from __future__ import annotations

import argparse
import asyncio
import enum
import logging
import sys
import time
from collections.abc import Callable
from typing import NoReturn

from dxserial.draughts import IllegalMoveError
from dxserial.engine.player import BackPolicy, PeerError, Player, PlayerConfig
from dxserial.engine.runner import EngineRunner
from dxserial.protocol.dxp_moves import match_dxp_move
from dxserial.protocol.links import NulModemSettings
from dxserial.protocol.messages import (
    BackRequest,
    Chat,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    escape,
)
from dxserial.protocol.session import Phase, Role
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions, parse_engine_endpoint

__all__ = ["ALLOWED", "StrictError", "StrictPlayer", "Wait", "add_standin_arguments", "command",
           "main", "standin_endpoint"]


class Wait(enum.StrEnum):
    """What the strict engine is waiting for (GWD's ``PRINTF("waiting for ...")``)."""

    GAMEREQ = "a GAMEREQ"
    GAMEACC = "the GAMEACC to its GAMEREQ"
    MOVE = "a MOVE or a GAMEEND"
    GAMEEND = "a GAMEEND (its opponent has no legal move)"
    ANSWER = "the answer to its GAMEEND"
    NOTHING = "nothing (it is to move, or its session is over)"


#: What may come in each state; a CHAT may come in any (and is ignored).
ALLOWED: dict[Wait, tuple[type[Message], ...]] = {
    Wait.GAMEREQ: (GameRequest,),
    Wait.GAMEACC: (GameAccept,),
    Wait.MOVE: (Move, GameEnd, BackRequest),
    Wait.GAMEEND: (GameEnd,),
    Wait.ANSWER: (GameEnd,),
    Wait.NOTHING: (),
}


class StrictError(PeerError):
    """What the strict engine got where DXP does not allow it; the session ends (status 1)."""


class StrictPlayer(Player):
    """The built-in player behind a strict gate (see the module docstring)."""

    def __init__(self, config: PlayerConfig, *, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        super().__init__(config, clock=clock)
        self.refused: str | None = None  # the line it ended on

    @property
    def waiting_for(self) -> Wait:
        """Its state, read from the dialogue it keeps with the peer."""
        session = self.session
        phase = session.phase
        if self.done:
            return Wait.NOTHING
        if phase is Phase.IDLE:
            return Wait.GAMEREQ if self.role is Role.FOLLOWER else Wait.NOTHING
        if phase is Phase.REQUESTED:
            return Wait.GAMEACC if self.role is Role.INITIATOR else Wait.NOTHING
        if phase is Phase.ENDING:
            return Wait.ANSWER if session.must_answer is None else Wait.NOTHING
        if session.our_turn:
            return Wait.NOTHING
        position = self.position
        if position is not None and position.is_lost():
            return Wait.GAMEEND
        return Wait.MOVE

    def receive(self, msg: Message) -> list[Message]:
        if isinstance(msg, Chat):
            return []  # GWD reads past every CHAT
        waiting = self.waiting_for
        if not isinstance(msg, ALLOWED[waiting]):
            self._refuse(f"got {msg.NAME} '{escape(msg.wire)}' while waiting for {waiting}")
        if msg.warnings:
            self._refuse(f"got {msg.NAME} '{escape(msg.wire)}' not exactly to the layout: "
                         f"{msg.warnings[0]}")
        if isinstance(msg, Move):
            position = self.position
            assert position is not None
            try:
                match_dxp_move(position, msg)
            except IllegalMoveError as exc:
                self._refuse(f"got an illegal MOVE '{escape(msg.wire)}': {exc}")
        return super().receive(msg)

    def invalid(self, reason: str) -> list[Message]:
        self._refuse(f"got an invalid message: {reason}")

    def poll(self, now: float, *, repeat: bool = False) -> list[Message]:
        """No GAMEREQ sent twice; an answer it waited for too long ends the session."""
        deadline = self.deadline()
        if deadline is None or now < deadline:
            return []
        waiting = self.waiting_for
        if waiting in (Wait.ANSWER, Wait.GAMEACC):
            waited = self.config.gameend_timeout if waiting is Wait.ANSWER else (
                self.config.answer_timeout)
            self.refused = f"strict engine: waited {waited:g} s for {waiting} in vain"
            self._finished, self.ok, self.outcome = True, False, self.refused
            return []
        return super().poll(now, repeat=False)

    def _refuse(self, what: str) -> NoReturn:
        self.refused = f"strict engine: {what}"
        raise StrictError(self.refused, side=self.role.other.value)


def command(endpoint: str, *args: str) -> list[str]:
    """The argv that runs a strict stand-in on ``endpoint`` (a tournament's command)."""
    return [sys.executable, "-m", "dxserial.standins.strict", endpoint, *args]


def add_standin_arguments(parser: argparse.ArgumentParser) -> None:
    """The endpoint and game options every stand-in's ``main`` takes (this one's and
    :mod:`dxserial.standins.dialects`')."""
    parser.add_argument("endpoint")
    parser.add_argument("--role", choices=("initiator", "follower"), default="follower")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--minutes", type=int, default=1)
    parser.add_argument("--moves", type=int, default=75)
    parser.add_argument("--link", choices=("nulmodem", "nul"), default="nulmodem")
    parser.add_argument("--depth", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)


def standin_endpoint(args: argparse.Namespace) -> EngineEndpoint:
    """The endpoint :func:`add_standin_arguments` read, on a quick nul-modem handshake."""
    options = LinkOptions(
        link=args.link, nulmodem=NulModemSettings(timeout=2.0, max_attempts=1000)
    )
    return EngineEndpoint(parse_engine_endpoint(args.endpoint), options)


def main(argv: list[str] | None = None, *, line: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(prog="python -m dxserial.standins.strict")
    add_standin_arguments(parser)
    parser.add_argument("--answer-timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    config = PlayerConfig(
        role=Role(args.role), name="Strict stand-in", depth=args.depth, games=args.games,
        minutes=args.minutes, moves=args.moves, seed=args.seed, backreq=BackPolicy.DECLINE,
        answer_timeout=args.answer_timeout, gameend_timeout=args.answer_timeout,
    )
    endpoint = standin_endpoint(args)
    player = StrictPlayer(config)

    async def run() -> int:
        await endpoint.open_early()
        result = await EngineRunner(player, endpoint, on_line=line).run()
        if result.code:
            print(player.refused or f"strict engine: {result.message}", file=sys.stderr,
                  flush=True)
        return result.code

    return asyncio.run(run())


if __name__ == "__main__":
    sys.exit(main(line=lambda text: print(text, flush=True)))
