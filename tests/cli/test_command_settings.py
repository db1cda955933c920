"""Settings as data for ``dxserial match`` and ``dxserial engine``: every declared setting
is an option with its flag and default and a row of the command's docs table; a match key
meaning what it means in a tournament file has the file's default and bounds, an engine's
the built-in player's; the checks' errors come from the declaration."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import typer
from helpers import run_in_process

from dxserial.cli import (
    demo_cmd,
    engine_settings,
    hub_engine_cmd,
    hub_settings,
    match_settings,
    moves_cmd,
    parse_cmd,
    ports_cmd,
    probe_cmd,
    rate_cmd,
    replay_cmd,
    selftest_cmd,
    serve_cmd,
    tournament_settings,
    udev_cmd,
    vpair_cmd,
)
from dxserial.cli.app import app
from dxserial.cli.options_table import options_table, page_with_table
from dxserial.engine.player import PlayerConfig
from dxserial.host.probe.prober import ProbeSettings
from dxserial.hub.adapter import AdapterConfig
from dxserial.line_settings import NULMODEM_LINE
from dxserial.match.rules import MatchConfig
from dxserial.protocol.session import Role
from dxserial.setting import Setting
from dxserial.tournament.keys import FILE_KEYS

DOCS = Path(__file__).resolve().parent.parent.parent / "docs" / "commands"
SETTINGS = match_settings.SETTINGS
COMMANDS: dict[str, tuple[Setting, ...]] = {
    "match": match_settings.SETTINGS, "engine": engine_settings.SETTINGS,
    "tournament": tournament_settings.SETTINGS, "hub": hub_settings.SETTINGS,
    "hub-engine": hub_engine_cmd.SETTINGS, "probe": probe_cmd.SETTINGS,
    "serve": serve_cmd.SETTINGS, "vpair": vpair_cmd.SETTINGS, "demo": demo_cmd.SETTINGS,
    "replay": replay_cmd.SETTINGS, "selftest": selftest_cmd.SETTINGS,
    "rate": rate_cmd.SETTINGS, "parse": parse_cmd.SETTINGS,
    "moves": moves_cmd.SETTINGS, "ports": ports_cmd.SETTINGS,
    **{f"udev {sub}": settings for sub, settings in udev_cmd.SETTINGS.items()},
}
_FILE = {one.key: one for one in FILE_KEYS}
#: Keys of a tournament file the match takes as options, meaning the same.
SHARED = {"minutes", "time_moves", "max_moves", "moves", "pdn", "pdn_notes", "move_timeout",
          "connect_timeout", "draw_rules", "on_false_claim", "time_control", "clock_margin",
          "increment", "move_time", "adjudicate_draw", "adjudicate_resign"}
#: What every command takes, in docs/commands/README.md rather than each page's table.
EVERYWHERE = {"verbose", "quiet"}


def params_of(name: str) -> dict[str, Any]:
    """``dxserial NAME``'s parameters (``udev install``: a group's subcommand's)."""
    command: Any = typer.main.get_command(app)
    for part in name.split():
        ctx = typer.Context(command, info_name="dxserial")
        command = command.resolve_command(ctx, [part])[1]
    return {p.name: p for p in command.params}


def match_params() -> dict[str, Any]:
    return params_of("match")


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_setting_is_an_option_and_a_row_of_the_docs_table(name: str) -> None:
    params = params_of(name)
    table = options_table(name)
    settings = COMMANDS[name]
    own = {key for key, param in params.items() if param.expose_value}  # not the shared -v/-q
    assert own == {one.key for one in settings}  # nothing hand-written beside them
    for one in settings:
        param = params[one.key]
        if one.argument:
            assert param.param_type_name == "argument", one.key
            assert param.required != one.optional, one.key
            continue
        flags = [f for spelled in one.flags or (one.flag,) for f in spelled.split("/")]
        assert set(flags) <= {*param.opts, *param.secondary_opts}, one.key
        assert param.default == one.typer_default or one.required, one.key
        assert param.hidden == one.hidden and param.required == one.required, one.key
        if one.key not in EVERYWHERE:
            assert f"| `{flags[0]}" in table, one.key


@pytest.mark.parametrize("name", sorted({name.split()[0] for name in COMMANDS}))
def test_the_docs_table_is_the_commands_own(name: str) -> None:
    page = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    assert page_with_table(name, page) == page, (
        f"docs/commands/{name}.md's options table differs from dxserial {name} --help: run "
        f"python -m dxserial.cli.options_table {name} --write"
    )


