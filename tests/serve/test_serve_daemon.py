"""``dxserial serve`` in process: a rig of many lines on in-process cables, a built-in
engine on both ends of every line, all on one event loop.

    EngineRunner (follower) == cable end b == end a -- Daemon line -- TCP -- EngineRunner

Every line plays its game at once; each PDN replays and each line's counts add up.  One
line's cable is unplugged and replugged, one line is removed and one added by a reload,
while the others play on untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers import until

from dxserial.engine.player import Player, PlayerConfig
from dxserial.engine.runner import EngineRunner, RunResult
from dxserial.game.replay import load_games
from dxserial.protocol.links import NulModemSettings
from dxserial.protocol.session import Role
from dxserial.serve.rig import parse_rig
from dxserial.serve.runner import Daemon
from dxserial.serve.status import read_status, serve_status
from dxserial.sim.memory import Cable, cable
from dxserial.testing.rig import read_counts
from dxserial.transports.base import Port
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions, parse_engine_endpoint

pytestmark = pytest.mark.e2e

LINES = 16
#: The NULMODEM echo waits far longer than an in-process cable needs: on a machine whose CPUs
#: are busy a 0.5 s wait ran out, and the handshake's retries are warnings, which these tests
#: count to show that one line's trouble never reaches another.
ECHO_TIMEOUT = 5.0
ECHO = NulModemSettings(timeout=ECHO_TIMEOUT, max_attempts=1000)


class CableEnd(EngineEndpoint):
    """The serial engine's endpoint: end b of an in-process cable (opened again on demand)."""

    def __init__(self, made: Cable) -> None:
        super().__init__(parse_engine_endpoint(f"memory://{made.name}"),
                         LinkOptions(link="nulmodem", nulmodem=ECHO))
        self.cable = made

    async def open(self, timeout: float | None = None) -> Port:
        return self.cable.open("b")


def rig_text(names: list[str], directory: Path, **extra: str) -> str:
    out = ['[defaults]', f'echo_timeout = {ECHO_TIMEOUT}', 'max_attempts = 1000', 'serial_grace = 30',
           f'pdn = "{directory}/games/{{line}}"', f'trace = "{directory}/{{line}}.jsonl"']
    out += [f"{key} = {value}" for key, value in extra.items()]
    for name in names:
        out += [f"[lines.{name}]", f'port = "memory://{name}"', 'listen = "127.0.0.1:0"']
    return "\n".join(out) + "\n"


@dataclass
class Played:
    """One line's two engines and what they played."""

    name: str
    serial: EngineRunner
    serial_task: asyncio.Task[RunResult]
    results: list[RunResult] = field(default_factory=list)


@dataclass
class Lab:
    daemon: Daemon
    directory: Path
    cables: dict[str, Cable]
    serial: dict[str, Played] = field(default_factory=dict)
    records: list[logging.LogRecord] = field(default_factory=list)

    def address(self, name: str) -> int:
        bridge = self.daemon.lines[name].bridge
        assert bridge is not None and bridge.listen_address is not None
        return bridge.listen_address[1]

    def start_serial(self, name: str) -> None:
        player = Player(PlayerConfig(role=Role.FOLLOWER, depth=1, seed=len(self.serial) + 1,
                                     name=f"serial-{name}"))
        runner = EngineRunner(player, CableEnd(self.cables[name]), on_line=lambda _l: None)
        self.serial[name] = Played(name, runner, asyncio.create_task(runner.run()))

    async def play(self, name: str, *, moves: int = 8, seed: int = 1) -> RunResult:
        """One game on line ``name``: a built-in initiator connects to its TCP side."""
        await until(lambda: self.daemon.lines[name].state == "running")
        player = Player(PlayerConfig(role=Role.INITIATOR, depth=1, seed=seed, games=1,
                                     moves=moves, name=f"tcp-{name}"))
        runner = EngineRunner(
            player, EngineEndpoint(parse_engine_endpoint(f"tcp://127.0.0.1:{self.address(name)}")),
            on_line=lambda _l: None,
        )
        return await asyncio.wait_for(runner.run(), 120)

    def log(self, name: str | None = None) -> list[str]:
        return [r.getMessage() for r in self.records
                if name is None or getattr(r, "line", None) == name]


