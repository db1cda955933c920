"""The engine supervisor's decisions (fake clock) and the command-engine table's checks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dxserial.errors import ConfigError
from dxserial.processes.command import launch, parse_engine_command
from dxserial.processes.supervisor import GiveUp, Start, Supervisor, Wait
from dxserial.tournament.spec import TournamentSpec

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


def test_first_start_then_restarts_with_a_growing_back_off_until_it_gives_up() -> None:
    sup = Supervisor("scan", max_restarts=2, backoff=1.0, backoff_cap=3.0)
    first = sup.wanted(0.0)
    assert isinstance(first, Start) and not first.restart
    sup.started(0.0, first.reason)
    sup.ready(0.5)
    sup.ended(10.0, failure="link lost", status="killed by SIGSEGV")
    assert sup.wanted(10.5) == Wait(11.0)  # 1 s after the first failure
    again = sup.wanted(11.0)
    assert isinstance(again, Start) and again.restart
    assert again.reason == "restart 1 after: link lost; killed by SIGSEGV"
    sup.started(11.0, again.reason)
    sup.ended(12.0, failure="no move within 5 s", status="stopped")
    assert sup.wanted(12.0) == Wait(14.0)  # 2 s: the second failure in a row
    sup.started(14.0, "restart 2")
    sup.ended(15.0, failure="crash", status="exit status 1")
    verdict = sup.wanted(100.0)
    assert isinstance(verdict, GiveUp) and "gave up after 2 restart(s)" in verdict.reason
    assert sup.restarts == 2 and sup.events[0] == "failed: link lost; killed by SIGSEGV"


def test_an_engine_that_exits_after_a_good_run_starts_again_at_once() -> None:
    sup = Supervisor("scan", max_restarts=0)
    sup.started(0.0, "first start")
    sup.ready(0.1)
    sup.ended(5.0, failure=None, status="exit status 0")
    action = sup.wanted(5.0)
    assert isinstance(action, Start) and sup.failures == 0


def cmd(**entry: object) -> object:
    return parse_engine_command("scan", entry, source="lab.toml", base=Path("/lab"))


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"command": ["x"], "speaks": "uci"}, 'give one of "dxp-server", "dxp-client", "dosbox", "hub"'),
        ({"command": ["/nope/scan"], "speaks": "dxp-server"}, "/nope/scan: no such program"),
        ({"command": ["no-such-engine-x"], "speaks": "dxp-server"}, "not found on PATH"),
        ({"command": [sys.executable], "speaks": "dxp-server", "file": {}}, "unknown setting"),
        ({"command": [sys.executable], "speaks": "dxp-server", "files": {"../x": ""}}, "inside"),
        ({"command": [], "speaks": "dxp-client"}, "command is empty"),
    ],
)
def test_a_bad_engine_table_is_one_line(entry: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError) as info:
        cmd(**entry)
    assert words in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith("lab.toml: engine 'scan'")


def test_a_hub_engine_runs_behind_a_dxp_follower_that_connects_to_the_director() -> None:
    engine = parse_engine_command(
        "scan", {"command": [sys.executable, "hub", "--x={port}"], "speaks": "hub"},
        source="lab.toml", base=None,
    )
    run = launch(engine, 4567, Path("/w"))
    assert run.endpoint == "listen://127.0.0.1:4567"
    assert run.argv[1:] == ("-m", "dxserial", "engine", "tcp://127.0.0.1:4567", "--role",
                            "follower", "--tell-thinking", "--hub",
                            f"{sys.executable} hub --x=4567")


def test_port_and_folder_fill_the_arguments_and_the_files() -> None:
    engine = parse_engine_command(
        "scan",
        {"command": [sys.executable, "--port={port}"], "speaks": "dxp-server",
         "files": {"scan.ini": "dxp-port = {port}\n"}},
        source="lab.toml", base=None,
    )
    plan = launch(engine, 40123, Path("/tmp/x"))
    assert plan.argv == (sys.executable, "--port=40123")
    assert plan.files == {"scan.ini": "dxp-port = 40123\n"}
    assert plan.endpoint == "tcp://127.0.0.1:40123"


@pytest.mark.parametrize(
    ("endpoint", "meant"),
    [("tcp:/127.0.0.1:27531", "tcp://127.0.0.1:27531"), ("listen:0.0.0.0:9", "listen://0.0.0.0:9")],
)
def test_an_endpoint_missing_its_slashes_is_refused_when_the_file_is_read(
    endpoint: str, meant: str
) -> None:
    text = f'[engines.a]\nendpoint = "{endpoint}"\n[engines.b]\nendpoint = "/dev/ttyUSB0"\n'
    with pytest.raises(ConfigError, match=f"did you mean '{meant}'"):
        TournamentSpec.from_toml(text, source="lab.toml")


def engines(*names: str) -> str:
    return "".join(f'[engines.{n}]\nendpoint = "tcp://127.0.0.1:{27531 + i}"\n'
                   for i, n in enumerate(names))


def test_sprt_needs_two_engines_and_reads_an_openings_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="sprt needs exactly two engines"):
        TournamentSpec.from_toml("sprt = { elo1 = 5 }\n" + engines("a", "b", "c"))
    (tmp_path / "book.txt").write_text("# book\n\n1. 32-28 18-23\nW:W31-50:B1-20\n")
    spec = TournamentSpec.from_toml(
        'sprt = { elo1 = 5 }\nopenings_file = "book.txt"\n' + engines("a", "b"), base=tmp_path
    )
    assert [o.text for o in spec.openings] == ["1. 32-28 18-23", "W:W31-50:B1-20"]
    assert spec.sprt is not None and spec.sprt.elo1 == 5 and spec.rounds == 1000


def test_an_engine_is_an_endpoint_or_a_command_not_both() -> None:
    text = engines("a") + f'[engines.b]\nendpoint = "/dev/ttyS0"\ncommand = ["{sys.executable}"]\n'
    with pytest.raises(ConfigError, match="give endpoint or command, not both"):
        TournamentSpec.from_toml(text)


def test_a_leftover_engine_group_is_killed_only_if_it_is_the_process_that_was_started() -> None:
    import subprocess

    from dxserial.transports.child import kill_leftover, start_time

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                            start_new_session=True)
    try:
        started = start_time(proc.pid)
        assert started is not None
        assert not kill_leftover(proc.pid, started + 1)  # another process with that pid
        assert proc.poll() is None
        assert kill_leftover(proc.pid, started)
        assert proc.wait(5) == -9
        assert not kill_leftover(proc.pid, started)  # gone
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
