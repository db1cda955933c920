"""The tournament file's cluster settings: the scheduler's address, where an engine's games
may run (worker, resources), and a game's placement from its two engines (no Dask needed)."""

from __future__ import annotations

import sys

import pytest

from dxserial.cluster.jobs import place, placement
from dxserial.errors import ConfigError
from dxserial.tournament.spec import TournamentSpec

ENGINE = f'command = ["{sys.executable}", "-m", "dxserial", "engine", "listen://127.0.0.1:{{port}}"]'


def spec(top: str = "", a: str = "", b: str = 'endpoint = "tcp://10.0.0.9:27531"') -> TournamentSpec:
    text = f'{top}\n[engines.a]\n{ENGINE}\nspeaks = "dxp-server"\n{a}\n[engines.b]\n{b}\n'
    return TournamentSpec.from_toml(text, source="lab.toml")


def test_no_cluster_key_is_the_single_machine() -> None:
    plain = spec()
    assert plain.cluster is None and not any(e.bound for e in plain.engines)


def test_cluster_and_placement_keys_are_read() -> None:
    lab = spec('cluster = "tcp://10.0.0.5:8786"', 'resources = { serial = 1, dos = 2 }',
               'endpoint = "/dev/ttyUSB0"\nworker = "lab-pc-3"')
    a, b = lab.engines
    assert lab.cluster == "tcp://10.0.0.5:8786"
    assert a.resources == (("dos", 2.0), ("serial", 1.0)) and a.worker is None
    assert b.worker == "lab-pc-3" and b.bound
    where = place(a, b)
    assert where.workers == ("lab-pc-3",)
    assert where.resources == {"dos": 2.0, "serial": 1.0}
    assert where.text() == "worker lab-pc-3, dos=2, serial=1"
    assert placement(a).text() == "dos=2, serial=1" and placement(b).text() == "worker lab-pc-3"
    assert placement(spec().engines[0]).text() == "any worker"


def test_two_engines_on_serial_lines_hold_a_line_each() -> None:
    lab = spec(a="resources = { serial = 1 }", b='endpoint = "/dev/ttyS0"\nresources = { serial = 1 }')
    assert place(*lab.engines).resources == {"serial": 2.0}


def test_engines_bound_to_two_workers_cannot_meet() -> None:
    lab = spec(a='worker = "w1"', b='endpoint = "/dev/ttyS0"\nworker = "w2"')
    with pytest.raises(ValueError, match="different workers"):
        place(*lab.engines)


@pytest.mark.parametrize(
    ("top", "a", "b", "words"),
    [
        ('cluster = "10.0.0.5:8786"', "", 'endpoint = "tcp://h:1"', 'cluster = "tcp://HOST:PORT"'),
        ('cluster = "tcp://10.0.0.5"', "", 'endpoint = "tcp://h:1"', "Dask scheduler's address"),
        ("cluster = 8786", "", 'endpoint = "tcp://h:1"', "not 8786"),
        ("", "resources = { serial = 0 }", 'endpoint = "tcp://h:1"', "amounts > 0"),
        ("", 'resources = "serial=1"', 'endpoint = "tcp://h:1"', "resources = { serial = 1 }"),
        ("", 'worker = ""', 'endpoint = "tcp://h:1"', "worker's name"),
        ("", "worker = 3", 'endpoint = "tcp://h:1"', "worker's name"),
        # On a cluster a serial line (or a listening endpoint) is on one host: say which.
        ('cluster = "tcp://h:8786"', "", 'endpoint = "/dev/ttyUSB0"', "is on one host"),
        ('cluster = "tcp://h:8786"', "", 'endpoint = "listen://0.0.0.0:27531"', "worker ="),
    ],
)
def test_a_bad_cluster_setting_is_one_line(top: str, a: str, b: str, words: str) -> None:
    with pytest.raises(ConfigError, match=r"lab\.toml") as caught:
        spec(top, a, b)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_serial_engine_without_a_host_is_fine_on_one_machine() -> None:
    assert spec(b='endpoint = "/dev/ttyUSB0"').cluster is None
