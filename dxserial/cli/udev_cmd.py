"""``dxserial udev``: the udev rules and systemd unit that bring a bridge up by itself.

``install`` never runs sudo: without permission it prints the command to run as root and
exits with 77 (EX_NOPERM), so a script can tell "run me as root" from other failures.
"""

from __future__ import annotations

import dataclasses
import grp
import inspect
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

import typer

from dxserial.cli.app import app
from dxserial.cli.options import parameters
from dxserial.errors import ConfigError
from dxserial.files import read_text
from dxserial.host.udev.files import RULES_FILE, Kind, shipped_file
from dxserial.host.udev.install import (
    EXIT_NOPERM,
    InstallPermissionError,
    check_group,
    check_name,
    check_rig_path,
    dxserial_executable,
    install,
    plan_install,
    plan_serve,
    render,
    uninstall,
    unit_cannot_run,
)
from dxserial.host.udev.lint import check_rules, count_rules, udevadm_verify
from dxserial.setting import Setting, checked

udev_app = typer.Typer(
    name="udev",
    help="Install the udev rules and systemd unit that start a bridge when an adapter appears.",
    no_args_is_help=True,
)
app.add_typer(udev_app, name="udev")

_GROUP_HELP = "Group that may open the adapters (Arch and some others use uucp)."
_EXEC_HELP = "Path of dxserial for the unit's ExecStart (default: this dxserial)."

_VERBS = {
    "write": "wrote",
    "update": "updated",
    "unchanged": "unchanged",
    "keep": "kept",
    "conflict": "conflict",
    "remove": "removed",
    "modified": "kept",
}


_ROOT = Setting("root", Path("/"), "Install under this folder instead of /.", kind=Path,
                cli_default=Path("/"), metavar="DIR", show_default=True)
_GROUP = Setting("group", "dialout", _GROUP_HELP, metavar="GROUP", show_default=True)
_EXEC = Setting("exec_path", None, _EXEC_HELP, flags=("--exec",), metavar="PATH")


def _group(value: Any, flag: str) -> str:
    return check_group(value)


def _names(value: Any, flag: str) -> list[str]:
    return [check_name(name) for name in value]


#: Every setting of each ``dxserial udev`` command, in the order of its --help.
SETTINGS: dict[str, tuple[Setting, ...]] = {
    "print": (
        Setting("what", Kind.rules, "Which file: rules, unit, config or serve (dxserial serve's "
                "unit).", kind=Kind, argument=True, optional=True, show_default=True),
        Setting("name", "NAME", "Adapter name to fill into the config.", metavar="NAME",
                show_default=True),
        _GROUP,
        _EXEC,
    ),
    "install": (
        _ROOT,
        Setting("names", None, "Write /etc/dxserial/NAME.toml for this adapter name (as "
                "`dxserial ports` shows it), unless it exists. Repeat for more. Without it: "
                "/etc/dxserial/example.toml.", flags=("--name",), many=True, metavar="NAME",
                parse=_names),
        dataclasses.replace(_GROUP, parse=_group),
        _EXEC,
        Setting("force", False, "Replace rules or unit files that were edited or not ours.",
                kind=bool, show_default=True),
        Setting("serve", None, "Instead: one systemd service, dxserial-serve.service, that runs "
                "'dxserial serve RIG' for every line of that rig file (checked first).",
                kind=Path, metavar="RIG"),
    ),
    "uninstall": (dataclasses.replace(_ROOT, help="Uninstall from under this folder."),),
    "check": (
        Setting("file", None, "Rules file to check (default: the shipped one).", kind=Path,
                argument=True, optional=True),
        Setting("use_udevadm", True, "Also run `udevadm verify` where it exists.", kind=bool,
                flags=("--udevadm/--no-udevadm",), show_default=True),
    ),
}


def _values(command: str, given: dict[str, Any]) -> dict[str, Any]:
    return {one.key: checked(one, given[one.key], option=True) for one in SETTINGS[command]}


