"""The demo behaves like a Slurm site an operator knows: what sacct prints for every ended job
is physically possible, and what the cockpit says about the demo reads like a person wrote it.

Each test walks the whole demo site (scenarios plus background load), not a chosen job."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

import pytest

from cockpit.demo.site import DEMO_START, DemoSite, DemoTransport
from cockpit.diagnosis.context import clip
from cockpit.diagnosis.engine import diagnose
from cockpit.slurm import commands as sc
from cockpit.slurm.parse import parse_sacct

ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL"}


@pytest.fixture(scope="module")
def site() -> DemoSite:
    at = DEMO_START + timedelta(seconds=60)
    s = DemoSite(7, lambda: at)
    s.build()
    return s


@pytest.fixture(scope="module")
def acct(site):
    """sacct rows of every job that has ended by now, as the cockpit parses them."""
    t = site.now_s()
    ended = [j for j, st in site.slurm.visible_jobs(t) if st in ENDED]
    assert len(ended) > 100  # the background load, not only the scenarios
    tr = DemoTransport(site)
    rows = []
    ids = [str(j.job_id) for j in ended]
    for k in range(0, len(ids), 200):
        r = asyncio.run(tr.run(sc.sacct_argv(ids[k : k + 200])))
        assert r.exit_status == 0, r.stderr
        rows += parse_sacct(r.stdout.decode())[0]
    by: dict[str, list] = {}
    for r in rows:
        by.setdefault(r.job_id, []).append(r)
    return {j.job_id: (j, by.get(str(j.job_id), [])) for j in ended}


def test_no_step_reports_more_memory_than_its_runtime_allows(acct):
    """A step that ran a second or two cannot have touched gigabytes (the demo once showed a
    1 s job with MaxRSS 4.4G): at most ~64 MiB plus 1 GiB per second it ran."""
    bad = []
    for jid, (_, rows) in acct.items():
        for r in rows:
            if r.step and r.max_rss_mib is not None and r.elapsed_s is not None:
                if r.max_rss_mib > 64 + 1024 * r.elapsed_s:
                    bad.append(f"{jid}.{r.step}: {r.elapsed_s}s MaxRSS {r.max_rss_mib}M")
    assert not bad, bad[:10]


def test_a_job_cancelled_before_it_started_has_no_steps_and_no_node(acct):
    cancelled_pending = [(j, rows) for j, rows in acct.values() if j.start is None]
    assert cancelled_pending, "the demo has no job cancelled while pending"
    for j, rows in cancelled_pending:
        job_row = next(r for r in rows if not r.step)
        assert job_row.state == "CANCELLED"
        assert [r.step for r in rows if r.step] == [], f"{j.job_id} has steps"
        assert job_row.max_rss_mib is None and job_row.elapsed_s == 0
        assert job_row.node_list in ("", "None assigned")


def test_ended_steps_fit_their_job(acct):
    """Every step of an ended job ran inside the job: no longer than it, MaxRSS only on steps
    that ran (the job row itself never has one)."""
    for jid, (_, rows) in acct.items():
        job_row = next(r for r in rows if not r.step)
        assert job_row.max_rss_mib is None, jid
        for r in rows:
            if r.step and r.elapsed_s is not None and job_row.elapsed_s is not None:
                assert r.elapsed_s <= job_row.elapsed_s, (jid, r.step)


def test_every_finding_on_the_demo_has_no_repeated_evidence_and_whole_word_titles(site):
    """What the dashboard shows for the demo: no evidence line twice in one finding, and no
    title cut inside a word."""
    from cockpit.connect import demo as demo_sources

    async def snaps():
        out = []
        for src in demo_sources(clock=site.clock):
            out.append(await src.poll())
            await src.close()
        return out

    for snap in asyncio.run(snaps()):
        for f in diagnose(snap, None, now=snap.taken_at):
            texts = [(e.where, e.text) for e in f.evidence]
            assert len(texts) == len(set(texts)), (f.title, texts)
            if f.title.endswith("…"):
                assert _ends_on_a_whole_word(f), f.title


def _ends_on_a_whole_word(f) -> bool:
    """The word before a title's "…" is a whole word of the full text (explanation or
    evidence): "failed within s…" cut from "seconds" is not."""
    words = re.findall(r"[A-Za-z0-9]+", f.title[:-1])
    if not words or not f.title[-2].isalnum():
        return True
    full = " ".join([f.explanation, *(e.text for e in f.evidence)])
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(words[-1])}(?![A-Za-z0-9])", full) is not None


def test_clip_never_cuts_inside_a_word():
    text = "Failed: boot command failed (exit 127: bash: /home/ma-user/run_train.sh: not found)"
    got = clip(text, 40)
    assert got.endswith("…") and len(got) <= 40
    assert text.startswith(got[:-1]) and text[len(got) - 1] == " "


def test_no_incident_of_the_demo_repeats_an_evidence_line(capsys):
    """With the evidence the cockpit fetches (sacct, logs, events), not only the queue."""
    import json

    from cockpit.cli import main

    assert main(["incidents", "--demo", "--json"]) == 1  # critical incidents are open
    incidents = json.loads(capsys.readouterr().out)["incidents"]
    assert incidents
    for inc in incidents:
        for f in inc["findings"]:
            texts = [e["text"].strip() for e in f["evidence"]]
            assert len(texts) == len(set(texts)), (f["title"], texts)
