"""``dxserial bridge --config``: a TOML file, DXSERIAL_* variables and the command line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import run_dxserial, run_in_process

from dxserial.testing.process import LineReader
from dxserial.testing.rig import start_vpair

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


def run_bridge(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``dxserial bridge ARGS`` that fails before it opens anything: in this process."""
    return run_in_process("bridge", *args, env=env)


def ready_line(args: list[str], env: dict[str, str], then: Callable[[list[str]], None] | None = None) -> str:
    """The bridge's ready line; ``then`` sees every line so far while the bridge runs."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dxserial", "bridge", *args],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, **env},
    )
    assert proc.stdout is not None
    out = LineReader(proc.stdout)
    try:
        line = out.expect("bridge ready", timeout=20)
        if then is not None:
            then(out.lines)
        return line
    finally:
        proc.terminate()
        proc.wait(10)
        out.join()
        proc.stdout.close()


@pytest.fixture
def pair(tmp_path: Path):  # type: ignore[no-untyped-def]
    vpair, a, b = start_vpair(tmp_path)
    with vpair:
        yield a, b
        vpair.stop()


def test_config_file_supplies_port_and_settings(tmp_path: Path, pair: tuple[str, str]) -> None:
    conf = tmp_path / "rig.toml"
    conf.write_text(f'port = "{pair[0]}"\nlisten = "127.0.0.1:0"\nlink = "nul"\nbaud = 19200\n')
    line = ready_line(["--config", str(conf)], {})
    assert line.startswith(f"bridge ready: {pair[0]} <-> listening on 127.0.0.1:")


def test_environment_beats_file_and_command_line_beats_both(tmp_path: Path, pair: tuple[str, str]) -> None:
    conf = tmp_path / "rig.toml"
    conf.write_text('port = "/dev/does-not-exist"\nlisten = "127.0.0.1:1"\n')
    line = ready_line(["--config", str(conf), "--listen", "127.0.0.1:0"],
                      {"DXSERIAL_PORT": pair[0], "DXSERIAL_LISTEN": "127.0.0.1:2"})
    assert pair[0] in line
    port = int(re.findall(r":(\d+)$", line)[0])
    assert port not in (1, 2)


def test_unknown_key_names_key_and_file(tmp_path: Path) -> None:
    conf = tmp_path / "rig.toml"
    conf.write_text('port = "/dev/ttyUSB0"\nbaudrate = 9600\n')
    result = run_bridge(["--config", str(conf)])
    assert result.returncode == 2
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1
    assert str(conf) in err and "unknown key 'baudrate'" in err


def test_bad_value_names_key_and_file(tmp_path: Path) -> None:
    conf = tmp_path / "rig.toml"
    conf.write_text('port = "/dev/ttyUSB0"\nbaud = "fast"\n')
    result = run_bridge(["--config", str(conf)])
    assert result.returncode == 2
    assert f"{conf}: key 'baud': expected a whole number, got 'fast'" in result.stderr


def test_broken_toml_and_missing_file(tmp_path: Path) -> None:
    conf = tmp_path / "rig.toml"
    conf.write_text("port = \n")
    assert "not valid TOML" in run_bridge(["--config", str(conf)]).stderr
    missing = run_bridge(["--config", str(tmp_path / "nope.toml")])
    assert missing.returncode == 2 and "cannot read config file" in missing.stderr


def test_no_port_anywhere_is_a_one_line_error() -> None:
    result = run_bridge([], env={"DXSERIAL_PORT": ""})
    assert result.returncode == 2
    assert "no serial port" in result.stderr


def test_shipped_example_config_is_accepted(tmp_path: Path, pair: tuple[str, str]) -> None:
    from dxserial.host.udev.files import Kind
    from dxserial.host.udev.install import render  # the example the udev installer writes

    text = render(Kind.config, name="rig1")
    text = re.sub(r'(?m)^port = .*$', f'port = "{pair[0]}"', text)
    text = re.sub(r'(?m)^listen = .*$', 'listen = "127.0.0.1:0"', text)
    text = re.sub(r'(?m)^trace = .*$', f'trace = "{tmp_path / "t.jsonl"}"', text)
    conf = tmp_path / "rig1.toml"
    conf.write_text(text)
    assert ready_line(["--config", str(conf)], {}).startswith("bridge ready")
    assert (tmp_path / "t.jsonl").exists()


def test_settings_are_layered_key_by_key(tmp_path: Path) -> None:
    from dxserial.config import layered

    schema = {"baud": int, "link": str, "referee": str}
    config = tmp_path / "rig.toml"
    config.write_text('baud = 2400\nlink = "nul"\nreferee = "strict"\n')
    values = {"baud": 19200, "link": "nulmodem", "referee": "warn"}
    # --baud given on the command line (or DXSERIAL_BAUD): it wins; the rest come from the file
    assert layered(values, {"baud"}, config, schema) == {
        "baud": 19200, "link": "nul", "referee": "strict"
    }
    assert layered(values, set(), None, schema) == values  # no file: defaults stand


def test_the_web_view_from_a_config_file_obeys_the_bridge_s_allow(tmp_path: Path, pair: tuple[str, str]) -> None:
    pytest.importorskip("aiohttp")
    conf = tmp_path / "rig.toml"
    conf.write_text(
        f'port = "{pair[0]}"\nlisten = "127.0.0.1:0"\nweb = "127.0.0.1:0"\nallow = "10.0.0.0/8"\n'
    )
    codes: list[int] = []

    def fetch_page(lines: list[str]) -> None:
        url = next(line for line in lines if line.startswith("web view: ")).split()[-1]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url + "state", timeout=10)
        codes.append(refused.value.code)
        refused.value.close()

    ready_line(["--config", str(conf)], {}, then=fetch_page)
    assert codes == [403]  # 127.0.0.1 is not in 10.0.0.0/8: no game for it to watch


def test_web_without_aiohttp_is_a_one_line_error(tmp_path: Path) -> None:
    fake = tmp_path / "aiohttp"
    fake.mkdir()
    (fake / "__init__.py").write_text('raise ImportError("not installed")\n')
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    result = run_dxserial("bridge", "/dev/ttyS99", "--web", "127.0.0.1:0",
                          env={"PYTHONPATH": path})
    assert result.returncode == 2
    assert result.stderr == "dxserial: error: --web needs aiohttp: pip install 'dxserial[web]'\n"
