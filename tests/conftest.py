"""Shared fixtures: the protocol reference data (in tests/data, part of the repository)."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from dxserial.testing.inproc import BridgeThread
from dxserial.testing.rig import Rig, RigFactory, rig_factory_for

# Hundreds of tests start `python -m dxserial`: with PYTHONDONTWRITEBYTECODE set (some
# machines set it for everyone) each of them compiled every module it imports again, and
# each pytest worker its test modules (about a tenth of a second a process).  Compiled
# once here, in __pycache__ as usual (git ignores it), they are read from then on.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# The bridge keeps a record of the serial engine's game in the user's state folder: tests
# (and the programs they start) keep theirs in a folder of this run's own.
os.environ.pop("STATE_DIRECTORY", None)
os.environ["XDG_STATE_HOME"] = _STATE_HOME = tempfile.mkdtemp(prefix="dxserial-test-state-")
atexit.register(shutil.rmtree, _STATE_HOME, ignore_errors=True)

# Hypothesis's per-example deadline (200 ms) is wall-clock time: on a loaded machine an
# example waits for a CPU and fails with DeadlineExceeded or Flaky, which says nothing about
# the code.  No deadline here; a test that hangs is stopped by pytest-timeout.
settings.register_profile("dxserial", deadline=None)
# CI runs the same examples every time (a red CI must be reproducible); at a desk,
# hypothesis explores new ones on every run.
settings.register_profile("ci", parent=settings.get_profile("dxserial"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "dxserial")


#: vectors.json, the Scan-vs-Scan game and DRAUGHTS.md: copies of the protocol reference.
DATA_DIR = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def spec_dir() -> Path:
    return DATA_DIR


@pytest.fixture(scope="session")
def vectors(spec_dir: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((spec_dir / "vectors.json").read_text())
    return data


@pytest.fixture(scope="session")
def scan_game(spec_dir: Path) -> list[dict[str, str]]:
    """Every message of the Scan-vs-Scan game: dicts with 'from' and 'message'."""
    lines = (spec_dir / "scan-vs-scan-game.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture
def rig_factory(tmp_path: Path) -> Iterator[RigFactory]:
    """Start `dxserial vpair` + `dxserial bridge` rigs; all stopped after the test."""
    with rig_factory_for(tmp_path) as make:
        yield make


@pytest.fixture
def rig(rig_factory: RigFactory) -> Rig:
    return rig_factory()


@pytest.fixture
def cable_rig_factory(tmp_path: Path) -> Iterator[Callable[..., BridgeThread]]:
    """Start bridges on in-process cables (a NULMODEM engine on end b); all stopped after."""
    started: list[BridgeThread] = []

    def make(**config: Any) -> BridgeThread:
        directory = tmp_path / f"bridge-{len(started) + 1}"
        directory.mkdir()
        started.append(BridgeThread(directory, **config))
        return started[-1]

    yield make
    for bridge in started:
        bridge.stop()


@pytest.fixture
def cable_rig(cable_rig_factory: Callable[..., BridgeThread]) -> BridgeThread:
    return cable_rig_factory()


# --------------------------------------------------------------------------- leak guard


def _children() -> set[int]:
    """Our live child processes (zombies not yet reaped count: someone forgot a wait)."""
    pids: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            pids.update(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    return pids


def _fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


@pytest.fixture(autouse=True)
def no_leaks(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that leaves a process, a thread or a file descriptor behind.

    Each one left is cleaned up (processes killed) so the next test starts clean; a short
    grace lets things that are already ending finish.
    """
    if not Path("/proc/self/task").is_dir():
        yield
        return
    procs, threads, fds = _children(), set(threading.enumerate()), _fds()
    yield
    deadline = time.monotonic() + 10.0  # a loaded machine ends its processes late
    while True:
        new_procs = _children() - procs
        new_threads = {t for t in threading.enumerate() if t not in threads and t.is_alive()}
        new_fds = _fds() - fds
        if not (new_procs or new_threads or new_fds) or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    problems = []
    for pid in new_procs:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (OSError, ChildProcessError):
            cmd = "?"
        problems.append(f"process {pid} ({cmd.strip()[:120]})")
    problems += [f"thread {t.name}" for t in new_threads]
    leaked_fds = []
    for fd in new_fds:
        try:
            leaked_fds.append(f"fd {fd} -> {os.readlink(f'/proc/self/fd/{fd}')}")
        except OSError:
            continue  # closed meanwhile
    problems += leaked_fds
    if problems:
        pytest.fail("the test left behind: " + "; ".join(problems), pytrace=False)


# --------------------------------------------------------------------------- e2e guard

#: Fixtures that start processes, ptys or sockets: a test that asks for one is e2e.
E2E_FIXTURES = frozenset({"rig", "rig_factory"})


def _unit_run(config: pytest.Config) -> bool:
    return "not e2e" in (config.option.markexpr or "")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The unit run waits on no process or socket: two workers, one a core (the four of
    the whole suite would each import and collect everything, for nothing)."""
    if _unit_run(config) and getattr(config.option, "numprocesses", None) == 4:
        config.option.numprocesses = 2


#: In the unit run (`-m "not e2e"`) a property test tries at most this many examples; the
#: whole suite, and a unit run with DXSERIAL_ALL_EXAMPLES=1, tries every one it asks for.
QUICK_EXAMPLES = 50


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark e2e every test that uses an end-to-end fixture, whatever its file says; in the
    unit run, fewer examples for the property tests that ask for many."""
    quick = _unit_run(config) and not os.environ.get(
        "DXSERIAL_ALL_EXAMPLES"
    )
    for item in items:
        if E2E_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)
        test = getattr(item, "obj", None)
        asked = getattr(test, "_hypothesis_internal_use_settings", None)
        if quick and asked is not None and asked.max_examples > QUICK_EXAMPLES:
            test._hypothesis_internal_use_settings = settings(  # type: ignore[union-attr]
                asked, max_examples=QUICK_EXAMPLES
            )


def _refuse(what: str) -> Callable[..., Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        pytest.fail(
            f"this test {what} but is not marked e2e: add `pytestmark = pytest.mark.e2e` "
            "to its file (or @pytest.mark.e2e to it); `-m \"not e2e\"` runs unit tests only",
            pytrace=False,
        )

    return refused


@pytest.fixture(autouse=True)
def unit_tests_stay_in_process(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a run that leaves e2e tests out, a test that starts a process, opens a pty or
    binds or connects a socket fails, saying to mark it: the unit run stays a unit run.

    (The event loop's own socketpair is in process: creating sockets is allowed.)"""
    import pty
    import socket
    import subprocess

    markexpr = request.config.option.markexpr or ""
    if "not e2e" not in markexpr or request.node.get_closest_marker("e2e") is not None:
        return
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse("starts a process"))
    monkeypatch.setattr(os, "fork", _refuse("forks"))
    monkeypatch.setattr(os, "openpty", _refuse("opens a pty"))
    monkeypatch.setattr(pty, "openpty", _refuse("opens a pty"))
    for name in ("bind", "connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, _refuse(f"uses a socket ({name})"))
