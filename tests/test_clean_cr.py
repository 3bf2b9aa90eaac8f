"""A CR inside one line of job text: a terminal draws what follows it over what precedes it,
so ``rm -rf ~\\rharmless`` would read "harmless". The cockpit shows both pieces with a visible
mark between them, on screen and on every way out; a progress bar redrawn many times keeps
its start and its final state within the line cap."""

from __future__ import annotations

from cockpit.safety import scrub
from cockpit.text import clean

MARK = "\u240d"


def test_a_cr_hides_nothing_before_it():
    assert clean("rm -rf ~\rharmless") == f"rm -rf ~{MARK}harmless"
    assert clean("ok\rEVIL") == f"ok{MARK}EVIL"
    assert clean(b"job 4 ok\rEVIL\r\n") == f"job 4 ok{MARK}EVIL"  # the CRLF end is only an end


def test_an_alert_title_keeps_both_pieces_and_no_raw_cr():
    title = scrub("job 4242 (legit-run\rFAILED: all good) failed")
    assert "\r" not in title and "legit-run" in title and "all good" in title


def test_a_progress_bar_keeps_its_start_and_its_final_state():
    line = "".join(f"train: {i:3d}%|{'#' * (i // 5):20s}|\r" for i in range(101)) + "done"
    out = clean(line, 200)
    assert len(out) <= 200 and "\r" not in out
    assert out.startswith("train:   0%|") and out.endswith(f"{MARK}done")
    out = clean(line[: line.rindex("\r")], 200)  # the bar's last redraw is what it ended on
    assert out.endswith(f"train: 100%|{'#' * 20}|")


def test_pieces_that_are_only_escapes_leave_no_empty_marks():
    assert clean("\x1b[2K\rstep 3\r\x1b[2K\rstep 4") == f"step 3{MARK}step 4"
