"""The small stateful glue the TUI hub and ``cockpit watch`` share.

Per source it keeps the previous snapshot (and the last good one), runs
:func:`detect`, filters through :class:`AlertRules`, appends to the history and
hands the result to the notifier in a background thread. It never raises for a
history or notification problem: those land in ``last_error``.

Alerts leave here redacted (:func:`redacted`): whatever shows or sends them next (the
alert pane, ``cockpit watch`` output, history, notifiers) never holds a credential that a
quoted log line carried.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from cockpit.model import Finding, Snapshot
from cockpit.safety import redact
from cockpit.slurm.storage import FsUsage
from cockpit.watch.alerts import Alert, AlertConfig, AlertRules
from cockpit.watch.history import AlertHistory
from cockpit.watch.notify import Notifier
from cockpit.watch.transitions import detect, storage_alerts

KEEP = 500  # alerts kept in memory for the alert pane


def redacted(alert: Alert) -> Alert:
    """``alert`` with its texts (title, the finding's explanation, remedy and evidence lines)
    redacted; subjects and rule names stay, they key the rate limit."""
    f = alert.finding
    if f is not None:
        f = replace(
            f,
            title=redact(f.title),
            explanation=redact(f.explanation),
            remedy=redact(f.remedy),
            evidence=tuple(replace(e, text=redact(e.text)) for e in f.evidence),
        )
    return replace(alert, title=redact(alert.title), finding=f)


class Watcher:
    """``observe(snapshot, findings, now)`` after every poll; read ``alerts`` for the pane.

    ``history`` / ``notifier`` may be None (tests, ``--no-history``). On creation the
    last ``KEEP`` alerts are loaded from the history and seed the rate limit, so a
    restart neither forgets nor re-sends.
    """

    def __init__(
        self,
        config: AlertConfig | None = None,
        history: AlertHistory | None = None,
        notifier: Notifier | None = None,
    ) -> None:
        self.config = config or AlertConfig()
        self.rules = AlertRules(self.config)
        self.history = history
        self.notifier = notifier
        self.last_error = ""
        self._lock = threading.Lock()
        self._prev: dict[str, Snapshot] = {}
        self._good: dict[str, Snapshot] = {}
        self._storage: dict[str, list[FsUsage]] = {}
        self._alerts: deque[Alert] = deque(maxlen=KEEP)
        if history is not None:
            try:
                past = history.load(KEEP)
            except OSError as exc:
                past, self.last_error = [], f"alert history: {exc}"
            self._alerts.extend(past)
            self.rules.seed(past)

    @property
    def alerts(self) -> list[Alert]:
        """Alerts oldest first (history plus this session)."""
        with self._lock:
            return list(self._alerts)

    def observe(
        self,
        snapshot: Snapshot,
        findings: Sequence[Finding],
        now: datetime,
        storage: Sequence[FsUsage] | None = None,
        storage_findings: Sequence[Finding] = (),
    ) -> list[Alert]:
        """Detect, filter, record and send; returns the alerts that fired now.

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
            raw = detect(
                prev,
                snapshot,
                findings,
                now,
                config=self.config,
                recent=list(self._alerts),
                last_good=good,
            )
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
            fired = [redacted(a) for a in self.rules.filter(raw, now)]
            self._alerts.extend(fired)
        if fired:
            self._deliver(fired)
        return fired

    def record(self, alerts: Sequence[Alert], now: datetime) -> list[Alert]:
        """Filter alerts found elsewhere (``cockpit watch --once`` conditions) through mutes and the
        rate limit, then keep, record and send them like :meth:`observe`; returns what fired."""
        with self._lock:
            fired = [redacted(a) for a in self.rules.filter(list(alerts), now)]
            self._alerts.extend(fired)
        if fired:
            self._deliver(fired)
        return fired

    def _deliver(self, fired: list[Alert]) -> None:
        if self.history is not None:
            try:
                self.history.append(fired)
            except OSError as exc:
                self.last_error = f"alert history: {exc}"
        if self.notifier is not None:
            self.notifier.dispatch(fired)


def watcher_for(config: object | None, *, demo: bool = False) -> Watcher:
    """The TUI's / ``cockpit watch``'s watcher from a loaded :class:`cockpit.config.Config`.

    Reads ``config.alerts`` (the raw ``[alerts]`` table, ``[alerts.notify]`` nested);
    raises ConfigError on a bad table. The demo keeps alerts in memory only and
    sends nothing, so playing with it never pages anyone.
    """
    table = getattr(config, "alerts", None) or {}
    cfg = AlertConfig.from_table(table, getattr(config, "path", ""))
    if demo:
        return Watcher(cfg)
    return Watcher(cfg, history=AlertHistory(), notifier=Notifier(cfg.notify))


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
