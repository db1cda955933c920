"""The wheel as pip builds it: the stand-in engines the docs tell users to run are in it, the
suite's harness (what pyproject.toml leaves out) is not, and a stand-in runs from it alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import build_wheel
from test_wheel_contents import _documented, _excluded

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


def test_the_built_wheel_ships_the_standins_and_not_the_harness(tmp_path: Path) -> None:
    with build_wheel(tmp_path) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "site")
    for module in _documented():
        assert module.replace(".", "/") + ".py" in names, module
    for left_out in _excluded():
        prefix = left_out.replace(".", "/") + "/"
        assert not [n for n in names if n.startswith(prefix)], prefix
    # PYTHONPATH comes before the editable checkout on sys.path: the wheel's files answer.
    strict = next(m for m in _documented() if m.endswith(".strict"))
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    where = subprocess.run(
        [sys.executable, "-c", f"import {strict} as m; print(m.__file__)"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert where.stdout.strip().startswith(str(tmp_path / "site")), where.stderr
    shown = subprocess.run(
        [sys.executable, "-m", strict, "--help"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert shown.returncode == 0 and "--role" in shown.stdout, shown.stderr
