"""The hostile-input corpus: strings cluster users control, and what must survive of them.

Each escape payload is wrapped as ``<tag>-start <payload> <tag>-end`` so a test can
check both that nothing raw reaches the terminal and that the surrounding text stays
readable. ``VISIBLE`` lists text inside the payload that a terminal would have shown
(and so must still be shown).
"""

from __future__ import annotations

import re

# name -> (payload, text a terminal would have displayed from it)
ESCAPES: dict[str, tuple[str, str]] = {
    "csi_sgr": ("\x1b[31;1mRED\x1b[0m", "RED"),
    "csi_clear_home": ("\x1b[2J\x1b[Hwiped", "wiped"),
    "csi_cursor_up_erase": ("\x1b[10A\x1b[2Kover", "over"),
    "osc_title_bel": ("\x1b]0;owned-title\x07after", "after"),
    "osc_title_st": ("\x1b]2;owned-title\x1b\\after", "after"),
    "osc52_clipboard": ("\x1b]52;c;dG91Y2ggL3RtcC9wd25lZA==\x07clip", "clip"),
    "osc8_link": ("\x1b]8;;http://evil.example/\x1b\\click me\x1b]8;;\x1b\\", "click me"),
    "osc8_link_bel": ("\x1b]8;;file:///etc/passwd\x07open\x1b]8;;\x07", "open"),
    "dcs_decrqss": ("\x1bP$qm\x1b\\dcs", "dcs"),
    "dcs_sixel": ("\x1bPq#0;2;0;0;0#0~~@@vv\x1b\\img", "img"),
    "apc_kitty": ("\x1b_Ga=T,f=100;AAAA\x1b\\apc", "apc"),
    "pm_sos": ("\x1b^private\x1b\\\x1bXsos\x1b\\pm", "pm"),
    "bare_esc_ris": ("\x1bcreset", "reset"),
    "bare_esc_keypad": ("\x1b=\x1b>keys", "keys"),
    "c1_csi": ("\x9b31mc1red", "c1red"),
    "c1_osc": ("\x9d0;title\x9cc1osc", "c1osc"),
    "c1_dcs": ("\x90qdata\x9cc1dcs", "c1dcs"),
    "c1_single": ("\x84\x85\x8d\x8ec1", "c1"),
    "bel": ("ding\x07\x07dong", "dingdong"),
    "backspace": ("safe\x08\x08\x08\x08evil", "safeevil"),
    "delete": ("del\x7fete", "delete"),
    "nul": ("n\x00ul", "nul"),
    "vt_ff": ("v\x0bt\x0cf", "vtf"),
    # a terminal would draw "harmless" over "rm -rf ~": both stay, a visible mark between
    "cr_overwrite": ("rm -rf ~\rharmless", "rm -rf ~\u240dharmless"),
    "so_si_charset": ("\x0e\x1b(0lqk\x1b(B\x0fbox", "lqkbox"),
}

# Rich / Textual markup that must be shown as typed, never interpreted.
MARKUP: tuple[str, ...] = (
    "[red]pwn[/]",
    "[link=http://evil.example/]doc[/link]",
    "[@click=app.quit]quit[/]",
    "[/]",
    "[bold",
    "[b]x[/i]",
    ":warning: [blink]x[/blink]",
)

# Raw terminal control bytes that must never reach the screen.
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def wrap(tag: str, payload: str) -> str:
    return f"{tag}-start {payload} {tag}-end"


def visible_text(s: str) -> str:
    """Whitespace removed: rendered screens pad and wrap, readability is about the letters."""
    return re.sub(r"\s+", "", s)
