"""Recognised parts -> the typed records a live poll produces (jobs, nodes, partitions,
sacct rows, training jobs), merged the way the live source merges its commands: scontrol's
job record wins over a squeue row, ``sinfo -R`` adds reasons to ``sinfo``'s nodes, and a
job that already left the queue is rebuilt from its sacct rows."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace

from cockpit.errors import ParseError
from cockpit.ingest import slurm_text as st
from cockpit.model import AcctRecord, Partition, SlurmJob, SlurmNode, TrainingJob
from cockpit.slurm import parse as slurm


@dataclass
class Records:
    jobs: dict[str, SlurmJob] = field(default_factory=dict)
    nodes: dict[str, SlurmNode] = field(default_factory=dict)
    partitions: dict[str, Partition] = field(default_factory=dict)
    acct: list[AcctRecord] = field(default_factory=list)
    training_jobs: list[TrainingJob] = field(default_factory=list)
    commands: dict[str, str] = field(default_factory=dict)
    priorities: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def add(self, name: str, role: str, text: str) -> bool:
        """Parse one structured part into the records; False when it held no record (the
        caller then scans it as a log). A part that fails to parse becomes a warning."""
        try:
            return _ADD[role](self, name, text)
        except (ParseError, ValueError, KeyError, TypeError) as exc:
            self.warnings.append(f"{name}: {exc}")
            return False

    def add_log_facts(self, text: str) -> None:
        """Node state changes a slurmctld log records, for nodes no table described."""
        for n in st.node_events(text):
            self.nodes.setdefault(n.name, n)

    def finish(self) -> None:
        """Jobs known only from sacct/seff rows become jobs (as squeue showed them before
        they left the queue); sprio priorities go onto their jobs."""
        by_job: dict[str, list[AcctRecord]] = {}
        for r in self.acct:
            by_job.setdefault(r.job_id, []).append(r)
        for jid, rows in by_job.items():
            if jid not in self.jobs and (job := st.job_from_acct(rows)) is not None:
                self.jobs[jid] = job
        for jid, prio in self.priorities.items():
            if jid in self.jobs and self.jobs[jid].priority is None:
                self.jobs[jid] = replace(self.jobs[jid], priority=prio)


def _squeue(r: Records, name: str, text: str) -> bool:
    jobs = st.parse_squeue_any(text)
    for j in jobs:
        r.jobs.setdefault(j.job_id, j)
    return bool(jobs) or st.is_squeue_header(text.lstrip().split("\n", 1)[0])


_ELISION = re.compile(r"^[ \t]*(?:\.{3,}|…|\[\.\.\.\]|<snip>|\(snip\))[ \t]*(?:\n|$)", re.M)


def _unelided(text: str) -> str:
    """A record an operator shortened with ``...`` lines, joined again: the kept lines stay
    one record instead of breaking into pieces without their JobId/NodeName."""
    return _ELISION.sub("", text)


def _scontrol_job(r: Records, name: str, text: str) -> bool:
    got, w = slurm.parse_scontrol_job(_unelided(text))
    r.warnings.extend(f"{name}: {x}" for x in w)
    for j in got:
        r.jobs[j.job_id] = j  # scontrol has more detail than squeue
    return bool(got)


def _scontrol_node(r: Records, name: str, text: str) -> bool:
    got, w = slurm.parse_scontrol_nodes(_unelided(text))
    r.warnings.extend(f"{name}: {x}" for x in w)
    for n in got:
        r.nodes[n.name] = n
    return bool(got)


def _scontrol_partition(r: Records, name: str, text: str) -> bool:
    got, _ = slurm.parse_scontrol_partitions(_unelided(text))
    for p in got:
        r.partitions[p.name] = p
    return bool(got)


def _sinfo(r: Records, name: str, text: str) -> bool:
    ns, ps = st.parse_sinfo(text)
    for n in ns:
        r.nodes.setdefault(n.name, n)
    for p in ps:
        r.partitions.setdefault(p.name, p)
    return bool(ns or ps)


def _sinfo_r(r: Records, name: str, text: str) -> bool:
    got = st.parse_sinfo_r(text)
    for n in got:
        prev = r.nodes.get(n.name)
        r.nodes[n.name] = (
            replace(
                prev,
                reason=n.reason,
                reason_user=n.reason_user,
                reason_time=n.reason_time,
                flags=tuple(dict.fromkeys(prev.flags + n.flags)),
            )
            if prev
            else n
        )
    return True  # a header alone says no node is drained


def _sacct(r: Records, name: str, text: str) -> bool:
    got = st.parse_sacct_any(text)
    r.acct.extend(got)
    return bool(got) or st.is_sacct_header(text.lstrip().split("\n", 1)[0])


def _seff(r: Records, name: str, text: str) -> bool:
    got = st.parse_seff(text)
    r.acct.extend(got)
    return bool(got)


def _sprio(r: Records, name: str, text: str) -> bool:
    r.priorities.update(st.parse_sprio(text))
    return True


def _df(r: Records, name: str, text: str) -> bool:
    r.commands[f"df {name}"] = text
    return True


def _modelarts_job(r: Records, name: str, text: str) -> bool:
    from cockpit.modelarts.parse import parse_training_job

    r.training_jobs.append(parse_training_job(json.loads(text)))
    return True


_ADD = {
    "squeue": _squeue,
    "scontrol_job": _scontrol_job,
    "scontrol_node": _scontrol_node,
    "scontrol_partition": _scontrol_partition,
    "sinfo": _sinfo,
    "sinfo_r": _sinfo_r,
    "sacct": _sacct,
    "seff": _seff,
    "sprio": _sprio,
    "df": _df,
    "modelarts_job": _modelarts_job,
}
