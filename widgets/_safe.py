"""Making hostile text safe to draw: job names, reasons, log lines, event messages.

Cluster users control these strings. Before display: decode bytes with replacement,
drop terminal control sequences (CSI, OSC incl. OSC 52/8, DCS/SOS/PM/APC strings, bare
ESC, C1 controls, BEL, backspace), drop bidi controls and invisible characters (a job named
``evil\u202etxt.exe`` would otherwise draw reversed, and a zero-width space makes two
names that look the same differ), expand tabs, and cap the length. Rich markup is never
interpreted: widgets build ``rich.text.Text`` objects from the cleaned string, never markup.

The widgets draw such text, so the sanitizer lives with them; the core re-exports it
(``text.clean``) for CLI tables and reports. It needs only ``re``, so loading it never
pulls in Textual.
"""

from __future__ import annotations

import re

MAX_LINE = 4096  # characters kept per displayed line

# ESC [ ... final byte; ESC ] ... (BEL | ST); ESC P/X/^/_ ... ST; two-byte ESC sequences.
_ANSI = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]?            # CSI (possibly truncated)
  | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?   # OSC ... BEL/ST (OSC 8 links, OSC 52 clipboard)
  | \x1b[PX^_][^\x1b]*(?:\x1b\\)?        # DCS, SOS, PM, APC ... ST
  | \x1b[@-Z\\-_]                        # other two-byte Fe escapes
  | \x1b[ -/]+[0-~]?                     # nF escapes: ESC ( 0 charset designation, ESC # 8 ...
  | \x1b.?                               # bare ESC (and whatever it would have modified)
  | \x9b[0-?]*[ -/]*[@-~]?               # 8-bit CSI
  | [\x90\x98\x9d\x9e\x9f][^\x9c\x07]*[\x9c\x07]?  # 8-bit DCS/SOS/OSC/PM/APC strings
    """,
    re.VERBOSE,
)
# Remaining C0 (except tab) and C1 controls, DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
# Bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069), marks (LRM, RLM, ALM),
# zero-width and invisible characters (U+200B-200D, U+2060-2064, BOM/ZWNBSP, soft hyphen,
# Mongolian vowel separator, interlinear annotations, tag characters). Dropped: none of them
# draws anything an operator needs, and each can make a name read differently from what it is.
INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
# Line and paragraph separators would break the one line: a space keeps the words apart.
_SEPARATOR = re.compile("[\u2028\u2029]")
# What a CR inside a line becomes: a terminal would draw what follows it over what precedes
# it (``rm -rf ~\rharmless`` shows "harmless"), so both are kept, this mark between them.
CR_MARK = "\u240d"  # ␍ SYMBOL FOR CARRIAGE RETURN


def decode(data: bytes) -> str:
    """UTF-8 with replacement characters; never raises."""
    return data.decode("utf-8", errors="replace")


def strip_ansi(text: str) -> str:
    """Remove escape sequences only (used before matching log lines)."""
    return _ANSI.sub("", text)


def clean(text: str | bytes, max_len: int = MAX_LINE) -> str:
    """One display-safe line: no control sequences, no bidi or invisible characters, tabs
    expanded, at most ``max_len`` chars.

    A CR inside the line hides nothing: every piece is kept, :data:`CR_MARK` between them; a
    line too long for that (a progress bar redrawn a thousand times) keeps its start and its
    last piece (what a terminal shows at the end). A trailing CR (CRLF files) is dropped.
    """
    if isinstance(text, bytes):
        text = decode(text)
    if max_len <= 0:
        return ""
    text = text.rstrip("\r\n")
    if "\r" in text:
        return _clean_pieces(text, max_len)
    return _clean_one(text, max_len)


def _clean_pieces(text: str, max_len: int) -> str:
    pieces = [p for p in (_clean_one(p, max_len) for p in text.split("\r")) if p]
    out = CR_MARK.join(pieces)
    if len(out) <= max_len or not pieces:
        return out
    if max_len < 8:  # no room for both ends
        return out[: max_len - 1] + "…"
    last = pieces[-1]
    if len(last) > max_len // 2:
        last = last[: max_len // 2 - 1] + "…"
    return out[: max(max_len - len(last) - 2, 0)] + "…" + CR_MARK + last


def _clean_one(text: str, max_len: int) -> str:
    # invisible characters first: an ESC hidden behind one is then still seen as a sequence
    if not text.isascii():
        text = _SEPARATOR.sub(" ", INVISIBLE.sub("", text))
    text = _ANSI.sub("", text)
    text = _CONTROL.sub("", text.expandtabs(4))
    if len(text) > max_len:
        text = text[: max_len - 1] + "…"
    return text
