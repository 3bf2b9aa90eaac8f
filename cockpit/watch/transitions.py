"""From one snapshot to the next: what changed that an operator wants to hear about.

Pure functions, no I/O, no clock: ``now`` is passed in. ``detect`` compares the
previous snapshot of a source with the current one and turns transitions into
:class:`~cockpit.watch.alerts.Alert`\\ s, attaching the engine's finding for the
subject when there is one; the alert then takes that verdict's severity, so an alert never
says WARN where the dashboard says CRITICAL. Conditions that were already true at the first
poll (``prev is None``) do not fire: only changes do, plus an unreachable source.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import compress
from operator import attrgetter, is_not

from cockpit.diagnosis import slurm_codes, slurm_states
from cockpit.i18n import _
from cockpit.model import (
    Finding,
    Incident,
    Pool,
    Severity,
    SlurmJob,
    SlurmNode,
    Snapshot,
    Subject,
    TrainingJob,
)
from cockpit.slurm.storage import FsUsage
from cockpit.text import natural_key
from cockpit.watch.alerts import Alert, AlertConfig

# Slurm end states worth a page (--mail-type=FAIL / TIME_LIMIT classes): the engine's list.
FAILED_STATES: frozenset[str] = slurm_states.FAILED_STATES
_FAILED_SEVERITY: dict[str, Severity] = {"NODE_FAIL": "critical", "BOOT_FAIL": "critical"}

# Engine labels (docs/root-causes.md) that mean a PENDING job will not start by itself; the
# reason codes that mean it are classified in cockpit.diagnosis.slurm_codes.
NEVER_RUNS_CAUSES: frozenset[str] = frozenset(
    {
        "pending_partition_limit",
        "pending_partition_down",
        "pending_held",
        "pending_invalid_account",
        "dependency_failed",
        "pending_launch_failed_held",
        "submit_rejected_unsatisfiable",
    }
)
TRAINING_FAILED_PHASES: frozenset[str] = frozenset({"Failed", "Abnormal"})


def detect(
    prev: Snapshot | None,
    cur: Snapshot,
    findings: Sequence[Finding],
    now: datetime,
    *,
    config: AlertConfig | None = None,
    recent: Sequence[Alert] = (),
    last_good: Snapshot | None = None,
) -> list[Alert]:
    """Alerts for what changed between ``prev`` and ``cur`` (same source).

    * ``findings``: the engine's findings for ``cur``; the first one whose subject
      matches is attached to each alert (most likely cause first).
    * ``config``: thresholds (failure window; an Initializing override); by default the
      Initializing threshold is the engine's, so an alert fires when the job's verdict turns.
    * ``recent``: alerts already fired (history), used to count a user's failures
      within ``failures_window_s``.
    * ``last_good``: the last snapshot without an error; jobs and nodes are compared
      against it (else ``prev``) so a poll that failed in between does not make every
      job look new.

    Returns alerts in a stable order: source, nodes (Slurm's, then resource pools' nodes),
    jobs, training jobs, repeated failures.
    """
    cfg = config or AlertConfig()
    out: list[Alert] = []
    by_subject = _FirstFinding(findings)

    # --- the source itself
    src = Subject.of_source(cur.source, cur.kind)
    if cur.error is not None and (prev is None or prev.ok):
        e = cur.error
        where = f" ({e.where})" if e.where else ""
        out.append(
            Alert(
                now,
                "source_down",
                "critical",
                src,
                _("{source} unreachable: {kind}: {message}{where}").format(
                    source=cur.source, kind=e.kind, message=e.message, where=where
                ),
                by_subject.get(src),
                cur.source,
            )
        )
    elif cur.ok and prev is not None and not prev.ok:
        out.append(
            Alert(
                now,
                "source_recovered",
                "info",
                src,
                _("{source} answers again").format(source=cur.source),
                None,
                cur.source,
            )
        )
    if not cur.ok:
        return out

    base = last_good if last_good is not None else prev
    if base is None or not base.ok:
        return out

    out += _nodes(base, cur, now, by_subject)
    out += _pool_nodes(base, cur, now, by_subject)
    failures = _jobs(base, cur, now, by_subject)
    out += failures
    out += _training(base, cur, now, by_subject, cfg)
    out += _repeated(out, recent, cur.source, now, cfg)
    return out


def _node_title(n: SlurmNode, entered: str) -> str:
    reason = f": {n.reason}" if n.reason else ""
    who = f" [{n.reason_user}]" if n.reason_user else ""
    return _("node {node} entered {state} ({label}){reason}{who}").format(
        node=n.name, state=entered, label=n.state_label, reason=reason, who=who
    )


def _nodes(
    prev: Snapshot, cur: Snapshot, now: datetime, by_subject: dict[Subject, Finding]
) -> list[Alert]:
    before = {n.name: n for n in prev.nodes}
    out = []
    for n in cur.nodes:
        p = before.get(n.name)
        entered = []
        if n.is_down and (p is None or not p.is_down):
            entered.append("DOWN")
        if n.is_drain and (p is None or not p.is_drain):
            entered.append("DRAIN")
        if not entered:
            continue
        subj = Subject("node", cur.source, n.name)
        sev: Severity = "critical" if "DOWN" in entered else "warning"
        found = by_subject.get(subj)
        if found is not None:
            sev = found.severity  # as its verdict and incident say
        out.append(
            Alert(
                now,
                "node_unhealthy",
                sev,
                subj,
                _node_title(n, "+".join(entered)),
                found,
                cur.source,
            )
        )
    return out


POOL_NODE_BAD_PHASES: frozenset[str] = frozenset({"Abnormal"})
POOL_NODES_NAMED = 10  # in one alert's title


def _bad_pool_nodes(pool: Pool) -> set[str]:
    return {n.name for n in pool.nodes if n.phase in POOL_NODE_BAD_PHASES}


def _pool_nodes(
    prev: Snapshot, cur: Snapshot, now: datetime, by_subject: dict[Subject, Finding]
) -> list[Alert]:
    """A dedicated pool's node turned Abnormal: ModelArts' node DOWN (it takes no training
    job). One alert per pool and poll, naming the nodes that turned; the pool's verdict
    (``pool_node_abnormal``) gives its severity, as the dashboard's row does."""
    before = {p.pool_id: _bad_pool_nodes(p) for p in prev.pools}
    out = []
    for pool in cur.pools:
        bad = _bad_pool_nodes(pool)
        turned = sorted(bad - before.get(pool.pool_id, set()))
        if not turned:
            continue
        subj = Subject("pool", cur.source, pool.pool_id)
        found = by_subject.get(subj)
        # a pool whose hundreds of nodes turn at once: the first few named and the rest counted
        # (all of them ran past the 4096 characters an alert keeps, and took the counts along)
        more = len(turned) - POOL_NODES_NAMED
        names = ", ".join(turned[:POOL_NODES_NAMED])
        if more > 0:
            names += _(" (+{n} more)").format(n=more)
        title = _("pool {pool}: node {nodes} entered Abnormal ({bad} of {total} Abnormal)").format(
            pool=pool.name,
            nodes=names,
            bad=len(bad),
            total=len(pool.nodes),
        )
        sev: Severity = found.severity if found is not None else "warning"
        # keyed by the nodes that turned: all 400 going Abnormal minutes after one did is a
        # page of its own (the pool alone as the key held it back for the rate limit's hour)
        detail = "nodes:" + hashlib.sha1("\n".join(turned).encode()).hexdigest()[:12]
        out.append(Alert(now, "node_unhealthy", sev, subj, title, found, cur.source, detail=detail))
    return out


