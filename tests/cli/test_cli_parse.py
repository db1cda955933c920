"""``dxserial parse`` as a user runs it: a real subprocess of the installed CLI."""

from __future__ import annotations

import json

from helpers import run_in_process


def test_parse_prints_type_and_fields() -> None:
    result = run_in_process("parse", "M0012061100", "E20")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "MOVE seconds=12 from_square=6 to_square=11 captured=[]"
    assert lines[1] == "GAMEEND reason=2 stop=0"


def test_invalid_message_prints_one_line_and_exit_code_1() -> None:
    result = run_in_process("parse", "M0012061100", "M00120X1100")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[1] == (
        "invalid: M00120X1100: MOVE: field 'from' at offset 5: '0X' is not a square 01..50"
    )
    assert "Traceback" not in result.stderr


def test_hex_input_with_trailing_nul_and_json_output() -> None:
    result = run_in_process("parse", "--hex", "--json", "4d3030313230363131303000")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["type"] == "MOVE" and record["raw"] == "M0012061100"
    assert record["from_square"] == 6


def test_bad_hex_is_a_one_line_error() -> None:
    result = run_in_process("parse", "--hex", "zz")
    assert result.returncode == 1
    assert "is not hexadecimal" in result.stdout


def test_stdin_lines_and_lenient_warnings() -> None:
    req = "R01" + "Moby Dam".ljust(32) + "Z0.5075A"
    result = run_in_process("parse", "--lenient", stdin=f"{req}\nK0\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("GAMEREQ ")
    assert "warning: GAMEREQ: field 'minutes'" in result.stdout
    assert result.stdout.rstrip().endswith("BACKACC code=0")
    strict = run_in_process("parse", stdin=f"{req}\n")
    assert strict.returncode == 1


def test_version_and_usage_errors() -> None:
    version = run_in_process("--version")
    assert version.returncode == 0 and version.stdout.startswith("dxserial ")
    usage = run_in_process("parse", "--no-such-option")
    assert usage.returncode == 2
    assert "Traceback" not in usage.stderr