def _declared(command: Any, name: str) -> None:
    command.__signature__ = inspect.Signature(parameters(SETTINGS[name]))
    udev_app.command(name)(command)


def print_command(**given: Any) -> None:
    """Print a shipped file as install would write it."""
    values = _values("print", given)
    text = render(values["what"], exe=values["exec_path"], group=values["group"],
                  name=values["name"])
    typer.echo(text, nl=False)


_declared(print_command, "print")


def install_command(**given: Any) -> None:
    """Write the udev rules, the systemd unit and an example configuration.

    Configuration files are never replaced. Prints the commands that make udev and
    systemd read the new files; runs none of them. Exit code 77: no permission (the
    command to run as root is printed).
    """
    values = _values("install", given)
    root, names, group, exec_path, force, serve = values.values()
    exe = exec_path or dxserial_executable()
    unreachable = unit_cannot_run(exe, this=exec_path is None)
    if unreachable:
        raise ConfigError(f"not installing: {unreachable}")
    rig = spec = None
    if serve is not None:
        if names:
            raise ConfigError("--serve and --name exclude each other: the rig file names "
                              "its lines")
        rig, spec = _rig(root, serve)
        targets = plan_serve(root, rig, exe=exe, group=group)
    else:
        targets = plan_install(root, names or [], exe=exe, group=group)
    try:
        actions = install(targets, force=force)
    except InstallPermissionError as exc:
        _no_permission(exc, _install_argv(values, rig))
    for action in actions:
        note = f" ({action.note})" if action.note else ""
        typer.echo(f"{_VERBS[action.verb]:<10}{action.path}{note}")
    if any(a.verb == "conflict" for a in actions):
        typer.echo("nothing written.", err=True)
        raise typer.Exit(1)
    if root == Path("/"):
        try:
            grp.getgrnam(group)
        except KeyError:
            typer.echo(
                f"warning: group {group} does not exist here; create it (groupadd --system "
                f"{group}) or install with --group",
                err=True,
            )
    if rig is not None and spec is not None:
        _serve_steps(root, rig, len(spec.lines))
        return
    _next_steps(root, names or [])


_declared(install_command, "install")


def _rig(root: Path, serve: Path) -> tuple[str, Any]:
    """The rig file as the unit names it, and its lines (a rig with a mistake is not
    installed)."""
    from dxserial.serve.rig import read_rig

    rig = str(serve.absolute())
    if root != Path("/") and serve.absolute().is_relative_to(root.absolute()):
        # The rig file of the system under --root: the unit names it by its path there.
        rig = "/" + str(serve.absolute().relative_to(root.absolute()))
    check_rig_path(rig)
    return rig, read_rig(serve)


def _install_argv(values: dict[str, Any], rig: str | None) -> list[str]:
    """The install command line as given, to run as root."""
    argv = ["udev", "install"]
    if values["root"] != Path("/"):
        argv += ["--root", str(values["root"])]
    for name in values["names"] or ():
        argv += ["--name", name]
    if values["group"] != "dialout":
        argv += ["--group", values["group"]]
    if values["exec_path"]:
        argv += ["--exec", values["exec_path"]]
    if rig is not None:
        argv += ["--serve", rig]
    if values["force"]:
        argv.append("--force")
    return argv


def _serve_steps(root: Path, rig: str, lines: int) -> None:
    steps = [
        "",
        "Next, as root:",
        "  systemctl daemon-reload",
        "  systemctl enable --now dxserial-serve.service",
        f"It serves the {lines} line(s) of {rig}. After editing that file:",
        "  systemctl reload dxserial-serve.service",
        f"Every line: sudo dxserial serve {rig} --status",
        "A line must not also have a dxserial@NAME unit (one process per port).",
    ]
    if root != Path("/"):
        steps.append(f"(The files are under {root}: run these on the system that uses them.)")
    typer.echo("\n".join(steps))