def test_a_key_shared_with_the_tournament_file_is_its_declaration() -> None:
    """Default, bounds and choices written once, in tournament/keys.FILE_KEYS; the option
    says the same (a time control of 5 minutes in a match is 5 in a tournament)."""
    by_key = {one.key: one for one in SETTINGS}
    assert set(by_key) >= SHARED
    for key in SHARED:
        mine, theirs = by_key[key], _FILE[key]
        assert mine.default == theirs.default, key
        assert (mine.choices, mine.maximum) == (theirs.choices, theirs.maximum), key
        if theirs.minimum is not None:
            assert (mine.minimum, mine.above) == (theirs.minimum, theirs.above), key
    params = match_params()
    assert params["minutes"].default == _FILE["minutes"].default
    assert params["max_moves"].default == _FILE["max_moves"].default


def test_the_commands_that_talk_nulmodem_take_its_settings() -> None:
    line = {one.key for one in NULMODEM_LINE}
    taking = [name for name, settings in COMMANDS.items() if line & {o.key for o in settings}]
    assert taking == ["match", "engine", "tournament", "hub"]


@pytest.mark.parametrize("name", ["match", "engine", "tournament", "hub"])
def test_the_serial_settings_are_the_lines_own(name: str) -> None:
    by_key = {one.key: one for one in COMMANDS[name]}
    # A tournament takes no --start-byte: the line's default.
    shared = [one for one in NULMODEM_LINE if one.key in by_key]
    assert {one.key for one in shared} >= {"echo_timeout", "max_attempts"}, name
    for one in shared:
        assert dataclasses.replace(by_key[one.key], panel=one.panel) == one


def test_a_tournament_option_over_a_file_key_is_the_keys_declaration() -> None:
    """--concurrency and --cluster check what the file's keys check; nothing given, the
    file's value holds (the option's default is none)."""
    by_key = {one.key: one for one in tournament_settings.SETTINGS}
    for key in ("concurrency", "cluster"):
        mine, theirs = by_key[key], _FILE[key]
        assert dataclasses.replace(mine, default=theirs.default, help=theirs.help,
                                   metavar=None, parse=None) == theirs, key
        assert params_of("tournament")[key].default is None, key


def test_the_engines_defaults_are_the_built_in_players() -> None:
    """Nothing given: the built-in engine plays with PlayerConfig's own defaults."""
    by_key = {one.key: one for one in engine_settings.SETTINGS}
    base = PlayerConfig(Role.FOLLOWER)
    for field in dataclasses.fields(PlayerConfig):
        one = by_key[field.name]  # every field of the player is an option
        if one.required:
            continue
        value = one.typer_default if one.parse is None else one.parse(one.typer_default, "")
        assert value == getattr(base, field.name), field.name


def test_defaults_match_the_match_configs() -> None:
    """Nothing given: the match the command plays is MatchConfig's own defaults."""
    base = MatchConfig()
    by_key = {one.key: one for one in SETTINGS}
    for key, field in (("games", "games"), ("minutes", "minutes"), ("max_moves", "moves"),
                       ("move_timeout", "move_timeout"), ("connect_timeout", "connect_timeout"),
                       ("gameend_timeout", "gameend_timeout"), ("pdn_notes", "pdn_notes")):
        assert by_key[key].default == getattr(base, field), key


@pytest.mark.parametrize(("args", "says"), [
    (("--move-timeout", "nan"), "--move-timeout must be > 0, not nan"),
    (("--connect-timeout", "0"), "--connect-timeout must be > 0, not 0.0"),
    (("--gameend-timeout", "-1"), "--gameend-timeout must be > 0, not -1.0"),
    (("--games", "0"), "--games must be >= 1, not 0"),
    (("--time", "1000"), "--time must be 0..999, not 1000"),
    (("--max-moves", "-1"), "--max-moves must be 0..999, not -1"),
    (("--on-engine-failure", "go"), "--on-engine-failure: 'go' is not 'stop' or 'continue'"),
    (("--link-b", "null"), "--link-b: 'null' is not 'nulmodem' or 'nul'"),
    (("--draw-rules", "x"), "--draw-rules: 'x' is not 'fmjd' or 'off'"),
    (("--increment", "-1"), "--increment must be >= 0, not -1.0"),
    (("--name", ""), "--name '': must be 1 to 32 characters"),
    (("--opening", "1. 99-98"), "--opening '1. 99-98': move '99-98'"),
    (("--start-byte", "0x03"), "--start-byte and --end-byte must differ"),
])
def test_a_mistake_is_one_line_naming_the_option(args: tuple[str, ...], says: str) -> None:
    done = run_in_process("match", "tcp://127.0.0.1:1", "tcp://127.0.0.1:2", *args)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"dxserial: error: {says}"), line


