"""``dxserial hub`` over TCP: a go whose game cannot start (the engine never answers the
stopped game's GAMEEND) starts over on a fresh connection and gets the engine's move."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from dxserial.draughts import Position
from dxserial.protocol import hub
from dxserial.protocol.dxp_moves import to_dxp_move
from dxserial.protocol.messages import (
    AcceptCode,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    parse,
)

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

START = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"


class Engine(threading.Thread):
    """A DXP follower on TCP: its first session hangs in a search for ever (it accepts the
    game and then says nothing, not even to a GAMEEND); its second plays at once."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(30)
        self.port = self.server.getsockname()[1]
        self.sessions: list[list[str]] = []
        self.played: list[str] = []

    def run(self) -> None:
        for number in (1, 2):
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(30)
                self._session(conn, hung=number == 1)

    def _session(self, conn: socket.socket, *, hung: bool) -> None:
        seen: list[str] = []
        self.sessions.append(seen)
        buffer = b""
        while True:
            try:
                chunk = conn.recv(4096)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, _, buffer = buffer.partition(b"\0")
                msg = parse(raw)
                seen.append(msg.NAME)
                for answer in self._answer(msg, hung):
                    conn.sendall(answer.wire + b"\0")

    def _answer(self, msg: Message, hung: bool) -> list[Message]:
        if isinstance(msg, GameRequest):
            accept = GameAccept(name="hangs-once", code=AcceptCode.ACCEPT)
            if hung:
                return [accept]
            assert msg.position is not None and msg.to_move is not None
            move = Position.from_dxp(msg.position, msg.to_move).legal_moves()[0]
            self.played.append(hub.format_hub_move(move))
            return [accept, to_dxp_move(move)]
        if isinstance(msg, GameEnd) and not hung:
            return [GameEnd(stop=msg.stop)]
        return []


@pytest.fixture
def engine() -> Iterator[Engine]:
    server = Engine()
    server.start()
    yield server
    server.server.close()


def test_a_go_after_an_unanswered_gameend_is_played_on_a_fresh_connection(
    engine: Engine,
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dxserial", "hub", f"tcp://127.0.0.1:{engine.port}", "-v",
         "--grace", "0.3", "--answer-timeout", "0.5"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def say(*lines: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write("".join(f"{line}\n" for line in lines))
        proc.stdin.flush()

    def done() -> tuple[str, list[str]]:
        assert proc.stdout is not None
        seen: list[str] = []
        while True:
            line = proc.stdout.readline()
            assert line, f"hub ended: {seen}"
            if line.startswith("done"):
                return line.strip(), seen
            seen.append(line.strip())

    try:
        # 'level time=2': the engine is held to 2 s (the client's clock), so the stopped
        # game's GAMEEND is due 2 + 0.3 + 0.5 s after the GAMEACC at most.
        say(f"pos pos={START}", "level time=2", "go think")
        say("stop")
        first, notes = done()
        assert any("dxserial played" in line for line in notes)  # stopped: named as ours
        move = first.removeprefix("done move=")
        say(f'pos pos={START} moves="{move} 19-23"', "level time=2", "go think")
        second, notes = done()
        assert not any("dxserial played" in line for line in notes), notes
        say("quit")
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=15)
    assert len(engine.sessions) == 2, err
    assert engine.sessions[1][0] == "GAMEREQ"  # the fresh connection: a new game at once
    assert "waits up to" in err and "starting over on a fresh connection" in err, err
    assert "a fresh connection to the engine" in err, err
    assert second == f"done move={engine.played[0]}"  # the fresh session's move
