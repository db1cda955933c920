"""Every command example of the README and docs/ runs as written, from a plain install.

The pages' ``sh`` blocks (and any block whose lines start with ``$ ``) are read; each
command runs in a fresh folder with ``dxserial`` from a virtual environment made by
``pip install .`` (not editable: no checkout beside the package, as a new user has it).
Where a page shows a command's output (``$ cmd`` then its lines), the output is compared;
``...`` on a line of its own stands for any lines. A command that needs hardware, root or
another host is in :data:`SKIP`, each pattern with its reason; every other command must run
and exit 0, so a page cannot drift from the program again (issue 38).

How a command is run, as a user would: one that runs until Ctrl-C (a server, a cable) is
started, waited for until it says it is ready, then sent SIGINT and must exit 0; ``cmd &``
is started in the background and stopped after its block; ``/tmp/`` in a command is the
run's own folder, so runs side by side do not take each other's ptys.  Set
``DXSERIAL_DOCS_VENV`` to a virtual environment with dxserial installed to skip the install
(about 30 s), ``DXSERIAL_DOCS_SLOW=1`` to run the examples in :data:`SLOW` too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
         *sorted((ROOT / "firmware_notes").rglob("*.md"))]

#: Substring of a command -> why it is not run here.
SKIP: dict[str, str] = {
    "/dev/ttyUSB": "needs a USB-serial adapter (and an engine on it)",
    "/dev/dxserial/": "needs a USB-serial adapter named by dxserial's udev rules",
    "/sys/bus/usb-serial": "needs an FTDI adapter",
    "/sys/class/tty/ttyUSB0": "needs an FTDI adapter",
    "sudo ": "needs root",
    "dosbox://127.0.0.1:5555": "waits for a DOSBox set up by hand (docs/dosbox.md); "
    "tests/processes/test_dos_engine.py runs the bridge with DOSBox",
    "python3 -m venv .venv": "the README's set-up, run as written by .ci/run "
    "(tests/project/test_readme_commands.py holds that)",
    "python3 -m pytest": "the test suite itself",
    "python3 -c 'while 1: pass'": "the test suite under load (docs/testing.md)",
    "ruff check": "the linters, run by .ci/run",
    "dxserial match --engines engines.toml scan moby": "needs Scan and Moby Dam built "
    "(docs/engines-as-commands.md)",
    "dxserial tournament lab.toml": "the page's lab.toml names adapters and other hosts",
    "dxserial serve rig.toml  ": "the page's rig.toml names a USB adapter (runs until stopped)",
    "dxserial serve rig.toml --status": "asks the daemon of the example above",
    "dxserial udev check /etc/": "checks the rules `sudo dxserial udev install` wrote",
    "/opt/scan/scan": "needs Scan built in /opt/scan",
    "dxserial bridge --config engine.toml": "the engine.toml the probe above wrote names its "
    "adapter",
    "dxserial rate ": "reads a night's event.pdn (tests/tournament/test_rating.py runs the "
    "command on recorded games and holds its output)",
    "ordo -p ": "needs Ordo built from its source (bench/ordo_check.py)",
}

#: Examples whose exit code is not 0, as their page says.
EXIT: dict[str, int] = {
    "dxserial parse 'M0012061100' 'M00120X1100'": 1,  # one of them is not DXP
}

#: A part of a command not run here, and why; the rest of it is.
DROP: dict[str, str] = {
    "sudo apt-get install dosbox bcc && ": "needs root; dosbox and bcc are installed (or the "
    "DOS examples skip)",
}

#: Examples that take minutes; run with DXSERIAL_DOCS_SLOW=1.
SLOW: dict[str, str] = {
    "dxserial demo --dos --cycles 3000": "a game on an emulated 286 (a few minutes)",
}

#: Files a command reads, made before it runs (what the page says comes from elsewhere).
SETUP: dict[str, str] = {
    "bridge.jsonl": "a bridge's --trace: a game between two Scans (tests/data)",
    "games/game-003.pdn": "a game's PDN, as `dxserial demo --pdn games` writes it",
    "rig.toml": "the rig file of docs/serve.md",
}

#: Commands that run until Ctrl-C, and what they print when ready.
UNTIL_STOPPED: dict[str, str] = {
    "dxserial vpair ": "vpair ready",
}
#: Commands the next ones of their block need: kept running (as with `&`) until its end.
KEPT: dict[str, str] = {
    "dxserial engine listen://127.0.0.1:27531 --role follower": "the tcp:// example below "
    "plays against it",
}


@dataclass
class Example:
    page: Path
    line: int
    command: str
    output: list[str] | None = None  # what the page shows after `$ command`
    background: bool = False
    block: int = 0
    done: list[str] = field(default_factory=list)

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def examples() -> list[Example]:
    """Every command of every page's sh blocks and ``$ `` blocks, in page order."""
    found: list[Example] = []
    for number, (page, start, lang, body) in enumerate(_blocks()):
        lines = body.splitlines()
        prompted = any(line.startswith("$ ") for line in lines)
        if lang != "sh" and not (lines and lines[0].startswith("$ ")):
            continue
        current: Example | None = None
        for offset, raw in enumerate(lines):
            if prompted and not raw.startswith("$ "):
                if current is not None and current.output is not None:
                    current.output.append(raw)
                continue
            text = raw[2:] if raw.startswith("$ ") else raw
            text = re.sub(r"\s+#\s.*$", "", text).rstrip()
            if not text or text.startswith("#"):
                current = None
                continue
            background = text.endswith(" &")
            current = Example(page, start + offset + 1, text.removesuffix(" &"),
                              [] if raw.startswith("$ ") else None, background, number)
            found.append(current)
    return found


