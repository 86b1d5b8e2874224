"""How the console prints what came from pages: bidi controls as escapes,
in plain values, in JSON field values and inside catalog strings."""

from __future__ import annotations

from markupsafe import Markup

from nadird.master.console import format as fmt
from nadird.master.console.language import Strings

CONTROLS = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]


def test_every_bidi_control_is_written_as_its_escape() -> None:
    for point in CONTROLS:
        shown = fmt.shown(f"a{chr(point)}b")
        assert shown == f"a\\u{point:04x}b"
    assert fmt.shown("مرحبا 你好 café") == "مرحبا 你好 café"  # other text as it is
    assert fmt.shown(12) == 12


def test_a_field_value_and_a_catalog_string_keep_no_control() -> None:
    assert fmt.shown(fmt.value({"title": "x\u202ey"})) == '{"title": "x\\u202ey"}'
    text = Strings("en").t("changes.problem", problem="disk \u2067full")
    shown = fmt.shown(text)
    assert isinstance(shown, Markup) and "disk \\u2067full" in shown and "\u2067" not in shown


def test_a_discovery_latency_keeps_its_tenths_under_a_minute() -> None:
    assert [fmt.latency(v) for v in (0.04, 4.25, 59.9, 90.0, None)] == [
        "0.0 s", "4.2 s", "59.9 s", "1 m 30 s", "—",
    ]  # fmt: skip
