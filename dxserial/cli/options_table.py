"""The options table of a command's page under docs/commands/, made from the command itself
(its options come from its settings' declarations), so the page cannot drift from --help.

``python -m dxserial.cli.options_table bridge`` prints the table; ``--write`` puts it into
docs/commands/bridge.md between the usage line and the line after the table.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from dxserial.cli.app import app

__all__ = ["options_table", "page_with_table"]

#: What every command takes, documented once in docs/commands/README.md.
_EVERYWHERE = {"--verbose", "--quiet", "--help"}
#: The pages whose table is made here.
_TABLED = ("bridge", "engine", "match", "tournament", "hub", "hub-engine", "probe",
           "serve", "vpair", "demo", "replay", "selftest", "rate", "parse", "udev",
           "moves", "ports")


def _command(name: str) -> Any:
    """``dxserial NAME``'s command (``udev install``: a group's subcommand)."""
    command: Any = typer.main.get_command(app)
    for part in name.split():
        ctx = typer.Context(command, info_name="dxserial")
        command = command.resolve_command(ctx, [part])[1]
    return command


def _tables(name: str) -> list[tuple[str, str]]:
    """Each table of ``name``'s page, after the heading it follows (a group's page has
    one per subcommand, under ``### `dxserial udev install ...``)."""
    subcommands = getattr(_command(name), "commands", None)
    if subcommands is None:
        return [("", options_table(name))]
    return [(f"### `dxserial {name} {sub} ", options_table(f"{name} {sub}"))
            for sub in subcommands]


def _row(param: Any) -> str:
    flags = [o for o in (*param.opts, *param.secondary_opts) if o.startswith("--")]
    text = param.help or ""
    default = param.default
    if param.show_default and default not in (None, "") and not isinstance(default, bool):
        text += f" (default: `{default}`)"
    if param.envvar:
        text += f" [`{param.envvar}`]"
    shown = [f"{f} {param.metavar}" if param.metavar else f for f in flags]  # its value's form
    return f"| {', '.join(f'`{f}`' for f in shown)} | {text} |"


def options_table(name: str) -> str:
    """The markdown table of ``dxserial NAME``'s options, as its page shows it."""
    rows = ["| option | what it does |", "|---|---|"]
    for param in _command(name).params:
        if param.param_type_name == "option" and not _EVERYWHERE & set(param.opts):
            rows.append(_row(param))
    return "\n".join(rows)


def page_with_table(name: str, page: str) -> str:
    """``page`` with its options table (each, for a group) replaced by
    :func:`options_table`."""
    for heading, table in _tables(name):
        before, found, after = page.partition(heading) if heading else ("", "", page)
        if heading and not found:
            raise ValueError(f"docs/commands/{name}.md has no {heading.strip()!r}")
        head, sep, rest = after.partition("\n| option | what it does |\n")
        if not sep:
            raise ValueError(f"docs/commands/{name}.md has no options table")
        rows = rest.split("\n")
        while rows and rows[0].startswith("|"):  # the old table's rows
            rows.pop(0)
        page = f"{before}{heading}{head}\n{table}\n" + "\n".join(rows)
    return page


def main(argv: list[str]) -> int:
    write = "--write" in argv
    names = [a for a in argv if not a.startswith("-")] or list(_TABLED)
    docs = Path(__file__).resolve().parents[2] / "docs" / "commands"
    for name in names:
        if not write:
            print(options_table(name))
            continue
        path = docs / f"{name}.md"
        path.write_text(page_with_table(name, path.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