def _blocks() -> Iterator[tuple[Path, int, str, str]]:
    for page in PAGES:
        text = page.read_text()
        for match in _BLOCK.finditer(text):
            yield page, text[: match.start()].count("\n") + 1, match.group(1), match.group(2)


def as_run(command: str) -> str:
    for part in DROP:
        command = command.replace(part, "")
    return command


def reason_to_skip(command: str) -> str | None:
    command = as_run(command)
    for pattern, why in SKIP.items():
        if pattern in command + "  ":
            return why
    if not os.environ.get("DXSERIAL_DOCS_SLOW"):
        for pattern, why in SLOW.items():
            if pattern in command:
                return f"slow: {why} (DXSERIAL_DOCS_SLOW=1 runs it)"
    if "--dos" in command and shutil.which("dosbox") is None:
        return "needs dosbox"
    if "dos/build.sh" in command and shutil.which("bcc") is None:
        return "needs bcc"
    return None


def test_every_example_is_run_or_skipped_for_a_reason_that_still_applies() -> None:
    """A skip pattern no page uses any more goes, so the list stays small and true."""
    commands = [example.command + "  " for example in examples()]
    assert len(commands) > 50
    for pattern in [*SKIP, *SLOW, *EXIT, *DROP, *KEPT]:
        assert any(pattern in command for command in commands), f"stale skip: {pattern}"


# ---------------------------------------------------------------------------- running


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with ``pip install .`` of this checkout (not editable)."""
    given = os.environ.get("DXSERIAL_DOCS_VENV")
    if given:
        return Path(given)
    where = tmp_path_factory.mktemp("docs-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=120)
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", str(ROOT)],
                   check=True, timeout=600, capture_output=True)
    return where


def _setup(work: Path) -> None:
    (work / "tmp").mkdir()
    shutil.copytree(ROOT / "dos", work / "dos", ignore=shutil.ignore_patterns("build"))
    from helpers import write_trace  # a trace as the bridge writes it

    game = [json.loads(line) for line in
            (ROOT / "tests" / "data" / "scan-vs-scan-game.jsonl").read_text().splitlines()]
    write_trace(work / "bridge.jsonl", [
        ("serial" if item["from"] == "initiator" else "tcp", item["message"].encode(),
         "forwarded") for item in game])
    (work / "games").mkdir()
    pdn = ROOT / "tests" / "data" / "pdn-before-r30" / "match-move-limit.pdn"
    shutil.copy(pdn, work / "games" / "game-003.pdn")
    serve = (ROOT / "docs" / "serve.md").read_text()
    rig = re.search(r"```toml\n(.*?)```", serve, re.S)
    assert rig is not None
    (work / "rig.toml").write_text(rig.group(1))


def _env(venv: Path, work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_"))}
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
    env["XDG_DATA_HOME"] = str(work / "data")  # dos/build.sh installs DXENG.COM there
    env["XDG_RUNTIME_DIR"] = str(work / "run")
    env["COLUMNS"] = "100"
    return env


def _start(command: str, work: Path, env: dict[str, str], name: str) -> subprocess.Popen[str]:
    out = (work / f"{name}.log").open("w")
    return subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=work, env=env, stdout=out,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _wait_for(path: Path, marker: str, proc: subprocess.Popen[str], limit: float) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if marker in path.read_text(errors="replace"):
            return True
        if proc.poll() is not None:
            return marker in path.read_text(errors="replace")
        time.sleep(0.1)
    return False


def _stop(proc: subprocess.Popen[str], sig: int = signal.SIGINT) -> int:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            return proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            return proc.wait(10)
    return proc.returncode


def matches(expected: list[str], got: list[str]) -> bool:
    """``got`` has ``expected``'s lines in order; a ``...`` line stands for any lines."""
    pattern = "\n".join(".*?" if line == "..." else re.escape(line) for line in expected)
    return re.fullmatch(pattern.replace("\n.*?\n", "(?:\n.*?)?\n"), "\n".join(got),
                        re.S) is not None


