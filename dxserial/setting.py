"""One setting, declared once with everything each surface needs: the command-line option,
the key of every file that sets it, ``--keys``, the docs table and the check with its error.

A program's settings object declares its own fields with :func:`setting` (the dataclass
field's metadata carries the :class:`Setting`), so adding a setting is one field in one
file; :func:`declared` reads them back.  Why: docs/settings.md.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dxserial.config import plain, unknown_key
from dxserial.errors import ConfigError

__all__ = [
    "SETTING",
    "Setting",
    "build",
    "checked",
    "declared",
    "file_values",
    "nested",
    "plain",
    "plain_of",
    "setting",
]

#: The key of a dataclass field's metadata that holds its :class:`Setting`.
SETTING = "dxserial.setting"
#: The key that holds the settings of a nested settings object (a bridge's serial line).
NESTED = "dxserial.settings"


@dataclass(frozen=True)
class Setting:
    """What a user may set, as every surface shows and checks it.

    ``kind`` is the value's type on the command line and in a file (``str`` for a byte
    written ``"0x02"``); ``parse`` turns a checked value into the program's (an address
    into a tuple), raising :class:`ConfigError` with the problem, which each surface
    prefixes with the name it knows (``--listen`` or ``key 'listen'``).
    """

    key: str = ""
    default: Any = None
    help: str = ""
    kind: type = str
    choices: tuple[str, ...] = ()
    #: The least value allowed (``above``: the value must be greater).
    minimum: float | None = None
    above: bool = False
    maximum: float | None = None
    parse: Callable[[Any, str], Any] | None = None
    #: Where the value goes: a field of the settings object (``""``: the field declared),
    #: or ``"serial.baudrate"`` in a nested one (:func:`nested`).
    into: str = ""
    #: The option's spelling when not ``--key`` (``("--serial-check/--no-serial-check",)``).
    flags: tuple[str, ...] = ()
    panel: str | None = None
    metavar: str | None = None
    #: Taken on the command line but not shown in --help (an old name kept working).
    hidden: bool = False
    #: The command line must give it (``engine --role``): no default.
    required: bool = False
    #: The command line's default when it differs from the field's (a byte as text).
    cli_default: Any = None
    show_default: bool = False
    many: bool = False  # the option may be repeated (a list)
    count: bool = False  # -v, -vv: how often it was given
    #: Other types a file may give (``dtr = true`` for ``dtr = 1``), left to ``parse``.
    accepts: tuple[type, ...] = ()
    #: On the command line (False: only a file's key, a tuning knob); ``argument``: as the
    #: command's argument (the bridge's PORT), not an option.
    option: bool = True
    argument: bool = False
    #: The bounds also given to typer, which shows them in --help (``[x>=1]``) and refuses a
    #: value outside them itself (``vpair --drop``).
    ranged: bool = False
    #: An argument the command line may leave out (``serve --keys`` needs no RIG).
    optional: bool = False
    #: ``--keys``: the example value as TOML (default: the default) and its meaning.
    example: str = ""
    about: str = ""
    #: An option that acts as soon as it is read, before the others are checked
    #: (``tournament --keys``: print the keys and exit): called with its value.
    action: Callable[[Any], Any] | None = None

    @property
    def flag(self) -> str:
        """The option's long name: ``--peer-grace`` for ``peer_grace`` (or its own
        spelling's: ``--time`` for ``minutes``)."""
        if self.flags and self.flags[0].startswith("--"):
            return self.flags[0].split("/")[0]
        return "--" + self.key.replace("_", "-")

    @property
    def envvar(self) -> str:
        return "DXSERIAL_" + self.key.upper()

    @property
    def typer_default(self) -> Any:
        """What the option holds when nobody gave it (None: the settings object's default)."""
        if self.cli_default is not None:
            return self.cli_default
        if isinstance(self.default, str | int | float | bool):
            return self.default
        return None

    @property
    def toml_example(self) -> str:
        if self.example:
            return self.example
        value = self.typer_default
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return f'"{value}"'
        return "..." if value is None else f"{value:g}" if isinstance(value, float) else str(value)

    @property
    def meaning(self) -> str:
        """What it does, in a few words (a file's comment, ``--keys``)."""
        if self.about:
            return self.about
        text = self.help.rstrip(".")
        first = text.split(" ", 1)[0]
        return text if first.isupper() and len(first) > 1 else text[:1].lower() + text[1:]