@pytest.mark.parametrize(("args", "says"), [
    (("--concurrency", "0"), "--concurrency must be 1..999, not 0"),
    (("--cluster", "10.0.0.5:8786"), "--cluster: cluster must be a Dask scheduler's address"),
    (("--name", ""), "--name '': must be 1 to 32 characters"),
    (("--link", "null"), "--link: 'null' is not 'nulmodem' or 'nul'"),
    (("--echo-timeout", "0"), "--echo-timeout must be > 0, not 0.0"),
])
def test_a_tournament_mistake_is_one_line_naming_the_option(
    args: tuple[str, ...], says: str, tmp_path: Path,
) -> None:
    """Told before the file is read (it need not exist)."""
    done = run_in_process("tournament", str(tmp_path / "none.toml"), *args)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"dxserial: error: {says}"), line


def test_the_hub_adapters_defaults_are_its_configs() -> None:
    by_key = {one.key: one for one in hub_settings.SETTINGS}
    for field in dataclasses.fields(AdapterConfig):
        assert by_key[field.name].default == getattr(AdapterConfig(), field.name), field.name


@pytest.mark.parametrize(("args", "says"), [
    (("--minutes", "0"), "--minutes must be 1..999, not 0"),
    (("--grace", "nan"), "--grace must be > 0, not nan"),
    (("--answer-timeout", "0"), "--answer-timeout must be > 0, not 0.0"),
    (("--connect-timeout", "-1"), "--connect-timeout must be > 0, not -1.0"),
    (("--name", ""), "--name '': must be 1 to 32 characters"),
    (("--end-byte", "0x02"), "--start-byte and --end-byte must differ"),
    (("--depth", "0"), "--depth 0: must be 1..10"),
])
def test_a_hub_mistake_is_one_line_naming_the_option(args: tuple[str, ...], says: str) -> None:
    command = ("hub-engine",) if args[0] == "--depth" else ("hub", "tcp://127.0.0.1:1")
    done = run_in_process(*command, *args)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"dxserial: error: {says}"), line


def test_the_probes_defaults_are_the_probers() -> None:
    by_key = {one.key: one for one in probe_cmd.SETTINGS}
    base = ProbeSettings()
    for key in ("listen", "wait", "answer_wait", "timeout", "speeds"):
        one = by_key[key]
        value = one.default if one.parse is None else one.parse(one.default, one.flag)
        assert value == getattr(base, key), key


@pytest.mark.parametrize(("args", "says"), [
    (("--timeout", "0"), "--timeout must be > 0, not 0.0"),
    (("--listen", "-1"), "--listen must be >= 0, not -1.0"),
    (("--wait", "nan"), "--wait must be > 0, not nan"),
    (("--speeds", "9600,x"), "--speeds: 'x' is not a whole number"),
    (("--speeds", ","), "--speeds: name at least one speed"),
])
def test_a_probe_mistake_is_one_line_naming_the_option(
    args: tuple[str, ...], says: str,
) -> None:
    done = run_in_process("probe", "socket://127.0.0.1:1", *args)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"dxserial: error: {says}"), line


@pytest.mark.parametrize(("args", "says"), [
    (("--role", "folower"), "--role: 'folower' is not 'follower' or 'initiator'"),
    (("--role", "follower", "--games", "0"), "--games must be >= 1, not 0"),
    (("--role", "initiator", "--time", "1000"), "--time must be 0..999, not 1000"),
    (("--role", "follower", "--answer-timeout", "0"), "--answer-timeout must be > 0, not 0.0"),
    (("--role", "follower", "--backreq", "no"), "--backreq: 'no' is not 'accept' or 'decline'"),
    (("--role", "follower", "--colour", "red"), "--colour: 'red' is not W (white) or Z"),
    (("--role", "follower", "--depth", "11"), "--depth 11: must be 1..10"),
])
def test_an_engine_mistake_is_one_line_naming_the_option(
    args: tuple[str, ...], says: str,
) -> None:
    done = run_in_process("engine", "tcp://127.0.0.1:1", *args)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"dxserial: error: {says}"), line
