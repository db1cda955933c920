"""A setting declared once (dxserial/setting.py): a new field of a settings object is read
back with its key and place, built from a user's values, and checked in each surface's words."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dxserial.errors import ConfigError
from dxserial.setting import Setting, build, checked, declared, nested, setting


@dataclass(frozen=True)
class Inner:
    rate: int = 9600


@dataclass
class Knobs:
    name: str = setting(help="Its name.")
    inner: Inner = nested(Inner, [Setting("baud", 9600, "Speed.", kind=int, into="rate")])
    mode: str = setting("warn", choices=("off", "warn"), help="A mode.")
    grace: float = setting(3.0, kind=float, minimum=0, help="Seconds of grace.")
    new_knob: int = setting(2, kind=int, minimum=1, help="NULMODEM: added later.")


def test_a_field_is_a_setting_with_its_key_place_and_default() -> None:
    found = {one.key: one for one in declared(Knobs)}
    assert list(found) == ["name", "baud", "mode", "grace", "new_knob"]
    assert found["baud"].into == "inner.rate" and found["new_knob"].into == "new_knob"
    assert found["new_knob"].flag == "--new-knob" and found["new_knob"].envvar == "DXSERIAL_NEW_KNOB"
    assert Knobs("a").new_knob == found["new_knob"].default == 2  # the default, written once
    assert found["new_knob"].meaning == "NULMODEM: added later"  # an acronym keeps its case
    assert found["grace"].meaning == "seconds of grace" and found["grace"].toml_example == "3"


def test_built_from_a_users_values_none_and_missing_keep_the_default() -> None:
    knobs = build(Knobs, {"name": "a", "baud": 2400, "grace": None, "new_knob": 5}, option=False)
    assert knobs == Knobs(name="a", inner=Inner(2400), new_knob=5)


@pytest.mark.parametrize(("key", "value", "option", "says"), [
    ("mode", "loud", True, "--mode: 'loud' is not 'off' or 'warn'"),
    ("mode", "loud", False, "key 'mode': expected 'off' or 'warn', got 'loud'"),
    ("grace", float("nan"), True, "--grace must be >= 0, not nan"),
    ("grace", -1.0, False, "key 'grace': expected a number >= 0, got -1.0"),
    ("new_knob", 0, True, "--new-knob must be >= 1, not 0"),
])
def test_a_bad_value_is_one_line_in_the_surfaces_words(
    key: str, value: object, option: bool, says: str
) -> None:
    one = next(s for s in declared(Knobs) if s.key == key)
    with pytest.raises(ConfigError) as caught:
        checked(one, value, option=option)
    assert str(caught.value) == says
