"""``dxserial replay``: traces and PDN files shown move by move, run as a real process."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from helpers import run_in_process, write_trace

from dxserial.game.pdn import write_pdn
from dxserial.game.record import GameRecord, RecordedMove, Recorder
from dxserial.game.referee import Referee
from dxserial.protocol.messages import Colour, parse
from dxserial.protocol.session import Role

REQ = b"R01Ini                             Z005000A"
ACC = b"AFol                             0"


@pytest.fixture(scope="module")
def scan_trace(tmp_path_factory: pytest.TempPathFactory, scan_game: list[dict[str, str]]) -> Path:
    path = tmp_path_factory.mktemp("trace") / "scan.jsonl"
    items = [
        ("serial" if item["from"] == "initiator" else "tcp", item["message"].encode(), "forwarded")
        for item in scan_game
    ]
    return write_trace(path, items)


def test_trace_moves_only(scan_trace: Path) -> None:
    out = run_in_process("replay", scan_trace, "--no-board")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("game 1: White Scan 2.0 (initiator) vs Black Scan 2.0 (follower)")
    assert "ply 1: White 34-29  [M0000342900]" in lines
    assert "ply 150: Black 22-6  [M0000220600]" in lines
    assert any(line.startswith("result 1-1 (draw") for line in lines)
    assert any(line.startswith("game 2: White Scan 2.0 (follower)") for line in lines)
    assert "+---" not in out.stdout
    assert lines[-1] == "2 games, 0 violations"


def test_trace_with_boards_and_one_game(scan_trace: Path) -> None:
    out = run_in_process("replay", scan_trace, "--game", "2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("game 2:")
    assert "game 1:" not in out.stdout
    assert out.stdout.count("+------------------------------+") == 2 * 3  # start + 2 plies
    assert "result * (cut short: the trace ends during the game)" in out.stdout
    assert out.stdout.splitlines()[-1] == "1 game, 0 violations"


def test_trace_final_position_only(scan_trace: Path) -> None:
    out = run_in_process("replay", scan_trace, "--final", "--game", "1")
    assert out.returncode == 0, out.stderr
    assert "ply " not in out.stdout
    assert out.stdout.count("+------------------------------+") == 2
    assert "| Z     W     .     .     .    |   6-10" in out.stdout  # two kings left
    assert "result 1-1" in out.stdout


def test_trace_violations_and_dropped_messages(tmp_path: Path) -> None:
    trace = write_trace(
        tmp_path / "bad.jsonl",
        [
            ("serial", REQ, "forwarded"),
            ("tcp", ACC, "forwarded"),
            ("serial", b"M0000322800", "forwarded"),
            ("serial", b"M0000322800", "duplicate"),  # dropped by the bridge: not applied
            ("tcp", b"M0000192500", "forwarded"),  # illegal: 19 and 25 are not neighbours
            ("tcp", b"Mxx", "dropped"),  # not even a message
            ("tcp", b"M0000192300", "forwarded"),  # out of turn (the illegal move counted)
        ],
    )
    out = run_in_process("replay", trace, "--no-board")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "ply 1: White 32-28  [M0000322800]" in lines
    assert any("MOVE [M0000322800]: not forwarded (duplicate), not applied" in line for line in lines)
    alerts = [line for line in lines if line.startswith("!!")]
    assert alerts[0].startswith("!! ply 2: follower (Black) played 19-25: illegal move: ")
    assert alerts[1].startswith("!! ply 2: tcp->serial: invalid message 'Mxx' (dropped): MOVE:")
    assert "out of turn" in alerts[2]
    assert any("record unreliable from ply 2" in line for line in lines)
    assert lines[-1] == "1 game, 3 violations"


def test_pdn_replay(tmp_path: Path, scan_game: list[dict[str, str]]) -> None:
    referee = Referee()
    recorder = Recorder(clock=lambda: datetime(2024, 5, 1, 12, 0, 0))
    records = []
    for item in scan_game:
        msg, sender = parse(item["message"].encode()), Role(item["from"])
        done = recorder.observe(msg, sender, referee.observe(msg, sender))
        if done is not None:
            records.append(done)
    path = write_pdn(records[0], tmp_path)
    out = run_in_process("replay", path, "--no-board")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "ply 1: White 34-29" in lines and "ply 150: Black 22-6" in lines
    assert any(line.startswith("result 1-1 (draw") for line in lines)
    assert lines[-1] == "1 game, 0 violations"
    final = run_in_process("replay", path, "--final")
    assert "| Z     W     .     .     .    |   6-10" in final.stdout


def test_pdn_with_an_illegal_move_and_a_violation_comment(tmp_path: Path) -> None:
    record = GameRecord(white="A", black="B", started=datetime(2024, 5, 1))
    record.moves = [
        RecordedMove("32-28", Colour.WHITE, 1),
        RecordedMove("19-25", Colour.BLACK, 1, legal=False),
        RecordedMove("28-23", Colour.WHITE, 2),
    ]
    record.add_comment("violation: follower (Black): illegal move 19-25: no such move", 2)
    record.add_comment("violation: initiator (White): MOVE 32-28 sent again: duplicate", 1)
    path = write_pdn(record, tmp_path)
    out = run_in_process("replay", path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "!! ply 1: initiator (White): MOVE 32-28 sent again: duplicate" in lines
    assert any(line.startswith("!! ply 2: Black 19-25: illegal move:") for line in lines)
    assert "   (the moves after this one are not replayed)" in lines
    assert "ply 3: White 28-23" in lines
    assert lines[-1] == "1 game, 2 violations"  # the illegal move is counted once


@pytest.mark.parametrize(
    ("content", "message", "code"),
    [
        (None, "cannot read", 1),  # the job was not done: 1, as the help and page say
        ("this is not a game\n", "is not a PDN tag", 1),
        ("", "no game found", 1),
        ('{"kind": "event", "text": "bridge started"}\n', "no DXP message", 1),
    ],
)
def test_unreadable_file_is_one_line_and_exit_1(
    tmp_path: Path, content: str | None, message: str, code: int
) -> None:
    path = tmp_path / "input"
    if content is not None:
        path.write_text(content)
    out = run_in_process("replay", path)
    assert out.returncode == code
    assert out.stdout == ""
    assert out.stderr.startswith("dxserial: error: ") and message in out.stderr
    assert len(out.stderr.splitlines()) == 1


def test_no_such_game(scan_trace: Path) -> None:
    out = run_in_process("replay", scan_trace, "--game", "3")
    assert out.returncode == 1
    assert "has 2 games: there is no game 3" in out.stderr


def test_new_connection_in_a_trace(tmp_path: Path) -> None:
    req_tcp = b"R01Other                           W005000A"
    trace = write_trace(
        tmp_path / "two.jsonl",
        [
            ("serial", REQ, "forwarded"),
            ("tcp", ACC, "forwarded"),
            ("serial", b"M0000322800", "forwarded"),
            # The TCP peer went away; a new one connects and is the initiator this time.
            ("tcp", req_tcp, "forwarded"),
            ("serial", ACC, "forwarded"),
            ("serial", b"M0000322800", "forwarded"),  # the follower plays White here
            ("tcp", REQ, "forwarded"),  # flagged by the bridge: a real violation
        ],
        errors={6: "the tcp engine (initiator) broke the dialogue"},
    )
    out = run_in_process("replay", trace, "--no-board")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "result * (cut short: a new GAMEREQ started over (new connection?))" in lines
    assert any(line.startswith("game 2: White Fol (follower) vs Black Other (initiator)") for line in lines)
    [alert] = [line for line in lines if line.startswith("!!")]
    assert alert.startswith("!! ply 1: initiator (Black) sent GAMEREQ out of turn: a game is running")
    assert lines[-1] == "2 games, 1 violation"


def test_check_on_a_missing_file_exits_1_as_its_help_says(tmp_path: Path) -> None:
    """Issue 38 point 2: `replay MISSING --check` is exit 1 ("as when the file cannot be read")."""
    out = run_in_process("replay", tmp_path / "missing.jsonl", "--check")
    assert out.returncode == 1
    assert out.stderr.startswith("dxserial: error: cannot read")
