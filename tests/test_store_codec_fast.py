"""The store's finding bodies, built field by field, are the alert history's format redacted.

``codec._redacted_finding`` stands in for ``redact_repeated(finding_to_json(f))`` on the store's
hot path (#33); if ``finding_to_json`` gains a field or the redaction a rule, these fail.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.demo.site import DEMO_START, demo_sources
from cockpit.model import Evidence, Finding, Incident, Subject
from cockpit.safety import redact_repeated
from cockpit.store import codec
from cockpit.watch.alerts import finding_to_json

SECRETISH = [
    "password=hunter2",
    "Authorization: Bearer abcdefgh12345678",
    "AKIAABCDEFGHIJKLMNOP",
    "https://u:pa55@host/x",
    "token: 'a b c'",
    "\x1b]52;c;Zm9v\x07",
    "starved: 512 CPUs pending 119h while 995 later jobs started",
]
texts = st.sampled_from(SECRETISH) | st.text(max_size=40)


def _finding(title, explanation, remedy, ev, seen, conf) -> Finding:
    return Finding(
        root_cause="backfill_starvation",
        severity="warning",
        subject=Subject("job", "peer", "4209202", "name with password=x"),
        title=title,
        explanation=explanation,
        remedy=remedy,
        evidence=tuple(
            Evidence(where=w, text=t, line=i or None, path=p, offset=i * 7, tier=i % 3, quoted=q)
            for i, (w, t, p, q) in enumerate(ev)
        ),
        confidence=conf,
        first_seen=None if seen is None else datetime(2026, 12, 5, tzinfo=UTC) + seen,
    )


@settings(max_examples=300, deadline=None)
@given(
    texts,
    texts,
    texts,
    st.lists(st.tuples(texts, texts, texts, st.booleans()), max_size=3),
    st.none() | st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=30)),
    st.floats(0, 1),
)
def test_a_finding_is_stored_as_the_alert_format_redacted(title, expl, remedy, ev, seen, conf):
    f = _finding(title, expl, remedy, ev, seen, conf)
    assert codec._redacted_finding(f) == redact_repeated(finding_to_json(f))


def test_every_finding_of_the_demo_site_is_stored_as_before():
    import asyncio

    from cockpit.runtime import pipeline

    n = 0
    for source in demo_sources(clock=lambda: DEMO_START):
        snap = asyncio.run(source.poll())
        a = pipeline.analyse(snap, DEMO_START, {}, None, (None,))
        for f in a.findings:
            assert codec._redacted_finding(f) == redact_repeated(finding_to_json(f))
            n += 1
    assert n > 10


def test_an_incident_body_keeps_its_findings_redacted():
    f = _finding(
        "job leaked password=hunter2",
        "",
        "",
        [("log", "Bearer abcdefgh12345678", "/x", True)],
        None,
        0.8,
    )
    inc = Incident("k", f.root_cause, f.severity, f.subject, f.title, (f,))
    body = codec.incident_to_json(inc)
    assert "hunter2" not in body and "abcdefgh12345678" not in body
    back = codec.incident_from_json(body)
    assert back.findings[0].evidence[0].text == "Bearer <redacted>"


def _generic_body(inc: Incident) -> str:
    """The body as the store wrote it before #33's fast path: one generic redaction walk."""
    import json

    out = redact_repeated(
        {
            "key": inc.key,
            "root_cause": inc.root_cause,
            "severity": inc.severity,
            "subject": codec._subject(inc.subject),
            "title": inc.title,
            "findings": [],
            "affected": [codec._subject(s) for s in inc.affected],
            "first_seen": inc.first_seen.isoformat() if inc.first_seen else None,
        }
    )
    out["findings"] = [
        redact_repeated(finding_to_json(f)) for f in inc.findings[: codec.STORED_FINDINGS]
    ]
    if inc.findings_total > codec.STORED_FINDINGS:
        out["findings_total"] = inc.findings_total
    return json.dumps(out | {"key": inc.key}, ensure_ascii=False)


