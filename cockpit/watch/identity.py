"""Which failure an alert is about: the key its deliveries are claimed under in the store.

Every process that sees the same failure (two TUIs, a cron ``cockpit watch``) must derive the
same key from the data, not from when it happened to poll, so the store's claim lets exactly
one of them send it. The key follows the failure's identity as incidents do (job + its end,
node + the drain's start, source + outage start), not its current label: a cause refined by
the next poll's evidence does not make a new alert.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from cockpit.model import Snapshot
from cockpit.store.types import outage_key
from cockpit.watch.alerts import Alert


def members_digest(alert: Alert) -> str:
    """A short digest of the jobs a group's alert names (order-free)."""
    ids = sorted(f"{m.source}/{m.id}" for m in alert.members)
    return hashlib.blake2b("\n".join(ids).encode(), digest_size=8).hexdigest()


def _iso(t: datetime | None) -> str:
    return t.isoformat(timespec="seconds") if t is not None else "-"


def delivery_key(
    alert: Alert,
    snapshot: Snapshot | None,
    outage_start: datetime | None = None,
    window_s: float = 3600.0,
) -> str:
    """The identity of ``alert``'s failure. ``snapshot``: the poll it was detected in (for the
    job's end, the node's drain time); ``outage_start``: the source's outage (shared through the
    store); ``window_s``: level alerts with no time of their own (storage, repeated failures)
    count once per window."""
    s = alert.subject
    bucket = int(alert.time.timestamp() // max(window_s, 60.0))
    if alert.incident:
        # the incident's key names the failure, but a group's has no time of its own: the
        # cluster's "exit 1" group of this morning is the one a job joins this afternoon, and
        # claimed once for ever it never paged again. A group's page is claimed for the jobs
        # it names (a fact every cockpit reads alike): jobs joining it are news, paged as an
        # update (the rate limit's group interval), the same jobs seen again are not
        if not alert.is_group:
            return alert.key  # a job's or a node's key has its own time
        return f"{alert.key}|m{members_digest(alert)}"
    if alert.rule in ("source_down", "source_recovered") and outage_start is not None:
        return f"{alert.rule}|{outage_key(s.source, outage_start)}"
    if snapshot is not None:
        if s.kind == "job":
            j = next((j for j in snapshot.jobs if j.job_id == s.id), None)
            if j is not None and (j.end_time or j.submit_time):
                return f"{alert.key}|{_iso(j.end_time or j.submit_time)}"
        elif s.kind == "node":
            n = next((n for n in snapshot.nodes if n.name == s.id), None)
            if n is not None and n.reason_time is not None:
                return f"{alert.key}|{_iso(n.reason_time)}"
        elif s.kind == "training_job":
            t = next((t for t in snapshot.training_jobs if t.job_id == s.id), None)
            if t is not None and t.create_time is not None:
                return f"{alert.key}|{_iso(t.create_time)}"
    return f"{alert.key}|w{bucket}"
