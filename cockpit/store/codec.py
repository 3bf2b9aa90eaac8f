"""Incidents and artifacts to JSON and back, for the store's text columns.

Findings are kept in the alert history's format (:func:`cockpit.watch.alerts.finding_to_json`,
built field by field here and held to it by a test) so one format serves both. Artifacts are
redacted on the way in: what the store keeps may be read by every operator of the team.
"""

from __future__ import annotations

import base64
import hashlib
import json
import operator
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any

from cockpit.model import AcctRecord, Artifacts, ExitCode, Finding, Incident, LogText, Subject
from cockpit.safety import redact, redact_repeated, redact_repeated_str
from cockpit.watch.alerts import _SUBJECT_KINDS as SUBJECT_KINDS
from cockpit.watch.alerts import finding_from_json

MAX_LOG_BYTES = 256 * 1024  # per log kept as evidence: the first red error and its context


def _subject(s: Subject) -> dict[str, str]:
    return {"kind": s.kind, "source": s.source, "id": s.id, "name": s.name}


def _subject_from(d: dict[str, Any]) -> Subject:
    return Subject(d["kind"], str(d["source"]), str(d["id"]), str(d.get("name", "")))


def _time(t: datetime | None) -> str | None:
    return t.isoformat() if t is not None else None


def _time_from(s: str | None) -> datetime | None:
    return datetime.fromisoformat(s) if s else None


def incident_to_json(inc: Incident) -> str:
    """Redacted like every way out (the team's database is one); the key stays as it is."""
    return json.dumps(incident_json(inc), ensure_ascii=False)


def dumps(value: dict[str, Any]) -> str:
    """:func:`incident_json`'s value as the body :func:`incident_to_json` makes."""
    return json.dumps(value, ensure_ascii=False)


def digest(body: str) -> int:
    """A body's 64-bit digest (signed: a BIGINT column): equal digests, equal bodies, whoever
    wrote them (a reader keeps a body it decoded while the row's digest stays)."""
    raw = hashlib.blake2b(body.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "big", signed=True)


def incident_stored(inc: Incident, d: dict[str, Any] | None = None) -> Incident:
    """``incident_from_json(incident_to_json(inc))`` without the JSON: what a read back decodes
    from the body this process just wrote for ``inc`` (the hundreds of bodies a busy site
    rewrites a poll were each decoded again; ``tests/test_store_codec_fast.py`` holds the two
    equal). Its findings are the live ones where equal (most), else decoded once each. ``d``:
    ``incident_json(inc)`` if already made."""
    if d is None:
        d = incident_json(inc)
    findings = tuple(_finding_stored(f) for f in inc.findings[:STORED_FINDINGS])
    if _incident_as_is(inc, d, findings):
        return inc
    stored = Incident(
        key=inc.key,
        root_cause=d["root_cause"],
        severity=d["severity"],
        subject=_subject_from(d["subject"]),
        title=d["title"],
        findings=findings,
        affected=tuple(_subject_from(s) for s in d["affected"]),
        first_seen=_time_from(d["first_seen"]),
    )
    total = d.get("findings_total")
    if isinstance(total, int) and total > len(stored.findings):
        stored = replace(stored, folded=total)
    return stored


def _incident_as_is(inc: Incident, d: dict[str, Any], findings: tuple[Finding, ...]) -> bool:
    """Whether decoding ``d`` (``inc``'s body) gives ``inc`` back, read off the two: the
    redaction changed none of its strings, its findings are its own, nothing was folded."""
    t = inc.first_seen
    return (
        inc.folded == 0
        and len(inc.findings) <= STORED_FINDINGS
        and all(map(operator.is_, findings, inc.findings))
        and d["title"] == inc.title
        and d["root_cause"] == inc.root_cause
        and d["severity"] == inc.severity
        and (t is None or d["first_seen"] == t.isoformat())
        and _subject_as_is(d["subject"], inc.subject)
        and all(map(_subject_as_is, d["affected"], inc.affected))
    )


def _subject_as_is(d: dict[str, Any], s: Subject) -> bool:
    return d["id"] == s.id and d["source"] == s.source and d["kind"] == s.kind


def _finding_as_is(f: Finding, v: dict[str, Any]) -> bool:
    """Whether ``finding_from_json(v)`` equals ``f``, ``v`` being ``f``'s stored form, read off
    the two without decoding (most findings: hundreds are new every poll at a busy site): the
    redaction changed none of its strings and nothing stored is lost (``related``, a time
    without a zone). ``tests/test_store_codec_fast.py`` holds it to the decoding."""
    t = f.first_seen
    if (
        f.related
        or f.subject.kind not in SUBJECT_KINDS
        or v["title"] != f.title
        or v["explanation"] != f.explanation
        or v["remedy"] != f.remedy
        or v["root_cause"] != f.root_cause
        or v["severity"] != f.severity
        or not _subject_as_is(v["subject"], f.subject)
        or type(f.confidence) is not float
        or (t is not None and (t.utcoffset() is None or v["first_seen"] != t.isoformat()))
    ):
        return False
    for e, ve in zip(f.evidence, v["evidence"], strict=True):
        if (
            ve["text"] != e.text
            or ve["where"] != e.where
            or ve["path"] != e.path
            or type(e.tier) is not int
            or type(e.quoted) is not bool
        ):
            return False
    return True