@settings(max_examples=200, deadline=None)
@given(texts, texts, st.lists(texts, max_size=25), st.booleans())
def test_an_incident_body_is_what_the_generic_redaction_wrote(title, name, members, seen):
    subjects = tuple(Subject("job", "peer", str(i), m) for i, m in enumerate(members))
    findings = tuple(_finding(f"{title} {i}", name, "", [], None, 0.5) for i in range(len(members)))
    inc = Incident(
        key=f"group|peer|x|{name}",
        root_cause="pending_held",
        severity="warning",
        subject=Subject("partition", "peer", name, title),
        title=title,
        findings=findings,
        affected=subjects,
        first_seen=datetime(2026, 12, 5, tzinfo=UTC) if seen else None,
    )
    assert codec.incident_to_json(inc) == _generic_body(inc)


@settings(max_examples=200, deadline=None)
@given(
    texts,
    st.lists(st.tuples(texts, texts, st.booleans()), min_size=1, max_size=24),
    st.none() | st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=30)),
    st.booleans(),
    st.integers(0, 40),
)
def test_what_a_read_back_holds_for_a_body_it_wrote_is_what_decoding_the_body_gives(
    title, parts, seen, naive, folded
):
    # the read back makes a body this process just wrote into an incident without the JSON
    # (codec.incident_stored): the same incident as decoding the body, secrets redacted
    start = datetime(2026, 12, 5) if naive else datetime(2026, 12, 5, tzinfo=UTC)
    findings = tuple(
        dataclasses.replace(
            _finding(f"{title} {i}", expl, "", [("log", expl, "/x", q)], seen, 0.5),
            related=(Subject("job", "peer", "7"),) if q else (),
            first_seen=None if seen is None else start + seen,
        )
        for i, (expl, _name, q) in enumerate(parts)
    )
    inc = Incident(
        key=f"group|peer|x|{title}",
        root_cause="pending_held",
        severity="warning",
        subject=Subject("partition", "peer", "gpu", title),
        title=title,
        findings=findings,
        affected=tuple(Subject("job", "peer", str(i), n) for i, (_e, n, _q) in enumerate(parts)),
        first_seen=None if seen is None else start + seen,
        folded=folded,
    )
    decoded = codec.incident_from_json(codec.incident_to_json(inc))
    held = codec.incident_stored(inc)
    assert held == decoded
    assert held.folded == decoded.folded and held.findings_total == decoded.findings_total
    assert [f.evidence for f in held.findings] == [f.evidence for f in decoded.findings]


def test_a_body_digest_tells_bodies_apart_and_fits_a_bigint():
    bodies = [
        codec.incident_to_json(
            Incident(str(i), "x", "warning", Subject("job", "p", str(i)), "t", ())
        )
        for i in range(2000)
    ]
    digests = {codec.digest(b) for b in bodies}
    assert len(digests) == len(bodies)
    assert all(-(2**63) <= d < 2**63 for d in digests)
    assert codec.digest(bodies[0]) == codec.digest(str(bodies[0]))
    assert codec.digest("lone \ud800 surrogate") != codec.digest("lone surrogate")


def test_a_plain_incident_is_held_as_it_is_and_a_redacted_one_as_decoded():
    plain = _finding("held: 4 jobs", "Reason=JobHeldUser", "scontrol release", [], None, 0.5)
    plain = dataclasses.replace(plain, subject=Subject("job", "peer", "4209202"))
    inc = Incident("job|peer|4209202|x", "pending_held", "warning", plain.subject, "t", (plain,))
    assert codec.incident_stored(inc) is inc
    leaky = dataclasses.replace(plain, explanation="export password=hunter2")
    inc = dataclasses.replace(inc, findings=(leaky,))
    held = codec.incident_stored(inc)
    assert held == codec.incident_from_json(codec.incident_to_json(inc))
    assert "hunter2" not in held.findings[0].explanation