def _taken(command: str) -> bool:
    """A fixed port of the example another program on this (shared) machine holds."""
    for port in re.findall(r"listen://127\.0\.0\.1:(\d+)", command):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", int(port)))
            except OSError:
                return True
    return False


def run_one(example: Example, work: Path, env: dict[str, str], index: int) -> str | None:
    """Run one example; what went wrong, or None."""
    command = as_run(example.command).replace("/tmp/", f"{work}/tmp/")
    name = f"ex{index:03d}"
    log = work / f"{name}.log"
    ready = next((m for p, m in UNTIL_STOPPED.items() if command.startswith(p)), None)
    proc = _start(command, work, env, name)
    if example.command in KEPT:
        example.background = True
    if example.background or ready is not None:
        if not _wait_for(log, ready or " ready", proc, 30):
            _stop(proc, signal.SIGKILL)
            return f"never said it was ready:\n{log.read_text()[-2000:]}"
        if example.background:
            example.done.append(name)
            _procs[name] = proc
            return None
        code = _stop(proc)
    else:
        try:
            code = proc.wait(600 if os.environ.get("DXSERIAL_DOCS_SLOW") else 180)
        except subprocess.TimeoutExpired:
            _stop(proc, signal.SIGKILL)
            return f"still running after its time:\n{log.read_text()[-2000:]}"
    text = log.read_text(errors="replace")
    if code != EXIT.get(example.command, 0):
        return f"exit {code}:\n{text[-2000:]}"
    if example.output is not None and not matches(example.output, text.splitlines()):
        return "output differs from the page:\n" + "\n".join(
            ["page:", *example.output, "got:", *text.splitlines()[:40]])
    return None


_procs: dict[str, subprocess.Popen[str]] = {}


def test_every_example_runs_as_written(venv: Path, tmp_path: Path) -> None:
    work = tmp_path / "user"
    work.mkdir()
    _setup(work)
    env = _env(venv, work)
    failures: list[str] = []
    ran: list[str] = []
    block = taken_block = -1
    for index, example in enumerate(examples()):
        if example.block != block:  # a block's background commands end with it
            for proc in _procs.values():
                _stop(proc, signal.SIGTERM)
            _procs.clear()
            block = example.block
        if reason_to_skip(example.command) is not None:
            continue
        if _taken(example.command) or example.block == taken_block:  # not the example's
            taken_block = example.block  # fault: said, not failed, with the rest of its block
            print(f"{example.where()}: its port is taken on this machine: not run")
            continue
        ran.append(example.command)
        problem = run_one(example, work, env, index)
        if problem is not None:
            failures.append(f"{example.where()}: {example.command}: {problem}")
    for proc in _procs.values():
        _stop(proc, signal.SIGTERM)
    assert len(ran) > 20
    if shutil.which("dosbox") and shutil.which("bcc"):  # issue 38 point 1, from a plain install
        assert "dos/build.sh && dxserial demo --dos" in map(as_run, ran)
    assert failures == [], "\n\n".join(failures)