def incident_json(inc: Incident) -> dict[str, Any]:
    """The body of :func:`incident_to_json` before it is text."""
    r = redact_repeated_str  # field by field, as _redacted_finding (no key here is secret)
    first_seen = _time(inc.first_seen)
    out = {
        "key": inc.key,
        "root_cause": r(inc.root_cause),
        "severity": r(inc.severity),
        "subject": _subject_json(inc.subject),
        "title": r(inc.title),
        "findings": [],
        "affected": [_subject_json(s) for s in inc.affected],
        "first_seen": None if first_seen is None else r(first_seen),
    }
    # redact() works item by item: each finding's redacted form is the same inside the
    # incident or alone, and is kept per finding object (an incident of 1000 jobs whose few
    # changed findings are the only ones scanned again at the next sync)
    # an incident of 1000 jobs keeps its first STORED_FINDINGS (the head first) and their
    # count: the live incident lists them all; the store is the record, not a second queue
    out["findings"] = [_finding_json(f) for f in inc.findings[:STORED_FINDINGS]]
    if inc.findings_total > STORED_FINDINGS:
        out["findings_total"] = inc.findings_total
    return out | {"key": inc.key}


STORED_FINDINGS = 20


# id(finding) -> (finding, redacted JSON, its stored form or None: see incident_stored)
_FINDING_JSON: dict[int, tuple[object, Any, Any]] = {}
_FINDING_JSON_MAX = 30_000  # then cleared: stale findings are not kept alive for long


_SUBJECT_JSON: dict[tuple[str, str, str, str], Any] = {}


def _subject_json(s: Subject) -> Any:
    """``redact(_subject(s))``, once per subject (an incident of 10k jobs lists them all)."""
    k = (s.kind, s.source, s.id, s.name)
    got = _SUBJECT_JSON.get(k)
    if got is None:
        if len(_SUBJECT_JSON) >= 100_000:
            _SUBJECT_JSON.clear()
        got = _SUBJECT_JSON[k] = redact_repeated(_subject(s))
    return got


def forget_findings(live: Iterable[Incident]) -> None:
    """Drop the kept JSON of findings that no incident in ``live`` (the ones the store last
    encoded) stores any more: with jobs arriving and leaving, findings are replaced every poll,
    and the memo held up to ``_FINDING_JSON_MAX`` dead ones (~11 MB at 10k jobs). The ones
    kept are all a later encoding can ask for again without a change."""
    if len(_FINDING_JSON) < 1024:
        return
    keep = {id(f) for inc in live for f in inc.findings[:STORED_FINDINGS]}
    if len(_FINDING_JSON) <= len(keep) + 1024:
        return
    for k in list(_FINDING_JSON):  # a copy: another thread may encode meanwhile
        if k not in keep:
            _FINDING_JSON.pop(k, None)


def _finding_json(f: Any) -> Any:
    got = _FINDING_JSON.get(id(f))
    if got is not None and got[0] is f:
        return got[1]
    if len(_FINDING_JSON) >= _FINDING_JSON_MAX:
        _FINDING_JSON.clear()
    value = _redacted_finding(f)
    _FINDING_JSON[id(f)] = (f, value, None)
    return value


def _finding_stored(f: Finding) -> Finding:
    """``finding_from_json`` of ``f``'s stored form, kept with it; ``f`` itself when equal
    (as the store's read back shares a decoded finding with its live one)."""
    value = _finding_json(f)
    got = _FINDING_JSON.get(id(f))
    if got is not None and got[0] is f and got[2] is not None:
        return got[2]
    if _finding_as_is(f, value):
        stored = f
    else:
        stored = finding_from_json(value)
        if stored == f:
            stored = f
    if got is not None and got[0] is f:
        _FINDING_JSON[id(f)] = (f, value, stored)
    return stored


_FINDING_SUBJECT: dict[tuple[str, str, str], Any] = {}


def _redacted_finding(f: Finding) -> dict[str, Any]:
    """``redact_repeated(finding_to_json(f))`` built field by field: a busy site re-encodes
    hundreds of changed findings a poll, and the generic walk over their ~25 values (type
    checks, a secret-key check per key: none of these keys is one) cost as much as redacting
    their new strings. ``tests/test_store_codec_fast.py`` holds it to the generic form."""
    r = redact_repeated_str
    s = f.subject
    k = (s.kind, s.source, s.id)
    subject = _FINDING_SUBJECT.get(k)
    if subject is None:
        if len(_FINDING_SUBJECT) >= 100_000:
            _FINDING_SUBJECT.clear()
        subject = _FINDING_SUBJECT[k] = redact_repeated({"kind": k[0], "source": k[1], "id": k[2]})
    return {
        "root_cause": r(f.root_cause),
        "severity": r(f.severity),
        "subject": subject,
        "title": r(f.title),
        "explanation": r(f.explanation),
        "remedy": r(f.remedy),
        "confidence": f.confidence,
        "first_seen": r(f.first_seen.isoformat()) if f.first_seen else None,
        "evidence": [
            {
                "where": r(e.where),
                "text": r(e.text),
                "line": e.line,
                "path": r(e.path),
                "offset": e.offset,
                "tier": e.tier,
                "quoted": e.quoted,
            }
            for e in f.evidence
        ],
    }


