"""Alerts: what fired, the rules from config, mutes and the repeat rate limit.

An :class:`Alert` is one thing an operator would want mail for (Slurm's
``--mail-type=ALL`` classes plus the guides' prevention checks). Alerts are
produced by :func:`cockpit.watch.transitions.detect`, filtered by
:class:`AlertRules` (mutes, rate limit), appended to the history file and sent to
the notification channels.

Config (TOML, read raw by the config loader and handed to :meth:`AlertConfig.from_table`)::

    [alerts]
    initializing_min = 8        # override the engine's Initializing threshold (10 min
                                # public pool, 3 min dedicated; unset: the engine's)
    storage_pct = 85            # shared filesystem use or inode use at/above this
    repeat_s = 3600             # same rule + subject at most once per this many seconds
    failures_window_min = 60    # a user's jobs failing repeatedly: N failures ...
    failures_count = 3          # ... within the window
    mute = ["node:cn003", "rule:storage", "job:42@hpc", "source:lab"]
    baselines = "~/.local/state/cockpit/init-baselines.json"  # ModelArts init-log baselines

    [alerts.notify]             # nested: the config loader only knows [alerts]
    webhook = "https://chat.example/robot?key=..."
    webhook_template = "generic"  # generic | slack | wecom | dingtalk | feishu
    notify_command = "logger -t cockpit"
    bell = true
    timeout_s = 10

    [alerts.alertmanager]       # Prometheus Alertmanager (cockpit/watch/alertmanager.py)
    url = "http://127.0.0.1:9093"
    resend_every = 8            # re-post firing incidents every N polls (keeps them alive)
    timeout_s = 5
    min_severity = "warning"
    generator_url = "https://wiki.example/cockpit"   # optional link in each alert
    labels = { site = "bj1" }   # static labels added to every alert

    # [alerts] metrics_listen = "127.0.0.1:9464" serves /metrics (cockpit watch)
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cockpit.errors import ConfigError, ConfigErrors
from cockpit.i18n import _
from cockpit.model import SEVERITY_RANK, Evidence, Finding, Severity, Subject

# Rule names (stable: mutes, history and scripts key on them).
RULES: tuple[str, ...] = (
    "job_failed",  # Slurm job turned FAILED / TIMEOUT / OUT_OF_MEMORY / NODE_FAIL
    "node_unhealthy",  # node entered DRAIN or DOWN; a resource pool node turned Abnormal
    "pending_never_runs",  # PENDING on a reason that never resolves by itself
    "repeated_failures",  # one user's jobs failing N times within the window
    "init_slow",  # ModelArts job Initializing past the threshold
    "training_failed",  # ModelArts job Failed / Abnormal
    "source_down",  # a cluster / project stopped answering
    "source_recovered",  # ... and came back
    "storage",  # shared filesystem (bytes or inodes) above the threshold
    # before it fails: a running job named at risk (cockpit.diagnosis.rules.slurm_risk)
    "time_limit_near",  # past 90 % of its time limit
    "memory_near",  # resident memory near its request
    "memory_critical",  # ... at 98 % of it, or still climbing
    "output_silent",  # stdout not grown for the configured time
)
TEMPLATES: tuple[str, ...] = ("generic", "slack", "wecom", "dingtalk", "feishu")
_SUBJECT_KINDS = (
    "job",
    "node",
    "partition",
    "training_job",
    "pool",
    "cluster",
    "project",
    "file",
    "user",
)


@dataclass(frozen=True, slots=True)
class Alert:
    """One fired alert.

    ``time`` is when it was detected (tz-aware UTC), ``rule`` one of :data:`RULES`,
    ``subject`` what it is about, ``title`` one line for the alert pane,
    ``finding`` the engine's explanation when one matched, ``source`` the
    cluster / project name, ``user`` the job owner when known (repeated failures).
    """

    time: datetime
    rule: str
    severity: Severity
    subject: Subject
    title: str
    finding: Finding | None = None
    source: str = ""
    user: str = ""
    # an alert about an incident of several jobs (27 failed array tasks, the jobs on a drained
    # node): the incident's key and its jobs; one alert for all of them
    incident: str = ""
    members: tuple[Subject, ...] = ()
    # what tells this alert from an earlier one on the same subject and rule: a resource
    # pool's nodes that turned (one pool, many nodes; its next node turning is news, though
    # within the rate limit of the first)
    detail: str = ""

    @property
    def is_group(self) -> bool:
        """About an incident of several jobs (a group of one cause, a node's casualties)."""
        return bool(self.incident) and bool(self.members)

    @property
    def key(self) -> str:
        """Rate-limit key: rule + subject (+ the incident: one per incident, whoever joins it;
        + ``detail``)."""
        s = self.subject
        if self.incident:
            base = f"{self.rule}|incident|{self.incident}"
        else:
            base = f"{self.rule}|{s.kind}|{s.source}|{s.id}"
        return f"{base}|{self.detail}" if self.detail else base

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (history lines, webhook ``generic`` body, command hook stdin)."""
        out: dict[str, Any] = {
            "time": self.time.isoformat(),
            "rule": self.rule,
            "severity": self.severity,
            "subject": _subject_json(self.subject),
            "title": self.title,
            "source": self.source,
        }
        if self.user:
            out["user"] = self.user
        if self.incident:
            out["incident"] = self.incident
            out["members"] = [_subject_json(s) for s in self.members]
        if self.detail:
            out["detail"] = self.detail
        if self.finding is not None:
            out["finding"] = finding_to_json(self.finding)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Alert:
        """Inverse of :meth:`to_json`; ``ValueError``/``KeyError``/``TypeError`` on bad input."""
        sev = d["severity"]
        if sev not in SEVERITY_RANK:
            raise ValueError(f"unknown severity {sev!r}")
        t = datetime.fromisoformat(d["time"])
        if t.tzinfo is None:
            raise ValueError("alert time without a zone")
        f = d.get("finding")
        return cls(
            time=t,
            rule=str(d["rule"]),
            severity=sev,
            subject=_subject_from(d["subject"]),
            title=str(d["title"]),
            finding=finding_from_json(f) if f else None,
            source=str(d.get("source", "")),
            user=str(d.get("user", "")),
            incident=str(d.get("incident", "")),
            members=tuple(_subject_from(s) for s in d.get("members", ())),
            detail=str(d.get("detail", "")),
        )


def _subject_json(s: Subject) -> dict[str, str]:
    return {"kind": s.kind, "source": s.source, "id": s.id}


def _subject_from(d: Mapping[str, Any]) -> Subject:
    if d["kind"] not in _SUBJECT_KINDS:
        raise ValueError(f"unknown subject kind {d['kind']!r}")
    return Subject(kind=d["kind"], source=str(d["source"]), id=str(d["id"]))


def finding_to_json(f: Finding) -> dict[str, Any]:
    """The parts of a Finding an alert needs to explain itself later (no ``related``)."""
    return {
        "root_cause": f.root_cause,
        "severity": f.severity,
        "subject": _subject_json(f.subject),
        "title": f.title,
        "explanation": f.explanation,
        "remedy": f.remedy,
        "confidence": f.confidence,
        "first_seen": f.first_seen.isoformat() if f.first_seen else None,
        "evidence": [
            {
                "where": e.where,
                "text": e.text,
                "line": e.line,
                "path": e.path,
                "offset": e.offset,
                "tier": e.tier,
                "quoted": e.quoted,
            }
            for e in f.evidence
        ],
    }


def _aware(text: Any) -> datetime | None:
    """A finding's first-seen read back (None when absent, unzoned or unreadable: an
    alert history written before it was kept)."""
    if not isinstance(text, str):
        return None
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return None
    return t if t.tzinfo is not None else None


def finding_from_json(d: Mapping[str, Any]) -> Finding:
    return Finding(
        root_cause=str(d["root_cause"]),
        severity=d["severity"],
        subject=_subject_from(d["subject"]),
        title=str(d["title"]),
        explanation=str(d.get("explanation", "")),
        remedy=str(d.get("remedy", "")),
        confidence=float(d.get("confidence", 0.8)),
        first_seen=_aware(d.get("first_seen")),
        evidence=tuple(
            Evidence(
                where=str(e["where"]),
                text=str(e["text"]),
                line=e.get("line"),
                path=str(e.get("path", "")),
                offset=e.get("offset"),
                tier=int(e.get("tier", 0)),
                quoted=bool(e.get("quoted", False)),
            )
            for e in d.get("evidence", ())
        ),
    )


# --------------------------------------------------------------------------- config


@dataclass(frozen=True, slots=True)
class Mute:
    """``rule:NAME`` mutes a rule, ``KIND:ID[@SOURCE]`` a subject, ``source:NAME`` a source."""

    rule: str = ""
    kind: str = ""
    id: str = ""
    source: str = ""

    @classmethod
    def parse(cls, text: str) -> Mute:
        """Raises ``ValueError`` with a message fit for a ConfigError."""
        head, sep, rest = text.partition(":")
        if not sep or not rest:
            raise ValueError(
                _("mute {text}: expected 'rule:NAME', 'source:NAME' or 'KIND:ID[@SOURCE]'").format(
                    text=repr(text)
                )
            )
        if head == "rule":
            if rest not in RULES:
                raise ValueError(
                    _("mute {text}: unknown rule {rule} (known: {known})").format(
                        text=repr(text), rule=repr(rest), known=", ".join(RULES)
                    )
                )
            return cls(rule=rest)
        if head == "source":
            return cls(source=rest)
        if head not in _SUBJECT_KINDS:
            raise ValueError(
                _("mute {text}: unknown kind {kind} (rule, source, {kinds})").format(
                    text=repr(text), kind=repr(head), kinds=", ".join(_SUBJECT_KINDS)
                )
            )
        ident, _at, source = rest.partition("@")
        return cls(kind=head, id=ident, source=source)

    def matches(self, alert: Alert) -> bool:
        if self.rule:
            return alert.rule == self.rule
        if not self.kind:
            return alert.subject.source == self.source or alert.source == self.source
        s = alert.subject
        return (
            s.kind == self.kind and s.id == self.id and (not self.source or s.source == self.source)
        )

    def __str__(self) -> str:
        if self.rule:
            return f"rule:{self.rule}"
        if not self.kind:
            return f"source:{self.source}"
        return f"{self.kind}:{self.id}" + (f"@{self.source}" if self.source else "")


@dataclass(frozen=True, slots=True)
class NotifyConfig:
    """Where alerts go besides the alert pane. Empty strings mean "off"."""

    webhook: str = ""
    webhook_template: str = "generic"
    notify_command: str = ""
    bell: bool = True
    timeout_s: float = 10.0
    min_severity: Severity = "warning"  # alerts below this are kept in history only

    @classmethod
    def from_table(cls, table: Mapping[str, Any], path: str = "") -> NotifyConfig:
        """Parse the ``[notify]`` table. Raises ConfigError naming file and key."""
        t = dict(table)
        known = {
            "webhook",
            "webhook_template",
            "notify_command",
            "bell",
            "timeout_s",
            "min_severity",
        }
        _reject_unknown(t, known, path, "notify")
        webhook = _get(t, "webhook", str, "", path, "notify")
        if webhook and not webhook.startswith(("http://", "https://")):
            raise ConfigError(
                _("webhook must be an http:// or https:// URL, got {value}").format(
                    value=repr(webhook)
                ),
                path,
                key="notify.webhook",
            )
        template = _get(t, "webhook_template", str, "generic", path, "notify")
        if template not in TEMPLATES:
            raise ConfigError(
                _("unknown template {value} (one of {known})").format(
                    value=repr(template), known=", ".join(TEMPLATES)
                ),
                path,
                key="notify.webhook_template",
            )
        timeout = _timeout(_get(t, "timeout_s", (int, float), 10.0, path, "notify"), path, "notify")
        sev = _get(t, "min_severity", str, "warning", path, "notify")
        if sev not in SEVERITY_RANK:
            raise ConfigError(
                _("unknown severity {value} (critical, warning, info)").format(value=repr(sev)),
                path,
                key="notify.min_severity",
            )
        command = _get(t, "notify_command", str, "", path, "notify")
        if command:
            import shlex

            try:
                shlex.split(command)
            except ValueError as exc:
                raise ConfigError(
                    _("cannot split command: {error}").format(error=exc),
                    path,
                    key="notify.notify_command",
                ) from None
        return cls(
            webhook=webhook,
            webhook_template=template,
            notify_command=command,
            bell=_get(t, "bell", bool, True, path, "notify"),
            timeout_s=timeout,
            min_severity=sev,
        )


_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# set from the incident; a static label may not shadow them (routes and silences key on them)
AM_LABELS: tuple[str, ...] = ("alertname", "cluster", "subject", "root_cause", "severity")


@dataclass(frozen=True, slots=True)
class AlertmanagerConfig:
    """``[alerts.alertmanager]``: where incidents are posted (Alertmanager's v2 API).

    ``url`` is Alertmanager's base URL; ``resend_every`` re-posts the firing incidents every
    N polls of a source, which is how Alertmanager keeps them firing (it resolves an alert
    not re-posted within its ``resolve_timeout``, 5 min by default): pick N x interval below it.
    """

    url: str
    resend_every: int = 8
    timeout_s: float = 5.0
    min_severity: Severity = "warning"
    generator_url: str = ""
    labels: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_table(cls, table: Mapping[str, Any], path: str = "") -> AlertmanagerConfig:
        """Parse ``[alerts.alertmanager]``. Raises ConfigError naming file and key."""
        t, where = dict(table), "alerts.alertmanager"
        known = {"url", "resend_every", "timeout_s", "min_severity", "generator_url", "labels"}
        _reject_unknown(t, known, path, where)
        if "url" not in t:
            raise ConfigError(_("url is required (e.g. http://127.0.0.1:9093)"), path, key=where)
        url = _get(t, "url", str, "", path, where).rstrip("/")
        url = url.removesuffix("/api/v2/alerts")
        gen = _get(t, "generator_url", str, "", path, where)
        for key, value in (("url", url), ("generator_url", gen)):
            if (value or key == "url") and not value.startswith(("http://", "https://")):
                raise ConfigError(
                    _("must be an http:// or https:// URL, got {value}").format(value=repr(value)),
                    path,
                    key=f"{where}.{key}",
                )
        every = _get(t, "resend_every", int, 8, path, where)
        if every < 1:
            raise ConfigError(_("must be >= 1 poll"), path, key=f"{where}.resend_every")
        timeout = _timeout(_get(t, "timeout_s", (int, float), 5.0, path, where), path, where)
        sev = _get(t, "min_severity", str, "warning", path, where)
        if sev not in SEVERITY_RANK:
            raise ConfigError(
                _("unknown severity {value} (critical, warning, info)").format(value=repr(sev)),
                path,
                key=f"{where}.min_severity",
            )
        labels = _get(t, "labels", dict, {}, path, where)
        for k, v in labels.items():
            if not _LABEL_NAME.fullmatch(k) or k.startswith("__"):
                raise ConfigError(
                    _("bad label name {name}").format(name=repr(k)), path, key=f"{where}.labels"
                )
            if k in AM_LABELS:
                raise ConfigError(
                    _("label {name} is set from the incident ({labels})").format(
                        name=repr(k), labels=", ".join(AM_LABELS)
                    ),
                    path,
                    key=f"{where}.labels",
                )
            if not isinstance(v, str):
                raise ConfigError(
                    _("label values are strings, got {name} = {value}").format(
                        name=k, value=repr(v)
                    ),
                    path,
                    key=f"{where}.labels",
                )
        return cls(
            url=url,
            resend_every=every,
            timeout_s=timeout,
            min_severity=sev,
            generator_url=gen,
            labels=tuple(sorted(labels.items())),
        )


def parse_listen(text: str) -> tuple[str, int]:
    """``"HOST:PORT"`` (``[::1]:9464`` for IPv6; port 0 = any free one) -> (host, port).

    Raises ValueError with a message fit for a ConfigError or a usage error."""
    host, sep, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT (e.g. 127.0.0.1:9464), got {text!r}")
    return host, int(port)


@dataclass(frozen=True, slots=True)
class AlertConfig:
    """Thresholds, mutes and notification settings; defaults from the troubleshooting guides."""

    # None: the engine's own Initializing thresholds, so an alert and the job's verdict
    # agree (cockpit.diagnosis.rules.modelarts.init_threshold_s); set: an override
    initializing_s: int | None = None
    storage_pct: float = 85.0
    repeat_s: int = 3600
    failures_window_s: int = 60 * 60
    failures_count: int = 3
    mutes: tuple[Mute, ...] = ()
    notify: NotifyConfig = field(default_factory=NotifyConfig)
    baselines_path: str = ""  # "" = platformdirs state dir / init-baselines.json
    alertmanager: AlertmanagerConfig | None = None  # [alerts.alertmanager]; None = off
    metrics_listen: str = ""  # "HOST:PORT" for /metrics (cockpit watch); "" = off

    @classmethod
    def from_table(
        cls,
        table: Mapping[str, Any] | None,
        path: str = "",
        notify_table: Mapping[str, Any] | None = None,
    ) -> AlertConfig:
        """Parse ``[alerts]`` with ``[alerts.notify]`` nested in it (or passed as ``notify_table``).

        Raises :class:`ConfigError` naming ``path``, the key and its line for a wrong type,
        a value out of range, an unknown key or a malformed mute.
        """
        try:
            return cls._from_table(table, path, notify_table)
        except ConfigError as exc:
            from cockpit.config import located

            raise located(exc) from None

    @classmethod
    def _from_table(
        cls,
        table: Mapping[str, Any] | None,
        path: str,
        notify_table: Mapping[str, Any] | None,
    ) -> AlertConfig:
        t = dict(table or {})
        nested = t.pop("notify", None)
        if nested is not None and not isinstance(nested, Mapping):
            raise ConfigError(_("must be a table"), path, key="alerts.notify")
        am_table = t.pop("alertmanager", None)
        if am_table is not None and not isinstance(am_table, Mapping):
            raise ConfigError(_("must be a table"), path, key="alerts.alertmanager")
        known = {
            "initializing_min",
            "storage_pct",
            "repeat_s",
            "failures_window_min",
            "failures_count",
            "mute",
            "baselines",
            "metrics_listen",
        }
        _reject_unknown(t, known, path, "alerts")
        init_min = _get(t, "initializing_min", (int, float), 0, path, "alerts")
        explicit = "initializing_min" in t
        storage = _get(t, "storage_pct", (int, float), 85, path, "alerts")
        repeat = _get(t, "repeat_s", int, 3600, path, "alerts")
        window = _get(t, "failures_window_min", (int, float), 60, path, "alerts")
        count = _get(t, "failures_count", int, 3, path, "alerts")
        if explicit and not (0 < init_min < math.inf):  # inf, nan: no time to wait
            raise ConfigError(_("must be > 0 minutes"), path, key="alerts.initializing_min")
        if not 0 < storage <= 100:
            raise ConfigError(_("must be a percentage in (0, 100]"), path, key="alerts.storage_pct")
        if repeat < 0:
            raise ConfigError(_("must be >= 0 seconds"), path, key="alerts.repeat_s")
        if not 0 < window < math.inf:
            raise ConfigError(_("must be > 0 minutes"), path, key="alerts.failures_window_min")
        if count < 2:
            raise ConfigError(_("must be >= 2"), path, key="alerts.failures_count")
        raw_mutes = _get(t, "mute", list, [], path, "alerts")
        mutes = []
        for m in raw_mutes:
            if not isinstance(m, str):
                raise ConfigError(
                    _("mute entries are strings, got {value}").format(value=repr(m)),
                    path,
                    key="alerts.mute",
                )
            try:
                mutes.append(Mute.parse(m))
            except ValueError as exc:
                raise ConfigError(str(exc), path, key="alerts.mute") from None
        baselines = _get(t, "baselines", str, "", path, "alerts")
        listen = _get(t, "metrics_listen", str, "", path, "alerts")
        if listen:
            try:
                parse_listen(listen)
            except ValueError as exc:
                raise ConfigError(str(exc), path, key="alerts.metrics_listen") from None
        nt = notify_table if notify_table is not None else nested
        am = None if am_table is None else AlertmanagerConfig.from_table(am_table, path)
        return cls(
            initializing_s=int(init_min * 60) if explicit else None,
            storage_pct=float(storage),
            repeat_s=repeat,
            failures_window_s=int(window * 60),
            failures_count=count,
            mutes=tuple(mutes),
            notify=NotifyConfig.from_table(nt or {}, path),
            baselines_path=os.path.expanduser(baselines) if baselines else "",
            alertmanager=am,
            metrics_listen=listen,
        )


MAX_TIMEOUT_S = 3600.0


def _timeout(value: float, path: str, where: str) -> float:
    """A channel's ``timeout_s``: > 0 and at most an hour (inf or nan overflowed the socket's
    timeout when the first alert was sent, not when the config was read)."""
    if not 0 < value <= MAX_TIMEOUT_S:
        raise ConfigError(
            _("must be > 0 and at most {max} seconds").format(max=f"{MAX_TIMEOUT_S:g}"),
            path,
            key=f"{where}.timeout_s",
        )
    return float(value)


def _reject_unknown(t: Mapping[str, Any], known: set[str], path: str, table: str) -> None:
    """Every unknown key of the table at once (two typos named only the first)."""
    bad = [
        ConfigError(
            _("unknown key (known: {known})").format(known=", ".join(sorted(known))),
            path,
            key=f"{table}.{k}",
        )
        for k in t
        if k not in known
    ]
    if bad:
        raise bad[0] if len(bad) == 1 else ConfigErrors(bad)


def _get(
    t: Mapping[str, Any],
    key: str,
    types: type | tuple[type, ...],
    default: Any,
    path: str,
    table: str,
) -> Any:
    if key not in t:
        return default
    v = t[key]
    # TOML booleans are ints in Python: never accept one where a number is meant.
    if (isinstance(v, bool) and types is not bool) or not isinstance(v, types):
        names = (
            types.__name__ if isinstance(types, type) else " or ".join(x.__name__ for x in types)
        )
        raise ConfigError(
            _("expected {types}, got {value}").format(types=names, value=repr(v)),
            path,
            key=f"{table}.{key}",
        )
    return v


# --------------------------------------------------------------------------- rules


class AlertRules:
    """Mutes plus the repeat rate limit (same rule + subject at most once per ``repeat_s``).

    Holds the time each alert key last fired; :meth:`seed` restores it from the
    history so a restart does not re-send what fired an hour ago. Runtime mutes
    (from a key in the alert pane) are added with :meth:`mute`.

    The map is bounded (a week of churning job ids would otherwise only grow): past
    ``max_keys`` the keys whose window has passed go first (they no longer hold anything
    back), then the longest-quiet ones, so an alert storm can at worst repeat early.
    """

    MAX_KEYS = 10_000
    # an incident of several jobs pages again when jobs joined it, at most this often
    # (Alertmanager's group_interval): within repeat_s it was silent for an hour while
    # `cockpit incidents` listed each new member as critical
    GROUP_INTERVAL_S = 300

    def __init__(self, config: AlertConfig | None = None, max_keys: int = MAX_KEYS) -> None:
        self.config = config or AlertConfig()
        self._mutes: list[Mute] = list(self.config.mutes)
        self._last: dict[str, datetime] = {}
        self.max_keys = max(1, max_keys)

    @property
    def mutes(self) -> tuple[Mute, ...]:
        return tuple(self._mutes)

    def mute(self, spec: str | Mute) -> Mute:
        """Add a mute (``"node:cn003"``, ``"rule:storage"``). Raises ValueError on a bad spec."""
        m = spec if isinstance(spec, Mute) else Mute.parse(spec)
        if m not in self._mutes:
            self._mutes.append(m)
        return m

    def unmute(self, spec: str | Mute) -> bool:
        m = spec if isinstance(spec, Mute) else Mute.parse(spec)
        if m in self._mutes:
            self._mutes.remove(m)
            return True
        return False

    def is_muted(self, alert: Alert) -> bool:
        return any(m.matches(alert) for m in self._mutes)

    def seed(self, history: Iterable[Alert]) -> None:
        """Remember when each key last fired (alerts from the history file)."""
        for a in history:
            prev = self._last.get(a.key)
            if prev is None or a.time > prev:
                self._remember(a.key, a.time)

    def filter(self, alerts: Sequence[Alert], now: datetime | None = None) -> list[Alert]:
        """Alerts that pass mutes and the rate limit, in input order; records them as fired.

        ``now`` defaults to each alert's own time.
        """
        out: list[Alert] = []
        for a in alerts:
            if self.is_muted(a):
                continue
            t = now or a.time
            if not self.due(a, t):
                continue
            self._remember(a.key, t)
            out.append(a)
        return out

    def window(self, alert: Alert) -> timedelta:
        """How long ``alert``'s key stays quiet once fired: ``repeat_s``, or for a group's
        update (jobs joined it) the shorter group interval."""
        repeat = self.config.repeat_s
        if alert.is_group:
            repeat = min(repeat, self.GROUP_INTERVAL_S)
        return timedelta(seconds=repeat)

    def due(self, alert: Alert, t: datetime) -> bool:
        """Whether ``alert`` may fire at ``t`` (its key quiet for its window); no mutes."""
        last = self._last.get(alert.key)
        return last is None or t - last >= self.window(alert)

    def _remember(self, key: str, t: datetime) -> None:
        self._last.pop(key, None)  # re-inserted: the dict stays in firing order
        self._last[key] = t
        if len(self._last) > self.max_keys:
            self._prune(t)

    def _prune(self, now: datetime) -> None:
        window = timedelta(seconds=self.config.repeat_s)
        expired = [k for k, last in self._last.items() if now - last >= window]
        for k in expired:
            del self._last[k]
        if len(self._last) > self.max_keys:
            # a tenth of headroom, so a storm does not rescan the map on every alert
            keep = self.max_keys - self.max_keys // 10
            newest = sorted(self._last.items(), key=lambda kv: kv[1])[-keep:]
            self._last = dict(newest)