class _Keep(logging.Handler):
    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


@contextlib.contextmanager
def cables(names: list[str]) -> Iterator[dict[str, Cable]]:
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(cable(name)) for name in names}


@contextlib.asynccontextmanager
async def lab(directory: Path, names: list[str], spare: list[str] = ()) -> AsyncIterator[Lab]:  # type: ignore[assignment]
    """A daemon serving ``names`` (cables for ``spare`` exist too, for a reload to add)."""
    path = directory / "rig.toml"
    path.write_text(rig_text(names, directory))
    records: list[logging.LogRecord] = []
    handler = _Keep(records)
    root = logging.getLogger("dxserial")
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        with cables([*names, *spare]) as made:
            daemon = Daemon(parse_rig(path.read_text(), path), retry=0.05, restart_pause=0.1)
            daemon.start()
            rig = Lab(daemon, directory, made, records=records)
            for name in [*names, *spare]:
                rig.start_serial(name)
            try:
                yield rig
            finally:
                daemon.stop()
                await asyncio.wait_for(daemon.wait(), 30)
                for played in rig.serial.values():
                    played.serial.stop()
                tasks = [p.serial_task for p in rig.serial.values()]
                # A removed line's engine would wait 10 s to deliver to a cable nobody reads.
                _, waiting = await asyncio.wait(tasks, timeout=2)
                for task in waiting:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def games_of(directory: Path, name: str) -> list[Any]:
    files = sorted((directory / "games" / name).glob("*.pdn"))
    return [game for path in files for game in load_games(path, False)[0]]


def test_sixteen_lines_play_at_once_every_pdn_replays_and_counts_add_up(tmp_path: Path) -> None:
    names = [f"line{i:02d}" for i in range(LINES)]

    async def main() -> tuple[dict[str, Any], dict[str, list[str]]]:
        async with lab(tmp_path, names) as rig:
            results = await asyncio.gather(*(rig.play(n, seed=i + 1)
                                             for i, n in enumerate(names)))
            assert all(r.code == 0 for r in results), results
            await until(lambda: all(len(games_of(tmp_path, n)) == 1 for n in names))
        return rig.daemon.status(), {name: rig.log(name) for name in names}

    status, log = asyncio.run(main())
    rows = {row["line"]: row for row in status["lines"]}
    assert sorted(rows) == names
    for name in names:
        games = games_of(tmp_path, name)
        assert len(games) == 1 and games[0].violations == 0 and games[0].result, name
        counts = rows[name]["counts"]
        # Every message queued was delivered, and the bridge's own (its check before the
        # GAMEREQ, stop code 0 for the serial engine) too: nothing lost, invalid or broken.
        assert counts["serial->tcp"] > 0 and counts["tcp->serial"] > 0, name
        assert counts["delivered"] == counts["queued"] + counts["sent-by-bridge"], counts
        assert counts["lost"] == counts["invalid"] == counts["violations"] == 0, counts
        # The status says what the line's own closing line says.
        closing = [text for text in log[name] if text.startswith("bridge stopped: ")]
        assert len(closing) == 1 and read_counts(closing[0]) == counts, (closing, counts)
        assert rows[name]["games"] == 1 and rows[name]["warnings"] == 0, rows[name]
        engines = " ".join(rows[name]["engines"])
        assert f"serial-{name}" in engines and f"tcp-{name}" in engines
    # Each line traced to its own file, and only its own games.
    for name in names:
        trace = (tmp_path / f"{name}.jsonl").read_text()
        assert f"tcp-{name}" in trace and all(f"tcp-{o} " not in trace for o in names
                                               if o != name)


