"""A table cell too narrow for its text is cut with an ellipsis, never inside a number: a cut
"(exit 1…" reads as exit 1 where the job exited 127 (a new-user trial in Chinese at 80x24),
"04:00:…" as another time. Names with digits are cut as words are (gpt2-zh-…)."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from cockpit.widgets.table import cut_cell


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
