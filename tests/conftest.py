"""Shared fixtures: the protocol reference data (in tests/data, part of the repository)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.rig import Rig, RigFactory, rig_factory_for
from hypothesis import settings

# CI runs the same examples every time (a red CI must be reproducible); at a desk,
# hypothesis explores new ones on every run.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


#: vectors.json, the Scan-vs-Scan game and DRAUGHTS.md: copies of the protocol reference.
DATA_DIR = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def spec_dir() -> Path:
    return DATA_DIR


@pytest.fixture(scope="session")
def vectors(spec_dir: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((spec_dir / "vectors.json").read_text())
    return data


@pytest.fixture(scope="session")
def scan_game(spec_dir: Path) -> list[dict[str, str]]:
    """Every message of the Scan-vs-Scan game: dicts with 'from' and 'message'."""
    lines = (spec_dir / "scan-vs-scan-game.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture
def rig_factory(tmp_path: Path) -> Iterator[RigFactory]:
    """Start `dxserial vpair` + `dxserial bridge` rigs; all stopped after the test."""
    with rig_factory_for(tmp_path) as make:
        yield make


@pytest.fixture
def rig(rig_factory: RigFactory) -> Rig:
    return rig_factory()
