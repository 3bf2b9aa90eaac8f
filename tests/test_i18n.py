"""The cockpit in Chinese: how the language is chosen, and that the catalogue is whole.

The catalogue tests read the committed ``cockpit.po`` and ``cockpit.mo`` with Babel and the
standard library's gettext (what the cockpit itself loads), and the sources with Babel's own
extractor: a string marked with ``_()``/``N_()``/``ngettext()`` and left without its Chinese
fails here, as does a glossary term translated another way.
"""

from __future__ import annotations

import gettext
import json
import re
import textwrap
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po

from cockpit import i18n
from cockpit.cli import choose_language, main

ROOT = Path(__file__).resolve().parent.parent
POS = [ROOT / f"cockpit/locale/zh_CN/LC_MESSAGES/{area}.po" for area in i18n.AREAS]
GLOSSARY = ROOT / "docs/glossary-zh.md"


def _catalog(po: Path):
    with open(po, "rb") as fh:
        return read_po(fh)


def _messages(po: Path | None = None):
    """The messages of one area's catalogue, or of all of them."""
    return [m for p in ([po] if po else POS) for m in _catalog(p) if m.id]


# ------------------------------------------------------------------ choosing the language


@pytest.mark.parametrize(
    ("cli", "config", "env", "want"),
    [
        (None, None, {}, "en"),
        (None, None, {"LANG": "zh_CN.UTF-8"}, "zh"),
        (None, None, {"LANG": "zh_CN.GB18030"}, "zh"),
        (None, None, {"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
        (None, None, {"LC_MESSAGES": "zh_CN", "LANG": "C"}, "zh"),
        (None, None, {"LANGUAGE": "zh_CN:en", "LANG": "en_US.UTF-8"}, "zh"),
        (None, None, {"LANGUAGE": "fr:zh"}, "zh"),  # the first language we speak
        (None, None, {"LANG": "C.UTF-8"}, "en"),
        (None, None, {"LANG": "fr_FR.UTF-8"}, "en"),
        (None, "zh", {"LANG": "en_US.UTF-8"}, "zh"),  # [ui] lang over the environment
        (None, "en", {"LANG": "zh_CN.UTF-8"}, "en"),
        ("zh", "en", {"LANG": "en_US.UTF-8"}, "zh"),  # --lang over everything
        ("en", "zh", {"LANG": "zh_CN.UTF-8"}, "en"),
    ],
)
def test_language_precedence(cli, config, env, want):
    assert i18n.choose(cli, config, env) == want


def test_config_lang_read_before_the_parser(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[ui]\nlang = "zh"\n')
    assert choose_language(["--config", str(cfg), "snapshot"], {"LANG": "en_US.UTF-8"}) == "zh"
    assert choose_language([f"--config={cfg}", "--lang", "en"], {}) == "en"
    # a broken config is the command's to report; the language falls back to the environment
    cfg.write_text("[ui\n")
    assert choose_language(["--config", str(cfg)], {"LANG": "zh_CN.UTF-8"}) == "zh"


def test_help_in_chinese(capsys, monkeypatch):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.delenv("LANGUAGE", raising=False)
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    with pytest.raises(SystemExit):
        main(["--help"])
    zh = capsys.readouterr().out
    assert "界面语言" in zh and "演示站点" in zh
    with pytest.raises(SystemExit):
        main(["--lang", "en", "--help"])
    en = capsys.readouterr().out
    assert "seed of the demo site" in en and "演示站点" not in en


def test_check_config_refuses_an_unknown_language(tmp_path, capsys):
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        textwrap.dedent(
            """
            [clusters.lab]
            transport = "local"
            [ui]
            lang = "fr"
            """
        )
    )
    assert main(["check-config", "--config", str(cfg)]) == 2
    err = capsys.readouterr()
    assert "lang must be one of en, zh" in err.out + err.err


def test_set_language_switches_and_back():
    i18n.set_language("zh")
    assert i18n.gettext("Queue") == "队列"
    assert i18n.ngettext("{n} warning", "{n} warnings", 3).format(n=3) == "3 个警告"
    i18n.set_language("en")
    assert i18n.gettext("Queue") == "Queue"
    assert i18n.ngettext("{n} warning", "{n} warnings", 3).format(n=3) == "3 warnings"


# ------------------------------------------------------------------ the catalogue


def test_every_message_is_translated():
    missing = [
        m.id
        for m in _messages()
        if m.fuzzy or not (all(m.string) if isinstance(m.id, tuple) else m.string)
    ]
    assert not missing, f"{len(missing)} messages without Chinese, e.g. {missing[:5]}"


def test_placeholders_kept():
    """A msgstr names the same ``{fields}`` as its msgid: else ``.format`` raises in Chinese."""
    field = re.compile(r"\{(\w*)[^{}]*\}")
    bad = []
    for m in _messages():
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strs = m.string if isinstance(m.string, tuple) else (m.string,)
        want = set(field.findall(ids[0])) | set(field.findall(ids[-1]))
        for s in strs:
            if s and set(field.findall(s)) != want:
                bad.append((ids[0], s))
    assert not bad, bad[:5]


@pytest.mark.parametrize("po", POS, ids=lambda p: p.stem)
def test_compiled_catalogue_matches_the_po(po):
    """The shipped .mo is the .po compiled (scripts/i18n.sh compile after editing the .po)."""
    with open(po.with_suffix(".mo"), "rb") as fh:
        mo = gettext.GNUTranslations(fh)
    stale = []
    for m in _messages(po):
        if isinstance(m.id, tuple):
            got = tuple(mo.ngettext(m.id[0], m.id[1], n) for n in (1,))
            if got != (m.string[0],):
                stale.append(m.id[0])
        elif mo.gettext(m.id) != m.string:
            stale.append(m.id)
    assert not stale, f"{po.stem}.mo older than its .po: run scripts/i18n.sh compile {stale[:3]}"


def _marked_in_sources() -> dict[str, str]:
    """Every string the modules that speak through cockpit.i18n mark, by Babel's extractor
    (what ``pybabel extract`` puts in the template)."""
    out: dict[str, str] = {}
    for base in ("cockpit", "widgets"):
        for path in sorted((ROOT / base).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "cockpit.i18n import" not in text:
                continue
            for _line, msg, _comments, _ctx in extract_from_file("python", str(path)):
                key = msg[0] if isinstance(msg, tuple) else msg
                out[key] = str(path.relative_to(ROOT))
    return out


def test_every_marked_string_has_chinese():
    translated = {
        (m.id[0] if isinstance(m.id, tuple) else m.id)
        for m in _messages()
        if not m.fuzzy and (all(m.string) if isinstance(m.id, tuple) else m.string)
    }
    marked = _marked_in_sources()
    assert len(marked) > 200
    missing = sorted(f"{where}: {msg!r}" for msg, where in marked.items() if msg not in translated)
    assert not missing, (
        f"{len(missing)} marked strings without Chinese (scripts/i18n.sh, then translate): "
        + "; ".join(missing[:8])
    )


def _glossary() -> list[tuple[str, str]]:
    """(English, 中文) of the glossary's first table, the terms the tests check."""
    text = GLOSSARY.read_text(encoding="utf-8")
    section = text.split("## Terms (checked by the tests)", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] not in ("English", "") and not cells[0].startswith("---"):
            rows.append((cells[0], cells[1]))
    return rows


def test_glossary_terms_used():
    terms = _glossary()
    assert ("training job", "训练作业") in terms and ("node", "节点") in terms
    wrong = []
    # placeholders, quoted examples, options (--cluster), config tables ([alerts]), code and
    # lists of literal values (app | events) are not prose: they stay as they are
    quoted = re.compile(r'\{[^{}]*\}|"[^"]*"|`[^`]*`|--[\w-]+|\[[\w.]+\]|\w+(?: \| \w+)+')
    for m in _messages():
        msgid = quoted.sub("", m.id[0] if isinstance(m.id, tuple) else m.id)
        msgstr = m.string[0] if isinstance(m.string, tuple) else m.string
        for en, zh in terms:
            if re.search(rf"\b{re.escape(en)}(?:s|es)?\b", msgid, re.I) and zh not in msgstr:
                wrong.append(f"{msgid!r}: {en} -> {zh}, got {msgstr!r}")
    assert not wrong, f"{len(wrong)} messages off the glossary: " + "; ".join(wrong[:6])


# ------------------------------------------------------------------ the CLI in Chinese


def test_incidents_in_chinese_keep_the_facts(capsys):
    """``cockpit incidents --demo --lang zh`` piped: Chinese headers and titles, the same
    subjects, cause ids and deciding figures as in English; --json keeps English keys."""
    assert main(["incidents", "--demo", "--lang", "en"]) == 1  # critical incidents open
    en = capsys.readouterr().out
    i18n.set_language("en")
    assert main(["incidents", "--demo", "--lang", "zh"]) == 1
    zh = capsys.readouterr().out
    assert "根因" in zh and "个故障" in zh and "无法运行: 64 CPUs > MaxCPUsPerNode 48" in zh
    assert "never runs" not in zh
    causes = lambda out: sorted(line.split("\t")[1] for line in out.splitlines()[2:])  # noqa: E731
    assert causes(zh) == causes(en)  # cause ids are machine words: unchanged
    main(["incidents", "--demo", "--lang", "zh", "--json"])
    data = json.loads(capsys.readouterr().out)
    items = data if isinstance(data, list) else data["incidents"]
    top = next(i for i in items if i["root_cause"] == "pending_partition_limit")
    assert top["title"].startswith("无法运行") and "severity" in top


def test_diagnose_in_chinese(capsys):
    main(["diagnose", "48101", "--demo", "--cluster", "demo-hpc", "--lang", "zh"])
    out = capsys.readouterr().out
    assert "严重" in out and "处理:" in out and "原因:" in out
    assert "48101" in out and "MaxCPUsPerNode" in out and "[pending_partition_limit]" in out
