"""DXENG.COM, a real DOS program, in a real DOSBox on its emulated 8250, through the bridge.

Each game runs `dxserial bridge` and `dxserial engine` as a user would, with DOSBox as the
serial-side PC; the matrix (transparent or escaped nullmodem, DOSBox as TCP server or
client, DOS engine as follower or initiator, a fast or a 286-speed CPU) is covered by a few
combined runs.  Skipped only where dosbox or bcc (or, for the move-generator check, a host C
compiler) is missing.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.draughts import Position
from dxserial.processes import dos_engine as dosbox_engine
from dxserial.protocol.messages import Colour, Move, parse
from dxserial.testing.process import Cli, free_port, listening, wait_until

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

ROOT = Path(__file__).resolve().parent.parents[1]
INSTALL = "sudo apt-get install dosbox bcc"
needs_dos = pytest.mark.skipif(
    shutil.which("dosbox") is None or shutil.which("bcc") is None,
    reason=f"needs dosbox and bcc ({INSTALL})",
)


@pytest.fixture(scope="session")
def dxeng(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """DXENG.COM built from the current source by the build script CI runs."""
    out = tmp_path_factory.mktemp("dos-build")
    subprocess.run(["sh", str(ROOT / "dos" / "build.sh"), str(out)], check=True, timeout=60)
    return out / "DXENG.COM"


@pytest.fixture
def dos_env(dxeng: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point this process and its subprocesses at the fresh build."""
    monkeypatch.setenv(dosbox_engine.ENGINE_ENV, str(dxeng))
    return dxeng


@dataclass
class Game:
    dos_log: str
    bridge_log: str
    engine_out: list[str]
    pdn: Path


@dataclass(frozen=True)
class Setup:
    transparent: bool
    dosbox_listens: bool
    dos_role: str  # "f" or "i"
    cycles: int | str = 20000
    moves: int = 3
    once: bool = False  # DXENG.COM's once=1: its session ends at the first GAMEEND it gets

    def url(self, port: int) -> str:
        if self.dosbox_listens:
            return f"{'socket' if self.transparent else 'dosbox'}://127.0.0.1:{port}"
        return f"dosbox-listen://127.0.0.1:{port}" + ("?transparent=1" if self.transparent else "")