def test_unplug_replug_and_a_reload_leave_the_other_lines_playing(tmp_path: Path) -> None:
    names = [f"line{i:02d}" for i in range(LINES)]
    unplugged, removed, added = names[0], names[1], "line16"

    async def main() -> None:
        async with lab(tmp_path, names, spare=[added]) as rig:
            daemon = rig.daemon
            games = {n: asyncio.create_task(rig.play(n, moves=30, seed=i + 1))
                     for i, n in enumerate(names)}
            await until(lambda: all(daemon.lines[n].moves >= 4 for n in names))
            bridges = {n: daemon.lines[n].bridge for n in names}
            # One adapter out and back in: the line's bridge reopens it, its game goes on.
            rig.cables[unplugged].unplug()
            await until(lambda: daemon.lines[unplugged].status()["state"] == "port lost")
            rig.cables[unplugged].replug()
            await until(lambda: daemon.lines[unplugged].status()["state"] == "running")
            # The file changes: one line gone, one new; SIGHUP's reload follows it.
            path = tmp_path / "rig.toml"
            path.write_text(rig_text([n for n in names if n != removed] + [added], tmp_path))
            summary = await daemon.reload()
            assert summary.startswith(f"reloaded {path}: added {added}; removed {removed}")
            assert f"{LINES - 1} line(s) untouched" in summary
            assert removed not in daemon.lines
            new_game = await rig.play(added, seed=99)
            results = {n: await task for n, task in games.items()}
            # The removed line's bridge hung up on its TCP engine, as at any stop.
            assert results[removed].message == "link lost: the peer closed the connection"
            for name in names:
                if name == removed:
                    continue
                assert results[name].code == 0, (name, results[name])
                assert daemon.lines[name].bridge is bridges[name], name  # never restarted
                assert daemon.lines[name].starts == 1
            assert new_game.code == 0
            await until(lambda: all(len(games_of(tmp_path, n)) >= 1
                                    for n in [*names, added]))
            text = "\n".join(rig.log(unplugged))
            assert "lost" in text and f"serial port memory://{unplugged} is back" in text
            for name in names:  # no line but the unplugged one said a word of warning
                if name not in (unplugged, removed):
                    assert daemon.lines[name].status()["warnings"] == 0, rig.log(name)

    asyncio.run(main())
    for name in [f"line{i:02d}" for i in range(2, LINES)] + [added, unplugged]:
        found = games_of(tmp_path, name)
        assert len(found) == 1 and found[0].violations == 0 and found[0].result, name


def test_a_line_whose_port_is_missing_waits_for_it_and_the_others_run(tmp_path: Path) -> None:
    async def main() -> None:
        async with lab(tmp_path, ["here"]) as rig:
            path = tmp_path / "rig.toml"
            path.write_text(rig_text(["here", "absent"], tmp_path))
            await rig.daemon.reload()
            line = rig.daemon.lines["absent"]
            await until(lambda: line.state == "waiting")
            assert "no in-process cable" in line.detail
            result = await rig.play("here")
            assert result.code == 0
            await until(lambda: line.starts >= 1)
            # Said once, however many attempts were made.
            assert sum("waiting:" in t for t in rig.log("absent")) == 1
            with cable("absent") as made:  # the adapter is plugged in: the line starts
                rig.cables["absent"] = made
                await until(lambda: line.state == "running")
                rig.start_serial("absent")
                assert (await rig.play("absent")).code == 0
                rig.serial["absent"].serial.stop()
                await rig.serial.pop("absent").serial_task
                rig.daemon.lines["absent"].stop()
                await rig.daemon.lines["absent"].wait()

    asyncio.run(main())


def test_a_reload_of_a_broken_file_changes_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        async with lab(tmp_path, ["one", "two"]) as rig:
            await until(lambda: all(r.state == "running" for r in rig.daemon.lines.values()))
            before = {n: r.bridge for n, r in rig.daemon.lines.items()}
            (tmp_path / "rig.toml").write_text(
                rig_text(["one", "two"], tmp_path).replace("listen =", "lisen =", 1))
            summary = await rig.daemon.reload()
            assert summary.startswith("reload refused, every line runs on as it was: ")
            assert "unknown key 'lisen' (did you mean 'listen'?" in summary
            assert {n: r.bridge for n, r in rig.daemon.lines.items()} == before

    asyncio.run(main())


def test_the_status_socket_answers_with_every_line(tmp_path: Path) -> None:
    async def main() -> dict[str, Any]:
        async with lab(tmp_path, ["one", "two"]) as rig:
            await until(lambda: all(r.state == "running" for r in rig.daemon.lines.values()))
            where = tmp_path / "run" / "status.sock"
            server = await serve_status(where, rig.daemon.status)
            try:
                return await asyncio.to_thread(read_status, where)
            finally:
                server.close()

    status = asyncio.run(main())
    assert [row["line"] for row in status["lines"]] == ["one", "two"]
    assert all(row["state"] == "running" and row["listen"].startswith("127.0.0.1:")
               for row in status["lines"])


