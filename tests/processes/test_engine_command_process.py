"""One engine command's process as the director runs it: its console a silent pipe (an
engine that waits on it uses no CPU), a command that exits before it is ready reported at
once with its status and last log lines, a restart told without its failure twice."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from dxserial.errors import PortError
from dxserial.processes.command import parse_engine_command
from dxserial.processes.endpoint import CommandEndpoint
from dxserial.processes.supervisor import Supervisor
from dxserial.testing.console_reader import command as console_reader
from dxserial.transports.endpoints import LinkOptions

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


def endpoint(tmp_path: Path, argv: list[str], speaks: str, **extra: object) -> CommandEndpoint:
    cmd = parse_engine_command(
        "eng", {"command": argv, "speaks": speaks, **extra}, source="test", base=None
    )
    return CommandEndpoint(
        cmd, LinkOptions(connect_timeout=30), label="eng", workdir=tmp_path / "eng",
        log_path=tmp_path / "eng.log",
    )


def the_engine(group: int, name: str) -> int:
    """The process of ``group`` whose command line holds ``name``."""
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            line = (entry / "cmdline").read_bytes()
        except (OSError, NotADirectoryError):
            continue
        if int(fields[2]) == group and name.encode() in line:
            return int(entry.name)
    raise AssertionError(f"no {name} in process group {group}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def test_an_engine_that_waits_on_its_console_blocks_there_and_uses_no_cpu(
    tmp_path: Path,
) -> None:
    eng = endpoint(tmp_path, console_reader("listen://127.0.0.1:{port}"), "dxp-server")
    await eng.prepare()
    port = await eng.open(30)
    try:
        assert eng.child is not None
        pid = the_engine(eng.child.pid, "console_reader")
        before, start = cpu_seconds(pid), time.monotonic()
        await asyncio.sleep(1.0)  # a measuring window, not a wait for anything
        used = cpu_seconds(pid) - before
        assert used < 0.2 * (time.monotonic() - start), f"{used:.2f} CPU-s while idle"
        assert stat.S_ISFIFO(os.stat(f"/proc/{pid}/fd/0").st_mode)  # not /dev/null
    finally:
        await port.close()
        await eng.close()
    assert "console: end of file" not in (tmp_path / "eng.log").read_text()


@pytest.mark.parametrize("speaks", ["dxp-server", "dxp-client"])
async def test_a_command_that_exits_before_it_is_ready_is_reported_at_once(
    tmp_path: Path, speaks: str
) -> None:
    failing = [sys.executable, "-c", "import sys; print('no such book'); sys.exit(3)"]
    eng = endpoint(tmp_path, failing, speaks, max_restarts=0)
    await eng.prepare()
    with pytest.raises(PortError) as caught:
        await eng.open(30)  # a wait that ran out would read "not ready: cannot connect"
    text = str(caught.value)
    assert "exited before it was ready" in text
    assert "exit status 3" in text and "no such book" in text
    await eng.close()


async def test_a_command_killed_by_a_signal_is_reported_with_that_signal(
    tmp_path: Path,
) -> None:
    eng = endpoint(tmp_path, ["sh", "-c", "echo segfault soon; kill -SEGV $$"], "dxp-server",
                   max_restarts=0)
    await eng.prepare()
    with pytest.raises(PortError, match=r"killed by SIGSEGV.*segfault soon"):
        await eng.open(30)
    await eng.close()


def test_a_restart_after_a_failure_says_the_failure_once() -> None:
    sup = Supervisor("eng", backoff=0.0)
    sup.started(0.0, "first start")
    sup.ended(1.0, failure="exited before it was ready", status="exit status 3; no such book")
    action = sup.wanted(1.0)
    sup.started(1.0, getattr(action, "reason", ""))
    told = "; ".join(sup.events)
    assert told.count("no such book") == 1, told
    assert sup.events == [
        "failed: exited before it was ready; exit status 3; no such book", "restart 1"
    ]


def marked(mark: str) -> list[int]:
    """Live processes whose environment holds ``DXSERIAL_TEST_RUN=mark``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except (OSError, NotADirectoryError):
            continue
        if f"DXSERIAL_TEST_RUN={mark}".encode() in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


async def test_what_a_command_started_in_a_session_of_its_own_dies_with_it(
    tmp_path: Path,
) -> None:
    """``setsid`` takes a process out of the engine's group, not out of the keeper's tree."""
    mark = f"setsid-{os.getpid()}"
    eng = endpoint(tmp_path, ["sh", "-c", "setsid sleep 100000 & echo daemon started; exit 4"],
                   "dxp-server", max_restarts=0, env={"DXSERIAL_TEST_RUN": mark})
    await eng.prepare()
    with pytest.raises(PortError, match=r"exit status 4.*daemon started"):
        await eng.open(30)
    await eng.close()
    assert marked(mark) == []


async def test_a_command_that_ignores_sigterm_is_killed_after_its_stop_grace(
    tmp_path: Path,
) -> None:
    stubborn = ("import signal, socket, sys, threading; signal.signal(signal.SIGTERM, "
                "signal.SIG_IGN); s = socket.create_server(('127.0.0.1', int(sys.argv[1]))); "
                "c, _ = s.accept(); threading.Event().wait()")
    mark = f"stubborn-{os.getpid()}"
    eng = endpoint(tmp_path, [sys.executable, "-c", stubborn, "{port}"], "dxp-server",
                   stop_grace=0.5, env={"DXSERIAL_TEST_RUN": mark})
    await eng.prepare()
    port = await eng.open(30)
    child = eng.child
    assert child is not None
    start = time.monotonic()
    await eng.release(port)
    assert time.monotonic() - start >= 0.5  # its stop_grace, before the SIGKILL
    assert child.stopped_by == "SIGKILL"
    assert "stopped by the director with SIGKILL" in child.status()
    assert marked(mark) == []
    await eng.close()
