"""A logger that prints ERROR in every line's prefix (vLLM's workers): the first red line is the
first under the prefix with words of its own, else the first; never a frame picked from the
middle, and the same line whether the log is read whole or in pieces (a stream, a large file)."""

from __future__ import annotations

from cockpit.diagnosis.logscan import first_error
from cockpit.diagnosis.logscan_pieces import first_error_in_pieces

_W = "(VllmWorker rank=1 pid=97934) ERROR 04-01 08:04:{s:02d} [multiproc_executor.py:383] "


def _frames(n: int, pad: int = 0) -> bytes:
    """``n`` traceback frames under the prefix, none with an error word of its own."""
    return b"".join(
        (_W.format(s=i % 60) + f"    work = group.broadcast([tensor], opts){' ' * pad}\n").encode()
        for i in range(n)
    )


def _in_pieces(buf: bytes, size: int) -> list[tuple[int, int, bytes]]:
    """The log as a reader hands it over: pieces of about ``size`` bytes, cut after a line."""
    out, pos, line = [], 0, 1
    while pos < len(buf):
        end = min(len(buf), pos + size)
        nl = buf.rfind(b"\n", pos, end)
        if end < len(buf) and nl >= pos:
            end = nl + 1
        out.append((pos, line, buf[pos:end]))
        line += buf.count(b"\n", pos, end)
        pos = end
    return out


def test_a_long_traceback_of_prefix_only_lines_cites_its_first_line():
    # 3000 frames and not one line with words of its own: "with none, the first", not
    # whichever frame the skip count happened to end on
    log = _frames(3000)
    h = first_error(log)
    assert h is not None and h.line == 1, (h.line, h.text)
    h = first_error_in_pieces(_in_pieces(log, 64 * 1024))
    assert h is not None and h.line == 1, (h.line, h.text)


def test_the_line_with_words_far_below_is_found_the_same_way_whole_or_in_pieces():
    # 150 frames of 1 KB each under the prefix (past the bytes a chunked read keeps from the
    # first weak line), then the exception: the whole read and the chunked one cite the same
    # line, the first or the exception's, never a frame in the middle
    log = _frames(150, pad=1000) + (_W.format(s=1) + "ValueError: bad tensor shape\n").encode()
    whole = first_error(log)
    assert whole is not None and whole.line in (1, 151), (whole.line, whole.text)
    for size in (4096, 64 * 1024, 1 << 20):
        h = first_error_in_pieces(_in_pieces(log, size))
        assert h is not None and (h.line, h.offset) == (whole.line, whole.offset), (size, h.line)


def test_the_last_frame_of_a_prefixed_traceback_is_no_more_the_cause_than_the_others():
    # two runs of frames under the prefix with the trainer's INFO lines between: the last frame
    # of a run is followed by an INFO line, not by its logger's prefix, and is no cause for
    # that; with no line of words of its own the first frame is cited, whole or in pieces
    info = b"".join(b"2026-12-05 10:00:%02d INFO step %d loss 0.12\n" % (i, i) for i in range(3))
    log = info + _frames(20) + info + _frames(20) + info
    whole = first_error(log)
    assert whole is not None and whole.line == 4, (whole.line, whole.text)
    h = first_error_in_pieces(_in_pieces(log, 512))
    assert h is not None and h.line == 4, (h.line, h.text)
