"""``dxserial serve`` as a user runs it: real processes on ``dxserial vpair`` cables, a real
SIGHUP, ``--status`` (text and JSON), ``--check`` and ``--keys``, one log for every line."""

from __future__ import annotations

import json
import signal
import urllib.request
from pathlib import Path

import pytest
from helpers import run_dxserial as run_cli

from dxserial.serve.rig import line_keys, parse_rig
from dxserial.testing.process import Cli, wait_until
from dxserial.testing.rig import start_serial_engine

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


def rig_file(path: Path, lines: dict[str, str]) -> None:
    out = [f'status = "{path.parent}/serve.sock"', "[defaults]", "echo_timeout = 0.5",
           "max_attempts = 1000", f'pdn = "{path.parent}/games/{{line}}"']
    for name, port in lines.items():
        out += [f"[lines.{name}]", f'port = "{port}"', 'listen = "127.0.0.1:0"']
    path.write_text("\n".join(out) + "\n")


def status(rig: Path) -> dict[str, dict[str, object]]:
    result = run_cli("serve", str(rig), "--status", "--json")
    assert result.returncode == 0, result.stderr
    return {row["line"]: row for row in json.loads(result.stdout)["lines"]}


def test_serve_two_lines_sighup_adds_one_status_shows_them(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    vpair_a, engine_a, port_a = start_serial_engine(tmp_path / "a", 1)
    vpair_b, engine_b, port_b = start_serial_engine(tmp_path / "b", 2)
    rig = tmp_path / "rig.toml"
    rig_file(rig, {"alpha": port_a})
    log = tmp_path / "serve.log"
    try:
        with Cli("serve", str(rig), "--web", "127.0.0.1:0", stderr_path=log) as serve:
            page = serve.out.expect("web view: http://127.0.0.1:", timeout=20).split()[-1]
            serve.out.expect("serve ready: 1 line(s)", timeout=20)
            wait_until(lambda: status(rig).get("alpha", {}).get("state") == "running",
                       20, "line alpha running")
            rig_file(rig, {"alpha": port_a, "beta": port_b})
            before = status(rig)["alpha"]
            serve.proc.send_signal(signal.SIGHUP)
            wait_until(lambda: status(rig).get("beta", {}).get("state") == "running",
                       20, "line beta running after SIGHUP")
            rows = status(rig)
            assert rows["alpha"]["since"] == before["since"] and rows["alpha"]["starts"] == 1
            address = str(rows["beta"]["listen"])
            tcp = run_cli("engine", f"tcp://{address}", "--role", "initiator", "--games", "1",
                          "--moves", "6", "--depth", "1", "--name", "Visitor", timeout=120)
            assert tcp.returncode == 0, tcp.stderr
            wait_until(lambda: status(rig)["beta"]["games"] == 1, 20, "beta's game counted")
            text = run_cli("serve", str(rig), "--status").stdout
            assert text.splitlines()[1].split()[:3] == ["line", "port", "state"]
            assert any(row.startswith("beta ") and "Visitor" in row for row in text.splitlines())
            # The one page: beta's game among the games, a row per line in its table.
            def page_shows_both() -> bool:
                with urllib.request.urlopen(f"{page}state", timeout=10) as answer:
                    state = json.load(answer)
                rows = [row.split()[0] for row in state["table"][2:]]
                return rows == ["alpha", "beta"] and any(
                    g["white"].startswith("[beta] ") for g in state["games"])
            wait_until(page_shows_both, 20, "the page's table and beta's game")
            assert serve.stop() == 0
        logged = log.read_text()
        assert "INFO [beta] bridge ready: " in logged
        assert "reloaded " in logged and "added beta; 1 line(s) untouched" in logged
        assert "INFO [alpha] bridge stopped: " in logged and "INFO [beta] bridge stopped: " in logged
        assert len(list((tmp_path / "games" / "beta").glob("*.pdn"))) == 1
        replay = run_cli("replay", str(next((tmp_path / "games" / "beta").glob("*.pdn"))))
        assert replay.returncode == 0 and "!!" not in replay.stdout
        assert not (tmp_path / "serve.sock").exists()
    finally:
        for proc in (engine_a, engine_b):
            proc.close()
        vpair_a.close()
        vpair_b.close()


def test_a_typo_refuses_to_start_with_one_line_naming_it(tmp_path: Path) -> None:
    rig = tmp_path / "rig.toml"
    rig.write_text('[lines.a]\nport = "/dev/null"\nlisten = ":27600"\nbuad = 2400\n')
    result = run_cli("serve", str(rig))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "line 'a': unknown key 'buad' (did you mean 'baud'?" in lines[0]


def test_check_and_keys(tmp_path: Path) -> None:
    rig = tmp_path / "rig.toml"
    rig.write_text('[lines.a]\nport = "/dev/ttyUSB0"\nlisten = ":27600"\nbaud = 2400\n')
    result = run_cli("serve", str(rig), "--check")
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == "a: /dev/ttyUSB0 (nulmodem, 2400 baud) <-> listen " \
        "127.0.0.1:27600"
    keys = run_cli("serve", "--keys")
    assert keys.returncode == 0
    assert parse_rig(keys.stdout, tmp_path / "x.toml").lines["NAME"].config.listen == (
        "0.0.0.0", 27531)
    for key in line_keys():
        assert f"{key} = " in keys.stdout, key


def test_status_without_a_daemon_is_one_line(tmp_path: Path) -> None:
    rig = tmp_path / "rig.toml"
    rig.write_text(f'status = "{tmp_path}/none.sock"\n[lines.a]\nport = "/dev/ttyUSB0"\n'
                   'listen = ":27600"\n')
    result = run_cli("serve", str(rig), "--status")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"dxserial: error: no dxserial serve is running for this rig ({tmp_path}/none.sock "
        "does not exist)"]


def test_sixteen_lines_on_vpairs_unplug_and_sighup_while_they_play() -> None:
    """The done-when of issue 31, short form of bench/serve_rig.py: 16 lines on vpair
    cables, a game on each at once, a cable end unplugged and replugged, a line removed and
    one added by SIGHUP; every PDN replays, every line's counts add up, the rest untouched."""
    import asyncio

    import serve_rig  # bench/serve_rig.py (bench/ is on pytest's pythonpath)

    report = asyncio.run(serve_rig.run(16, 16))
    assert report["problems"] == [] and report["games"] == 16, report
    assert not Path(report["folder"]).exists()  # issue 38 point 14: nothing left in /tmp
