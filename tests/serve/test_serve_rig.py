"""The rig file of ``dxserial serve``: every line's bridge settings, checked when read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dxserial.bridge.settings import BridgeConfig
from dxserial.errors import ConfigError
from dxserial.serve.keys import AHEAD, LINE, example
from dxserial.serve.rig import line_keys, parse_rig
from dxserial.serve.usb import find_serial_number

PATH = Path("/etc/dxserial/rig.toml")


def rig(text: str) -> dict[str, BridgeConfig]:
    return {name: line.config for name, line in parse_rig(text, PATH).lines.items()}


def refused(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_rig(text, PATH)
    return str(caught.value)


def test_a_three_line_file_is_a_bridge_with_the_bridges_defaults() -> None:
    lines = rig('[lines.scan]\nport = "/dev/dxserial/ftdi-A1"\nlisten = "0.0.0.0:27531"\n')
    default = BridgeConfig(port="/dev/dxserial/ftdi-A1", listen=("0.0.0.0", 27531))
    assert lines == {"scan": default}


def test_the_bridges_option_names_and_defaults_apply_per_line() -> None:
    lines = rig(
        '[defaults]\nreferee = "strict"\nbaud = 2400\npdn = "games/{line}"\n'
        '[lines.a]\nport = "/dev/ttyUSB0"\nlisten = ":27531"\nstart_byte = "0x01"\n'
        'echo_timeout = 2\ndtr = 0\nallow = ["10.0.0.0/8"]\n'
        '[lines.b]\nport = "socket://127.0.0.1:5000"\nconnect = "tcp://10.0.0.2:27531"\n'
        'baud = 9600\nlink = "nul"\nserial_grace = 5\n'
    )
    a, b = lines["a"], lines["b"]
    assert (a.referee, a.serial.baudrate, a.nulmodem.start, a.nulmodem.timeout) == (
        "strict", 2400, 1, 2.0)
    assert a.serial.dtr is False and str(a.allow[0]) == "10.0.0.0/8"
    assert a.pdn == Path("/etc/dxserial/games/a") and b.pdn == Path("/etc/dxserial/games/b")
    assert (b.serial.baudrate, b.link, b.serial_grace, b.listen) == (9600, "nul", 5.0, None)
    assert b.connect == ("10.0.0.2", 27531)


@pytest.mark.parametrize(("text", "says"), [
    ('[lines.a]\nport = "/dev/x"\nlisten = ":1"\nbuad = 1\n',
     "line 'a': unknown key 'buad' (did you mean 'baud'?"),
    ('[lines.a]\nport = "/dev/x"\nlisten = ":1"\nreferee = "loud"\n',
     "line 'a': key 'referee': expected 'off' or 'warn' or 'strict', got 'loud'"),
    ('[lines.a]\nport = "/dev/x"\nlisten = ":1"\npeer_grace = -1\n',
     "key 'peer_grace': expected a number >= 0, got -1.0"),
    ('[lines.a]\nport = "/dev/x"\nlisten = ":1"\nbaud = "fast"\n',
     "key 'baud': expected a whole number, got 'fast'"),
    ('[lines.a]\nport = "/dev/x"\nlisten = ":1"\nparity = "Q"\n', "line 'a': parity must be"),
    ('[lines.a]\nport = "/dev/x"\nlisten = ":1"\nstart_byte = 3\n',
     "start_byte and end_byte must differ"),
    ('[lines.a]\nport = "/dev/x"\n', "listen = \"HOST:PORT\" or connect"),
    ('[lines.a]\nlisten = ":1"\n', "port = \"/dev/...\" or serial_number"),
    ('[lines.a]\nport = "tcpp://x:1"\nlisten = ":1"\n', "unknown scheme 'tcpp://'"),
    ('[lines."a b"]\nport = "/dev/x"\nlisten = ":1"\n', "line name 'a b'"),
    ('[defaults]\nport = "/dev/x"\n[lines.a]\nlisten = ":1"\n', "[defaults]: 'port' belongs"),
    ('[defaults]\nwebb = 1\n[lines.a]\nport = "/dev/x"\nlisten = ":1"\n',
     "[defaults]: unknown key 'webb' (did you mean 'web'?"),
    ('wbe = "x"\n', "unknown key 'wbe' (did you mean 'web'?"),
    ("", "no lines"),
    ('[lines.a]\nport = "/dev/x"\nlisten = ":1"\n[lines.b]\nport = "/dev/x"\nlisten = ":2"\n',
     "lines 'a' and 'b' both name the port /dev/x: one line per port"),
    ('[lines.a]\nport = "/dev/x"\nlisten = "0.0.0.0:9"\n[lines.b]\nport = "/dev/y"\n'
     'listen = "127.0.0.1:9"\n', "lines 'a' and 'b' both listen on 0.0.0.0:9"),
    ('[lines.a]\nport = "/dev/x"\nconnect = "h:9"\n[lines.b]\nport = "/dev/y"\n'
     'connect = "h:9"\n', "both connect to h:9"),
    ('[lines.a]\nserial_number = "S1"\nlisten = ":1"\n[lines.b]\nserial_number = "S1"\n'
     'listen = ":2"\n', "both name the port USB serial number S1"),
    ('[defaults]\ntrace = "t.jsonl"\n[lines.a]\nport = "/dev/x"\nlisten = ":1"\n'
     '[lines.b]\nport = "/dev/y"\nlisten = ":2"\n', "both trace to /etc/dxserial/t.jsonl"),
])
def test_a_mistake_is_one_line_naming_it(text: str, says: str) -> None:
    message = refused(text)
    assert says in message and "\n" not in message


def test_port_zero_twice_is_two_free_ports() -> None:
    lines = rig('[lines.a]\nport = "/dev/x"\nlisten = ":0"\n[lines.b]\nport = "/dev/y"\n'
                'listen = ":0"\n')
    assert len(lines) == 2


def test_every_key_the_reader_takes_is_described_and_the_example_reads() -> None:
    assert set(line_keys()) - set(LINE) == set()  # a new bridge setting: say what it means
    assert set(LINE) - set(line_keys()) <= AHEAD
    spec = parse_rig(example(line_keys()), PATH)
    assert list(spec.lines) == ["NAME"] and spec.web is None  # web: commented (an extra)


def test_a_serial_number_is_found_by_id_link_or_in_sysfs(tmp_path: Path) -> None:
    dev, sys_root = tmp_path / "dev", tmp_path / "sys"
    by_id = dev / "serial" / "by-id"
    by_id.mkdir(parents=True)
    (dev / "ttyUSB3").touch()
    (by_id / "usb-FTDI_FT232R_USB_UART_A1B2C3-if00-port0").symlink_to(dev / "ttyUSB3")
    assert find_serial_number("A1B2C3", dev_root=dev, sys_root=sys_root) == str(
        by_id / "usb-FTDI_FT232R_USB_UART_A1B2C3-if00-port0")
    assert find_serial_number("A1B2", dev_root=dev, sys_root=sys_root) is None
    # No udev links: sysfs names the tty whose USB device has that serial number.
    usb = sys_root / "devices" / "pci0" / "usb1" / "1-1"
    port = usb / "1-1:1.0" / "ttyUSB7"
    port.mkdir(parents=True)
    (usb / "idVendor").write_text("0403\n")
    (usb / "serial").write_text("ZZ99\n")
    (sys_root / "class" / "tty" / "ttyUSB7").mkdir(parents=True)
    (sys_root / "class" / "tty" / "ttyUSB7" / "device").symlink_to(port)
    assert find_serial_number("ZZ99", dev_root=dev, sys_root=sys_root) == str(dev / "ttyUSB7")


def test_look_alike_ports_are_two_lines_with_a_state_file_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dxserial.bridge import statefile
    from dxserial.serve.rig import port_identity

    text = ('[lines.one]\nport = "/a/x/y/A"\nlisten = "127.0.0.1:7001"\n'
            '[lines.two]\nport = "/a/x-y/A"\nlisten = "127.0.0.1:7002"\n'
            f'[defaults]\nstate_dir = "{tmp_path}"\n')
    spec = parse_rig(text, tmp_path / "rig.toml")
    files = {statefile.state_file(tmp_path, port_identity(line)) for line in spec.lines.values()}
    assert len(files) == 2
    # Were two lines to share one anyway, the file is refused, naming both.
    monkeypatch.setattr(statefile, "state_file", lambda folder, identity: folder / "same.json")
    with pytest.raises(ConfigError, match="lines 'one' and 'two' would share the state file "
                       f"{tmp_path}/same.json: give one of them another state_dir"):
        parse_rig(text, tmp_path / "rig.toml")


def test_the_keys_example_is_safe_to_copy_and_check_knows_web_needs_aiohttp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38 point 15: `serve --keys > rig.toml` has no web page (an extra) and no folder
    under /var/lib uncommented; --check refuses `web` where aiohttp is missing, as the
    start would."""
    from helpers import run_in_process

    keys = run_in_process("serve", "--keys")
    uncommented = [line for line in keys.stdout.splitlines() if not line.startswith("#")]
    assert not [line for line in uncommented if line.startswith(("web ", "pdn ", "status "))]
    assert "/var/" not in "\n".join(uncommented)
    rig = tmp_path / "rig.toml"
    rig.write_text(keys.stdout)
    assert run_in_process("serve", str(rig), "--check").returncode == 0
    rig.write_text('web = "127.0.0.1:8080"\n' + keys.stdout)
    monkeypatch.setitem(sys.modules, "aiohttp", None)  # a plain install: no dxserial[web]
    checked = run_in_process("serve", str(rig), "--check")
    assert checked.returncode == 2
    assert checked.stderr.strip() == (
        f"dxserial: error: web ({rig}) needs aiohttp: pip install 'dxserial[web]'")
