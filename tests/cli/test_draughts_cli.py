"""``dxserial moves``: the table of legal moves, perft lines, and a bad FEN."""

from __future__ import annotations

from helpers import run_in_process
from typer.testing import CliRunner

from dxserial.cli import app

runner = CliRunner()


def test_moves_of_a_rulebook_position() -> None:
    result = runner.invoke(app, ["moves", "W:WK47:B14,19,29,31,42"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "White to move, 2 legal moves; a capture of 4 pieces is compulsory",
        "PDN             DXP MOVE             captured",
        "47x38x20x9x36   M000047360414293142  14,29,31,42",
        "47x38x24x13x36  M000047360419293142  19,29,31,42",
    ]


def test_moves_quiet_and_board() -> None:
    result = runner.invoke(app, ["moves", "W:W28", "--board"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("+---")
    assert "White to move, 2 legal moves" in lines
    assert lines[-2:] == ["28-22  M0000282200  -", "28-23  M0000282300  -"]


def test_perft_from_the_start() -> None:
    result = runner.invoke(app, ["moves", "--perft", "3"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "White to move, 9 legal moves"
    assert "32-28  M0000322800  -" in lines
    assert lines[-3:] == ["perft 1: 9", "perft 2: 81", "perft 3: 658"]


def test_no_legal_moves() -> None:
    result = runner.invoke(app, ["moves", "B:W28:B"])
    assert result.exit_code == 0
    assert result.output.strip() == "Black to move has no legal move and has lost"


def test_help_explains_every_option() -> None:
    result = runner.invoke(app, ["moves", "--help"])
    assert result.exit_code == 0
    for word in ("--perft", "--board", "FEN"):
        assert word in result.output


def test_bad_fen_is_one_line_and_exit_1() -> None:
    proc = run_in_process("moves", "W:W31-51:B1-20")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "dxserial: error: FEN 'W:W31-51:B1-20': '31-51': square 51 is not in 1..50"
    ]
