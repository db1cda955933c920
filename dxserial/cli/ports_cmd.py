"""``dxserial ports``: which serial ports there are, and what stands in the way of using one."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from dxserial.cli.app import app
from dxserial.host.ports import NO_PORTS_HELP, PortInfo, list_ports


@app.command("ports")
def ports_command(
    as_json: bool = typer.Option(
        False, "--json", help="Print a JSON list of objects with stable keys, for scripts."
    ),
    include: list[str] | None = typer.Option(
        None,
        "--include",
        metavar="PATH",
        help="Also show this path, e.g. an end of `dxserial vpair` (a pseudo-terminal). "
        "Repeat for more.",
        show_default=False,
    ),
    sys_root: Path = typer.Option(Path("/sys"), "--sys-root", hidden=True),
    dev_root: Path = typer.Option(Path("/dev"), "--dev-root", hidden=True),
    proc_root: Path = typer.Option(Path("/proc"), "--proc-root", hidden=True),
) -> None:
    """List serial ports: links, USB VID:PID, maker, serial number, driver, latency timer.

    Also shows the /dev/dxserial name the udev rules give each adapter (see `dxserial udev`),
    which processes hold a port open, and whether you may open it, with what to do if not.
    """
    ports = list_ports(
        sys_root=sys_root, dev_root=dev_root, proc_root=proc_root, include=include or ()
    )
    if as_json:
        typer.echo(json.dumps([p.as_dict() for p in ports], indent=2))
        return
    if not ports:
        typer.echo(NO_PORTS_HELP)
        return
    typer.echo("\n\n".join(describe(p) for p in ports))


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