def test_the_web_page_shows_every_lines_games_and_a_row_per_line(tmp_path: Path) -> None:
    pytest.importorskip("aiohttp", reason="the web view needs aiohttp (pip install dxserial[web])")
    import json
    import urllib.request

    from dxserial.live.web import start_web
    from dxserial.serve.page import RigPage

    async def main() -> dict[str, Any]:
        names = ["one", "two"]
        path = tmp_path / "rig.toml"
        path.write_text(rig_text(names, tmp_path))
        view = await start_web("127.0.0.1:0", [], lambda _line: None, "dxserial serve test")
        page = RigPage(view)
        try:
            with cables(names) as made:
                daemon = Daemon(parse_rig(path.read_text(), path), watch=page.publish)
                daemon.start()
                rig = Lab(daemon, tmp_path, made)
                for name in names:
                    rig.start_serial(name)
                results = await asyncio.gather(*(rig.play(n, seed=i + 3)
                                                 for i, n in enumerate(names)))
                assert all(r.code == 0 for r in results)
                page.show_lines(daemon.status())
                url = f"{view.address}state"
                state: dict[str, Any] = await asyncio.to_thread(
                    lambda: json.load(urllib.request.urlopen(url, timeout=10)))
                daemon.stop()
                await daemon.wait()
                for played in rig.serial.values():
                    played.serial.stop()
                await asyncio.gather(*(p.serial_task for p in rig.serial.values()))
            return state
        finally:
            await view.close()

    state = asyncio.run(main())
    whites = sorted(game["white"].split("]")[0] + "]" for game in state["games"])
    assert whites == ["[one]", "[two]"]
    assert sorted(game["number"] for game in state["games"]) == [1, 2]  # unique across lines
    table = state["table"]
    assert state["heading"] == "Lines" and table[0] == "2 line(s), 2 running"
    assert table[1].split() == [
        "line", "port", "state", "tcp", "engines", "games", "messages", "warnings"]
    # Columns apart by two spaces; a cell's own spaces are no-break spaces (one cell).
    cells = [[c.replace("\u00a0", " ") for c in re.split(r" {2,}", row.strip())]
             for row in table[2:]]
    rows = {row[0]: row for row in cells}
    assert all("serial-" in row[4] and "tcp-" in row[4] for row in cells)
    assert sorted(rows) == ["one", "two"] and all(row[2] == "running" for row in rows.values())
    assert all(row[5] == "1" for row in rows.values())  # a game each


def test_an_adapter_back_under_another_name_is_found_by_its_serial_number(
    tmp_path: Path,
) -> None:
    """No udev link: ttyUSB0 comes back as ttyUSB1; the line follows its serial number and
    its bridge reopens the new path, its TCP session kept."""
    where = {"A1B2": "memory://old"}
    path = tmp_path / "rig.toml"
    path.write_text('[lines.usb]\nserial_number = "A1B2"\nlisten = "127.0.0.1:0"\n'
                    "echo_timeout = 0.5\nmax_attempts = 1000\n")

    records: list[logging.LogRecord] = []

    async def main() -> None:
        with cables(["old", "new"]) as made:
            daemon = Daemon(parse_rig(path.read_text(), path), retry=0.05,
                            finder=where.get)
            daemon.start()
            rig = Lab(daemon, tmp_path, {"usb": made["new"]}, records=records)
            line = daemon.lines["usb"]
            try:
                await until(lambda: line.state == "running")
                assert line.status()["device"] == "memory://old"
                bridge = line.bridge
                with socket.create_connection(("127.0.0.1", rig.address("usb"))):
                    await until(lambda: line.status()["peer"] is not None)
                    peer = line.status()["peer"]
                    made["old"].unplug()
                    await until(lambda: line.status()["state"] == "port lost")
                    where["A1B2"] = "memory://new"
                    await until(lambda: line.status()["state"] == "running")
                    row = line.status()
                    assert (row["device"], row["peer"], row["starts"]) == (
                        "memory://new", peer, 1)
                    assert line.bridge is bridge
                await until(lambda: line.status()["peer"] is None)
                rig.start_serial("usb")
                assert (await rig.play("usb")).code == 0
            finally:
                daemon.stop()
                await daemon.wait()
                for played in rig.serial.values():
                    played.serial.stop()
                    await played.serial_task

    handler = _Keep(records)
    logging.getLogger("dxserial").addHandler(handler)
    try:
        asyncio.run(main())
    finally:
        logging.getLogger("dxserial").removeHandler(handler)
    said = [r.getMessage() for r in records if getattr(r, "line", None) == "usb"]
    assert any("A1B2 is back as memory://new (was memory://old)" in t for t in said), said