def _next_steps(root: Path, names: list[str]) -> None:
    name = names[0] if names else "NAME"
    # The example is written only without --name; with names, their files are the examples.
    example = "" if names else " (example: /etc/dxserial/example.toml)"
    lines = [
        "",
        "Next, as root:",
        "  udevadm control --reload",
        "  udevadm trigger --subsystem-match=tty --subsystem-match=usb-serial",
        "  systemctl daemon-reload",
        "Then `dxserial ports` shows each adapter's name. Put its bridge settings in",
        f"/etc/dxserial/{name}.toml{example} and replug the adapter, or:",
        f"  systemctl start dxserial@{name}.service",
        "The unit runs as a dynamic user (DynamicUser=yes): there is no account to create.",
    ]
    if root != Path("/"):
        lines.append(f"(The files are under {root}: run these on the system that uses them.)")
    typer.echo("\n".join(lines))


def _no_permission(exc: InstallPermissionError, argv: list[str]) -> NoReturn:
    """Say what to run as root, then exit 77."""
    command = shlex.join(["sudo", *shlex.split(dxserial_executable()), *argv])
    typer.echo(f"dxserial: {exc}", err=True)
    typer.echo(f"Run it as root:\n  {command}", err=True)
    if os.geteuid() == 0:
        typer.echo(
            "(This process is root already: the file system is read-only, or the process "
            "lacks CAP_DAC_OVERRIDE, as in some containers.)",
            err=True,
        )
    raise typer.Exit(EXIT_NOPERM)


def uninstall_command(**given: Any) -> None:
    """Remove the files install wrote, if nobody has changed them since.

    Edited files and files dxserial did not write are kept and listed. Exit code 77: no
    permission (the command to run as root is printed).
    """
    root = _values("uninstall", given)["root"]
    try:
        actions = uninstall(root)
    except InstallPermissionError as exc:
        argv = ["udev", "uninstall"] + (["--root", str(root)] if root != Path("/") else [])
        _no_permission(exc, argv)
    if not actions:
        typer.echo("nothing to remove.")
        return
    for action in actions:
        note = f" ({action.note})" if action.note else ""
        typer.echo(f"{_VERBS[action.verb]:<10}{action.path}{note}")
    if any(a.verb == "remove" for a in actions):
        typer.echo(
            "\nNext, as root: systemctl stop 'dxserial@*.service' dxserial-serve.service; "
            "systemctl daemon-reload; "
            "udevadm control --reload"
        )


_declared(uninstall_command, "uninstall")


def check_command(**given: Any) -> None:
    """Check a udev rules file: dxserial's own syntax check, then `udevadm verify`.

    Problems are printed one per line as FILE:LINE: ...; the exit code is then 1.
    """
    file, use_udevadm = _values("check", given).values()
    if file is None:
        shown = str(shipped_file(Kind.rules))
        text = render(Kind.rules)
    else:
        shown = str(file)
        text = read_text(file, "rules file", "name a udev rules file (*.rules)")
    problems = check_rules(text)
    for problem in problems:
        typer.echo(problem.format(shown))
    if not problems:
        typer.echo(f"{shown}: ok ({count_rules(text)} rules)")
    failed = bool(problems)
    if use_udevadm:
        failed |= _udevadm(file, text, shown)
    if failed:
        raise typer.Exit(1)


_declared(check_command, "check")


def _udevadm(file: Path | None, text: str, shown: str) -> bool:
    """Run udevadm verify; True when it found problems."""
    if file is not None:
        result = udevadm_verify(file)
    else:
        with tempfile.TemporaryDirectory(prefix="dxserial-udev-") as folder:
            copy = Path(folder) / RULES_FILE
            copy.write_text(text, encoding="utf-8")
            result = udevadm_verify(copy)
    if result.ok is None:
        typer.echo(f"udevadm verify: {result.output}")
        return False
    if result.ok:
        typer.echo("udevadm verify: ok")
        return False
    typer.echo(f"udevadm verify: {shown}: failed")
    for line in result.output.splitlines():
        typer.echo(f"  {line}")
    sys.stdout.flush()
    return True
