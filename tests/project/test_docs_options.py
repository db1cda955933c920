"""Every option of every command is documented in docs/ (issue 33): the README is short,
so the full options live in one page per command, and a new option must go there too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from dxserial.cli.app import COMMANDS, app

DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
#: What every command has from click itself, documented once in docs/commands/README.md.
BUILT_IN = {"--help"}


def commands() -> Iterator[tuple[str, Any]]:
    """(``dxserial bridge``, its click command) for every command and subcommand, loaded
    as ``dxserial CMD`` loads it (with the options every command shares)."""
    group = typer.main.get_command(app)
    ctx = typer.Context(group, info_name="dxserial")  # typer vendors click privately
    yield "dxserial", group
    for name in COMMANDS:
        _, command, _ = group.resolve_command(ctx, [name])  # type: ignore[attr-defined]
        yield from _with_subcommands(f"dxserial {name}", command)


def _with_subcommands(path: str, command: Any) -> Iterator[tuple[str, Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _with_subcommands(f"{path} {name}", sub)


def long_options(command: Any) -> list[str]:
    found = []
    for param in command.params:
        if param.param_type_name == "option":
            found += [o for o in (*param.opts, *param.secondary_opts) if o.startswith("--")]
    return [o for o in found if o not in BUILT_IN]


def documented(text: str, option: str) -> bool:
    return re.search(re.escape(option) + r"(?![\w-])", text) is not None


def page_for(path: str) -> Path:
    words = path.split()
    return DOCS / "commands" / f"{words[1] if len(words) > 1 else 'README'}.md"


def test_every_option_of_every_command_is_in_docs() -> None:
    text = "\n".join(p.read_text() for p in sorted(DOCS.rglob("*.md")))
    missing = [
        (path, option)
        for path, command in commands()
        for option in long_options(command)
        if not documented(text, option)
    ]
    assert not missing, "options no page under docs/ names; add each to its command's page:\n" + "\n".join(
        f"  {path} {option}: add `{option}` to {page_for(path).relative_to(DOCS.parent)}"
        for path, option in missing
    )


def test_the_walk_sees_every_command_and_their_options() -> None:
    """The check above cannot pass by finding nothing."""
    seen = dict(commands())
    assert {f"dxserial {name}" for name in COMMANDS} <= set(seen)
    assert "dxserial udev install" in seen
    assert "--kick-old" in long_options(seen["dxserial bridge"])
    assert "--no-learn-start" in long_options(seen["dxserial engine"])
    assert "--verbose" in long_options(seen["dxserial parse"])  # shared, added on load
    assert "--version" in long_options(seen["dxserial"])
    assert sum(len(long_options(c)) for c in seen.values()) > 150


def test_an_option_missing_from_docs_is_named_with_where_to_add_it() -> None:
    assert documented("`--peer-grace` seconds", "--peer-grace")
    assert not documented("`--peer-grace-x`", "--peer-grace")
    assert not documented("--peer", "--pee")
    assert page_for("dxserial udev install") == DOCS / "commands" / "udev.md"
