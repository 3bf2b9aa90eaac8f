"""The producers' catalogue (cockpit/diagnosis/catalogue/*.json): every template is recognised.

Generated from the data: each template printed with realistic values (``%u`` -> 42, ``%s`` -> a
spool path), alone and inside the line its program writes (Slurm's ``[2026-12-04T10:00:00.123]
error: ``, a dmesg stamp, NCCL's ``host:pid:tid [0] NCCL WARN ``), must be an error line for the
scanner, routed to the template's domain, and carry its cause label where the catalogue names
one. A bundle holding such a line is never "nothing wrong".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cockpit.diagnosis import catalogue
from cockpit.diagnosis.catalogue import KIND, example_line, own_words, templates
from cockpit.diagnosis.catalogue.printf import instantiate, to_regex
from cockpit.diagnosis.domains import DOMAINS, LABEL_DOMAIN, domain_of, domain_of_line
from cockpit.diagnosis.logscan import first_error, iter_errors

ROOT = Path(__file__).parent.parent
TEMPLATES = templates()
DOC = (ROOT / "docs" / "root-causes.md").read_text(encoding="utf-8")


def _id(t: catalogue.Template) -> str:
    return f"{t.source}:{t.template[:60]}"


def test_the_catalogue_has_every_source_and_hundreds_of_templates():
    by_source = {s: sum(t.source == s for t in TEMPLATES) for s in catalogue.SOURCES}
    assert all(by_source.values()), by_source
    assert 300 <= len(TEMPLATES) <= 6000, by_source


@pytest.mark.parametrize("source", catalogue.SOURCES)
def test_every_file_says_where_it_came_from(source):
    doc = json.loads((ROOT / "cockpit" / "diagnosis" / "catalogue" / f"{source}.json").read_text())
    # a closed-source producer (GPFS) is curated from its vendor's message reference
    assert doc["upstream"].startswith("https://github.com/") or (
        doc.get("curated") and doc["upstream"].startswith("https://")
    )
    assert doc["versions"] and doc["generator"].startswith("tools/catalogue/")
    assert doc["count"] == len(doc["templates"])
    for e in doc["templates"]:
        assert e["origin"] and e["versions"], e
        assert set(e["versions"]) <= set(doc["versions"]), e
        # the regex is the template's, as the generator made it (data not edited by hand); a
        # generator may close it with a suffix it declares (a whole status word)
        assert e["regex"].removesuffix(e.get("suffix", "")).endswith(to_regex(e["template"])), e


@pytest.mark.parametrize("t", TEMPLATES, ids=_id)
def test_template_is_recognised_in_a_realistic_line(t):
    line = example_line(t)
    kind = KIND.get(t.program, "app")
    raw = line.encode() + b"\n"
    assert t.domain in DOMAINS
    assert t.label == "unrecognised_failure" or LABEL_DOMAIN.get(t.label) == t.domain
    assert next(iter_errors(raw, kind=kind), None) is not None, f"not an error line: {line}"
    assert domain_of_line(line) == t.domain, line
    if t.specific:
        hit = first_error(raw, kind=kind)
        assert hit is not None and hit.label == t.label, (line, hit)


@pytest.mark.parametrize("t", TEMPLATES, ids=_id)
def test_template_is_recognised_in_its_own_words(t):
    words = own_words(t)
    assert re.search(t.regex, words), words
    assert next(iter_errors(words.encode(), kind="app"), None) is not None, words
    assert domain_of_line(words) == t.domain, words


def test_labels_and_domains_are_documented():
    for t in TEMPLATES:
        assert f"| `{t.label}` |" in DOC, t.label
        assert f"| `{t.domain}` |" in DOC, t.domain


@pytest.mark.parametrize("source", catalogue.SOURCES)
def test_a_bundle_with_a_catalogue_line_is_never_nothing_wrong(source, tmp_path):
    """A log whose only error is a catalogue message: its cause where the catalogue names one,
    else the cause its words name (kind words: "INVALID-CREDENTIAL" is an authentication
    failure) or an unrecognised failure, in the message's domain, headed by that line."""
    from cockpit.diagnosis.kind_words import kind_of_line
    from cockpit.ingest.bundle import diagnose_bundle

    mine = [t for t in TEMPLATES if t.source == source]
    t = next((t for t in mine if not t.specific), mine[0])
    line = example_line(t)
    (tmp_path / "node.log").write_text(f"starting\n{line}\ndone\n")
    report = diagnose_bundle(str(tmp_path)).to_json()
    top = report["findings"][0]
    assert top["root_cause"] != "no_failure"
    assert top["domain"] == t.domain, (line, top)
    kind = kind_of_line(line)
    named = t.label if t.specific else (kind[0] if kind else "unrecognised_failure")
    assert top["root_cause"] == named
    assert report["first_error"]["text"] == line


def test_printf_to_regex_and_examples():
    t = "%s: unable to add task[%d] pid %u to memory cg '%s': %m"
    assert to_regex(t) == r"unable to add task\[-?\d+\] pid \d+ to memory cg"
    assert instantiate("Job %u exceeded %s") == "Job 42 exceeded /var/spool/slurmd/job00042"
    assert re.search(to_regex("gfp_mask=%#x(%s), order=%d"), "gfp_mask=0x140cca(GFP), order=0")
    assert to_regex("%s: %m") == ""  # no words of its own: never a template


def test_domain_of_label_agrees_with_catalogue():
    for t in TEMPLATES:
        if t.specific:
            assert domain_of(t.label) == t.domain, t