def _job_title(j: SlurmJob) -> str:
    where = _(" on {nodes}").format(nodes=j.node_list) if j.node_list else ""
    code = _(" exit {code}").format(code=j.exit_code) if j.exit_code is not None else ""
    return _("job {job} ({name}, {user}) {state}{code}{where}").format(
        job=j.job_id, name=j.name, user=j.user, state=j.state, code=code, where=where
    )


def _never_runs(j: SlurmJob, finding: Finding | None) -> bool:
    if not j.is_pending:
        return False
    if finding is not None and finding.root_cause in NEVER_RUNS_CAUSES:
        return True
    return slurm_codes.never_runs(j.reason or "")


class _FirstFinding:
    """Subject -> its first finding (most likely cause first), indexed on the first lookup:
    a poll where no job or node changed looks nothing up."""

    __slots__ = ("findings", "index")

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.findings = findings
        self.index: dict[Subject, Finding] | None = None

    def get(self, subject: Subject) -> Finding | None:
        if self.index is None:
            self.index = {}
            for f in self.findings:
                self.index.setdefault(f.subject, f)
        return self.index.get(subject)


_UNIQUE: list = []  # (rows, whether their job ids are unique) of the last two polls


def _unique_ids(jobs: tuple) -> bool:
    for rows, unique in _UNIQUE:
        if rows is jobs:
            return unique
    unique = len(set(map(_job_id, jobs))) == len(jobs)
    _UNIQUE.insert(0, (jobs, unique))
    del _UNIQUE[2:]
    return unique


