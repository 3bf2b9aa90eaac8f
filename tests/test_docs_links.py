"""The README fits a screenful of scrolling and every relative link in it and in docs/ resolves.

An operator reads the README first and follows its links into docs/: a link to a moved file or a
renamed heading is a dead end, so each relative link must name an existing file and, when it
carries ``#anchor``, a heading of that file (GitHub's slug of it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_README_LINES = 300  # issue #31: what it is, two commands, screenshots, keys, a real site

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_INLINE_CODE = re.compile(r"`[^`]*`")


def _prose(text: str) -> list[str]:
    """Each line, blank inside fenced code and without inline code (links there are not links)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else _INLINE_CODE.sub("", line))
    return out


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = _slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def relative_links(path: Path) -> list[tuple[int, str]]:
    links = []
    for no, line in enumerate(_prose(path.read_text(encoding="utf-8")), 1):
        for target in _LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            links.append((no, target))
    return links


def broken(path: Path) -> list[str]:
    bad = []
    for no, target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            bad.append(f"{path.name}:{no}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(f"{path.name}:{no}: {target} (no heading #{anchor} in {dest.name})")
    return bad


def test_readme_is_at_most_300_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, (
        f"README.md has {len(lines)} lines; move detail into docs/ and link it"
    )


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert broken(path) == []


def test_the_readme_leads_to_every_doc_and_the_bench_results():
    targets = {t.partition("#")[0] for _, t in relative_links(README)}
    reached = {(ROOT / t).resolve() for t in targets if t}
    missing = [p.name for p in DOCS if p.resolve() not in reached]
    assert missing == [], f"docs nobody can find from the README: {missing}"
    assert (ROOT / "bench/RESULTS.md").resolve() in reached


def test_the_readme_keeps_the_test_command_ci_runs():
    section = README.read_text(encoding="utf-8").split("## Run the tests", 1)[1]
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest -q" in section


def test_the_link_check_catches_a_dead_link_and_a_dead_anchor(tmp_path):
    (tmp_path / "B.md").write_text("# Real heading: `x` (y)\n", encoding="utf-8")
    page = tmp_path / "A.md"
    page.write_text(
        "[ok](B.md#real-heading-x-y) [gone](C.md) [bad](B.md#nope) `[code](D.md)`\n"
        "```\n[fenced](E.md)\n```\n[web](https://example.org/x)\n",
        encoding="utf-8",
    )
    assert broken(page) == [
        "A.md:1: C.md (no such file)",
        "A.md:1: B.md#nope (no heading #nope in B.md)",
    ]


def _commands(path: Path) -> list[str]:
    table = path.read_text(encoding="utf-8").split("| command | what |", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\| `(cockpit[^`]*)` \|", table, re.M)


def test_the_full_command_table_names_the_readme_commands():
    """docs/COMMANDS.md says each command in full; it must not lose or add one."""
    assert _commands(ROOT / "docs/COMMANDS.md") == _commands(README)
