"""Text a job's user chose cannot disguise itself: no bidi overrides or invisible characters
reach the screen, and the status line stays one line however long an error is."""

from __future__ import annotations

from datetime import timedelta

from cockpit.widgets._safe import clean
from cockpit.widgets.status import StatusEntry, StatusLine
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.widgets import Static

from cockpit.app import CockpitApp
from cockpit.screens.panes import QueueTable
from cockpit.store.acks import AckStore
from tests.ui_support import NOW, small_site

BIDI_AND_INVISIBLE = (
    [chr(c) for c in range(0x200B, 0x2010)]  # ZWSP, ZWNJ, ZWJ, LRM, RLM
    + [chr(c) for c in range(0x202A, 0x202F)]  # LRE, RLE, PDF, LRO, RLO
    + [chr(c) for c in range(0x2066, 0x206A)]  # LRI, RLI, FSI, PDI
    + ["\u2028", "\u2029", "\ufeff", "\u061c", "\u2060", "\u00ad"]
)
FORBIDDEN = (
    set(BIDI_AND_INVISIBLE) | {chr(c) for c in range(0x20)} | {chr(c) for c in range(0x7F, 0xA0)}
)


def test_clean_drops_each_bidi_and_invisible_character():
    for ch in BIDI_AND_INVISIBLE:
        out = clean(f"train{ch}job")
        assert ch not in out, hex(ord(ch))
        assert out in ("trainjob", "train job"), (hex(ord(ch)), out)


def test_an_override_cannot_reverse_a_name():
    # shown by a terminal as "invoice-exe.pdf" while the name ends in .exe
    out = clean("invoice-\u202efdp.exe")
    assert out == "invoice-fdp.exe"


def test_a_separator_does_not_start_a_new_line_and_escapes_stay_dead():
    assert clean("a\u2028b\u2029c") == "a b c"
    assert "\x1b" not in clean("x\x1b\u200b[31mred")  # an ESC hidden behind a zero-width space


@settings(max_examples=400, deadline=None)
@given(st.text(), st.integers(min_value=1, max_value=300))
def test_clean_output_has_no_controls_no_bidi_and_respects_the_cap(text, cap):
    out = clean(text, cap)
    assert len(out) <= cap
    assert not FORBIDDEN & set(out), [hex(ord(c)) for c in FORBIDDEN & set(out)]


@settings(max_examples=200, deadline=None)
@given(st.binary())
def test_clean_of_any_bytes_is_safe(data):
    out = clean(data, 80)
    assert len(out) <= 80 and not FORBIDDEN & set(out)


async def test_a_job_named_with_an_override_shows_no_reversed_text(tmp_path):
    src = small_site(hostile="invoice-\u202efdp.exe\u200b\u2066x\u2069")
    app = CockpitApp([src], acks=AckStore(tmp_path / "s.json"))
    async with app.run_test(size=(160, 30)) as pilot:
        await app.hub.first_round.wait()
        await pilot.pause()
        table = app.screen.query_one(QueueTable)
        line = "".join(s.text for s in table.render_line(1))
        # drawn without its controls, in order (the 14-cell NAME column cuts its end)
        assert "invoice-fdp.e…" in line
        assert not set(BIDI_AND_INVISIBLE) & set(line)


# --------------------------------------------------------------------------- status line


class StatusApp(App):
    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        yield Static("NEXT WIDGET", id="below")


def painted(widget) -> list[str]:
    return [
        "".join(seg.text for seg in strip)
        for strip in widget.render_lines(widget.outer_size.region)
    ]


async def test_a_long_error_keeps_the_status_line_one_line_at_80_columns():
    long_error = "ssh: " + "connection reset by peer while reading the squeue output; " * 8
    entries = [
        StatusEntry("hpc-a", NOW, age_s=300, stale=True, error=long_error, failures=3),
        StatusEntry("modelarts-cn", NOW),
    ]
    app = StatusApp()
    async with app.run_test(size=(80, 10)) as pilot:
        status = app.query_one(StatusLine)
        below = app.query_one("#below")
        status.set_entries(entries)
        await pilot.pause()
        assert status.region.height == 1
        assert below.region.y == status.region.y + 1  # no blank row between
        (row,) = painted(status)
        assert len(row) <= 80
        assert "hpc-a" in row and "STALE" in row and "ssh: connection" in row
        assert "modelarts-cn" in row  # the other source is still on the line
        # a name too long for any error cap: the line ends in an ellipsis instead of wrapping
        status.set_entries([StatusEntry("x" * 200, NOW, error=long_error)])
        await pilot.pause()
        (row,) = painted(status)
        assert row.rstrip().endswith("…") and status.region.height == 1
        # the error goes away: still one row, the next widget right below
        status.set_entries([StatusEntry("hpc-a", NOW + timedelta(seconds=5))])
        await pilot.pause()
        assert status.region.height == 1 and below.region.y == status.region.y + 1


async def test_a_fleet_that_does_not_fit_is_summarised_naming_every_sick_source():
    """Twelve clusters and two ModelArts projects at 80 columns: every source used to be cut
    after the sixth, the ModelArts ones never shown. The summary counts them all and names
    the ones that are not well."""
    entries = [StatusEntry(f"cluster-{i:02d}", NOW, group="clusters") for i in range(12)]
    entries[7] = StatusEntry(
        "cluster-07", NOW, age_s=400, stale=True, error="unreachable: timed out", group="clusters"
    )
    entries += [StatusEntry(f"ma-{i}", NOW, group="ModelArts") for i in range(2)]
    app = StatusApp()
    async with app.run_test(size=(80, 10)) as pilot:
        status = app.query_one(StatusLine)
        status.set_entries(entries)
        await pilot.pause()
        (row,) = painted(status)
        assert status.region.height == 1 and len(row) <= 80
        assert "12 clusters: 11 ● 1 failing" in row
        assert "2 ModelArts: 2 ●" in row
        assert "cluster-07 6m unreach" in row  # its age and the start of its error


async def test_the_status_line_names_the_slurm_version_while_it_fits():
    app = StatusApp()
    async with app.run_test(size=(100, 10)) as pilot:
        status = app.query_one(StatusLine)
        status.set_entries([StatusEntry("lab", NOW, version="26.05.5", group="clusters")])
        await pilot.pause()
        (row,) = painted(status)
        assert "lab 26.05.5 as of" in row
