"""Incidents to Prometheus Alertmanager: ``POST /api/v2/alerts`` with a firing alert per open
incident and a resolved one (``endsAt``) when it resolves.

Grouping, silences, inhibition and routing (Slack, WeCom, DingTalk, Feishu, e-mail) are
Alertmanager's; the cockpit only says which incidents are open. One alert per incident:

* labels: ``alertname="CockpitIncident"``, ``cluster`` (the source), ``subject``
  (``job:48102``, ``node:cn013``, the spelling of a cockpit mute; ``cluster:hpc`` for an
  aggregate such as many jobs failing on one cause), ``root_cause``, ``severity`` (critical /
  warning / info) plus the configured static labels;
* annotations: ``summary`` (the incident's title), ``description``, ``remedy``, ``evidence``
  (its first lines), ``affected`` (the jobs an aggregate or a sick node covers), all through
  :func:`cockpit.safety.redact` and made one-line safe;
* ``startsAt`` when the failure was first seen, ``endsAt`` only on a resolve.

Alertmanager forgets a firing alert that is not posted again within its ``resolve_timeout``
(5 min by default), so the firing set is re-posted on the first poll and every
``resend_every`` polls of a source after it; Alertmanager identifies alerts by their label
set, so a re-post is no new notification. When a refined cause changes ``root_cause`` or
``severity``, the old label set is resolved and the new one fires.

With a store, the first post of each (incident, label set) and each resolve is claimed
(``store.claim``) so two cockpits do not both announce it; re-posts need no claim. A failed
post (Alertmanager down, 4xx/5xx) becomes ``last_error`` and is retried on the next poll;
nothing here raises into the poller.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from cockpit.i18n import _
from cockpit.model import SEVERITY_RANK, Incident, Subject
from cockpit.safety import redact
from cockpit.text import clean
from cockpit.watch.alerts import AlertmanagerConfig
from cockpit.watch.notify import USER_AGENT, NotifyResult

ALERTNAME = "CockpitIncident"
CHANNEL = "alertmanager"
BATCH = 500  # alerts per POST: a storm of 10k incidents stays a few bounded requests
EVIDENCE_LINES = 5
AFFECTED_SHOWN = 10
_LINE = 300  # characters per annotation line: chat receivers cut long messages anyway
_TEXT = 1000
_DONE_KEEP = 20_000  # resolved keys remembered, so a stored resolved incident resolves once


class Claims(Protocol):
    """The part of :class:`cockpit.store.Store` this channel uses."""

    def claim(self, alert_key: str, channel: str, now: datetime) -> bool: ...


# --------------------------------------------------------------------------- payloads (pure)


def subject_label(s: Subject) -> str:
    """``job:48102``: the spelling of a cockpit mute, so a silence reads the same."""
    return f"{s.kind}:{s.id}"


def _line(text: str, limit: int = _LINE) -> str:
    # redacted before the cut: a key cut in half no longer looks like one
    return clean(redact(text), max_len=limit)


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def labels_for(incident: Incident, config: AlertmanagerConfig) -> dict[str, str]:
    return {
        **dict(config.labels),
        "alertname": ALERTNAME,
        "cluster": _line(incident.subject.source),
        "subject": _line(subject_label(incident.subject)),
        "root_cause": _line(incident.root_cause),
        "severity": incident.severity,
    }


def annotations_for(incident: Incident) -> dict[str, str]:
    """summary, description, remedy, evidence (a few ``where: text`` lines); empty ones left out."""
    f = incident.findings[0] if incident.findings else None
    notes = {"summary": _line(incident.title)}
    if f is not None:
        notes["description"] = _line(f.explanation, _TEXT)
        notes["remedy"] = _line(f.remedy, _TEXT)
        notes["evidence"] = "\n".join(
            _line(f"{e.shown_where()}: {e.text}") for e in f.evidence[:EVIDENCE_LINES]
        )
    if incident.affected:  # an aggregate (one cause, many jobs) or a node with its jobs
        shown = ", ".join(subject_label(a) for a in incident.affected[:AFFECTED_SHOWN])
        more = len(incident.affected) - AFFECTED_SHOWN
        extra = _(" (+{n} more)").format(n=more) if more > 0 else ""
        notes["affected"] = _line(shown + extra, _TEXT)
    return {k: v for k, v in notes.items() if v}


def firing_alert(
    incident: Incident, config: AlertmanagerConfig, starts_at: datetime
) -> dict[str, Any]:
    """The v2 API's postable alert for an open incident (no ``endsAt``: Alertmanager keeps it
    firing for its ``resolve_timeout`` after each post)."""
    out: dict[str, Any] = {
        "labels": labels_for(incident, config),
        "annotations": annotations_for(incident),
        "startsAt": _iso(starts_at),
    }
    if config.generator_url:
        out["generatorURL"] = config.generator_url
    return out


def resolved_alert(alert: Mapping[str, Any], ends_at: datetime) -> dict[str, Any]:
    """``alert`` ended at ``ends_at`` (never before it started: Alertmanager rejects that)."""
    starts = datetime.fromisoformat(alert["startsAt"].replace("Z", "+00:00"))
    return {**alert, "endsAt": _iso(max(ends_at, starts))}


def _fingerprint(labels: Mapping[str, str]) -> str:
    text = "\x1f".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:12]


# --------------------------------------------------------------------------- HTTP


def post_alerts(url: str, alerts: Sequence[Mapping[str, Any]], timeout: float) -> NotifyResult:
    """POST ``alerts`` (a JSON list) to ``url``/api/v2/alerts. Never raises: errors come back
    in the result as one line (``unreachable: [Errno 111] Connection refused``,
    ``HTTP 400 Bad Request: start time must be before end time``).

    ``alerts`` are sent as given: build them with :func:`firing_alert` / :func:`resolved_alert`,
    which redact every text taken from an incident (once, when built: the firing set is
    re-posted every few polls, and redacting 10k alerts' texts again each time costs seconds).
    """
    # here, not at module top: urllib.request pulls http.client and email into start-up
    import urllib.error
    import urllib.request

    endpoint = f"{url}/api/v2/alerts"
    try:
        body = json.dumps(list(alerts), ensure_ascii=False).encode()
        req = urllib.request.Request(
            endpoint,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (URL from the operator's config)
            resp.read(65536)
            return NotifyResult(CHANNEL, True, "", resp.status)
    except urllib.error.HTTPError as exc:
        detail = exc.read(300).decode("utf-8", "replace").strip() if exc.fp else ""
        msg = f"HTTP {exc.code} {exc.reason}" + (f": {detail}" if detail else "")
        return NotifyResult(CHANNEL, False, _line(msg), exc.code)
    except urllib.error.URLError as exc:
        kind = "timeout" if isinstance(exc.reason, TimeoutError) else "unreachable"
        return NotifyResult(CHANNEL, False, _line(f"{kind}: {exc.reason}"))
    except TimeoutError:
        return NotifyResult(CHANNEL, False, f"timeout after {timeout:g}s")
    except (OSError, ValueError) as exc:
        return NotifyResult(CHANNEL, False, _line(f"{type(exc).__name__}: {exc}"))


# --------------------------------------------------------------------------- the channel


@dataclass(slots=True)
class _Firing:
    """One incident's alert as last built; ``sent``: Alertmanager has this label set."""

    source: str
    fp: str
    alert: dict[str, Any]
    claim_key: str
    built_from: tuple[Incident, datetime]  # unchanged next poll: nothing to redact again
    claimed: bool = False
    sent: bool = False


@dataclass(slots=True)
class _Resolve:
    """A resolved alert waiting to be posted; ``claimed`` once this process owns it."""

    alert: dict[str, Any]
    claimed: bool = False


@dataclass(slots=True)
class _Pending:
    """One post-worth of work, taken out of the lock while the request runs."""

    alerts: list[dict[str, Any]] = field(default_factory=list)
    firing: list[tuple[str, _Firing]] = field(default_factory=list)
    resolves: list[str] = field(default_factory=list)


class AlertmanagerChannel:
    """Keeps Alertmanager's view of the open incidents in step with the cockpit's.

    Call :meth:`update` after every poll of a source with that source's open incidents (the
    store's, when there is one: they outlive squeue). Blocking (up to ``timeout_s`` per
    request): call it off the event loop. Thread-safe: sources may update concurrently.
    """

    name = CHANNEL

    def __init__(
        self,
        config: AlertmanagerConfig,
        *,
        store: Claims | None = None,
        post: Callable[[str, Sequence[Mapping[str, Any]], float], NotifyResult] = post_alerts,
        on_result: Callable[[NotifyResult, int], None] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.last_error = ""
        self._post = post
        self.on_result = on_result
        self._lock = threading.Lock()
        self._firing: dict[str, _Firing] = {}
        self._resolves: dict[str, _Resolve] = {}  # claim key -> resolve to post
        self._done: dict[str, None] = {}  # incident keys resolved (insertion-ordered, bounded)
        self._polls: dict[str, int] = {}

    @property
    def firing(self) -> dict[str, dict[str, Any]]:
        """Incident key -> the alert last built for it (tests, the status line)."""
        with self._lock:
            return {k: dict(f.alert) for k, f in self._firing.items()}

    def sync(self, source: str, incidents: Sequence[Any], now: datetime, ok: bool = True) -> None:
        """The watcher's per-poll hook (:meth:`cockpit.watch.watcher.Watcher.incidents`):
        :meth:`update` with the outcome kept in ``last_error``; never raises.

        ``incidents`` are :class:`Incident` or the store's ``StoredIncident`` (its
        ``resolved_at`` and ``first_seen`` are then the resolve's ``endsAt`` and ``startsAt``).
        """
        plain: list[Incident] = []
        resolved: dict[str, datetime] = {}
        first: dict[str, datetime] = {}
        for x in incidents:
            inc = getattr(x, "incident", x)
            plain.append(inc)
            if (at := getattr(x, "resolved_at", None)) is not None:
                resolved[inc.key] = at
            if (seen := getattr(x, "first_seen", None)) is not None:
                first[inc.key] = seen
        try:
            self.update(source, plain, now, ok=ok, resolved_at=resolved, first_seen=first)
        except Exception as exc:  # noqa: BLE001 - a bug here must not stop the poller
            self.last_error = _line(f"alertmanager: {type(exc).__name__}: {exc}")

    def wanted(self, incident: Incident) -> bool:
        return SEVERITY_RANK[incident.severity] <= SEVERITY_RANK[self.config.min_severity]

    def update(
        self,
        source: str,
        incidents: Iterable[Incident],
        now: datetime,
        *,
        ok: bool = True,
        resolved_at: Mapping[str, datetime] | None = None,
        first_seen: Mapping[str, datetime] | None = None,
    ) -> list[NotifyResult]:
        """Bring Alertmanager up to date with ``source``'s open ``incidents`` as of ``now``.

        ``ok`` False (the poll failed): nothing is resolved for missing incidents, the source's
        outage says nothing about them. ``resolved_at``: incident key -> when the store saw
        its condition end (a resolve with that ``endsAt``); an incident that is no longer
        listed after a good poll resolves at ``now``. ``first_seen``: key -> ``startsAt``
        (the store's; default the incident's own ``first_seen``, else ``now``).
        Returns the results of the posts made (none when nothing was due).
        """
        resolved_at = resolved_at or {}
        first_seen = first_seen or {}
        with self._lock:
            polls = self._polls[source] = self._polls.get(source, 0) + 1
            resend = (polls - 1) % self.config.resend_every == 0
            seen: set[str] = set()
            for inc in incidents:
                if not self.wanted(inc):
                    continue
                seen.add(inc.key)
                if inc.key in resolved_at:
                    self._resolve_stored(inc, resolved_at[inc.key], first_seen, now)
                else:
                    self._fire(source, inc, first_seen.get(inc.key) or inc.first_seen or now, now)
            if ok:
                for key in [k for k, f in self._firing.items() if f.source == source]:
                    if key not in seen:
                        self._end(key, now)
            work = self._take(source, resend, now)
        return self._send(work)

    # -- under the lock

    def _fire(self, source: str, inc: Incident, starts_at: datetime, now: datetime) -> None:
        old = self._firing.get(inc.key)
        # the same incident again (most of them, most polls): redacting 10k incidents' texts
        # on every poll would cost seconds
        if old is not None and old.built_from == (inc, starts_at):
            return
        alert = firing_alert(inc, self.config, starts_at)
        fp = _fingerprint(alert["labels"])
        self._done.pop(inc.key, None)  # it fires again (a flapping source's outage)
        if old is not None and old.fp == fp:
            old.alert = alert  # a refined title or new evidence rides on the next re-post
            old.built_from = (inc, starts_at)
            return
        if old is not None:  # refined cause or severity: that label set ends now
            self._end(inc.key, now)
        self._firing[inc.key] = _Firing(source, fp, alert, f"{inc.key}|{fp}", (inc, starts_at))

    def _end(self, key: str, at: datetime) -> None:
        f = self._firing.pop(key)
        if f.sent or f.claimed:  # Alertmanager has it (or may: the claimer's post may be pending)
            self._resolves[f"{f.claim_key}|resolved"] = _Resolve(resolved_alert(f.alert, at))
        self._mark_done(key)

    def _resolve_stored(
        self, inc: Incident, at: datetime, first_seen: Mapping[str, datetime], now: datetime
    ) -> None:
        if inc.key in self._firing:
            self._end(inc.key, at)
        elif inc.key not in self._done:  # resolved before this process saw it fire
            alert = firing_alert(inc, self.config, first_seen.get(inc.key) or inc.first_seen or at)
            fp = _fingerprint(alert["labels"])
            self._resolves[f"{inc.key}|{fp}|resolved"] = _Resolve(resolved_alert(alert, at))
            self._mark_done(inc.key)

    def _mark_done(self, key: str) -> None:
        self._done[key] = None
        while len(self._done) > _DONE_KEEP:
            del self._done[next(iter(self._done))]

    def _claim(self, key: str, now: datetime) -> bool:
        if self.store is None:
            return True
        try:
            return bool(self.store.claim(key, CHANNEL, now))
        except Exception as exc:  # noqa: BLE001 - a store failure must not stop alerting
            self.last_error = _line(f"alertmanager: claim failed: {exc}")
            return True  # Alertmanager dedups by labels: a double post is harmless

    def _take(self, source: str, resend: bool, now: datetime) -> _Pending:
        work = _Pending()
        for key, f in self._firing.items():
            due = resend and f.source == source  # a re-post: Alertmanager has it or should
            if f.sent and not due:
                continue
            if not f.sent and not f.claimed and not due:
                f.claimed = self._claim(f.claim_key, now)
                if not f.claimed:  # another cockpit announced it; our re-posts keep it alive
                    f.sent = True
                    continue
            work.alerts.append(f.alert)
            work.firing.append((key, f))
        for ckey, r in list(self._resolves.items()):
            # claimed earlier and its post failed: retry without asking again
            r.claimed = r.claimed or self._claim(ckey, now)
            if r.claimed:
                work.resolves.append(ckey)
            else:  # another cockpit posts this one
                del self._resolves[ckey]
        work.alerts += [self._resolves[k].alert for k in work.resolves]
        return work

    # -- outside the lock

    def _send(self, work: _Pending) -> list[NotifyResult]:
        results: list[NotifyResult] = []
        done = 0  # alerts [0, done) are settled: posted, or refused for good
        for i in range(0, len(work.alerts), BATCH):
            chunk = work.alerts[i : i + BATCH]
            r = self._post(self.config.url, chunk, self.config.timeout_s)
            results.append(r)
            if self.on_result is not None:
                self.on_result(r, len(chunk))
            # 4xx but 429: Alertmanager took the valid alerts and names the others; posting
            # them again would fail again and hold up every later poll
            if not (r.ok or (r.status is not None and 400 <= r.status < 500 and r.status != 429)):
                break  # down or overloaded: the rest waits for the next poll
            done = i + len(chunk)
        failed = next((r for r in results if not r.ok), None)
        with self._lock:
            for n, (key, f) in enumerate(work.firing):
                if n < done and self._firing.get(key) is f:
                    f.sent = True
                elif n >= done and self._firing.get(key) is f:
                    f.sent = False  # a re-post that failed: re-post on the next poll
            offset = len(work.firing)
            for n, ckey in enumerate(work.resolves):
                if offset + n < done:
                    self._resolves.pop(ckey, None)
            if results:
                self.last_error = "" if failed is None else f"alertmanager: {failed.error}"
        return results
