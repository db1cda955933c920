"""``dxserial demo``: the whole program on a built-in default, with no hardware.

A virtual null-modem pair stands in for the cable; the built-in engine on one end speaks
NULMODEM, as a DOS engine would; the bridge joins the other end to a free TCP port on
127.0.0.1; and the built-in engine plays it over TCP.  What crosses the bridge is shown
as it crosses, with the board after every move, then the result and the PDN record.

Cancelling :func:`run_demo` (the command does it on Ctrl-C and SIGTERM) stops both engines
(a search in progress included), the bridge and the virtual cable, removes the temporary
directory, and raises :class:`DemoInterrupted` saying how far the game got and what was
kept: nothing, unless ``--pdn`` named a directory and the bridge recorded the cut game.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dxserial.bridge import Bridge, BridgeConfig
from dxserial.engine.endpoint import EngineEndpoint, LinkOptions, parse_engine_endpoint
from dxserial.engine.player import Player, PlayerConfig
from dxserial.engine.runner import EngineRunner, RunResult
from dxserial.errors import DxSerialError
from dxserial.game.referee import Referee
from dxserial.protocol.messages import (
    AcceptCode,
    Chat,
    Colour,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    escape,
)
from dxserial.protocol.session import Role
from dxserial.transports.serial import SerialSettings
from dxserial.transports.vpair import VirtualPair

SERIAL_NAME = "DOS engine (NULMODEM)"
TCP_NAME = "TCP engine"


@dataclass(frozen=True)
class DemoOptions:
    moves: int = 20
    baud: int | None = 9600
    depth: int = 2
    seed: int | None = 1
    board: bool = True
    pdn_dir: Path | None = None


class DemoInterrupted(Exception):
    """The demo was cancelled; ``str()`` says how far it got and what was left behind."""

    def __init__(self, moves: int, started: bool, kept: Path | None) -> None:
        if not started:
            where = "before the game began"
        else:
            where = f"after {moves} move{'' if moves == 1 else 's'} of the game"
        left = f"the unfinished game is in {kept}" if kept else "nothing was kept"
        super().__init__(f"{where}; {left}")
        self.moves = moves
        self.kept = kept


@dataclass(frozen=True)
class DemoResult:
    result: str
    pdn_path: Path | None
    pdn_text: str


class _Show:
    """Prints each forwarded message, with the board after a move (tracked by a referee)."""

    def __init__(self, out: Callable[[str], None], board: bool) -> None:
        self.out = out
        self.board = board
        self.referee = Referee()
        self.roles = {"tcp->serial": Role.INITIATOR, "serial->tcp": Role.FOLLOWER}
        self.started = False  # a GAMEACC accepted the game
        self.moves = 0  # legal moves seen

    def __call__(self, direction: str, msg: Message) -> None:
        sender = "TCP engine" if direction == "tcp->serial" else "DOS engine"
        verdict = self.referee.observe(msg, self.roles[direction])
        if isinstance(msg, GameAccept) and msg.code is AcceptCode.ACCEPT:
            self.started = True
        elif isinstance(msg, Move) and verdict.ok:
            self.moves += 1
        arrow = "--> serial" if direction == "tcp->serial" else "<-- serial"
        line = f"{arrow}  {escape(msg.wire):<44}  "
        if isinstance(msg, Move) and verdict.pdn:
            colour = "White" if verdict.colour is Colour.WHITE else "Black"
            line += f"{sender} ({colour}) plays {verdict.pdn}"
        elif isinstance(msg, GameRequest):
            line += f"{sender} offers a game: {msg.moves} moves, the other side plays " + (
                "White" if msg.follower_colour is Colour.WHITE else "Black"
            )
        elif isinstance(msg, GameEnd):
            line += f"{sender} ends the game (reason {msg.reason.value}, stop {msg.stop.value})"
        elif isinstance(msg, GameAccept):
            answer = "accepts" if msg.code is AcceptCode.ACCEPT else f"refuses (code {msg.code})"
            line += f"{sender} {answer} as {msg.name!r}"
        elif isinstance(msg, Chat):
            line += f"{sender} says: {msg.text}"
        else:
            line += f"{sender}: {msg.NAME}"
        if not verdict.ok:
            line += f"   !! {verdict.problem}"
        self.out(line)
        if self.board and isinstance(msg, Move) and self.referee.position is not None:
            self.out(self.referee.position.render())
            self.out("")


async def run_demo(options: DemoOptions, out: Callable[[str], None] = print) -> DemoResult:
    """Play one game through a real bridge on a virtual pair; return its result and PDN.

    Cancelled, it cleans up everything and raises :class:`DemoInterrupted`.
    """
    show = _Show(out, options.board)
    with tempfile.TemporaryDirectory(prefix="dxserial-demo-") as tmp:
        pdn_dir = options.pdn_dir or Path(tmp) / "games"
        pdn_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        a, b = str(Path(tmp) / "serial-bridge"), str(Path(tmp) / "serial-dos")
        try:
            with VirtualPair(a, b, baud=options.baud) as pair:
                line = f"{options.baud} baud" if options.baud else "full speed"
                out(f"virtual null-modem cable: {pair.path_a} <-> {pair.path_b} ({line})")
                result = await _play(options, a, b, pdn_dir, show)
        except asyncio.CancelledError:
            kept = sorted(options.pdn_dir.glob("*.pdn")) if options.pdn_dir else []
            raise DemoInterrupted(show.moves, show.started, kept[-1] if kept else None) from None
        files = sorted(pdn_dir.glob("*.pdn"))
        if not files:
            raise DxSerialError("the demo game was not recorded")
        text = files[-1].read_text()
        kept_file = files[-1] if options.pdn_dir else None
        return DemoResult(result, kept_file, text)


async def _play(options: DemoOptions, a: str, b: str, pdn_dir: Path, show: _Show) -> str:
    ready = asyncio.Event()
    out = show.out
    bridge = Bridge(
        BridgeConfig(
            port=a,
            serial=SerialSettings(baudrate=options.baud or 9600),
            listen=("127.0.0.1", 0),
            referee="warn",
            pdn=pdn_dir,
        ),
        on_ready=lambda _line: ready.set(),
        observer=show,
    )
    bridge_task = asyncio.create_task(bridge.run(), name="demo-bridge")
    dos: EngineRunner | None = None
    dos_task: asyncio.Task[RunResult] | None = None
    try:
        await _wait_ready(ready, bridge_task)
        assert bridge.listen_address is not None
        host, port = bridge.listen_address
        out(f"bridge: {a} (NULMODEM) <-> {host}:{port} (TCP)")
        dos, tcp = _engines(options, b, host, port)
        dos_task = asyncio.create_task(dos.run(), name="demo-dos-engine")
        tcp_result = await tcp.run()
        dos_result = await asyncio.wait_for(dos_task, 30)
    finally:
        # Nested so that the bridge is stopped even if this wait is what a signal cancels.
        try:
            if dos is not None and dos_task is not None:
                dos.stop()
                await asyncio.gather(dos_task, return_exceptions=True)
        finally:
            bridge.stop()
            await asyncio.gather(bridge_task, return_exceptions=True)
    _check(tcp_result, "TCP engine")
    _check(dos_result, "DOS engine")
    over = tcp.results[-1] if tcp.results else None
    return over.line if over is not None else tcp_result.message


def _engines(
    options: DemoOptions, b: str, host: str, port: int
) -> tuple[EngineRunner, EngineRunner]:
    """The DOS engine (follower, NULMODEM on end ``b``) and the TCP engine (initiator)."""
    serial_options = LinkOptions(
        link="nulmodem", serial=SerialSettings(baudrate=options.baud or 9600)
    )
    dos = EngineRunner(
        Player(
            PlayerConfig(
                role=Role.FOLLOWER, name=SERIAL_NAME, depth=options.depth, seed=options.seed
            )
        ),
        EngineEndpoint(parse_engine_endpoint(b), serial_options),
        on_line=lambda _line: None,
    )
    tcp = EngineRunner(
        Player(
            PlayerConfig(
                role=Role.INITIATOR,
                name=TCP_NAME,
                depth=options.depth,
                games=1,
                moves=options.moves,
                colour=Colour.BLACK,
                seed=options.seed,
            )
        ),
        EngineEndpoint(parse_engine_endpoint(f"tcp://{host}:{port}")),
        on_line=lambda _line: None,
    )
    return dos, tcp


async def _wait_ready(ready: asyncio.Event, task: asyncio.Task[None]) -> None:
    waiter = asyncio.create_task(ready.wait())
    done, _ = await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        waiter.cancel()
        task.result()  # raises the bridge's error
        raise DxSerialError("the bridge stopped before it was ready")


def _check(result: RunResult, who: str) -> None:
    if result.code != 0:
        raise DxSerialError(f"{who}: {result.message}")
