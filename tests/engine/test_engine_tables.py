"""One ``[engines.NAME]`` table, one endpoint: ``match --engines``, the tournament and the
cluster worker make it with the same function, so a table's ``link`` and ``baud`` hold in
each (``match --engines`` once ignored them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dxserial.errors import ConfigError
from dxserial.match.standings import QuietProgress
from dxserial.tournament.engines import engine_endpoint, entry_endpoint, load_engines
from dxserial.tournament.runner import Tournament, load_spec
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions

TABLES = """
[engines.old]
endpoint = "/dev/ttyS9"
link = "nul"
baud = 2400

[engines.lab]
endpoint = "tcp://127.0.0.1:9"
"""


def seen(endpoint: EngineEndpoint) -> tuple[str, str, int]:
    return (str(endpoint.spec), endpoint.options.link, endpoint.options.serial.baudrate)


def test_a_table_gives_the_same_endpoint_in_a_match_and_a_tournament(tmp_path: Path) -> None:
    (tmp_path / "engines.toml").write_text(TABLES)
    (tmp_path / "event.toml").write_text(TABLES)
    options = LinkOptions()  # the command line's: nulmodem at 9600
    in_match = engine_endpoint("old", load_engines(tmp_path / "engines.toml"), options, tmp_path)
    tournament = Tournament(load_spec(tmp_path / "event.toml"), options, progress=QuietProgress())
    in_tournament = tournament.sides["old"].endpoint
    assert seen(in_match) == seen(in_tournament) == ("/dev/ttyS9", "nul", 2400)
    # A table that says nothing of its line takes the command line's.
    assert seen(tournament.sides["lab"].endpoint)[1:] == ("nulmodem", 9600)


def test_a_concurrent_slot_is_the_same_engine_with_a_folder_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "engines.toml").write_text(
        '[engines.e]\ncommand = ["true"]\nspeaks = "dxp-server"\n'
    )
    entry = load_engines(tmp_path / "engines.toml")["e"]
    first = entry_endpoint(entry, LinkOptions(), tmp_path)
    second = entry_endpoint(entry, LinkOptions(), tmp_path, slot=2)
    assert (first.label, second.label) == ("e", "e-2")  # type: ignore[attr-defined]
    assert second.log_path == tmp_path / "e-2.log"  # type: ignore[attr-defined]
    assert second.workdir == (tmp_path / "engines" / "e-2").absolute()  # type: ignore[attr-defined]


@pytest.mark.parametrize(("table", "says"), [
    ('endpoint = "/dev/x"\nlink = "nulmodm"\n', "link 'nulmodm' is not 'nulmodem' or 'nul'"),
    ('endpoint = "/dev/x"\nbaud = "fast"\n', "baud must be a whole number > 0"),
])
def test_a_tables_line_settings_are_checked_when_read(tmp_path: Path, table: str, says: str) -> None:
    (tmp_path / "engines.toml").write_text("[engines.e]\n" + table)
    with pytest.raises(ConfigError, match=says):
        load_engines(tmp_path / "engines.toml")


@pytest.mark.parametrize(("text", "says"), [
    ("ronuds = 2\n", "unknown setting 'ronuds' (did you mean 'rounds'?)"),
    ("[engines.a]\nendpint = \"x\"\n", "engine 'a': unknown setting 'endpint' (did you mean "
     "'endpoint'?)"),
    ("[engines.a]\ncommand = [\"true\"]\nspeaks = \"dxp-server\"\nfile = {}\n",
     "engine 'a': unknown setting 'file' (did you mean 'files'?)"),
])
def test_an_unknown_key_in_a_tournament_or_engines_file_is_told_with_the_closest(
    tmp_path: Path, text: str, says: str
) -> None:
    both = text + "[engines.b]\nendpoint = \"/dev/x\"\n[engines.c]\nendpoint = \"/dev/y\"\n"
    (tmp_path / "lab.toml").write_text(both)
    for read in (load_spec, load_engines):  # a tournament file; match --engines
        with pytest.raises(ConfigError) as caught:
            read(tmp_path / "lab.toml")
        assert says in str(caught.value) and "\n" not in str(caught.value)