_job_id = attrgetter("job_id")


def _changed_jobs(prev: Snapshot, cur: Snapshot) -> list[tuple[SlurmJob | None, SlurmJob]]:
    """(last poll's row of the job, its row now) for the rows that are not the same object as
    last poll's row of the job (a job whose row object is the one of last poll cannot have
    changed state or reason: it raises nothing); every row when a job id repeats."""
    pj, cj = prev.jobs, cur.jobs
    unique = _unique_ids(pj) and _unique_ids(cj)
    if unique and len(pj) == len(cj):
        # as many jobs arrived as left (a churning site): the rows after the first that left
        # are all at other places, found at the first of them rather than paired up first
        moved = []
        for i in compress(range(len(cj)), map(is_not, pj, cj)):
            p, j = pj[i], cj[i]
            if p.job_id != j.job_id:
                break
            moved.append((p, j))
        else:
            return moved  # type: ignore[return-value]
    before = {j.job_id: j for j in pj}
    if unique:
        # jobs arrived or left (a real site's every poll): the rest are mostly last poll's
        # objects at other places, and only the others can raise anything
        return [(p, j) for j in cj if (p := before.get(j.job_id)) is not j]
    return [(before.get(j.job_id), j) for j in cj]


def _jobs(prev: Snapshot, cur: Snapshot, now: datetime, by_subject: _FirstFinding) -> list[Alert]:
    out = []
    for p, j in _changed_jobs(prev, cur):
        if j.state in FAILED_STATES and (p is None or p.state != j.state):
            subj = Subject("job", cur.source, j.job_id)
            f = by_subject.get(subj)
            title = _job_title(j) + (f": {f.title}" if f else "")
            out.append(
                Alert(
                    now,
                    "job_failed",
                    f.severity if f is not None else _FAILED_SEVERITY.get(j.state, "warning"),
                    subj,
                    title,
                    f,
                    cur.source,
                    j.user,
                )
            )
            continue
        if not j.is_pending:
            continue  # only a pending job can be one that never runs
        subj = Subject("job", cur.source, j.job_id)
        f = by_subject.get(subj)
        if _never_runs(j, f) and not (p is not None and p.is_pending and p.reason == j.reason):
            title = _(
                "job {job} ({name}, {user}) PENDING ({reason}) will not start by itself"
            ).format(job=j.job_id, name=j.name, user=j.user, reason=j.reason) + (
                f": {f.title}" if f else ""
            )
            sev: Severity = f.severity if f is not None else "warning"
            out.append(Alert(now, "pending_never_runs", sev, subj, title, f, cur.source, j.user))
    return out


def _init_since(t: TrainingJob) -> datetime | None:
    return t.create_time or t.phase_since  # the engine counts from creation


def _initializing_for(t: TrainingJob, at: datetime) -> float | None:
    """Seconds the job has been Initializing at ``at``, None when it is not Initializing."""
    if t.console_phase != "Initializing":
        return None
    since = _init_since(t)
    return None if since is None else (at - since).total_seconds()


def _init_limit(t: TrainingJob, f: Finding | None, cfg: AlertConfig) -> int:
    """When Initializing becomes news: the config's override, else the threshold at which the
    engine's verdict for the job turns to a warning (queued: the queue's; stuck: 10 min on a
    public pool, 3 min on a dedicated one), read from the engine, not restated here."""
    if cfg.initializing_s is not None:
        return cfg.initializing_s
    from cockpit.diagnosis.rules.modelarts import INIT_THRESHOLD_S, init_threshold_s

    if f is not None and f.root_cause == "queued_insufficient_resources":
        return INIT_THRESHOLD_S
    return init_threshold_s(t)


