"""The wheel ships what a user runs and nothing only the suite needs, and what it ships works
without what it leaves out.

The suite's harness (``dxserial/testing/``: processes, ptys, rigs, fuzz targets) is left out
of the wheel by ``[tool.hatch.build.targets.wheel] exclude`` in pyproject.toml; the stand-in
engines the docs tell users to run (``python -m dxserial...``) are shipped.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import dxserial

PACKAGE = Path(dxserial.__file__).parent
ROOT = PACKAGE.parent


def _excluded() -> list[str]:
    """Dotted names of the packages the wheel leaves out."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = config["tool"]["hatch"]["build"]["targets"]["wheel"]
    return [p.strip("/").replace("/", ".") for p in wheel.get("exclude", [])]


def _is_excluded(module: str, excluded: list[str]) -> bool:
    return any(module == e or module.startswith(e + ".") for e in excluded)


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def test_what_the_wheel_ships_imports_nothing_it_leaves_out() -> None:
    excluded = _excluded()
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if _is_excluded(_module(path), excluded):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names] if isinstance(node, ast.Import)
                else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            wrong += [f"{path.relative_to(ROOT)} imports {n}" for n in names
                      if _is_excluded(n, excluded)]
    assert not wrong, "\n".join(wrong)


def _documented() -> list[str]:
    """Every ``python -m dxserial...`` the docs and the README tell users to run."""
    found = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        if page.name not in ("testing.md", "layout.md"):  # the suite's own pages
            found |= set(re.findall(r"python3? -m (dxserial(?:\.\w+)+)", page.read_text()))
    return sorted(found)


def test_every_module_the_docs_tell_users_to_run_is_shipped() -> None:
    excluded = _excluded()
    documented = _documented()
    assert documented, "the docs name no module for users to run"
    missing = [m for m in documented if _is_excluded(m, excluded)]
    assert not missing, f"documented for users but left out of the wheel: {missing}"
    for module in documented:
        assert (ROOT / module.replace(".", "/")).with_suffix(".py").is_file(), module
