"""Pure parsers: ModelArts v2 wire JSON (dicts as ``resp.to_json_object()`` gives them,
or as saved in a bundle's ``modelarts-job.json``) -> ``cockpit.model`` dataclasses.

No I/O, no SDK import. Malformed input raises :class:`cockpit.errors.ParseError` (never
KeyError/TypeError). Units: memory in MiB, durations in seconds, tz-aware datetimes
(API times are epoch milliseconds in job details, ISO-8601 with offset in events/stages).
Path strings are kept byte-for-byte (a trailing space in a data path is a finding).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from cockpit.errors import ParseError
from cockpit.model import JobEvent, Mount, Pool, PoolNode, Stage, TaskStatus, TrainingJob

_LEVEL_RANK = {"error": 0, "warning": 1}


# --------------------------------------------------------------------------- helpers


def _obj(value: Any, where: str) -> Mapping[str, Any]:
    """``value`` as a mapping; None/missing -> {}; anything else -> ParseError."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ParseError(f"expected an object, got {type(value).__name__}", where)
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ParseError(f"expected a list, got {type(value).__name__}", where)
    return value


def _str(value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise ParseError(f"expected a string, got {type(value).__name__}", where)


def _int(value: Any, where: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ParseError("expected a number, got a boolean", where)
    try:
        return int(float(value)) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise ParseError(f"expected a number, got {value!r}", where) from None


def parse_time(value: Any, where: str = "") -> datetime | None:
    """Epoch ms/s (int or digit string) or ISO-8601 -> aware UTC datetime; 0/"" -> None."""
    if value is None or value == "" or value == 0:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        secs = value / 1000 if value > 10_000_000_000 else value  # ms vs s
        try:
            return datetime.fromtimestamp(secs, UTC)
        except (
            ValueError,
            OverflowError,
            OSError,
        ):  # NaN, year > 9999, out of the platform's range
            raise ParseError(f"timestamp out of range {value!r}", where) from None
    if isinstance(value, str):
        if (
            value.strip().isascii() and value.strip().isdigit()
        ):  # "¹".isdigit() is True, int() fails
            return parse_time(int(value.strip()), where)
        text = value.strip().replace("Z", "+00:00")
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            raise ParseError(f"bad timestamp {value!r}", where) from None
        try:
            return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).astimezone(UTC)
        except OverflowError:  # 0001-01-01T00:00+01:00
            raise ParseError(f"timestamp out of range {value!r}", where) from None
    raise ParseError(f"bad timestamp {value!r}", where)


_QTY = re.compile(r"^\s*([0-9.]+)\s*([A-Za-z]*)\s*$")
_MEM_MIB = {
    "": 1 / (1024 * 1024),
    "b": 1 / (1024 * 1024),
    "ki": 1 / 1024,
    "k": 1000 / 1024 / 1024,
    "kb": 1 / 1024,
    "mi": 1,
    "m": 1000**2 / 1024**2,
    "mb": 1,
    "mib": 1,
    "gi": 1024,
    "g": 1000**3 / 1024**2,
    "gb": 1024,
    "gib": 1024,
    "ti": 1024**2,
    "t": 1000**4 / 1024**2,
    "tb": 1024**2,
    "tib": 1024**2,
}


def parse_memory_mib(value: Any, where: str = "", default_unit: str = "") -> int | None:
    """Kubernetes quantity or size ("512Gi", "64Gi", "1024Mi", "12345678") -> MiB."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = f"{value}{default_unit}"
    m = _QTY.match(str(value))
    unit = m.group(2).lower() if m else None
    if not m or unit not in _MEM_MIB:
        raise ParseError(f"bad memory quantity {value!r}", where)
    return int(round(float(m.group(1)) * _MEM_MIB[unit]))


def parse_cpu(value: Any, where: str = "") -> float | None:
    """Kubernetes CPU quantity ("64", "7500m") -> cores."""
    if value is None or value == "":
        return None
    text = str(value).strip()
    try:
        return float(text[:-1]) / 1000 if text.endswith("m") else float(text)
    except ValueError:
        raise ParseError(f"bad CPU quantity {value!r}", where) from None


def _count(value: Any, where: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(float(str(value).strip()))
    except ValueError:
        raise ParseError(f"bad count {value!r}", where) from None


# --------------------------------------------------------------------------- events, stages


def parse_events(events_json: Any) -> tuple[JobEvent, ...]:
    """``list_training_job_events`` -> events, Error then Warning then Info, each oldest first.

    Oldest first inside a level because the first warning is usually the cause
    (FailedMount before the BackOff it leads to).
    """
    root = _obj(events_json, "events")
    out = []
    for i, e in enumerate(_list(root.get("events"), "events.events")):
        w = f"events.events[{i}]"
        e = _obj(e, w)
        out.append(
            JobEvent(
                time=parse_time(e.get("time"), w + ".time"),
                level=_str(e.get("level"), w + ".level") or "Info",
                source=_str(e.get("source"), w + ".source"),
                message=_str(e.get("message"), w + ".message"),
            )
        )
    far = datetime.max.replace(tzinfo=UTC)
    out.sort(key=lambda ev: (_LEVEL_RANK.get(ev.level.lower(), 2), ev.time or far))
    return tuple(out)


def parse_stages(stages_json: Any) -> tuple[Stage, ...]:
    """``list_training_job_stages`` -> stages of the latest running record (highest
    ``record_order``), in ``stage_order``. An empty ``end_time`` means the stage is open."""
    root = _obj(stages_json, "stages")
    records = [
        _obj(r, f"stages.running_records[{i}]")
        for i, r in enumerate(_list(root.get("running_records"), "stages.running_records"))
    ]
    if not records:
        return ()
    latest = max(records, key=lambda r: _int(r.get("record_order"), "stages.record_order") or 0)
    rows = []
    for i, s in enumerate(_list(latest.get("stages"), "stages.stages")):
        w = f"stages.stages[{i}]"
        s = _obj(s, w)
        subs = tuple(
            _str(_obj(x, w + ".sub_stages").get("name"), w + ".sub_stages.name")
            for x in _list(s.get("sub_stages"), w + ".sub_stages")
        )
        rows.append(
            (
                _int(s.get("stage_order"), w + ".stage_order") or i + 1,
                Stage(
                    name=_str(s.get("name"), w + ".name"),
                    start_time=parse_time(s.get("start_time"), w + ".start_time"),
                    end_time=parse_time(s.get("end_time"), w + ".end_time"),
                    message=_str(s.get("en_message"), w + ".en_message"),
                    sub_stages=subs,
                ),
            )
        )
    rows.sort(key=lambda r: r[0])
    return tuple(st for _, st in rows)


# --------------------------------------------------------------------------- training job


def _obs_url(remote: Mapping[str, Any], where: str) -> tuple[str, str]:
    """(kind, url) of an input/output ``remote``: obs{obs_url} or dataset{obs_url}."""
    obs = _obj(remote.get("obs"), where + ".obs")
    if obs:
        return "obs", _str(obs.get("obs_url"), where + ".obs.obs_url")
    ds = _obj(remote.get("dataset"), where + ".dataset")
    if ds:
        return "dataset", _str(ds.get("obs_url") or ds.get("id"), where + ".dataset")
    return "unknown", ""


_PARAM_PATH = re.compile(
    r"(data|train|input|output|dataset|ckpt|checkpoint|model)[_-]?(url|path|dir)$", re.I
)


def _mounts(algorithm: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[Mount, ...]:
    out: list[Mount] = []
    for direction in ("inputs", "outputs"):
        for i, item in enumerate(_list(algorithm.get(direction), f"algorithm.{direction}")):
            w = f"algorithm.{direction}[{i}]"
            item = _obj(item, w)
            kind, url = _obs_url(_obj(item.get("remote"), w + ".remote"), w + ".remote")
            out.append(
                Mount(
                    kind=kind,
                    remote=url,
                    local=_str(item.get("local_dir"), w + ".local_dir"),
                    name=_str(item.get("name"), w + ".name"),
                    direction=direction[:-1],
                )
            )
    for i, vol in enumerate(_list(spec.get("volumes"), "spec.volumes")):
        w = f"spec.volumes[{i}]"
        vol = _obj(vol, w)
        for kind, remote_key in (
            ("nfs", "nfs_server_path"),
            ("sfs", "sfs_path"),
            ("pfs", "pfs_path"),
            ("obs", "obs_path"),
            ("evs", "evs_path"),
        ):
            body = _obj(vol.get(kind), f"{w}.{kind}")
            if body:
                ro = body.get("read_only")
                out.append(
                    Mount(
                        kind=kind,
                        remote=_str(body.get(remote_key), f"{w}.{kind}.{remote_key}"),
                        local=_str(body.get("local_path"), f"{w}.{kind}.local_path"),
                        read_only=bool(ro) if isinstance(ro, bool) else False,
                        direction="volume",
                    )
                )
    # Data paths passed as hyper-parameters (data_url=obs://..., train_url=/obs/...)
    for i, p in enumerate(_list(algorithm.get("parameters"), "algorithm.parameters")):
        w = f"algorithm.parameters[{i}]"
        p = _obj(p, w)
        name, value = _str(p.get("name"), w + ".name"), _str(p.get("value"), w + ".value")
        if not _PARAM_PATH.search(name) or not value:
            continue
        direction = (
            "output"
            if re.search(r"output|train_url|ckpt|checkpoint|model", name, re.I)
            else "input"
        )
        if value.startswith("obs://"):
            out.append(Mount(kind="obs", remote=value, local="", name=name, direction=direction))
        elif value.startswith("/"):
            out.append(Mount(kind="local", remote="", local=value, name=name, direction=direction))
    return tuple(out)


def _flavor(resource: Mapping[str, Any]) -> tuple[int | None, int | None, int | None, int | None]:
    """(cpus, gpus, npus, memory MiB) from ``spec.resource.flavor_detail.flavor_info``."""
    w = "spec.resource.flavor_detail.flavor_info"
    info = _obj(
        _obj(resource.get("flavor_detail"), "spec.resource.flavor_detail").get("flavor_info"), w
    )
    cpu = _int(_obj(info.get("cpu"), w + ".cpu").get("core_num"), w + ".cpu.core_num")
    gpu = _int(_obj(info.get("gpu"), w + ".gpu").get("unit_num"), w + ".gpu.unit_num")
    npu = _int(_obj(info.get("npu"), w + ".npu").get("unit_num"), w + ".npu.unit_num")
    mem = _obj(info.get("memory"), w + ".memory")
    mem_mib = parse_memory_mib(
        mem.get("size"), w + ".memory", default_unit=_str(mem.get("unit"), w) or "GB"
    )
    return cpu, gpu, npu, mem_mib


_EXIT_REASON = re.compile(r"exit(?:ed)?\s+(?:with\s+)?(?:code\s+)?(-?\d+)", re.I)


def _task_statuses(status: Mapping[str, Any], tasks: tuple[str, ...]) -> tuple[TaskStatus, ...]:
    out = []
    for i, t in enumerate(_list(status.get("task_statuses"), "status.task_statuses")):
        w = f"status.task_statuses[{i}]"
        t = _obj(t, w)
        out.append(
            TaskStatus(
                task=_str(t.get("task"), w + ".task"),
                exit_code=_int(t.get("exit_code"), w + ".exit_code"),
                message=_str(t.get("message"), w + ".message"),
            )
        )
    if out:
        return tuple(out)
    # Fall back to the latest running record's end_reason ("exit with 137").
    records = [
        _obj(r, "status.running_records")
        for r in _list(status.get("running_records"), "status.running_records")
    ]
    if records:
        last = records[-1]
        reason = _str(last.get("end_reason"), "status.running_records.end_reason")
        m = _EXIT_REASON.search(reason)
        if m:
            task = _str(
                last.get("end_related_task"), "status.running_records.end_related_task"
            ) or (tasks[0] if tasks else "")
            return (TaskStatus(task=task, exit_code=int(m.group(1)), message=reason),)
    return ()


def parse_training_job(
    job_json: Any,
    stages_json: Any = None,
    events_json: Any = None,
    preview_json: Any = None,
    *,
    pool_public: bool | None = None,
    now: datetime | None = None,
) -> TrainingJob:
    """``show_training_job_details`` (or one ``list_training_jobs`` item) plus optional
    stages, events and the first task's log preview -> :class:`TrainingJob`.

    ``pool_public``: whether the job's pool is a public one (the source knows from
    ``list_pools``); None infers it: no ``pool_id`` -> public. ``now`` is unused by the
    fields themselves; it caps ``phase_since`` so clock skew cannot put it in the future.
    Raises ParseError when the JSON is not a job (no ``metadata.id``) or a field has the
    wrong type.
    """
    root = _obj(job_json, "job")
    meta = _obj(root.get("metadata"), "metadata")
    status = _obj(root.get("status"), "status")
    algorithm = _obj(root.get("algorithm"), "algorithm")
    spec = _obj(root.get("spec"), "spec")
    resource = _obj(spec.get("resource"), "spec.resource")
    job_id = _str(meta.get("id"), "metadata.id")
    if not job_id:
        raise ParseError("not a training job: metadata.id missing", "job")
    phase = _str(status.get("phase"), "status.phase")
    tasks = tuple(_str(t, "status.tasks") for t in _list(status.get("tasks"), "status.tasks"))
    task_resource: Mapping[str, Any] = {}
    job_tasks = _list(root.get("tasks"), "tasks")
    if job_tasks:
        task_resource = _obj(
            _obj(job_tasks[0], "tasks[0]").get("task_resource"), "tasks[0].task_resource"
        )

    create = parse_time(meta.get("create_time"), "metadata.create_time")
    start = parse_time(status.get("start_time"), "status.start_time")
    duration_ms = _int(status.get("duration"), "status.duration")
    duration_s = duration_ms // 1000 if duration_ms is not None else None
    stages = parse_stages(stages_json) if stages_json is not None else ()
    events = parse_events(events_json) if events_json is not None else ()

    # When the current phase began, best known.
    since: datetime | None = create
    if phase == "Running" and start:
        since = start
        if stages and stages[-1].end_time is None and stages[-1].start_time:
            since = stages[-1].start_time
    elif phase in {"Failed", "Completed", "Terminated", "Abnormal"} and start and duration_s:
        since = datetime.fromtimestamp(start.timestamp() + duration_s, UTC)
    if since and now and since > now:
        since = now

    pool_id = _str(resource.get("pool_id") or task_resource.get("pool_id"), "spec.resource.pool_id")
    cpus, gpus, npus, mem = _flavor(resource)
    engine = _obj(algorithm.get("engine"), "algorithm.engine")
    node_count = _int(resource.get("node_count"), "spec.resource.node_count") or len(tasks) or 1
    preview = _obj(preview_json, "logs_preview")
    log_text = _str(preview.get("content", preview.get("context")), "logs_preview.content")

    return TrainingJob(
        job_id=job_id,
        name=_str(meta.get("name"), "metadata.name"),
        phase=phase,
        secondary_phase=_str(status.get("secondary_phase"), "status.secondary_phase"),
        create_time=create,
        start_time=start,
        phase_since=since,
        duration_s=duration_s,
        user=_str(meta.get("user_name"), "metadata.user_name"),
        flavor_id=_str(
            resource.get("flavor_id") or task_resource.get("flavor_id"), "spec.resource.flavor_id"
        ),
        flavor_cpus=cpus,
        flavor_gpus=gpus,
        flavor_npus=npus,
        flavor_memory_mib=mem,
        node_count=node_count,
        pool_id=pool_id,
        pool_name=_str(resource.get("pool_name"), "spec.resource.pool_name") or pool_id,
        pool_public=(not pool_id) if pool_public is None else pool_public,
        image=_str(
            engine.get("image_url") or algorithm.get("image_url"), "algorithm.engine.image_url"
        ),
        boot_command=_str(algorithm.get("command"), "algorithm.command"),
        mounts=_mounts(algorithm, spec),
        tasks=tasks,
        task_statuses=_task_statuses(status, tasks),
        stages=stages,
        events=events,
        log_preview=log_text,
        log_task=tasks[0] if tasks else "",
        workspace_id=_str(meta.get("workspace_id"), "metadata.workspace_id"),
    )


def parse_training_job_list(list_json: Any) -> tuple[list[Mapping[str, Any]], int | None]:
    """``list_training_jobs`` page -> (items as raw dicts, total)."""
    root = _obj(list_json, "training-job-searches")
    items = [_obj(x, "items[]") for x in _list(root.get("items"), "items")]
    return items, _int(root.get("total"), "total")


# --------------------------------------------------------------------------- pools


_NPU_KEYS = (
    "huawei.com/ascend-snt9",
    "huawei.com/ascend-snt3",
    "huawei.com/ascend-910",
    "huawei.com/ascend-310",
)


def _res(
    block: Mapping[str, Any], w: str
) -> tuple[float | None, int | None, int | None, int | None]:
    """(cpus, memory MiB, gpus, npus) of a node ``resources``/``availableResources`` block."""
    npus = None
    for key in _NPU_KEYS:
        if key in block:
            npus = (npus or 0) + (_count(block.get(key), f"{w}.{key}") or 0)
    return (
        parse_cpu(block.get("cpu"), w + ".cpu"),
        parse_memory_mib(block.get("memory"), w + ".memory"),
        _count(block.get("nvidia.com/gpu"), w + ".nvidia.com/gpu"),
        npus,
    )


def parse_pool_node(node_json: Any, where: str = "node") -> PoolNode:
    n = _obj(node_json, where)
    meta, spec, st = (_obj(n.get(k), f"{where}.{k}") for k in ("metadata", "spec", "status"))
    cpus, mem, gpus, npus = _res(
        _obj(st.get("resources"), where + ".status.resources"), where + ".status.resources"
    )
    fc, fm, fg, fn = _res(
        _obj(st.get("availableResources"), where + ".status.availableResources"),
        where + ".status.availableResources",
    )
    name = _str(meta.get("name"), where + ".metadata.name")
    if not name:
        raise ParseError("node without metadata.name", where)
    return PoolNode(
        name=name,
        phase=_str(st.get("phase"), where + ".status.phase"),
        flavor=_str(spec.get("flavor"), where + ".spec.flavor"),
        private_ip=_str(st.get("privateIp"), where + ".status.privateIp"),
        cpus=cpus,
        memory_mib=mem,
        gpus=gpus,
        npus=npus,
        free_cpus=fc,
        free_memory_mib=fm,
        free_gpus=fg,
        free_npus=fn,
    )


def _res_count(value: Any, where: str) -> int | None:
    """``status.resources.available`` is an object per the SDK, a list on some services."""
    if value is None:
        return None
    if isinstance(value, list):
        return sum(_count(_obj(v, where).get("count"), where) or 0 for v in value)
    return _count(_obj(value, where).get("count"), where)


def parse_pool(pool_json: Any, nodes_json: Any = None) -> Pool:
    """One ``list_pools`` item (+ its ``list_pool_nodes`` answer) -> :class:`Pool`.

    ``pool_id`` is ``metadata.name``; ``name`` the console name (label
    ``os.modelarts/name``). Pools returned by ``list_pools`` are the user's dedicated
    pools (``public=False``) unless labelled otherwise.
    """
    p = _obj(pool_json, "pool")
    meta, spec, st = (_obj(p.get(k), f"pool.{k}") for k in ("metadata", "spec", "status"))
    labels = _obj(meta.get("labels"), "pool.metadata.labels")
    pool_id = _str(meta.get("name"), "pool.metadata.name")
    if not pool_id:
        raise ParseError("pool without metadata.name", "pool")
    resources = _list(spec.get("resources"), "pool.spec.resources")
    flavor = (
        _str(
            _obj(resources[0], "pool.spec.resources[0]").get("flavor"),
            "pool.spec.resources[0].flavor",
        )
        if resources
        else ""
    )
    sres = _obj(st.get("resources"), "pool.status.resources")
    nodes: tuple[PoolNode, ...] = ()
    if nodes_json is not None:
        items = _list(_obj(nodes_json, "nodes").get("items"), "nodes.items")
        nodes = tuple(parse_pool_node(n, f"nodes.items[{i}]") for i, n in enumerate(items))
    public = (
        str(labels.get("os.modelarts/pool.type", "")).lower() == "public"
        or "public" in pool_id.lower()
    )
    return Pool(
        pool_id=pool_id,
        name=_str(labels.get("os.modelarts/name"), "pool.labels") or pool_id,
        public=public,
        phase=_str(st.get("phase"), "pool.status.phase"),
        pool_type=_str(spec.get("type"), "pool.spec.type"),
        flavor=flavor,
        nodes=nodes,
        available=_res_count(sres.get("available"), "pool.status.resources.available"),
        abnormal=_res_count(sres.get("abnormal"), "pool.status.resources.abnormal"),
        message=_str(st.get("message"), "pool.status.message"),
    )


def parse_flavor_max_available(resp: Any) -> tuple[int | None, int | None]:
    """``show_training_flavor_max_available_resource`` -> (cpu_core_num, mem_size GB)."""
    r = _obj(resp, "training-pool-flavors")
    return _int(r.get("cpu_core_num"), "cpu_core_num"), _int(r.get("mem_size"), "mem_size")
