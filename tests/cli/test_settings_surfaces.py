"""Settings as data: every field of the bridge's settings is an option of ``dxserial
bridge``, a key of its --config file and of a rig file's lines, a line of ``serve --keys``
and a row of docs/commands/bridge.md's table, all from the one declaration."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import typer
from helpers import run_in_process

from dxserial.bridge.settings import BridgeConfig
from dxserial.cli.app import app
from dxserial.cli.bridge_cmd import CONFIG_KEYS
from dxserial.cli.options_table import options_table, page_with_table
from dxserial.errors import ConfigError
from dxserial.serve.keys import example
from dxserial.serve.rig import line_keys, parse_rig
from dxserial.setting import NESTED, SETTING, declared

DOCS = Path(__file__).resolve().parent.parent.parent / "docs" / "commands" / "bridge.md"
#: Tuning knobs a file may set but the command line does not offer.
FILE_ONLY = {"max_pending", "reopen_interval", "reconnect_interval", "shutdown_grace",
             "silent_slot"}


def bridge_params() -> dict[str, object]:
    group = typer.main.get_command(app)
    ctx = typer.Context(group, info_name="dxserial")
    command = group.resolve_command(ctx, ["bridge"])[1]  # type: ignore[attr-defined]
    return {p.name: p for p in command.params}


def test_every_field_of_the_bridges_settings_is_declared() -> None:
    undeclared = [f.name for f in dataclasses.fields(BridgeConfig)
                  if SETTING not in f.metadata and NESTED not in f.metadata]
    assert undeclared == []


def test_every_setting_is_on_every_surface() -> None:
    params = bridge_params()
    table = options_table("bridge")
    keys_text = example(line_keys())
    settings = declared(BridgeConfig)
    assert len(settings) > 30  # the nested serial and NULMODEM settings are in it
    for one in settings:
        assert one.key in line_keys(), one.key  # a rig line's key
        assert f"{one.key} = " in keys_text, one.key  # serve --keys
        assert one.key in CONFIG_KEYS, one.key  # a key of bridge --config
        if one.key in FILE_ONLY:
            assert not one.option and one.key not in params
            continue
        param = params[one.key]  # an option (the port: the argument)
        if one.argument:
            continue
        assert one.flag in (*param.opts, *param.secondary_opts)  # type: ignore[attr-defined]
        assert param.envvar == one.envvar  # type: ignore[attr-defined]
        assert f"`{one.flag}`" in table or f"`{one.flag} " in table, one.flag  # docs table


def test_the_docs_table_is_the_commands_own() -> None:
    page = DOCS.read_text(encoding="utf-8")
    assert page_with_table("bridge", page) == page, (
        "docs/commands/bridge.md's options table differs from dxserial bridge --help: run "
        "python -m dxserial.cli.options_table bridge --write"
    )


def test_defaults_are_one_whatever_the_surface() -> None:
    """A line that says only its port and address is a bridge of BridgeConfig's defaults,
    and the command line's defaults are those too (written once, in the field)."""
    line = parse_rig('[lines.a]\nport = "/dev/x"\nlisten = "127.0.0.1:27531"\n',
                     Path("/r.toml")).lines["a"].config
    assert line == BridgeConfig(port="/dev/x")
    params = bridge_params()
    for one in declared(BridgeConfig):
        if one.option and not one.argument:
            assert params[one.key].default == one.typer_default  # type: ignore[attr-defined]


@pytest.mark.parametrize(("text", "says"), [
    ('port = "/dev/null"\nbaudd = 9600\n', "unknown key 'baudd' (did you mean 'baud'?)"),
    ('port = "/dev/null"\npeer_grace = -1\n', "--peer-grace must be >= 0"),
    ('port = "/dev/null"\nstart_byte = "0x03"\n', "--start-byte and --end-byte must differ"),
    ('port = "/dev/null"\nmax_pending = 0\n', "key 'max_pending': expected a number >= 1, got 0"),
])
def test_a_config_files_mistake_is_one_line(tmp_path: Path, text: str, says: str) -> None:
    conf = tmp_path / "bridge.toml"
    conf.write_text(text)
    result = run_in_process("bridge", "--config", str(conf))
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert says in result.stderr, result.stderr


def test_a_setting_is_checked_alike_in_a_rig_file() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_rig('[lines.a]\nport = "/dev/x"\nlisten = ":1"\npeer_grace = -1\n', Path("/r.toml"))
    assert "key 'peer_grace': expected a number >= 0, got -1.0" in str(caught.value)


def test_the_shipped_example_config_shows_the_declared_defaults() -> None:
    """udev/example.toml (``dxserial udev print config``) is prose around the keys; each
    value it sets, but the port, the folders and the log level, is the setting's default."""
    import tomllib

    from dxserial.bridge.settings import bridge_config
    from dxserial.host.udev.files import Kind, shipped_text

    data = tomllib.loads(shipped_text(Kind.config))
    chosen = {"port", "pdn", "trace", "verbose", "quiet"}
    shown = {k: v for k, v in data.items() if k not in chosen}
    assert len(shown) > 15
    assert bridge_config({**shown, "port": "/dev/x"}, option=False) == BridgeConfig(port="/dev/x")


def test_every_arbiter_setting_is_a_tournament_key_with_the_arbiters_default() -> None:
    """The arbiter's settings (shared by match options and the tournament file) are read
    by the tournament through its declaration: a new one must be declared there too."""
    from dxserial.game.arbiter import ArbiterSettings
    from dxserial.tournament.keys import DEFAULTS

    base = ArbiterSettings()
    assert {key: DEFAULTS.get(key) for key in ArbiterSettings.KEYS} == {
        key: getattr(base, key) for key in ArbiterSettings.KEYS
    }
