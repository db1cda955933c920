"""``dxserial ports``: which serial ports there are, and what stands in the way of using one."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import typer

from dxserial.cli.app import app
from dxserial.cli.options import parameters
from dxserial.host.ports import NO_PORTS_HELP, PortInfo, list_ports
from dxserial.setting import Setting, checked

_HIDDEN = "(hidden; for tests: read the system from another root)"

#: Every setting of ``dxserial ports``, in the order of its --help (the roots: for tests).
SETTINGS: tuple[Setting, ...] = (
    Setting("as_json", False, "Print a JSON list of objects with stable keys, for scripts.",
            kind=bool, flags=("--json",), show_default=True),
    Setting("include", None, "Also show this path, e.g. an end of `dxserial vpair` (a "
            "pseudo-terminal). Repeat for more.", many=True, metavar="PATH"),
    *(Setting(f"{name}_root", Path(f"/{name}"), _HIDDEN, kind=Path, cli_default=Path(f"/{name}"),
              hidden=True, show_default=True) for name in ("sys", "dev", "proc")),
)


def ports_command(**given: Any) -> None:
    """List serial ports: links, USB VID:PID, maker, serial number, driver, latency timer.

    Also shows the /dev/dxserial name the udev rules give each adapter (see `dxserial udev`),
    which processes hold a port open, and whether you may open it, with what to do if not.
    """
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    roots = {key: values[key] for key in ("sys_root", "dev_root", "proc_root")}
    ports = list_ports(**roots, include=values["include"] or ())
    if values["as_json"]:
        typer.echo(json.dumps([p.as_dict() for p in ports], indent=2))
        return
    if not ports:
        typer.echo(NO_PORTS_HELP)
        return
    typer.echo("\n\n".join(describe(p) for p in ports))


ports_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("ports")(ports_command)


def describe(port: PortInfo) -> str:
    """A few lines about one port, for people."""
    head = [port.device, port.kind]
    if port.vid:
        head.append(f"{port.vid}:{port.pid}")
    maker = " ".join(s for s in (port.manufacturer, port.product) if s)
    if maker:
        head.append(maker)
    lines = ["  ".join(head)]

    def row(label: str, value: str) -> None:
        lines.append(f"    {label:<9} {value}")

    if port.target != port.device:
        row("is", port.target)
    if port.serial_number is not None:
        row("serial", port.serial_number)
    if port.usb_path:
        iface = f", interface {port.interface}" if port.interface else ""
        row("usb", f"{port.usb_path}{iface}")
    driver = port.driver or "?"
    if port.latency_timer_ms is not None:
        driver += f", latency timer {port.latency_timer_ms} ms"
    row("driver", driver)
    for index, link in enumerate(port.links):
        row("links" if index == 0 else "", link)
    if port.dxserial_name:
        name = port.dxserial_name
        where = (
            ""
            if any(link.endswith(f"/dxserial/{name}") for link in port.links)
            else ("after `dxserial udev install`; ")
        )
        row("dxserial", f"/dev/dxserial/{name}  ({where}configuration: /etc/dxserial/{name}.toml)")
    if port.holders:
        in_use = ", ".join(f"{h.command} (pid {h.pid})" for h in port.holders)
    else:
        in_use = "no" if port.holders_complete else "not that you can see (root sees all)"
    row("in use", in_use)
    access = "you may open it" if port.can_open else "you may not open it"
    if port.mode:
        access += f" ({port.mode} {port.owner}:{port.group})"
    row("access", access)
    for hint in port.hints:
        lines.append(f"    hint: {hint}")
    return "\n".join(lines)