def _training(
    prev: Snapshot,
    cur: Snapshot,
    now: datetime,
    by_subject: dict[Subject, Finding],
    cfg: AlertConfig,
) -> list[Alert]:
    before = {t.job_id: t for t in prev.training_jobs}
    out = []
    for t in cur.training_jobs:
        p = before.get(t.job_id)
        subj = Subject("training_job", cur.source, t.job_id, name=t.name)
        f = by_subject.get(subj)
        if t.phase in TRAINING_FAILED_PHASES and (p is None or p.phase != t.phase):
            title = _("training job {name} {phase}").format(name=t.name, phase=t.phase) + (
                f" ({t.secondary_phase})" if t.secondary_phase else ""
            )
            title += f": {f.title}" if f else ""
            sev: Severity = f.severity if f is not None else "critical"
            out.append(Alert(now, "training_failed", sev, subj, title, f, cur.source, t.user))
            continue
        limit = _init_limit(t, f, cfg)
        age = _initializing_for(t, now)
        if age is None or age <= limit:
            continue
        # Crossed between the two polls (or appeared already past it since the last poll).
        before_age = _initializing_for(p, prev.taken_at) if p is not None else None
        if p is not None and before_age is not None and before_age > limit:
            continue
        pool = _(" in pool {pool}").format(pool=t.pool_name) if t.pool_name else ""
        title = _(
            "training job {name} Initializing for {minutes} min{pool} (threshold {limit} min)"
        ).format(name=t.name, minutes=int(age // 60), pool=pool, limit=limit // 60)
        title += f": {f.title}" if f else ""
        sev = f.severity if f is not None else "warning"
        out.append(Alert(now, "init_slow", sev, subj, title, f, cur.source, t.user))
    return out


def _repeated(
    new: Sequence[Alert], recent: Sequence[Alert], source: str, now: datetime, cfg: AlertConfig
) -> list[Alert]:
    """A user's N-th failure within the window fires once (the rate limit stops repeats)."""
    start = now - timedelta(seconds=cfg.failures_window_s)
    kinds = {"job_failed", "training_failed"}
    fresh_users = {a.user for a in new if a.rule in kinds and a.user}
    out = []
    for user in sorted(fresh_users):
        seen: dict[str, str] = {}  # id -> what to call it (a training job by its name)
        for a in [*recent, *new]:
            # when the job failed, not when this run noticed it: a first run sees failures
            # from hours ago, and called them "within 60 min" (a Slurm job's finding is
            # first seen at its end; a training job's at its creation: not a failure time)
            when = a.time
            f = a.finding
            if a.rule == "job_failed" and f is not None and f.first_seen is not None:
                when = min(when, f.first_seen)
            if a.rule in kinds and a.user == user and a.source == source and when >= start:
                seen[a.subject.id] = a.subject.name or a.subject.id
        if len(seen) >= cfg.failures_count:
            win = cfg.failures_window_s // 60
            out.append(
                Alert(
                    now,
                    "repeated_failures",
                    "warning",
                    Subject("user", source, user),
                    _("{n} jobs of {user} failed within {minutes} min: {jobs}").format(
                        n=len(seen),
                        user=user,
                        minutes=win,
                        jobs=", ".join(sorted(seen.values(), key=natural_key)),
                    ),
                    None,
                    source,
                    user,
                )
            )
    return out


def storage_alerts(
    source: str,
    prev: Sequence[FsUsage] | None,
    cur: Sequence[FsUsage],
    now: datetime,
    *,
    config: AlertConfig | None = None,
    findings: Sequence[Finding] = (),
) -> list[Alert]:
    """A filesystem at or above ``storage_pct`` (bytes or inodes) that was not at the previous df.

    Unlike the other transitions, ``prev`` None (first collection) fires for a filesystem
    already over: the guides alert on the *level* (a full /scratch fails every job
    writing to it), and the rate limit plus the seeded history keep a restart from
    re-sending it within ``repeat_s``. ``findings`` are the ``disk_full`` findings for ``cur``
    (:func:`cockpit.diagnosis.storage_rules.storage_findings`).
    """
    cfg = config or AlertConfig()
    thr = cfg.storage_pct

    def over(u: FsUsage) -> bool:
        return u.use_pct >= thr or (u.inodes_pct is not None and u.inodes_pct >= thr)

    was = {u.mount for u in prev or () if over(u)}
    by_subject = {f.subject: f for f in findings}
    out, seen = [], set()
    for u in cur:
        if u.mount in seen or not over(u) or u.mount in was:
            continue
        seen.add(u.mount)
        subj = Subject("file", source, u.mount)
        ino = (
            _(", inodes {pct}").format(pct=f"{u.inodes_pct:.0f}%")
            if u.inodes_pct is not None
            else ""
        )
        sev: Severity = "critical" if max(u.use_pct, u.inodes_pct or 0) >= 98 else "warning"
        out.append(
            Alert(
                now,
                "storage",
                sev,
                subj,
                _("{mount} on {source} at {pct}{inodes} (threshold {threshold})").format(
                    mount=u.mount,
                    source=source,
                    pct=f"{u.use_pct:.0f}%",
                    inodes=ino,
                    threshold=f"{thr:g}%",
                ),
                by_subject.get(subj),
                source,
            )
        )
    return out


# Findings that name a running job at risk -> the alert rule each raises (a critical memory
# finding raises its own rule: the escalation is news of its own, not a repeat)
RISK_RULES: dict[str, str] = {
    "time_limit_near": "time_limit_near",
    "memory_near_request": "memory_near",
    "job_output_silent": "output_silent",
    "training_log_silent": "output_silent",
}
RiskKeys = frozenset[tuple[str, Subject]]


def _risk_rule(f: Finding) -> str:
    rule = RISK_RULES[f.root_cause]
    return "memory_critical" if rule == "memory_near" and f.severity == "critical" else rule


def risk_alerts(
    prev: RiskKeys | None, cur: Snapshot, findings: Sequence[Finding], now: datetime
) -> tuple[list[Alert], RiskKeys]:
    """Alerts for the jobs named at risk now and not at the last poll, and the (rule, subject)
    pairs named now (the next poll's ``prev``). ``prev`` None: the first poll, a baseline
    (what was already at risk does not fire, as for the other transitions). A critical memory
    finding after its warning fires once more (``memory_critical``). A failed poll changes
    nothing: its caller keeps ``prev``."""
    named = {(_risk_rule(f), f.subject): f for f in findings if f.root_cause in RISK_RULES}
    keys: RiskKeys = frozenset(named)
    if prev is None:
        return [], keys
    fresh = [k for k in named if k not in prev]
    if not fresh:
        return [], keys
    jobs = {j.job_id: j for j in cur.jobs} if cur.kind == "slurm" else {}
    out = []
    for rule, subj in sorted(fresh, key=lambda k: (k[1].id, k[0])):
        f = named[(rule, subj)]
        j = jobs.get(subj.id) if subj.kind == "job" else None
        who = f" ({j.name}, {j.user})" if j is not None else ""
        out.append(
            Alert(
                now,
                rule,
                f.severity,
                subj,
                (
                    _("job {job}{who} at risk: {title}").format(job=subj.id, who=who, title=f.title)
                    if subj.kind == "job"
                    else _("training job {name} at risk: {title}").format(
                        name=subj.name or subj.id, title=f.title
                    )
                ),
                f,
                cur.source,
                j.user if j is not None else "",
            )
        )
    return out, keys


# Job alerts that an incident of several jobs speaks for: one alert per incident, not per job.
FOLDED_RULES = frozenset({"job_failed", "pending_never_runs"})


def fold_by_incident(alerts: Sequence[Alert], incidents: Sequence[Incident]) -> list[Alert]:
    """``alerts`` with the job alerts of an incident of two or more jobs (a group: 27 failed
    array tasks of one program; a drained node's casualties) replaced by one alert about that
    incident, titled as the incident view titles it and naming its jobs. An incident's later
    members fold into the same alert key, so the rate limit (``repeat_s``) and the store's
    claim (per ``repeat_s`` window: ``identity.delivery_key``) keep it to one alert per
    channel and window. Pure; order kept (the incident's alert where its first job's was)."""
    owner: dict[tuple[str, str], Incident] = {}
    for inc in incidents:
        jobs = [s for s in inc.affected if s.kind == "job"]
        if len(jobs) >= 2:
            for s in jobs:
                owner.setdefault((s.source, s.id), inc)
    if not owner:
        return list(alerts)
    out: list[Alert] = []
    done: set[str] = set()
    for a in alerts:
        inc = (
            owner.get((a.subject.source, a.subject.id))
            if a.subject.kind == "job" and a.rule in FOLDED_RULES
            else None
        )
        if inc is None:
            out.append(a)
            continue
        if (a.rule, inc.key) in done:
            continue
        done.add((a.rule, inc.key))
        out.append(
            Alert(
                a.time,
                a.rule,
                inc.severity,
                inc.subject,
                inc.title,
                inc.primary,
                a.source,
                incident=inc.key,
                members=tuple(s for s in inc.affected if s.kind == "job"),
            )
        )
    return out
