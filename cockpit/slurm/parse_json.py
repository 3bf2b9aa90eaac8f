"""Parsers of Slurm's ``--json`` output (``squeue/sinfo/sacct --json``, 21.08+) -> model objects.

The tested alternative to the delimited path (:mod:`cockpit.slurm.parse`,
:mod:`cockpit.slurm.squeue`), with the same model, units and tolerance: a malformed entry
is skipped and described in the returned warnings, input that is wholly unusable raises
:class:`ParseError`. The 23.02+ ``{"set", "number"}`` objects are unwrapped, so several
schema versions work.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields, replace
from datetime import UTC, datetime, tzinfo
from typing import Any

from cockpit.errors import ParseError
from cockpit.model import AcctRecord, ExitCode, Partition, SlurmJob, SlurmNode
from cockpit.slurm import hostlist
from cockpit.slurm.parse import _text, _with_paths, resolve_output_path, split_node_state
from cockpit.slurm.squeue import RUNS_ON, parse_tres_per_node


def _epoch(v: Any, tz: tzinfo = UTC) -> datetime | None:
    v = _num(v)
    if not v:
        return None
    try:
        return datetime.fromtimestamp(int(v), tz)
    except (OverflowError, OSError, ValueError):
        return None


def _num(v: Any) -> Any:
    """Unwrap 23.02+ JSON numbers ``{"set": true, "infinite": false, "number": 5}``."""
    if isinstance(v, dict) and ("number" in v or "set" in v):
        if v.get("infinite") or not v.get("set", True):
            return None
        return v.get("number")
    return v


def _job_id(v: Any) -> str:
    """A job id as squeue prints it; anything else skips the entry (ValueError) instead of
    putting a job named by garbage into the queue."""
    n = _num(v)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"job_id {v!r} is not a job number")
    return str(n)


def _state_str(v: Any) -> str:
    """22.05 gives ``"RUNNING"``, 23.02+ gives ``["RUNNING"]``."""
    if isinstance(v, list):
        return str(v[0]).upper() if v else ""
    return str(v or "").upper()


def _load_json(text: str, key: str, where: str) -> list[Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", where=where, line=exc.lineno) from None
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        raise ParseError(f"no '{key}' list in JSON", where=where)
    return doc[key]


def _check_text_fields(record: Any) -> None:
    """A text field of the model holding a number, list or ``false`` (hostile or corrupt
    JSON) would break every pane that formats it: ValueError skips the entry instead."""
    for f in fields(record):
        v = getattr(record, f.name)
        if f.type == "str" and not isinstance(v, str):
            raise ValueError(f"{f.name} is {type(v).__name__} {v!r:.40}, not text")


def _json_tolerant(
    items: list[Any], where: str, build: Callable[[dict[str, Any]], Any]
) -> tuple[list[Any], list[str]]:
    out: list[Any] = []
    warnings: list[str] = []
    for i, item in enumerate(items):
        try:
            if not isinstance(item, dict):
                raise ValueError("not an object")
            res = build(item)
            for record in res if isinstance(res, list) else (res,):
                _check_text_fields(record)
            if isinstance(res, list):
                out.extend(res)
            else:
                out.append(res)
        except (
            ValueError,
            KeyError,
            TypeError,
            AttributeError,
            ParseError,
        ) as exc:  # wrong-typed field
            warnings.append(f"{where}: entry {i} skipped: {exc!r}")
    if items and not out:
        raise ParseError(f"no usable entry ({warnings[0]})", where=where)
    return out, warnings


def parse_squeue_json(
    text: str, tz: tzinfo = UTC, now: datetime | None = None
) -> tuple[list[SlurmJob], list[str]]:
    """``squeue --json`` (v0.0.38 .. v0.0.40) -> (jobs, warnings).

    ``exit_code`` is a raw wait status (32512 -> 127:0). Elapsed is end-start for
    finished jobs, now-start for running ones when ``now`` is given. Note 22.05 ignores
    ``-j/-t/-p`` with ``--json``: filter the result on the client.
    """

    def build(j: dict[str, Any]) -> SlurmJob:
        job_id = _job_id(j["job_id"])
        task = _num(j.get("array_task_id"))
        if _num(j.get("array_job_id")) and task is not None:
            job_id = f"{_num(j['array_job_id'])}_{task}"
        state = _state_str(j.get("job_state"))
        start, end = _epoch(j.get("start_time"), tz), _epoch(j.get("end_time"), tz)
        elapsed, read_at = None, None
        if state == "PENDING":
            elapsed = 0
        elif start and end and end >= start and (state != "RUNNING" or (now and end <= now)):
            elapsed = int((end - start).total_seconds())
        elif start and now:
            elapsed = max(0, int((now - start).total_seconds()))
            read_at = now.timestamp() if state in RUNS_ON else None
        per_cpu = _num(j.get("memory_per_cpu"))
        per_node = _num(j.get("memory_per_node"))
        limit = _num(j.get("time_limit"))
        # as squeue's %r: the description when Slurm set one (RaisedSignal:9(Killed)), else
        # the bare code
        reason = j.get("state_description") or j.get("state_reason") or "None"
        exit_code = _squeue_exit(j.get("exit_code"), reason)
        node_list = j.get("nodes") or ""
        job = SlurmJob(
            job_id=job_id,
            name=j.get("name", ""),
            user=j.get("user_name", ""),
            partition=j.get("partition", ""),
            state=state,
            reason=reason,
            cpus=_num(j.get("cpus")),
            node_count=_num(j.get("node_count")),
            nodes=hostlist.expand(node_list),
            node_list=node_list,
            min_memory_mib=per_cpu if per_cpu else per_node,
            mem_per_cpu=bool(per_cpu),
            time_limit_s=int(limit) * 60 if limit and limit < 0xFFFFFFFE else None,
            elapsed_s=elapsed,
            # read at ``now``: a running job's time runs on from there (SlurmJob.elapsed_at)
            elapsed_at=read_at,
            submit_time=_epoch(j.get("submit_time"), tz),
            start_time=start,
            end_time=end,
            work_dir=j.get("current_working_directory", ""),
            account=j.get("account", ""),
            qos=j.get("qos", ""),
            dependency=j.get("dependency", ""),
            priority=_num(j.get("priority")),
            exit_code=exit_code,
            command=j.get("command", ""),
            comment=j.get("comment", ""),
        )
        # 25.05+ print the paths as typed (%x-%j.out) and expanded in std*_expanded; 24.05+
        # no longer expand in the plain fields: expand them here when there is no _expanded
        out = j.get("stdout_expanded") or j.get("standard_output") or ""
        err = j.get("stderr_expanded") or j.get("standard_error") or ""
        sluid = j.get("sluid") or (j.get("step_id") or {}).get("sluid") or ""
        if sluid:
            job = replace(job, sluid=str(sluid))
        tres = j.get("tres_per_node")  # as squeue's %b: gres/gpu:2, "" when none
        if isinstance(tres, str) and tres:
            gres, gpus = parse_tres_per_node(tres)
            job = replace(job, gres=gres, gpus_per_node=gpus)
        return _with_paths(
            job,
            resolve_output_path(out, job) if out else "",
            resolve_output_path(err, job) if err else "",
        )

    return _json_tolerant(_load_json(text, "jobs", "squeue --json"), "squeue --json", build)


def _squeue_exit(raw: Any, reason: str) -> ExitCode | None:
    """A job's ``exit_code``: 22.05 a raw wait status (32512 -> 127:0), 23.02+ an object
    ``{"status": [...], "return_code": {...}, "signal": {"id": ...}}``.

    A job Slurm refused to start (BadConstraints) carries the plain code 1, not a wait
    status: read as one it would be "killed by signal 1" (SIGHUP), and 23.02+'s own
    data_parser says ``SIGNALED`` with signal 1 for it. It never ran: exit code 1."""
    never_ran = reason.startswith("BadConstraints")
    if isinstance(raw, dict):
        rc = _num(raw.get("return_code"))
        sig = _num((raw.get("signal") or {}).get("id"))
        if never_ran and not rc and sig == 1:
            return ExitCode(1, 0)
        return ExitCode(int(rc or 0), int(sig or 0))
    raw = _num(raw)
    if raw is None:
        return None
    if never_ran and int(raw) == 1:
        return ExitCode(1, 0)
    return ExitCode.from_wait_status(int(raw))


def parse_partitions_json(text: str) -> tuple[list[Partition], list[str]]:
    """slurmrestd ``/partitions`` (or ``scontrol show partition --json``) -> (partitions,
    warnings). Limits unset or infinite -> None (UNLIMITED); MaxTime is in minutes."""

    def build(p: dict[str, Any]) -> Partition:
        nodes = p.get("nodes") or {}
        node_list = str(nodes.get("configured") or "") if isinstance(nodes, dict) else ""
        maxs = p.get("maximums") or {}
        state = (p.get("partition") or {}).get("state") or ["UP"]
        flags = [str(f).upper() for f in p.get("flags") or ()]
        default = "DEFAULT" in flags or bool((p.get("partition") or {}).get("default"))
        max_time = _num(maxs.get("time"))
        per_node = _num(maxs.get("partition_memory_per_node"))
        per_cpu = _num(maxs.get("partition_memory_per_cpu"))
        return Partition(
            name=p["name"],
            state=_state_str(state),
            nodes=hostlist.expand(node_list),
            node_list=node_list,
            default=default,
            max_cpus_per_node=_num(maxs.get("cpus_per_node")),
            max_mem_per_node_mib=per_node or None,
            max_mem_per_cpu_mib=per_cpu or None,
            max_time_s=int(max_time) * 60 if max_time is not None else None,
            max_nodes=_num(maxs.get("nodes")),
            total_cpus=_num((p.get("cpus") or {}).get("total")),
            total_nodes=_num(nodes.get("total")) if isinstance(nodes, dict) else None,
            qos=str((p.get("qos") or {}).get("assigned") or ""),
        )

    return _json_tolerant(_load_json(text, "partitions", "partitions JSON"), "partitions", build)


def _node_name(v: Any) -> str:
    if not isinstance(v, str) or not v:
        raise ValueError(f"node name {v!r}")
    return v


def parse_sinfo_json(text: str, tz: tzinfo = UTC) -> tuple[list[SlurmNode], list[str]]:
    """``sinfo --json`` nodes -> (nodes, warnings). cpu_load is reported in hundredths."""

    def build(n: dict[str, Any]) -> SlurmNode:
        st = n.get("state")
        if isinstance(st, list):  # 23.02+: ["IDLE", "DRAIN"]
            base, flags = (
                (str(st[0]).upper() if st else "UNKNOWN"),
                tuple(str(f).upper() for f in st[1:]),
            )
        else:
            base, flags = split_node_state(str(st or "UNKNOWN"))
        flags = tuple(
            dict.fromkeys([*flags, *(str(f).upper() for f in n.get("state_flags") or ())])
        )
        load = _num(n.get("cpu_load"))
        return SlurmNode(
            name=_node_name(n["name"]),
            state=base,
            flags=flags,
            partitions=tuple(n.get("partitions") or ()),
            cpus_total=_num(n.get("cpus")),
            cpus_alloc=_num(n.get("alloc_cpus")),
            cpu_load=load / 100 if isinstance(load, int | float) else None,
            real_memory_mib=_num(n.get("real_memory")),
            alloc_memory_mib=_num(n.get("alloc_memory")),
            free_memory_mib=_num(n.get("free_memory", n.get("free_mem"))),
            gres=n.get("gres") or "",
            reason=n.get("reason") or "",
            reason_user=n.get("reason_set_by_user") or "",
            reason_time=_epoch(n.get("reason_changed_at"), tz),
            boot_time=_epoch(n.get("boot_time"), tz),
        )

    return _json_tolerant(_load_json(text, "nodes", "sinfo --json"), "sinfo --json", build)


def _json_exit(e: Any) -> ExitCode | None:
    if not isinstance(e, dict):
        return None
    rc = _num(e.get("return_code"))
    sig = e.get("signal") or {}
    sig_id = _num(sig.get("signal_id", sig.get("id"))) if isinstance(sig, dict) else None
    return ExitCode(int(rc or 0), int(sig_id or 0))


def _max_rss_mib(tres: Any) -> int | None:
    try:
        for t in tres["requested"]["max"]:
            if t.get("type") == "mem":
                return int(round(int(t["count"]) / 1024 / 1024))
    except (KeyError, TypeError, ValueError):
        return None
    return None


def parse_sacct_json(text: str, tz: tzinfo = UTC) -> tuple[list[AcctRecord], list[str]]:
    """``sacct --json`` -> (records, warnings): one job row plus one per step.

    ReqMem from ``required.memory`` (MiB), MaxRSS from the step's
    ``tres.requested.max`` mem entry (bytes). The JSON has no ``by UID`` suffix:
    ``kill_request_user`` fills ``cancelled_by``.
    """

    def build(j: dict[str, Any]) -> list[AcctRecord]:
        job_id = _job_id(j["job_id"])
        arr = j.get("array") or {}
        if _num(arr.get("job_id")) and _num(arr.get("task_id")) is not None:
            job_id = f"{_num(arr['job_id'])}_{_num(arr['task_id'])}"
        t = j.get("time") or {}
        st = j.get("state") or {}
        state = _state_str(st.get("current") if isinstance(st, dict) else st)
        req = _num((j.get("required") or {}).get("memory"))
        if req is None:
            req = _num((j.get("required") or {}).get("memory_per_node")) or _num(
                (j.get("required") or {}).get("memory_per_cpu")
            )
        limit = _num(t.get("limit"))
        rows = [
            AcctRecord(
                job_id=job_id,
                step="",
                job_name=j.get("name", ""),
                partition=j.get("partition") or "",
                state=state,
                exit_code=_json_exit(j.get("exit_code")),
                req_mem_mib=req,
                max_rss_mib=None,
                elapsed_s=_num(t.get("elapsed")),
                timelimit_s=int(limit) * 60 if limit and limit < 0xFFFFFFFE else None,
                node_list="" if j.get("nodes") in (None, "None assigned") else j.get("nodes"),
                reason=_text((st.get("reason") if isinstance(st, dict) else "") or ""),
                cancelled_by=j.get("kill_request_user") or "" if state == "CANCELLED" else "",
                user=j.get("user") or "",
                start_time=_epoch(t.get("start"), tz),
                end_time=_epoch(t.get("end"), tz),
            )
        ]
        for s in j.get("steps") or ():
            step_id = str(
                (s.get("step") or {}).get("id") or (s.get("step") or {}).get("name") or ""
            )
            step_id = (
                step_id.split(".", 1)[1] if step_id.startswith(f"{_num(j['job_id'])}.") else step_id
            )
            st_t = s.get("time") or {}
            state_s = _state_str(s.get("state"))
            rows.append(
                AcctRecord(
                    job_id=job_id,
                    step=step_id,
                    job_name=(s.get("step") or {}).get("name", ""),
                    partition="",
                    state=state_s,
                    exit_code=_json_exit(s.get("exit_code")),
                    req_mem_mib=None,
                    max_rss_mib=_max_rss_mib(s.get("tres")),
                    elapsed_s=_num(st_t.get("elapsed")),
                    timelimit_s=None,
                    node_list=((s.get("nodes") or {}).get("range")) or "",
                    cancelled_by=(s.get("kill_request_user") or "")
                    if state_s == "CANCELLED"
                    else "",
                    start_time=_epoch(st_t.get("start"), tz),
                    end_time=_epoch(st_t.get("end"), tz),
                )
            )
        return rows

    return _json_tolerant(_load_json(text, "jobs", "sacct --json"), "sacct --json", build)