def test_a_flood_of_garbage_on_one_line_leaves_the_others_game_alone(tmp_path: Path) -> None:
    async def main() -> None:
        async with lab(tmp_path, ["calm", "flooded"]) as rig:
            await until(lambda: all(r.state == "running" for r in rig.daemon.lines.values()))
            _reader, writer = await asyncio.open_connection("127.0.0.1",
                                                           rig.address("flooded"))
            rng = random.Random(7)

            async def flood() -> None:
                for _ in range(200):  # 200 x 1 KiB of random bytes, frames of nonsense
                    writer.write(bytes(rng.randrange(256) for _ in range(1024)))
                    await writer.drain()
                    await asyncio.sleep(0)

            flooding = asyncio.create_task(flood())
            result = await rig.play("calm", moves=15)
            await flooding
            writer.close()
            assert result.code == 0
            calm, flooded = (rig.daemon.lines[n].status() for n in ("calm", "flooded"))
            assert calm["warnings"] == 0 and calm["games"] == 1, calm
            assert flooded["warnings"] > 0 and flooded["state"] == "running", flooded
            assert flooded["counts"]["invalid"] > 0

    asyncio.run(main())


def test_a_changed_line_restarts_with_its_new_settings_and_only_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with lab(tmp_path, ["same", "changed"]) as rig:
            daemon = rig.daemon
            await until(lambda: all(r.state == "running" for r in daemon.lines.values()))
            kept = daemon.lines["same"]
            before = daemon.lines["changed"]
            path = tmp_path / "rig.toml"
            path.write_text(rig_text(["same", "changed"], tmp_path).replace(
                'port = "memory://changed"',
                'port = "memory://changed"\nreferee = "strict"\npeer_grace = 9'))
            summary = await daemon.reload()
            assert "changed changed; 1 line(s) untouched" in summary
            assert daemon.lines["same"] is kept and kept.starts == 1
            after = daemon.lines["changed"]
            assert after is not before and before.state == "stopped"
            await until(lambda: after.state == "running")
            assert after.bridge is not None
            assert (after.bridge.cfg.referee, after.bridge.cfg.peer_grace) == ("strict", 9.0)
            assert (await rig.play("changed")).code == 0

    asyncio.run(main())


@pytest.mark.e2e
@pytest.mark.parametrize(("since", "why"), [
    ("1e400", "since inf is not a time"), ("NaN", "NaN is not a number a record holds")])
def test_a_bad_state_file_is_one_warning_and_the_line_plays(
    tmp_path: Path, since: str, why: str
) -> None:
    """Was: an OverflowError (1e400) or ValueError (NaN) traceback every 5 s, for ever."""
    import json
    import math
    import os

    from dxserial.bridge.statefile import state_dir, state_file

    path = state_file(state_dir(None, os.environ).path, "memory://bad")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{{"version": 1, "port": "memory://bad", "game": "open", "since": {since}}}')

    async def main() -> Lab:
        async with lab(tmp_path, ["bad"]) as rig:
            result = await rig.play("bad", moves=4)
            assert result.code == 0
            assert rig.daemon.lines["bad"].starts == 1  # no restart
            return rig

    rig = asyncio.run(main())
    warned = [r.getMessage() for r in rig.records if r.levelno >= logging.WARNING]
    assert [w for w in warned if str(path) in w] == [
        f"state file {path}: not a dxserial state record ({why}): taken as no game open; it is "
        "replaced when the next game starts"]
    assert not [r for r in rig.records if r.exc_info], "a traceback was logged"
    # Replaced by the bridge: its own record, not the bad one left as it was.
    replaced = json.loads(path.read_text())
    assert replaced["game"] in ("open", "closed") and math.isfinite(replaced["since"]), replaced
