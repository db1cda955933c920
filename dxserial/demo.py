"""``dxserial demo``: the whole program on a built-in default, with no hardware.

A virtual null-modem pair stands in for the cable; the built-in engine on one end speaks
NULMODEM, as a DOS engine would; the bridge joins the other end to a free TCP port on
127.0.0.1; and the built-in engine plays it over TCP.  What crosses the bridge is shown
as it crosses, with the board after every move, then the result and the PDN record.

Cancelling :func:`run_demo` (the command does it on Ctrl-C and SIGTERM) stops both engines
(a search in progress included), the bridge and the virtual cable, removes the temporary
directory, and raises :class:`DemoInterrupted` saying how far the game got and what was
kept: nothing, unless ``--pdn`` named a directory and the bridge recorded the cut game.

With ``dos`` set (``dxserial demo --dos``) the serial side is a real DOS program instead:
DXENG.COM (``dos/dxeng.c``) in a headless DOSBox, driving DOSBox's emulated 8250 UART, whose
``nullmodem`` serial port the bridge reaches as ``dosbox://`` (DOSBox listens).
"""

from __future__ import annotations

import asyncio
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dxserial.bridge import Bridge, BridgeConfig
from dxserial.engine.player import Player, PlayerConfig
from dxserial.engine.runner import EngineRunner, RunResult
from dxserial.errors import DxSerialError, PortError
from dxserial.game.referee import Referee
from dxserial.processes import dos_engine as dosbox_engine
from dxserial.protocol.messages import (
    AcceptCode,
    Chat,
    Colour,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    colour_name,
    escape,
)
from dxserial.protocol.session import Role
from dxserial.sim.vpair import VirtualPair
from dxserial.transports.child import Child
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions, parse_engine_endpoint
from dxserial.transports.serial import SerialSettings

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
    dos: bool = False  # the serial side is DXENG.COM in DOSBox, not the built-in engine
    cycles: int | str = 20000  # DOSBox's emulated CPU speed (instructions per ms), or "max"


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
        direction = direction.split(" ", 1)[0]  # "tcp->serial (by the bridge)": for it
        sender = "TCP engine" if direction == "tcp->serial" else "DOS engine"
        verdict = self.referee.observe(msg, self.roles[direction])
        if isinstance(msg, GameAccept) and msg.code is AcceptCode.ACCEPT:
            self.started = True
        elif isinstance(msg, Move) and verdict.ok:
            self.moves += 1
        arrow = "--> serial" if direction == "tcp->serial" else "<-- serial"
        line = f"{arrow}  {escape(msg.wire):<44}  "
        if isinstance(msg, Move) and verdict.pdn:
            colour = colour_name(verdict.colour) if verdict.colour else "?"
            line += f"{sender} ({colour}) plays {verdict.pdn}"
        elif isinstance(msg, GameRequest):
            line += f"{sender} offers a game: {msg.moves} moves, the other side plays " + (
                colour_name(msg.follower_colour)
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
    if options.dos:  # fail before anything starts when DOSBox or DXENG.COM is missing
        dosbox_engine.find_dosbox()
        dosbox_engine.find_engine()
    with tempfile.TemporaryDirectory(prefix="dxserial-demo-") as tmp:
        pdn_dir = options.pdn_dir or Path(tmp) / "games"
        pdn_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        a, b = str(Path(tmp) / "serial-bridge"), str(Path(tmp) / "serial-dos")
        try:
            if options.dos:
                result = await _play_dosbox(options, Path(tmp), pdn_dir, show)
            else:
                with VirtualPair(a, b, baud=options.baud) as pair:
                    line = f"{options.baud} baud" if options.baud else "full speed"
                    out(f"virtual null-modem cable: {pair.path_a} <-> {pair.path_b} ({line})")
                    result = await _play(options, a, b, pdn_dir, show, Path(tmp) / "state")
        except asyncio.CancelledError:
            kept = sorted(options.pdn_dir.glob("*.pdn")) if options.pdn_dir else []
            raise DemoInterrupted(show.moves, show.started, kept[-1] if kept else None) from None
        files = sorted(pdn_dir.glob("*.pdn"))
        if not files:
            raise DxSerialError("the demo game was not recorded")
        text = files[-1].read_text()
        kept_file = files[-1] if options.pdn_dir else None
        return DemoResult(result, kept_file, text)


def _bridge(
    options: DemoOptions, port: str, pdn_dir: Path, show: _Show, ready: asyncio.Event,
    state: Path,
) -> Bridge:
    """The bridge with its defaults, but for one game's settings; ``state``: its record of
    the serial engine's game, in the demo's temporary folder."""
    return Bridge(
        BridgeConfig(
            port=port,
            serial=SerialSettings(baudrate=options.baud or 9600),
            listen=("127.0.0.1", 0),
            referee="warn",
            pdn=pdn_dir,
            pass_stop=True,  # one game, then both engines stop (the TCP one asks to)
            state_dir=state,
        ),
        on_ready=lambda _line: ready.set(),
        observer=show,
    )


async def _play(
    options: DemoOptions, a: str, b: str, pdn_dir: Path, show: _Show, state: Path
) -> str:
    ready = asyncio.Event()
    out = show.out
    bridge = _bridge(options, a, pdn_dir, show, ready, state)
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


#: How long DOSBox may take to open its serial port, and to exit after the game.
DOSBOX_START, DOSBOX_EXIT = 20.0, 30.0


async def _play_dosbox(options: DemoOptions, tmp: Path, pdn_dir: Path, show: _Show) -> str:
    """The game with DXENG.COM in DOSBox on the serial side; its log is shown at the end."""
    out = show.out
    port = _free_port()
    run = dosbox_engine.prepare(
        tmp / "c",
        dosbox_engine.serial_line(port, dosbox_listens=True),
        dosbox_engine.engine_args(baud=options.baud or 9600),
        cycles=options.cycles,
    )
    out(f"DOSBox: C:\\{dosbox_engine.PROGRAM} on COM1, a nullmodem port on 127.0.0.1:{port} "
        f"(cycles {options.cycles})")
    # Under a keeper like every engine the director starts: a killed demo leaves no DOSBox.
    proc = await Child.start(run.argv, cwd=tmp, env=run.env, log=tmp / "dosbox.log")
    bridge: Bridge | None = None
    bridge_task: asyncio.Task[None] | None = None
    try:
        bridge, bridge_task = await _bridge_to_dosbox(
            options, port, pdn_dir, show, proc, tmp / "state"
        )
        assert bridge.listen_address is not None
        host, tcp_port = bridge.listen_address
        out(f"bridge: dosbox://127.0.0.1:{port} (NULMODEM) <-> {host}:{tcp_port} (TCP)")
        tcp = _tcp_engine(options, host, tcp_port)
        tcp_result = await tcp.run()
        try:
            await asyncio.wait_for(proc.wait(), DOSBOX_EXIT)
        except TimeoutError:
            raise DxSerialError(
                f"DXENG.COM did not finish within {DOSBOX_EXIT:g} s of the game's end"
            ) from None
    finally:
        try:
            await proc.stop()
        finally:
            if bridge is not None and bridge_task is not None:
                bridge.stop()
                await asyncio.gather(bridge_task, return_exceptions=True)
    out("")
    out(f"the DOS engine's own log (C:\\{dosbox_engine.LOG_NAME}, BIOS ticks at 18.2 Hz):")
    for line in run.log_text().splitlines():
        out(f"  {line}")
    out("")
    _check(tcp_result, "TCP engine")
    over = tcp.results[-1] if tcp.results else None
    return over.line if over is not None else tcp_result.message


async def _bridge_to_dosbox(
    options: DemoOptions,
    port: int,
    pdn_dir: Path,
    show: _Show,
    proc: Child,
    state: Path,
) -> tuple[Bridge, asyncio.Task[None]]:
    """Start the bridge on ``dosbox://``, trying again until DOSBox listens.

    Probing the port would not do: DOSBox takes the first connection as its cable.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DOSBOX_START
    while True:
        ready = asyncio.Event()
        bridge = _bridge(options, f"dosbox://127.0.0.1:{port}", pdn_dir, show, ready, state)
        task = asyncio.create_task(bridge.run(), name="demo-bridge")
        try:
            await _wait_ready(ready, task)
            return bridge, task
        except PortError as exc:
            if proc.returncode is not None:
                raise DxSerialError(
                    f"DOSBox exited (code {proc.returncode}) before it opened its serial port"
                ) from None
            if loop.time() > deadline:
                raise DxSerialError(
                    f"DOSBox did not open its serial port within {DOSBOX_START:g} s: {exc}"
                ) from None
        await asyncio.sleep(0.05)  # DOSBox is still starting: try the port again


def _free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now, for DOSBox to listen on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tcp_engine(options: DemoOptions, host: str, port: int) -> EngineRunner:
    """The built-in engine on TCP: the initiator, playing Black, one game."""
    return EngineRunner(
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
    return dos, _tcp_engine(options, host, port)


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
