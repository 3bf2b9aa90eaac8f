"""A table cell too narrow for its text is cut with an ellipsis, never inside a number: a cut
"(exit 1…" reads as exit 1 where the job exited 127 (a new-user trial in Chinese at 80x24),
"04:00:…" as another time. Names with digits are cut as words are (gpt2-zh-…)."""

from __future__ import annotations

import pytest
from cockpit.widgets.table import cut_cell
from rich.cells import cell_len


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        (
            "fastqc: 计算节点上找不到该命令 (exit 127, 几秒内)",
            38,
            "fastqc: 计算节点上找不到该命令 (exit…",
        ),
        ("TIMEOUT after 04:00:00 (Timelimit 04:00:00)", 38, "TIMEOUT after 04:00:00 (Timelimit…"),
        ("OUT_OF_MEMORY: MaxRSS 64.1G of ReqMem 64G", 25, "OUT_OF_MEMORY: MaxRSS…"),
        ("Kill task failed [slurm 2026-11-29 18:52]", 36, "Kill task failed [slurm 2026-11-29…"),
    ],
)
def test_a_number_is_shown_whole_or_not_at_all(text, width, shown):
    got = cut_cell(text, width)
    assert got.rstrip() == shown
    assert cell_len(got) == width


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        ("training job gpt2-zh-pretrain-v2", 24, "training job gpt2-zh-pr…"),
        ("pool a100: (node-a100-4)", 20, "pool a100: (node-a1…"),
        ("never runs: 64 CPUs > MaxCPUsPerNode 48", 36, "never runs: 64 CPUs > MaxCPUsPerNod…"),
    ],
)
def test_names_and_words_are_cut_where_the_cell_ends(text, width, shown):
    assert cut_cell(text, width) == shown


def test_a_whole_number_before_punctuation_stays():
    assert cut_cell("exit 127, in 2 s", 10) == "exit 127,…"


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        # Chinese runs a number into its words: "退出码1…" read as exit code 1 (it was 127)
        ("退出码127，几秒内", 8, "退出码…"),
        ("节点 cn07 内存不足 (已用64.1G)", 28, "节点 cn07 内存不足 (已用…"),
        # full-width digits are two cells each: the pad where one did not fit hid the cut
        ("全角１２３４ 数字", 8, "全角…"),
        # a date cut inside reads as another date: 2026-11-2 is the 2nd of November
        ("Kill task failed at 2026-11-29 18:52", 30, "Kill task failed at…"),
        # a node range cut inside reads as another range
        ("drained: nodes cn[001-010] down", 22, "drained: nodes cn[…"),
        # a negative number loses its last digits
        ("returned rc -127", 15, "returned rc…"),
        # an array task reads as its parent job
        ("held: array job 12345_7", 22, "held: array job…"),
    ],
)
def test_numbers_in_chinese_dates_ranges_and_arrays_are_not_cut(text, width, shown):
    got = cut_cell(text, width)
    assert got.rstrip() == shown
    assert cell_len(got) == width


@pytest.mark.parametrize("text", ["127", "exit 127", "计算节点", ""])
@pytest.mark.parametrize("width", [-1, 0, 1])
def test_no_room_shows_no_digit(text, width):
    """A one-cell column showed "1" of 127 with no ellipsis; no width raises or draws wider."""
    got = cut_cell(text, width)
    assert cell_len(got) <= max(width, 0)
    assert not any(c.isdigit() for c in got)


def test_a_text_that_fits_is_not_cut():
    assert cut_cell("exit 127", 8) == "exit 127"
    assert cut_cell("计算", 5) == "计算 "
