"""Recognised parts -> the typed records a live poll produces (jobs, nodes, partitions,
sacct rows, training jobs), merged the way the live source merges its commands: scontrol's
job record wins over a squeue row, ``sinfo -R`` adds reasons to ``sinfo``'s nodes, and a
job that already left the queue is rebuilt from its sacct rows."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from itertools import islice

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
    # (kind, id) -> (file name, 1-based file line) of the row or record it was read from;
    # kind is job, acct (a sacct/seff job id), node or partition. The first table naming it
    # wins; a scontrol record or a sinfo -R row (the telling ones) replaces a table row.
    origins: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)

    def add(self, name: str, role: str, text: str, line: int = 1) -> bool:
        """Parse one structured part into the records; False when it held no record (the
        caller then scans it as a log). A part that fails to parse becomes a warning.
        ``line``: the file line the part starts at (where its records are said to be)."""
        before = (len(self.jobs), len(self.nodes), len(self.partitions), len(self.acct))
        try:
            got = _ADD[role](self, name, text)
        except (ParseError, ValueError, KeyError, TypeError) as exc:
            self.warnings.append(f"{name}: {exc}")
            return False
        if got:
            self._origins(name, role, text, line, before)
        return got

    def origin(self, kind: str, key: str) -> tuple[str, int] | None:
        """Where the record ``key`` of ``kind`` was read: (file name, file line), or None."""
        return self.origins.get((kind, key))

    def _origins(self, name: str, role: str, text: str, line: int, before: tuple) -> None:
        """Note where the records this part added (or, for the telling ones, replaced) are.
        Linear in the part: a paste of 20000 ``squeue -j`` prompts stays linear."""
        n_jobs, n_nodes, n_parts, n_acct = before
        index = None
        if role in {"scontrol_job", "scontrol_node", "sinfo_r"}:  # the telling record wins
            index = _index(text.split("\n"), role)
            kind, table = ("job", self.jobs) if role == "scontrol_job" else ("node", self.nodes)
            for key, i in index.items():
                if key in table:
                    self.origins[(kind, key)] = (name, line + i)
        wanted = [("job", j) for j in _tail(self.jobs, n_jobs)]
        wanted += [("acct", r.job_id) for r in self.acct[n_acct:]]
        wanted += [("node", n) for n in _tail(self.nodes, n_nodes)]
        wanted += [("partition", p) for p in _tail(self.partitions, n_parts)]
        todo = [w for w in wanted if w not in self.origins]
        if not todo:
            return
        if index is None:
            index = _index(text.split("\n"), role)
        for kind, key in todo:
            i = index.get(key)
            if i is None and kind == "job" and "_" in key and role == "scontrol_job":
                i = index.get(key.split("_")[0])
            if i is not None:
                self.origins[(kind, key)] = (name, line + i)

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
                if ("acct", jid) in self.origins:
                    self.origins.setdefault(("job", jid), self.origins[("acct", jid)])
        for jid, prio in self.priorities.items():
            if jid in self.jobs and self.jobs[jid].priority is None:
                self.jobs[jid] = replace(self.jobs[jid], priority=prio)


def _tail(d: dict, n: int) -> list:
    """The keys added to ``d`` after it had ``n`` (from the end: O(added), not O(len))."""
    return list(islice(reversed(d), len(d) - n))[::-1]


_RECORD_START = {
    "scontrol_job": re.compile(r"(?<![\w.])JobId=(\S+)"),
    "scontrol_node": re.compile(r"(?<![\w.])NodeName=(\S+)"),
    "scontrol_partition": re.compile(r"(?<![\w.])PartitionName=(\S+)"),
}
_TOKEN = re.compile(r"[^\s|]+")


def _index(lines: list[str], role: str) -> dict[str, int]:
    """Record key (job id, node or partition name) -> index of the line that holds it: a
    table's row (first one naming it), or the ``State=`` line of a ``scontrol show`` record
    (its first line when it has none)."""
    out: dict[str, int] = {}
    start = _RECORD_START.get(role)
    if start is not None:
        for i, ln in enumerate(lines):
            m = start.search(ln)
            if not m:
                continue
            at = i
            for j in range(i, min(i + 40, len(lines))):
                if j > i and start.search(lines[j]):
                    break
                if "State=" in lines[j]:
                    at = j
                    break
            out.setdefault(m.group(1), at)
        return out
    if role not in {"sinfo", "sinfo_r"}:  # a row's first field (its job id) before the others
        for i, ln in enumerate(lines):
            toks = _TOKEN.findall(ln)
            if toks:
                out.setdefault(toks[0], i)
                out.setdefault(toks[0].split(".")[0], i)
    for i, ln in enumerate(lines):  # header words are no job ids or node names
        for t in _TOKEN.findall(ln):
            t = t.rstrip("*")
            if role in {"sinfo", "sinfo_r"} and t[:1].isalnum():
                for n in st.expand(t) if "[" in t or "," in t else (t,):
                    out.setdefault(n, i)
            else:
                out.setdefault(t, i)
                out.setdefault(t.split(".")[0], i)
    return out


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
