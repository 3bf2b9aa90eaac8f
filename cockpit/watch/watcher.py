"""The small stateful glue the TUI hub and ``cockpit watch`` share.

Per source it keeps the previous snapshot (and the last good one), runs :func:`detect`,
filters through :class:`AlertRules`, appends to the history and hands the result to the
outgoing channels. It never raises for a history or delivery problem: those land in
``last_error``.

Alerts leave here redacted (:func:`redacted`): whatever shows or sends them next (the
alert pane, ``cockpit watch`` output, history, channels) never holds a credential that a
quoted log line carried.

**Channels (the seam for outgoing deliveries).** ``Watcher.channels`` is a list of objects
with ``name: str`` and ``send(alerts: Sequence[Alert]) -> None``, optionally
``resolve(incidents: Sequence[Incident]) -> None`` and ``join(timeout) -> None``. Every
process (each TUI, each ``cockpit watch``) detects the same alerts; with a ``store``, each
alert is *claimed* per channel before it is sent (``store.claim(delivery_key, channel.name,
now)``), so it goes out once per channel whoever sees it first. ``send`` gets only the alerts
this process won; it should not block long (the notifier channels send on a daemon thread).
``resolve`` gets the incidents that ended (a source answers again, a node resumed, a failed
job left the queue), each claimed as ``"resolve|" + incident key`` per channel; it is called
by :meth:`Watcher.incidents` (``cockpit watch`` and the TUI hand it each poll's incidents).
The alert pane of each TUI is not a channel: every TUI shows every alert.
A channel may have ``sync(source, incidents, now, ok)`` instead of ``send``: it gets every
poll's incidents (``ok``: that poll answered) and keeps its own claims (Alertmanager,
/metrics: :mod:`cockpit.watch.outputs`).
To add a channel (e.g. Alertmanager): ``watcher.channels.append(MyChannel())`` after
:func:`watcher_for`, or pass ``channels=`` to :class:`Watcher`.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from cockpit.model import Finding, Incident, Snapshot, Subject
from cockpit.safety import scrub
from cockpit.slurm.storage import FsUsage
from cockpit.watch.alerts import Alert, AlertConfig, AlertRules
from cockpit.watch.history import AlertHistory
from cockpit.watch.identity import delivery_key
from cockpit.watch.notify import Notifier
from cockpit.watch.transitions import (
    RiskKeys,
    detect,
    fold_by_incident,
    risk_alerts,
    storage_alerts,
)

log = logging.getLogger(__name__)

KEEP = 500  # alerts kept in memory for the alert pane
# group updates waiting for their interval (one per incident): as many as the rate limit
# remembers keys; at 1,000, a night of 1,200 growing groups lost 200 updates without a word
HELD_MAX = AlertRules.MAX_KEYS
MAX_OPEN = 100_000  # incident keys remembered per source to notice their end


class Channel(Protocol):
    name: str

    def send(self, alerts: Sequence[Alert]) -> None: ...


class NotifierChannel:
    """The direct webhook or the notify command (:class:`Notifier`), as one channel."""

    def __init__(self, name: str, notifier: Notifier) -> None:
        self.name = name
        self.notifier = notifier

    def send(self, alerts: Sequence[Alert]) -> None:
        self.notifier.dispatch(alerts)

    def join(self, timeout: float | None = None) -> None:
        self.notifier.join(timeout)


def notifier_channels(notifier: Notifier | None) -> list[NotifierChannel]:
    """One channel per configured way out of ``notifier``: ``webhook``, ``command``."""
    if notifier is None:
        return []
    c = notifier.config
    out = []
    if c.webhook:
        out.append(
            NotifierChannel("webhook", Notifier(replace(c, notify_command=""), notifier.log_path))
        )
    if c.notify_command:
        out.append(NotifierChannel("command", Notifier(replace(c, webhook=""), notifier.log_path)))
    return out


def _out(text: str, max_len: int = 4096) -> str:
    # a notify command's $COCKPIT_ALERT_TITLE, a webhook's JSON read by `jq -r` and the alert
    # history would otherwise replay a job name's OSC 52, title or DCS on whoever reads them
    return scrub(text, max_len)


def redacted(alert: Alert) -> Alert:
    """``alert`` with its texts (title, the finding's explanation, remedy and evidence lines,
    the subject's name, the user) redacted and cleaned for every channel; subject ids and rule
    names stay, they key the rate limit."""
    f = alert.finding
    if f is not None:
        f = replace(
            f,
            title=_out(f.title),
            explanation=_out(f.explanation, 8192),
            remedy=_out(f.remedy, 8192),
            evidence=tuple(replace(e, text=_out(e.text), where=_out(e.where)) for e in f.evidence),
            subject=replace(f.subject, name=_out(f.subject.name)),
        )
    return replace(
        alert,
        title=_out(alert.title),
        finding=f,
        subject=replace(alert.subject, name=_out(alert.subject.name)),
        user=_out(alert.user, 256),
    )


class Watcher:
    """``observe(snapshot, findings, now)`` after every poll; read ``alerts`` for the pane.

    ``history`` / ``notifier`` may be None (tests, ``--no-history``). ``store``
    (:mod:`cockpit.store`) makes deliveries exactly-once across processes; ``channels`` the
    outgoing ways (default: the notifier's webhook and command). On creation the last ``KEEP``
    alerts are loaded from the history for the pane; without a store they also seed the rate
    limit, so a restart does not re-send (with one, the store's claims do that, and another
    process's history no longer silences this one: a cron ``watch`` beside a TUI still pages).
    """

    def __init__(
        self,
        config: AlertConfig | None = None,
        history: AlertHistory | None = None,
        notifier: Notifier | None = None,
        *,
        store: Any = None,
        channels: Sequence[Channel] | None = None,
        announce_open: bool = False,
    ) -> None:
        self.config = config or AlertConfig()
        # a source's first poll compared with an empty site: what is already wrong is
        # announced (a channel that another process served already is skipped by the store's
        # claim); False: the first poll is the baseline
        self.announce_open = announce_open
        self.rules = AlertRules(self.config)
        self.history = history
        self.notifier = notifier
        self.store = store
        self.channels: list[Channel] = (
            list(channels) if channels is not None else list(notifier_channels(notifier))
        )
        self.last_error = ""
        self.delivered: list[Alert] = []  # of the last observe/record: sent on >= 1 channel
        self._lock = threading.Lock()
        self._prev: dict[str, Snapshot] = {}  # one per source: bounded by the config
        self._good: dict[str, Snapshot] = {}
        self._storage: dict[str, list[FsUsage]] = {}
        self._risk: dict[str, RiskKeys] = {}  # source -> jobs named at risk at its last poll
        self._outage: dict[str, datetime] = {}  # source -> start of its outage
        self._open: dict[str, dict[str, Incident]] = {}  # source -> open incident key -> it
        self._alerts: deque[Alert] = deque(maxlen=KEEP)
        # group updates the group interval held back, by alert key (see _hold)
        self._held: dict[str, Alert] = {}
        # the jobs each group's last page named: a held update naming no other is not news
        self._paged: dict[str, frozenset[Subject]] = {}
        if history is not None:
            try:
                past = history.load(KEEP)
            except OSError as exc:
                past, self.last_error = [], f"alert history: {exc}"
            self._alerts.extend(past)
            if store is None:
                self.rules.seed(past)
        # what `alerts` answers, replaced whole after each change under the lock and read
        # without it: a poll's observe() holds the lock while it compares snapshots (0.3-0.9 s
        # at 10k churned jobs under load), and the alert screen read it on the UI thread
        self._published: tuple[Alert, ...] = tuple(self._alerts)

    @property
    def alerts(self) -> list[Alert]:
        """Alerts oldest first (history plus this session); never waits for a poll."""
        return list(self._published)

    def observe(
        self,
        snapshot: Snapshot,
        findings: Sequence[Finding],
        now: datetime,
        storage: Sequence[FsUsage] | None = None,
        storage_findings: Sequence[Finding] = (),
        incidents: Sequence[Incident] = (),
    ) -> list[Alert]:
        """Detect, filter, record and send; returns the alerts that fired now.

        ``incidents``: this poll's (the core's): the job alerts of an incident of several jobs
        become one alert about it (:func:`~cockpit.watch.transitions.fold_by_incident`).

        ``storage`` defaults to ``snapshot.storage`` of a good poll that collected any;
        ``storage_findings`` to the ``file`` findings among ``findings`` (the engine's
        ``disk_full``), so an alert explains itself.
        """
        src = snapshot.source
        if storage is None and snapshot.ok and snapshot.storage:
            storage = snapshot.storage
        if storage is not None and not storage_findings:
            storage_findings = [f for f in findings if f.subject.kind == "file"]
        with self._lock:
            prev, good = self._prev.get(src), self._good.get(src)
            if prev is None and self.announce_open:
                prev = good = Snapshot(src, snapshot.kind, snapshot.taken_at)
            raw = detect(
                prev,
                snapshot,
                findings,
                now,
                config=self.config,
                recent=list(self._alerts),
                last_good=good,
            )
            if snapshot.ok:
                known = self._risk.get(src)
                if known is None and self.announce_open:
                    known = frozenset()
                risky, self._risk[src] = risk_alerts(known, snapshot, findings, now)
                raw += risky
            if incidents:
                # a muted job's alert goes before the fold: folded, the group's alert (not
                # muted) paged the update a muted job's failure alone made
                raw = [a for a in raw if a.subject.kind != "job" or not self.rules.is_muted(a)]
                raw = fold_by_incident(raw, [i for i in incidents if i.subject.source == src])
            if storage is not None:
                raw += storage_alerts(
                    src,
                    self._storage.get(src),
                    storage,
                    now,
                    config=self.config,
                    findings=storage_findings,
                )
                self._storage[src] = list(storage)
            self._prev[src] = snapshot
            if snapshot.ok:
                self._good[src] = snapshot
            if snapshot.ok:  # a failed poll cannot say what a held update's group holds now
                raw = self._with_held(raw, now, src, incidents)
            passed = self.rules.filter(raw, now)
            self._hold(raw, {a.key for a in passed})
            fired = [redacted(a) for a in passed]
            self._alerts.extend(fired)
            if fired:
                self._published = tuple(self._alerts)
        self.delivered = self._deliver(fired, snapshot, now) if fired else []
        return fired

    def _with_held(
        self, raw: list[Alert], now: datetime, src: str, incidents: Sequence[Incident]
    ) -> list[Alert]:
        """``raw`` plus each of ``src``'s group updates held back by the group interval that
        is now due (a newer update of the same incident in ``raw`` replaces it), naming the
        group's jobs of this poll: none when no job is news any more (the one that joined was
        requeued and runs again, the incident ended). Under the lock."""
        fresh = {a.key for a in raw if a.is_group}
        now_open = {i.key: i for i in incidents if i.subject.source == src}
        due = []
        for key, a in list(self._held.items()):
            if key in fresh:
                del self._held[key]
                continue
            if a.source != src or not self.rules.due(a, now):
                continue
            del self._held[key]
            inc = now_open.get(a.incident)
            jobs = tuple(s for s in inc.affected if s.kind == "job") if inc is not None else ()
            if len(jobs) >= 2 and not set(jobs) <= self._paged.get(key, frozenset()):
                due.append(
                    replace(a, time=now, members=jobs, title=inc.title, severity=inc.severity)
                )
        return [*raw, *due]

    def _hold(self, raw: list[Alert], passed: set[str]) -> None:
        """Keep the group updates the interval held back (jobs joined an incident paged a
        minute ago): they fire when it has passed, not an hour later or never."""
        for a in raw:
            if a.is_group and a.key in passed:
                self._paged.pop(a.key, None)  # re-inserted: the oldest page goes first
                self._paged[a.key] = frozenset(a.members)
            elif a.is_group and not self.rules.is_muted(a):
                self._held[a.key] = a
        while len(self._held) > HELD_MAX:
            del self._held[next(iter(self._held))]
        while len(self._paged) > HELD_MAX:
            del self._paged[next(iter(self._paged))]

    def record(
        self, alerts: Sequence[Alert], now: datetime, snapshot: Snapshot | None = None
    ) -> list[Alert]:
        """Filter alerts found elsewhere (``cockpit watch --once`` conditions) through mutes and the
        rate limit, then keep, record and send them like :meth:`observe`; returns what fired.
        ``snapshot``: the poll they were found in (names each failure for the claims)."""
        with self._lock:
            fired = [redacted(a) for a in self.rules.filter(list(alerts), now)]
            self._alerts.extend(fired)
            if fired:
                self._published = tuple(self._alerts)
        self.delivered = self._deliver(fired, snapshot, now) if fired else []
        return fired

    def outage_start(self, source: str, now: datetime, error: str = "") -> datetime:
        """When ``source``'s current outage began: the store's (shared by every process),
        else the first failed poll this process saw."""
        with self._lock:
            known = self._outage.get(source)
        if known is not None:
            return known
        start = self.store.open_outage(source, now, error) if self.store is not None else now
        with self._lock:
            self._outage[source] = start
        return start

    def _outage_for(self, snapshot: Snapshot | None, now: datetime) -> datetime | None:
        if snapshot is None:
            return None
        src = snapshot.source
        if snapshot.error is not None:
            return self.outage_start(src, now, snapshot.error.message)
        with self._lock:
            start = self._outage.pop(src, None)
        if start is not None and self.store is not None:
            self.store.close_outage(src, now)
        return start

    def _deliver(self, fired: list[Alert], snapshot: Snapshot | None, now: datetime) -> list[Alert]:
        """History, then each channel the alerts this process claims on it; returns the alerts
        sent on at least one channel (all of them without a store)."""
        if self.history is not None:
            try:
                self.history.append(fired)
            except OSError as exc:
                self.last_error = f"alert history: {exc}"
        senders = [ch for ch in self.channels if hasattr(ch, "send")]  # not sync-only ones
        if self.store is None:
            for ch in senders:
                ch.send(fired)
            return list(fired)
        outage = self._outage_for(snapshot, now)
        window = float(self.config.repeat_s)
        keys = [delivery_key(a, snapshot, outage, window) for a in fired]
        sent: dict[int, Alert] = {}
        early = self._paged_elsewhere(fired, senders, now)
        for ch in senders:
            mine = [
                (i, a)
                for i, (a, k) in enumerate(zip(fired, keys, strict=True))
                if (i, ch.name) not in early and self.store.claim(k, ch.name, now)
            ]
            if mine:
                sent.update(mine)
                self._send(ch, [a for _, a in mine])
        return [sent[i] for i in sorted(sent)]

    def _paged_elsewhere(
        self, fired: list[Alert], senders: list, now: datetime
    ) -> set[tuple[int, str]]:
        """(index, channel) of the group updates in ``fired`` another cockpit on the store
        paged on that channel less than the group interval ago (the interval is the team's: a
        watch and a TUI polling 30 s apart paged one group's updates 30 s apart); each is held
        for the interval. Per channel: a channel no other cockpit serves (a cron watch's
        printed output beside TUIs that page a webhook) gets it now."""
        seen = getattr(self.store, "claimed_since", None)
        if seen is None:
            return set()
        since = now - timedelta(seconds=AlertRules.GROUP_INTERVAL_S)
        early = {
            (i, ch.name)
            for i, a in enumerate(fired)
            if a.is_group
            for ch in senders
            if seen(f"{a.key}|m", ch.name, since)
        }
        with self._lock:
            for i in {i for i, _ in early}:  # not paged here: its jobs are news when it is due
                self._held.setdefault(fired[i].key, fired[i])
                self._paged.pop(fired[i].key, None)
        return early

    def _send(self, ch: Channel, alerts: list[Alert]) -> None:
        try:
            ch.send(alerts)
        except Exception as exc:  # a channel bug must not stop the others or the poll
            log.exception("channel %s failed", ch.name)
            self.last_error = f"{ch.name}: {exc}"

    def incidents(
        self, source: str, incidents: Sequence[Incident], now: datetime, ok: bool = True
    ) -> list[Incident]:
        """The source's incidents of this poll: those open at the previous call and absent now
        have ended; each channel with ``resolve`` gets them (claimed per channel). Returns them.
        ``ok`` False: the poll failed (``incidents`` holds its outage); the others stay open,
        a failed poll cannot say they ended."""
        live = {i.key: i for i in incidents if i.subject.source == source}
        with self._lock:
            before = self._open.get(source, {})
            if not ok:
                live = {**before, **live}
            ended = [i for k, i in before.items() if k not in live]
            self._open[source] = live if len(live) <= MAX_OPEN else {}
        for ch in self.channels:
            sync = getattr(ch, "sync", None)
            if sync is not None:  # every poll's incidents (Alertmanager, /metrics); never raises
                sync(source, list(live.values()), now, ok)
        if not ended:
            return []
        for ch in self.channels:
            resolve = getattr(ch, "resolve", None)
            if resolve is None:
                continue
            mine = [
                i
                for i in ended
                if self.store is None or self.store.claim(f"resolve|{i.key}", ch.name, now)
            ]
            if mine:
                try:
                    resolve(mine)
                except Exception as exc:
                    log.exception("channel %s failed to resolve", ch.name)
                    self.last_error = f"{ch.name}: {exc}"
        return ended

    def join(self, timeout: float | None = None) -> None:
        """Wait for deliveries in flight (``cockpit watch --once`` before it exits)."""
        for ch in self.channels:
            join = getattr(ch, "join", None)
            if join is not None:
                join(timeout)


def watcher_for(config: object | None, *, demo: bool = False, store: Any = None) -> Watcher:
    """The TUI's / ``cockpit watch``'s watcher from a loaded :class:`cockpit.config.Config`.

    Reads ``config.alerts`` (the raw ``[alerts]`` table, ``[alerts.notify]`` nested);
    raises ConfigError on a bad table. The demo keeps alerts in memory only and
    sends nothing, so playing with it never pages anyone.
    """
    table = getattr(config, "alerts", None) or {}
    cfg = AlertConfig.from_table(table, getattr(config, "path", ""))
    # what is open when the TUI starts is in its alert pane too; each channel still gets each
    # alert once across every process on the store (the claims), whoever starts first
    if demo:
        return Watcher(cfg, store=store, announce_open=True)
    w = Watcher(
        cfg, history=AlertHistory(), notifier=Notifier(cfg.notify), store=store, announce_open=True
    )
    from cockpit.watch.outputs import alertmanager_channel  # urllib only when configured

    if (am := alertmanager_channel(cfg, store)) is not None:  # [alerts.alertmanager]
        w.channels.append(am)
    return w


def baselines_for(config: object | None, *, demo: bool = False):
    """The ModelArts init-log :class:`~cockpit.watch.baseline.BaselineStore` for a loaded config.

    Path: ``[alerts] baselines`` or the state dir's ``init-baselines.json``; the demo keeps
    baselines in memory. Raises ConfigError on a bad ``[alerts]`` table.
    """
    from cockpit.watch.baseline import BaselineStore

    if demo:
        return BaselineStore(persist=False)
    cfg = AlertConfig.from_table(getattr(config, "alerts", None) or {}, getattr(config, "path", ""))
    return BaselineStore(cfg.baselines_path or None)