class Dosbox:
    """DXENG.COM in a headless DOSBox; killed at the end whatever happens."""

    def __init__(self, tmp: Path, setup: Setup, port: int) -> None:
        role = setup.dos_role
        self.run = dosbox_engine.prepare(
            tmp / "c",
            dosbox_engine.serial_line(
                port, dosbox_listens=setup.dosbox_listens, transparent=setup.transparent
            ),
            dosbox_engine.engine_args(role=role, moves=setup.moves, idle=30, once=setup.once),
            cycles=setup.cycles,
        )
        self.proc = subprocess.Popen(
            self.run.argv, env=self.run.env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def dosbox_runs() -> Iterator[list[Dosbox]]:
    runs: list[Dosbox] = []
    yield runs
    for run in runs:
        run.close()


def play(tmp: Path, setup: Setup, runs: list[Dosbox], peer: list[str] | None = None, *,
         defaults: bool = False) -> Game:
    """One game: DOSBox and the bridge started in the order the mode needs, then the TCP
    side plays it to the end: the built-in engine, or ``peer`` (a script given the bridge's
    TCP address as its first argument).  ``defaults``: the bridge as it comes (else with
    ``--pass-stop``: one session, the DOS program ends with the TCP engine)."""
    port, pdn = free_port(), tmp / "pdn"
    bridge_args = ["bridge", setup.url(port), "--listen", "127.0.0.1:0", "--pdn", str(pdn),
                   "--state-dir", str(tmp / "state"), *(() if defaults else ("--pass-stop",))]
    if setup.dosbox_listens:
        runs.append(Dosbox(tmp, setup, port))
        wait_until(lambda: listening(port), timeout=20, what="DOSBox listening")
    with Cli(*bridge_args, "-vv") as bridge:
        if not setup.dosbox_listens:
            wait_until(lambda: listening(port), timeout=20, what="the bridge listening")
            runs.append(Dosbox(tmp, setup, port))
        ready = bridge.out.expect("bridge ready:", timeout=30)
        tcp = ready.rsplit(" ", 1)[1]
        role = "initiator" if setup.dos_role == "f" else "follower"
        if peer is None:
            argv = [
                "-m", "dxserial", "engine", f"tcp://{tcp}", "--role", role,
                "--moves", str(setup.moves), "--depth", "1", "--games", "1", "--seed", "1",
                "--colour", "Z",
            ]
        else:
            argv = [peer[0], tcp, *peer[1:]]
        result = subprocess.run(
            [sys.executable, *argv], capture_output=True, text=True, timeout=90
        )
        assert result.returncode == 0, result.stdout + result.stderr
        dos = runs[-1]
        dos.proc.wait(30)
        assert bridge.stop() == 0
        bridge_log = bridge.stderr()
    (record,) = sorted(pdn.glob("*.pdn"))
    return Game(dos.run.log_text(), bridge_log, result.stdout.splitlines(), record)


def assert_replays(pdn: Path) -> str:
    """``dxserial replay`` finds every move legal; returns its output."""
    result = run_in_process("replay", pdn, "--no-board")
    assert result.returncode == 0, result.stderr
    assert "!!" not in result.stdout
    assert result.stdout.rstrip().endswith("1 game, 0 violations")
    return result.stdout


def dos_lines(log: str, kind: str) -> list[str]:
    return [line.split(" ", 2)[2] for line in log.splitlines() if line.split(" ")[1:2] == [kind]]


def assert_clean_game(game: Game, moves: int, *, early_retry: bool = False) -> None:
    """A whole game: the limit reached, ended as a draw, no repeats, the DOS program gone.

    ``early_retry``: the DOS program may have sent its first S before the bridge was there
    (DOSBox drops bytes while no one is connected); if so, it must have started again from
    S after the protocol's 5 s, and nothing else may have gone wrong.
    """
    log = game.dos_log
    if early_retry:
        lines = log.splitlines()
        before = lines[1 : next(i for i, line in enumerate(lines) if " SEND " in line)]
        assert all(line.endswith(" RETRY no echo of 2 within 5 s") for line in before), log
        log = "\n".join(line for line in lines if line not in before)
    for bad in ("RETRY", "GIVEUP", "ILLEGAL", "NOISE", "IDLE", "OVERFLOW"):
        assert bad not in log, log
    assert len(dos_lines(log, "PLAY")) == moves, log
    assert any(line.startswith("E2") for line in dos_lines(log, "SEND") + dos_lines(log, "RECV"))
    assert log.rstrip().endswith("BYE done"), log
    assert any("game 1: 1-1 (draw: move limit reached)" in line for line in game.engine_out)
    assert "violations': 0" in game.bridge_log and "'duplicates': 0" in game.bridge_log
    assert_replays(game.pdn)


# ------------------------------------------------------------------ whole games


@needs_dos
def test_transparent_dosbox_as_server_dos_follower(
    tmp_path: Path, dos_env: Path, dosbox_runs: list[Dosbox]
) -> None:
    game = play(tmp_path, Setup(transparent=True, dosbox_listens=True, dos_role="f"), dosbox_runs)
    assert_clean_game(game, 3)
    # socket://: raw bytes both ways, no line states, nothing taken for noise
    assert "DOSBox lines now" not in game.bridge_log and "'invalid': 0" in game.bridge_log


@needs_dos
def test_transparent_dosbox_as_client_dos_initiator(
    tmp_path: Path, dos_env: Path, dosbox_runs: list[Dosbox]
) -> None:
    setup = Setup(transparent=True, dosbox_listens=False, dos_role="i", moves=4)
    game = play(tmp_path, setup, dosbox_runs)
    assert_clean_game(game, 4)
    (request,) = [m for m in dos_lines(game.dos_log, "SEND") if m.startswith("R")]
    assert request.endswith("Z000004A")  # its own GAMEREQ: follower Black, 4 moves


@needs_dos
@pytest.mark.parametrize(
    ("transparent", "dosbox_listens"),
    [(False, True), (False, False), (True, True)],
    ids=["dosbox", "dosbox-listen", "socket"],
)
def test_a_dos_program_that_quits_at_its_first_gameend_plays_through_a_fresh_bridge(
    tmp_path: Path, dos_env: Path, dosbox_runs: list[Dosbox], transparent: bool,
    dosbox_listens: bool,
) -> None:
    """Issue 29: the bridge used to send a GAMEEND before the first GAMEREQ of every run, so
    a DOS program that ends its session at its first GAMEEND never played."""
    setup = Setup(transparent=transparent, dosbox_listens=dosbox_listens, dos_role="f",
                  once=True)
    game = play(tmp_path, setup, dosbox_runs, defaults=True)
    assert_clean_game(game, 3)
    assert dos_lines(game.dos_log, "RECV")[0].startswith("R01")  # the GAMEREQ came first
    assert dos_lines(game.dos_log, "ONCE") == ["the game is over: one game a session"]
    assert "ending game left open" not in game.bridge_log


@needs_dos
def test_escaped_dosbox_as_client_dos_follower_sees_and_shows_dtr_rts(
    tmp_path: Path, dos_env: Path, dosbox_runs: list[Dosbox]
) -> None:
    game = play(tmp_path, Setup(transparent=False, dosbox_listens=False, dos_role="f"), dosbox_runs)
    assert_clean_game(game, 3)
    # DOSBox carries the DOS program's MCR: DTR/RTS on once it programs the UART, off at exit
    assert "DOSBox lines now RTS on, DTR on" in game.bridge_log
    assert "DOSBox lines now RTS off, DTR off" in game.bridge_log


@needs_dos
def test_escaped_dosbox_as_server_dos_initiator_on_a_286_speed_cpu(
    tmp_path: Path, dos_env: Path, dosbox_runs: list[Dosbox]
) -> None:
    setup = Setup(transparent=False, dosbox_listens=True, dos_role="i", cycles=3000)
    game = play(tmp_path, setup, dosbox_runs)
    assert_clean_game(game, 3, early_retry=True)
    assert "DOSBox lines now RTS on, DTR on" in game.bridge_log


# ------------------------------------------------------------------ a scripted peer

# White (the DOS engine) to move.  Its lowest-numbered man (9) could take one piece, but
# the king on 32 takes five, so the majority rule leaves only the king's two captures.
POSITION = "eeeeeezeweeezeeeeeeezweeeezzeezWezeeeeeeeeeeeeeeee"
MAJORITY = {(32, 30), (32, 25)}

PEER = r"""
import socket, sys
from dxserial.draughts import Position
from dxserial.protocol.dxp_moves import match_dxp_move, to_dxp_move
from dxserial.protocol.messages import Colour, encode, parse
host, port = sys.argv[1].rsplit(":", 1)
sock = socket.create_connection((host, int(port)), timeout=30)
buf = b""
def send(text):
    sock.sendall(text.encode() + b"\0")
def recv():
    global buf
    while b"\0" not in buf:
        chunk = sock.recv(4096)
        if not chunk:
            sys.exit("bridge closed")
        buf += chunk
    msg, buf = buf.split(b"\0", 1)
    print("got", msg.decode(), flush=True)
    return msg.decode()
send("R01" + "scripted peer".ljust(32) + "W000000B" + "W" + sys.argv[2])
assert recv().endswith("0")
position = Position.from_dxp(sys.argv[2], Colour.WHITE)
position = position.play(match_dxp_move(position, parse(recv().encode())))
send("Chello from the test")
send("B001W")
assert recv() == "K1"
move = position.legal_moves()[0]
send(encode(to_dxp_move(move)).decode())
position = position.play(move)
position = position.play(match_dxp_move(position, parse(recv().encode())))
send("E01")
assert recv() == "E01"
"""


@needs_dos
def test_dos_engine_answers_chat_backreq_form_b_and_plays_the_majority_capture(
    tmp_path: Path, dos_env: Path, dosbox_runs: list[Dosbox]
) -> None:
    script = tmp_path / "peer.py"
    script.write_text(PEER)
    setup = Setup(transparent=False, dosbox_listens=True, dos_role="f", moves=0)
    game = play(tmp_path, setup, dosbox_runs, peer=[str(script), POSITION])
    got = [line.removeprefix("got ") for line in game.engine_out]
    assert got[0].startswith("ADXENG") and got[2] == "K1"
    first = parse(got[1].encode())
    assert isinstance(first, Move) and (first.from_square, first.to_square) in MAJORITY
    assert len(first.captured) == 5
    assert got[-1] == "E01"  # our GAMEEND with stop code 1 answered with stop code 1
    assert dos_lines(game.dos_log, "CHAT") == ["hello from the test"]
    assert game.dos_log.rstrip().endswith("BYE done")
    assert_replays(game.pdn)


# ------------------------------------------------------------------ the move generator

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a host C compiler (cc)")


@needs_cc
def test_dos_move_generator_agrees_with_dxserials_on_random_positions(tmp_path: Path) -> None:
    """The C generator, built for the host, against the Python one: every legal move."""
    exe = tmp_path / "hostcheck"
    subprocess.run(
        ["cc", "-w", "-o", str(exe), str(ROOT / "dos" / "hostcheck.c")], check=True, timeout=60
    )
    rng = random.Random(5)
    lines, expected = [], []
    for _ in range(1500):
        squares = ["e"] * 50
        for sq in rng.sample(range(50), rng.randint(2, 20)):
            squares[sq] = rng.choice("wwwWzzzZ")
        squares = ["W" if c == "w" and i < 5 else "Z" if c == "z" and i >= 45 else c
                   for i, c in enumerate(squares)]
        turn = rng.choice("WZ")
        pos = Position.from_dxp("".join(squares), Colour(turn))
        lines.append(turn + "".join(squares))
        expected.append({(m.from_square, m.to_square, m.captured) for m in pos.legal_moves()})
    out = subprocess.run(
        [str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60
    ).stdout.splitlines()
    assert len(out) == len(lines)
    captures = 0
    for line, want, got_line in zip(lines, expected, out, strict=True):
        got = set()
        for item in [] if got_line == "-" else got_line.split():
            move, _, caps = item.partition(":")
            frm, to = move.split("-")
            got.add((int(frm), int(to), frozenset(int(c) for c in caps.split(",") if c)))
        assert got == want, line
        captures += any(m[2] for m in want)
    assert captures > 500  # the sample exercises captures, kings' included


# ------------------------------------------------------------------ the demo


@needs_dos
def test_demo_dos_plays_dxeng_in_dosbox_and_shows_its_log(tmp_path: Path, dos_env: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dxserial", "demo", "--dos", "--moves", "3", "--no-board",
         "--pdn", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "DOSBox: C:\\DXENG.COM on COM1" in out
    assert "DOS engine accepts as 'DXENG DOS test engine'" in out
    assert "the DOS engine's own log" in out and "BYE done" in out
    assert "result: game 1: 1-1 (draw: move limit reached)" in out
    assert "!!" not in out
    (pdn,) = list(tmp_path.glob("*.pdn"))
    assert_replays(pdn)


def test_demo_dos_without_dosbox_says_how_to_install_it(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # an empty PATH: no dosbox on it
    result = subprocess.run(
        [sys.executable, "-m", "dxserial", "demo", "--dos"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"dxserial: error: dosbox is not installed; install it with: {INSTALL}"
    )


@pytest.mark.skipif(shutil.which("dosbox") is None, reason=f"needs dosbox ({INSTALL})")
def test_demo_dos_without_the_built_program_says_how_to_build_it(tmp_path: Path) -> None:
    missing = tmp_path / "DXENG.COM"
    env = {**os.environ, dosbox_engine.ENGINE_ENV: str(missing)}
    result = subprocess.run(
        [sys.executable, "-m", "dxserial", "demo", "--dos"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"dxserial: error: {dosbox_engine.ENGINE_ENV}={missing}: no such file "
        "(build it with dos/build.sh)"
    )


@pytest.mark.skipif(shutil.which("bcc") is None, reason=f"needs bcc ({INSTALL})")
def test_an_installed_dxserial_finds_what_build_sh_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38 point 1: after a plain `pip install .` the package has no checkout beside it;
    `dos/build.sh` (no argument, as the README runs it) also installs DXENG.COM in the
    user's data folder, where the demo looks next."""
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "dos", checkout / "dos", ignore=shutil.ignore_patterns("build"))
    data = tmp_path / "data"
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    subprocess.run(["sh", str(checkout / "dos" / "build.sh")], check=True, timeout=60, env=env)
    monkeypatch.delenv(dosbox_engine.ENGINE_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setattr(dosbox_engine, "checkout_engine", lambda: tmp_path / "site" / "no.COM")
    found = dosbox_engine.find_engine()
    assert found == data / "dxserial" / "DXENG.COM"
    assert found.read_bytes() == (checkout / "dos" / "build" / "DXENG.COM").read_bytes()


def test_an_engine_found_nowhere_names_every_place_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(dosbox_engine.ENGINE_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    site = tmp_path / "site" / "dos" / "build" / "DXENG.COM"
    monkeypatch.setattr(dosbox_engine, "checkout_engine", lambda: site)
    with pytest.raises(dosbox_engine.DosSetupError) as caught:
        dosbox_engine.find_engine()
    assert str(caught.value).startswith(
        f"the DOS engine is not built (no {site}, no {tmp_path}/data/dxserial/DXENG.COM): "
        "run dos/build.sh in the dxserial checkout"
    )
