"""Incidents beyond one poll: source outages as incidents, and the store's open incidents.

The poller calls :func:`remember` in a thread after each poll: the source's incidents go into
the store (:mod:`cockpit.store`), which marks the ones gone from the live data, and the store's
open incidents (every source's, every cockpit's on a shared PostgreSQL) come back with the
acks, for the incident view and the dashboard strip. Pure helpers besides the store calls.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cockpit.model import SEVERITY_RANK, Finding, Incident, SourceError, Subject
from cockpit.runtime.pipeline import IncidentTally
from cockpit.store.types import Ack, StoredIncident, outage_key


def outage_incident(source: str, kind: str, start: datetime, error: SourceError) -> Incident:
    """A source that cannot be read (controller down, API unreachable) is an incident, keyed by
    the source and the outage's start (every cockpit on one store agrees on the start)."""
    subject = Subject.of_source(source, kind)
    where = f" ({error.where})" if error.where else ""
    title = f"{source} unreachable: {error.kind}: {error.message}{where}"
    finding = Finding(
        root_cause="source_unreachable",
        severity="critical",
        subject=subject,
        title=title,
        explanation=(
            f"The cockpit cannot read {source} since {start.isoformat(timespec='seconds')}: "
            "what it shows is the last good data."
        ),
        remedy=(
            "Check the controller (systemctl status slurmctld; scontrol ping) or the API "
            "endpoint and credentials; the incident resolves when the source answers again."
        ),
        first_seen=start,
    )
    return Incident(
        key=outage_key(source, start),
        root_cause="source_unreachable",
        severity="critical",
        subject=subject,
        title=title,
        findings=(finding,),
        first_seen=start,
    )


@dataclass(frozen=True)
class Remembered:
    """What the store answered after a poll: open incidents, acks, and their tally."""

    incidents: tuple[StoredIncident, ...] = ()
    acks: dict[str, Ack] = field(default_factory=dict)
    tally: IncidentTally = field(default_factory=IncidentTally)


def remember(
    store: Any,
    source: str,
    incidents: Sequence[Incident],
    now: datetime,
    shown: Collection[str] | None = None,
    answered: bool = True,
) -> Remembered:
    """Sync ``source``'s incidents into the store and read back the open ones of the sources
    in ``shown`` (this cockpit's; None: all), in a thread. ``answered`` False: the source's
    poll failed, so what the store holds of it is not known to be gone (a cockpit started
    during an outage marked every stored incident of that cluster gone); its outage and what
    this cockpit still shows are written, nothing is retired."""
    mine = [i for i in incidents if i.subject.source == source]
    store.sync_incidents([source] if answered else [], mine, now)
    lapse_acks(store, mine, now)
    return read_back(store, now, shown)


def lapse_acks(store: Any, incidents: Sequence[Incident], now: datetime) -> list[str]:
    """An ack covers the failures it was given for. A job of the incident that failed after
    it (a group's key has no time: the next 'exit 1' of the cluster joins the group acked an
    hour ago, and read as acknowledged, its page never sent) re-opens it: the ack is taken
    back in the store, so every head and every cockpit on it says so. Returns the keys."""
    known = getattr(store, "known_acks", None)
    acks = known() if known is not None else store.acks()
    if not acks:
        return []
    # only a group's key lacks a time: a job's names its end, a node's its drain, so the
    # jobs a drained node kills after its ack are that drain's, already acknowledged
    due = [i for i in incidents if i.key.startswith("group|") and _lapsed(i, acks.get(i.key))]
    if due and known is not None:
        # this cockpit's acks are as of its last poll: the ack another cockpit took back and
        # its operator gave again since was taken back here with the memory of the old one
        fresh = store.acks()
        due = [i for i in due if _lapsed(i, fresh.get(i.key))]
    for inc in due:
        store.unack(inc.key, LAPSE_WHO, now)
    return [i.key for i in due]


def _lapsed(inc: Incident, ack: Ack | None) -> bool:
    return ack is not None and any(_after(f, ack.at) for f in inc.findings)


LAPSE_WHO = "cockpit (a job failed after the ack)"
# a job's end is on the cluster's clock, the ack's time on the acking cockpit's: a job shown
# at a poll and acked seconds later read as failed after the ack when slurmctld's clock ran
# a little ahead (every quick ack taken back); a failure within this of the ack is its burst
LAPSE_SKEW = timedelta(minutes=2)


def _after(f: Finding, at: datetime) -> bool:
    # jobs only: their time is when they ended (or were submitted), a fact that does not move
    if f.subject.kind not in ("job", "training_job") or f.first_seen is None:
        return False
    try:
        return f.first_seen > at + LAPSE_SKEW
    except TypeError:  # a naive time from an old record: not comparable, not news
        return False


def read_back(store: Any, now: datetime, shown: Collection[str] | None = None) -> Remembered:
    # a team's store may hold other sites' clusters: this cockpit lists its own
    stored = [
        s for s in store.incidents(now) if shown is None or s.incident.subject.source in shown
    ]
    # incidents() read the acks in its own transaction (with the ones queued here merged in):
    # not a second round trip to the database every poll
    known = getattr(store, "known_acks", None)
    acks = known() if known is not None else store.acks()
    return Remembered(tuple(order(stored)), acks, open_tally(stored))


def order(stored: Sequence[StoredIncident]) -> list[StoredIncident]:
    """Live first, then gone; within each as the incident view ranks (severity, then age)."""
    global _RANKS
    # the store hands back last poll's StoredIncident while its row stays (most of ~1,400 at
    # 10k jobs): its rank is kept with it, not made again every poll
    last: dict[int, tuple[StoredIncident, tuple]] = _RANKS
    ranks: dict[int, tuple[StoredIncident, tuple]] = {}
    for s in stored:
        got = last.get(id(s))
        if got is None or got[0] is not s:
            got = (s, _rank(s))
        ranks[id(s)] = got
    _RANKS = ranks  # another source's thread may swap its own in: only hits are lost
    return sorted(stored, key=lambda s: ranks[id(s)][1])


def _rank(s: StoredIncident) -> tuple:
    return (s.gone, SEVERITY_RANK.get(s.incident.severity, 3), s.first_seen.timestamp(), s.key)


_RANKS: dict[int, tuple[StoredIncident, tuple]] = {}


def open_tally(stored: Sequence[StoredIncident]) -> IncidentTally:
    counts: dict[str, int] = {}
    for s in stored:
        counts[s.incident.severity] = counts.get(s.incident.severity, 0) + 1
    return IncidentTally({s.key: s.incident.severity for s in stored}, counts)


def ago(seconds: float) -> str:
    """How long ago, as every view and command says it (``45s``, ``6m``, ``3h10m``, ``2d4h``:
    the one age format, :func:`cockpit.widgets.fmt.age`)."""
    from cockpit.widgets.fmt import age

    return age(seconds)