def incident_from_json(text: str) -> Incident:
    """Raises ValueError/KeyError/TypeError on a row that is not an incident."""
    d = json.loads(text)
    inc = _incident_from(d)
    total = d.get("findings_total")
    if isinstance(total, int) and total > len(inc.findings):
        inc = replace(inc, folded=total)
    return inc


def _incident_from(d: dict) -> Incident:
    return Incident(
        key=str(d["key"]),
        root_cause=str(d["root_cause"]),
        severity=d["severity"],
        subject=_subject_from(d["subject"]),
        title=str(d["title"]),
        findings=tuple(finding_from_json(f) for f in d.get("findings", ())),
        affected=tuple(_subject_from(s) for s in d.get("affected", ())),
        first_seen=_time_from(d.get("first_seen")),
    )


def _acct(r: AcctRecord) -> dict[str, Any]:
    ec = r.exit_code
    return {
        "job_id": r.job_id,
        "step": r.step,
        "job_name": r.job_name,
        "partition": r.partition,
        "state": r.state,
        "exit_code": None if ec is None else [ec.code, ec.signal],
        "req_mem_mib": r.req_mem_mib,
        "max_rss_mib": r.max_rss_mib,
        "elapsed_s": r.elapsed_s,
        "timelimit_s": r.timelimit_s,
        "node_list": r.node_list,
        "reason": r.reason,
        "cancelled_by": r.cancelled_by,
        "placeholder": r.placeholder,
        "user": r.user,
        "start_time": _time(r.start_time),
        "end_time": _time(r.end_time),
    }


def _acct_from(d: dict[str, Any]) -> AcctRecord:
    ec = d.get("exit_code")
    return AcctRecord(
        job_id=d["job_id"],
        step=d["step"],
        job_name=d["job_name"],
        partition=d["partition"],
        state=d["state"],
        exit_code=None if ec is None else ExitCode(int(ec[0]), int(ec[1])),
        req_mem_mib=d.get("req_mem_mib"),
        max_rss_mib=d.get("max_rss_mib"),
        elapsed_s=d.get("elapsed_s"),
        timelimit_s=d.get("timelimit_s"),
        node_list=d.get("node_list", ""),
        reason=d.get("reason", ""),
        cancelled_by=d.get("cancelled_by", ""),
        placeholder=bool(d.get("placeholder", False)),
        user=d.get("user", ""),
        start_time=_time_from(d.get("start_time")),
        end_time=_time_from(d.get("end_time")),
    )


def _log(g: LogText) -> dict[str, Any]:
    data = redact(bytes(g.data[:MAX_LOG_BYTES]))
    return {
        "name": g.name,
        "kind": g.kind,
        "data": base64.b64encode(data).decode("ascii"),
        "path": g.path,
        "subject_id": g.subject_id,
        "base_offset": g.base_offset,
        "base_line": g.base_line,
        "line_offsets": list(g.line_offsets),
        "line_numbers": list(g.line_numbers),
    }


def _log_from(d: dict[str, Any]) -> LogText:
    return LogText(
        name=d["name"],
        kind=d["kind"],
        data=base64.b64decode(d["data"]),
        path=d.get("path", ""),
        subject_id=d.get("subject_id", ""),
        base_offset=int(d.get("base_offset", 0)),
        base_line=d.get("base_line"),
        line_offsets=tuple(d.get("line_offsets", ())),
        line_numbers=tuple(d.get("line_numbers", ())),
    )


def artifacts_to_json(a: Artifacts) -> str:
    """Redacted: sacct rows (names, reasons), command outputs and log bytes."""
    return json.dumps(
        redact(
            {
                "acct": [_acct(r) for r in a.acct],
                "commands": dict(a.commands),
                "history": [_acct(r) for r in a.history],
            }
        )
        | {"logs": [_log(g) for g in a.logs]},
        ensure_ascii=False,
    )


def artifacts_from_json(text: str) -> Artifacts:
    d = json.loads(text)
    return Artifacts(
        acct=tuple(_acct_from(r) for r in d.get("acct", ())),
        logs=tuple(_log_from(g) for g in d.get("logs", ())),
        commands={str(k): str(v) for k, v in d.get("commands", {}).items()},
        history=tuple(_acct_from(r) for r in d.get("history", ())),
    )
