"""Why a device cannot be opened, told in terms of the group that may open it.

Advice that always names ``dialout`` is wrong on systems where serial devices belong to
``uucp`` or ``tty``, and useless for a device that is root's alone; so the advice reads the
device's own group and mode and names the one command that helps.  It lives with the
transports because opening a port is where the refusal is met (``port_error``).
"""

from __future__ import annotations

import grp
import os
import pwd
import stat

UDEV_HINT = "`dxserial udev install` makes adapters group dialout, mode 0660"


def group_name(gid: int) -> str:
    """The name of group ``gid``, or the number if the group database does not know it."""
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def in_group_db(gid: int) -> bool:
    """Whether the group database lists this user in the group (maybe not yet in effect)."""
    try:
        user = pwd.getpwuid(os.getuid())
        return user.pw_gid == gid or user.pw_name in grp.getgrgid(gid).gr_mem
    except KeyError:
        return False


def permission_denied(path: str) -> str:
    """One line: ``path`` could not be opened for lack of permission, and what to run."""
    head = f"cannot open {path}: permission denied"
    try:
        st = os.stat(path)
    except OSError:
        return f"{head} — check its owner and mode with ls -l {path}"
    group = group_name(st.st_gid)
    mode = f"{stat.S_IMODE(st.st_mode):04o}"
    if st.st_gid == 0 or st.st_mode & 0o060 != 0o060:
        return (
            f"{head} — it is {mode} and group {group}, so joining that group would not "
            f"help; {UDEV_HINT}"
        )
    if in_group_db(st.st_gid) and st.st_gid not in os.getgroups():
        return (
            f"{head} — you are in group {group}, but this login session is not yet: "
            "log out and back in"
        )
    return (
        f"{head} — it belongs to group {group}: run sudo usermod -aG {group} $USER, "
        "then log out and back in"
    )
