"""Every TOML reader is bounded: a file of nested brackets is refused in one line, never a
RecursionError traceback (issue #36, point 7)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dxserial.config import load_config
from dxserial.errors import ConfigError
from dxserial.serve.rig import parse_rig, read_rig
from dxserial.serve.runner import Daemon
from dxserial.tomltext import MAX_TOML_BYTES, MAX_TOML_DEPTH, nesting, parse_toml
from dxserial.tournament.engines import load_engines
from dxserial.tournament.spec import TournamentSpec

#: The file of the issue: 100 KB of nested brackets.
NESTED = "x = " + "[" * 100_000 + "\n"


def one_line(exc: pytest.ExceptionInfo[ConfigError]) -> str:
    text = str(exc.value)
    assert "\n" not in text and len(text) < 300, text
    return text


def test_a_file_of_nested_brackets_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError) as exc:
        parse_toml(NESTED, "f.toml")
    assert one_line(exc) == (f"f.toml: line 1: values nested more than {MAX_TOML_DEPTH} deep "
                             "(arrays or inline tables): not a settings file")


def test_inline_tables_count_and_brackets_in_strings_and_comments_do_not() -> None:
    assert nesting("a = [[1], {b = [2]}]\n[t]\n[[u]]\n") == (3, 1)
    text = 's = "[[[[\\"[["\nm = """\n[[[[\n"""\nl = \'{{{{\'\n# [[[[[[\nx = [[1]]\n'
    assert nesting(text) == (2, 7)
    assert parse_toml(text, "f")["x"] == [[1]]
    deep = "x = " + "{a = " * (MAX_TOML_DEPTH + 1) + "1" + "}" * (MAX_TOML_DEPTH + 1)
    with pytest.raises(ConfigError, match="nested more than"):
        parse_toml(deep, "f")
    fine = "x = " + "[" * MAX_TOML_DEPTH + "]" * MAX_TOML_DEPTH
    assert parse_toml(fine, "f")["x"]


def test_too_large_and_not_toml_are_one_line() -> None:
    with pytest.raises(ConfigError) as exc:
        parse_toml("# " + "x" * MAX_TOML_BYTES, "big.toml")
    assert "more than the 1048576 bytes" in one_line(exc)
    with pytest.raises(ConfigError) as exc:
        parse_toml("a = = 1", "bad.toml")
    assert one_line(exc).startswith("bad.toml: not valid TOML: ")


def test_every_file_reader_refuses_nested_brackets_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "nested.toml"
    path.write_text(NESTED)
    readers = [
        lambda: load_config(path, {"port": str}),  # dxserial bridge --config
        lambda: read_rig(path),  # dxserial serve
        lambda: load_engines(path),  # dxserial match --engines
        lambda: TournamentSpec.from_toml(NESTED, source=str(path)),  # dxserial tournament
    ]
    for read in readers:
        with pytest.raises(ConfigError) as exc:
            read()
        assert one_line(exc).startswith(f"{path}: line 1: values nested more than")


def test_a_reload_of_nested_brackets_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "rig.toml"
    text = '[lines.a]\nport = "memory://a"\nlisten = "127.0.0.1:0"\n'
    path.write_text(text)
    daemon = Daemon(parse_rig(text, path))
    path.write_text(NESTED)
    summary = asyncio.run(daemon.reload())
    assert summary == (f"reload refused, every line runs on as it was: {path}: line 1: values "
                       f"nested more than {MAX_TOML_DEPTH} deep (arrays or inline tables): not a "
                       "settings file")
