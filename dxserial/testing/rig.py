"""A bridge rig as a user runs it: ``dxserial vpair`` (the cable) and ``dxserial bridge``
on its end A, each a real process; an engine goes on end B."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dxserial.testing.process import Cli, LineReader


def read_counts(log: str) -> dict[str, int]:
    """The counts of the last :func:`counts_line` in ``log`` (empty if there is none)."""
    found = re.findall(r"bridge stopped: ((?:[a-z>-]+ \d+(?:, )?)+)$", log, re.MULTILINE)
    if not found:
        return {}
    return {key: int(value) for key, value in (p.rsplit(" ", 1) for p in found[-1].split(", "))}


class Vpair(Cli):
    """``dxserial vpair A B ARGS`` (ends ``{name}A`` / ``{name}B`` in ``directory``).

    Commands go to its stdin (:meth:`command`); its log goes to ``directory/vpair.log``.
    """

    def __init__(self, directory: Path, *args: str, name: str = "tty") -> None:
        self.path_a = str(directory / f"{name}A")
        self.path_b = str(directory / f"{name}B")
        super().__init__("vpair", self.path_a, self.path_b, *args,
                         stderr_path=directory / "vpair.log")
        try:
            self.out.expect("vpair ready", timeout=20)
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def command(self, line: str, answer: str) -> str:
        """Send a stdin command and wait for the line that answers it."""
        self.send(line)
        return self.out.expect(answer, timeout=20)

    def unplug(self, end: str = "a") -> None:
        self.command(f"unplug {end}", f"unplugged {end}")

    def replug(self, end: str = "a") -> None:
        self.command(f"replug {end}", f"replugged {end}")

    def stats(self) -> dict[str, dict[str, int]]:
        data: dict[str, dict[str, int]] = json.loads(
            self.command("stats", "stats ").removeprefix("stats ")
        )
        return data


class Bridge(Cli):
    """``dxserial bridge SERIAL --listen 127.0.0.1:0 ARGS`` on a free port, tracing to
    ``directory/trace.jsonl`` unless ``trace=False``; its log is ``directory/bridge.log``."""

    def __init__(
        self, directory: Path, serial: str, *args: str, trace: bool = True,
        serial_check: bool = False,
    ) -> None:
        """``serial_check``: keep the bridge's check of a serial engine's state (a scripted
        serial peer is not an engine and would not answer it; real engines do)."""
        if not serial_check:
            args = ("--no-serial-check", *args)
        elif "--state-dir" not in args:
            args = ("--state-dir", str(directory.parent / "state"), *args)  # shared by runs
        self.log_path = directory / "bridge.log"
        self.trace_path = directory / "trace.jsonl"
        self.counts: dict[str, int] = {}
        tracing = ("--trace", str(self.trace_path)) if trace else ()
        super().__init__("bridge", serial, "--listen", "127.0.0.1:0", *tracing, *args,
                         stderr_path=self.log_path)
        try:
            ready = self.out.expect("bridge ready", timeout=20)
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", ready)
            assert match, f"unexpected ready line: {ready}"
        except BaseException as exc:
            self.__exit__(None, None, None)  # never leave a bridge running behind a failure
            if isinstance(exc, AssertionError):
                raise AssertionError(f"{exc}; bridge log: {self.log()[-2000:]}") from None
            raise
        self.port = int(match.group(1))

    def log(self) -> str:
        """Its log so far (empty if a test removed the file)."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def shutdown(self) -> dict[str, int]:
        """Stop it (SIGTERM) and return its final counters (from its last log line)."""
        self.close()
        self.counts = read_counts(self.log())
        return self.counts


@dataclass
class Rig:
    """A vpair and a bridge on its end A; an engine belongs on ``peer_path`` (end B)."""

    directory: Path
    vpair: Vpair
    bridge: Bridge

    @property
    def serial_path(self) -> str:
        return self.vpair.path_a

    @property
    def peer_path(self) -> str:
        return self.vpair.path_b

    @property
    def port(self) -> int:
        return self.bridge.port

    @property
    def out(self) -> LineReader:
        return self.bridge.out

    @property
    def log_path(self) -> Path:
        return self.bridge.log_path

    @property
    def trace_path(self) -> Path:
        return self.bridge.trace_path

    def log(self) -> str:
        return self.bridge.log()

    def trace(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.trace_path.read_text().splitlines()]

    def close(self) -> dict[str, int]:
        """Stop both; returns the bridge's final counters."""
        try:
            return self.bridge.shutdown()
        finally:
            self.vpair.close()


def start_rig(directory: Path, vpair_args: tuple[str, ...] = (),
              bridge_args: tuple[str, ...] = (), *, trace: bool = True) -> Rig:
    """A vpair and a bridge on its end A; the vpair is stopped again if the bridge fails."""
    vpair = Vpair(directory, *vpair_args)
    try:
        bridge = Bridge(directory, vpair.path_a, *bridge_args, trace=trace)
    except BaseException:
        vpair.close()
        raise
    return Rig(directory, vpair, bridge)


#: The tests' bridge: an echo timeout a pty meets at once even with both CPUs busy (a 0.5 s
#: one ran out under load, and the retries are warnings), a patient link, verbose.
TEST_BRIDGE_ARGS = ("--echo-timeout", "2", "--max-attempts", "1000", "-vv")

RigFactory = Callable[..., Rig]


@contextmanager
def rig_factory_for(directory: Path) -> Iterator[RigFactory]:
    """Start test rigs on demand; every process is gone when the block ends."""
    started: list[Rig] = []

    def make(vpair_args: tuple[str, ...] = (), bridge_args: tuple[str, ...] = ()) -> Rig:
        rig = start_rig(directory, vpair_args, (*TEST_BRIDGE_ARGS, *bridge_args))
        started.append(rig)
        return rig

    try:
        yield make
    finally:
        for rig in started:
            rig.close()


def start_vpair(directory: Path, *extra: str) -> tuple[Vpair, str, str]:
    """``dxserial vpair`` and its two ends; the caller stops it."""
    vpair = Vpair(directory, *extra)
    return vpair, vpair.path_a, vpair.path_b


def start_serial_engine(directory: Path, seed: int, *extra: str) -> tuple[Vpair, Cli, str]:
    """`dxserial vpair` and the built-in engine (follower, NULMODEM) on its end B.

    Returns the vpair, the engine and end A, where a bridge or a match opens the line.
    The caller stops both processes.
    """
    vpair = Vpair(directory)
    engine: Cli | None = None
    try:
        engine = Cli(
            "engine", vpair.path_b, "--role", "follower", "--link", "nulmodem",
            "--seed", str(seed), "--echo-timeout", "2", "--max-attempts", "1000", *extra,
        )
        engine.out.expect("engine ready", timeout=20)
    except BaseException:
        if engine is not None:
            engine.__exit__(None, None, None)
        vpair.close()
        raise
    return vpair, engine, vpair.path_a