def setting(default: Any = dataclasses.MISSING, *, like: Setting | None = None,
            **declared: Any) -> Any:
    """A dataclass field that is a user's setting (its key: the field's name); ``like``: a
    setting declared for several programs (the serial line's), as this field's."""
    one = dataclasses.replace(like or Setting(), **declared)
    if default is not dataclasses.MISSING:
        one = dataclasses.replace(one, default=default)
    meta = {SETTING: one}
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def nested(factory: Callable[[], Any], settings: Iterable[Setting]) -> Any:
    """A field holding a nested settings object, whose user settings are ``settings``
    (each with ``into`` naming the nested object's field)."""
    return dataclasses.field(default_factory=factory, metadata={NESTED: tuple(settings)})


def declared(cls: type) -> list[Setting]:
    """Every setting of the dataclass ``cls``, in field order, nested ones in place."""
    found: list[Setting] = []
    for f in dataclasses.fields(cls):
        one = f.metadata.get(SETTING)
        if one is not None:
            found.append(dataclasses.replace(one, key=one.key or f.name, into=one.into or f.name))
        for inner in f.metadata.get(NESTED, ()):
            found.append(dataclasses.replace(inner, into=f"{f.name}.{inner.into or inner.key}"))
    return found


def build(cls: type, values: Mapping[str, Any], *, option: bool) -> Any:
    """``cls`` from a user's values by key, each checked (:func:`checked`); a key not in
    ``values``, or None, leaves the field's default.  Nested settings objects are made from
    their keys (``baud`` -> ``serial.baudrate``); their own checks still apply."""
    top: dict[str, Any] = {}
    inner: dict[str, dict[str, Any]] = {}
    for one in declared(cls):
        value = checked(one, values.get(one.key), option=option)
        if value is None:
            continue
        part, _, name = one.into.partition(".")
        if name:
            inner.setdefault(part, {})[name] = value
        else:
            top[part] = value
    for f in dataclasses.fields(cls):
        if NESTED in f.metadata and callable(f.default_factory):
            top[f.name] = f.default_factory(**inner.get(f.name, {}))
    return cls(**top)


def checked(one: Setting, value: Any, *, option: bool) -> Any:
    """``value`` checked against ``one`` and made the program's; the error is one line
    naming the option (``option``: the command line) or the file's key (a setting that is no
    option is told by its key wherever it came from)."""
    option = option and one.option
    name = one.flag if option else f"key '{one.key}'"
    if value is None:
        return None
    if one.choices and value not in one.choices:
        listed = " or ".join(repr(c) for c in one.choices)
        if option:
            raise ConfigError(f"{name}: {value!r} is not {listed}")
        raise ConfigError(f"{name}: expected {listed}, got {value!r}")
    if one.minimum is not None:
        _bounded(one, value, name, option=option)
    if one.parse is None:
        return value
    said = one.flag if option else one.key
    try:
        return one.parse(value, said)
    except ConfigError as exc:
        if str(exc).startswith(said):  # the parser named it already ("--listen x: ...")
            raise
        raise ConfigError(f"{name}: {exc}") from None


def _bounded(one: Setting, value: Any, name: str, *, option: bool) -> None:
    low, high = one.minimum, one.maximum
    assert low is not None
    number = float(value)
    ok = not math.isnan(number) and (number > low if one.above else number >= low)
    if ok and (high is None or number <= high):
        return
    relation = f"{'>' if one.above else '>='} {low:g}"
    if high is not None:  # a range: 0..999
        relation = f"{low:g}..{high:g}"
    if option:
        raise ConfigError(f"{one.flag} must be {relation}, not {value!r}")
    raise ConfigError(f"{name}: expected a number {relation}, got {value!r}")


def file_values(
    data: Mapping[str, Any], settings: Mapping[str, Setting], where: str, listed: str = ""
) -> dict[str, Any]:
    """A file's table checked key by key against ``settings``: an unknown key is refused
    with the closest known one, a value of the wrong kind names its key."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        one = settings.get(key)
        if one is None:
            raise unknown_key(where, key, settings, listed)
        try:
            out[key] = plain_of(one, value)
        except ConfigError as exc:
            raise ConfigError(f"{where}: key '{key}': {exc}") from None
    return out


def plain_of(one: Setting, value: Any) -> Any:
    """A file's value of ``one`` as its kind (a list of its kind where it may be repeated)."""
    if one.accepts and isinstance(value, one.accepts):
        return value
    if one.many and isinstance(value, list):
        return [plain(v, one.kind) for v in value]
    return plain(value, one.kind)
