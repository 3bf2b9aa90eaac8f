"""A local ModelArts v2 API for tests: the REAL SDK talks to it over HTTP on 127.0.0.1.

Grown from ``shared/docs/modelarts_mock_example.py``. It checks the SDK's
SDK-HMAC-SHA256 signature (wrong SK -> 401 ``APIGW.0301``), serves training jobs in
every state the ModelArts rules diagnose (see :func:`scenarios`), dedicated pools with
nodes, and injects failures on demand::

    srv = ModelArtsServer().start()          # srv.base_url
    srv.inject(429, {"error_code": "APIGW.0308", "error_msg": "throttled"},
               headers={"Retry-After": "7"})
    srv.inject("timeout")                    # sleep past the client's read timeout
    srv.inject("malformed") / srv.inject("truncated")
    srv.stop()

Injected failures apply to the next request whose path matches ``route`` (regex, default
any). Event and job texts follow the documented formats; the specific failure texts
are ILLUSTRATIVE.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import re
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

PROJECT_ID = "0b1e8c5d2f9a4c6e8d7f0a1b2c3d4e5f"
AK, SK = "MOCKAKEXAMPLE0000000", "mock-secret-key"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()

NOW = datetime(2023, 11, 14, 6, 0, tzinfo=UTC)  # the tests' frozen clock
T0 = int(NOW.timestamp() * 1000)  # ms
MIN = 60_000


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat()


def job_json(
    jid: str,
    name: str,
    phase: str,
    secondary: str,
    *,
    created_min_ago: float,
    pool: str = "",
    flavor: str = "modelarts.p3.large.public",
    gpus: int = 1,
    cpus: int = 8,
    mem_gb: int = 64,
    tasks: int = 1,
    image: str = "swr.cn-north-4.myhuaweicloud.com/team/train:1.0",
    command: str = "python train.py",
    inputs: list | None = None,
    outputs: list | None = None,
    volumes: list | None = None,
    task_statuses: list | None = None,
    running_records: list | None = None,
    started_min_ago: float | None = None,
    parameters: list | None = None,
) -> dict:
    created = T0 - int(created_min_ago * MIN)
    start = T0 - int(started_min_ago * MIN) if started_min_ago is not None else 0
    return {
        "kind": "job",
        "metadata": {
            "id": jid,
            "name": name,
            "workspace_id": "0",
            "description": "",
            "create_time": created,
            "user_name": "ops-user",
            "annotations": {},
        },
        "status": {
            "phase": phase,
            "secondary_phase": secondary,
            "duration": (T0 - start) if start else 0,
            "start_time": start,
            "tasks": [f"worker-{i}" for i in range(tasks)],
            "node_count_metrics": [],
            "task_statuses": task_statuses or [],
            "running_records": running_records or [],
        },
        "algorithm": {
            "command": command,
            "parameters": parameters or [],
            "inputs": inputs or [],
            "outputs": outputs or [],
            "engine": {"image_url": image},
        },
        "spec": {
            "resource": {
                "flavor_id": flavor,
                "node_count": tasks,
                "pool_id": pool,
                "pool_name": pool,
                "flavor_detail": {
                    "flavor_type": "GPU",
                    "flavor_info": {
                        "gpu": {"unit_num": gpus, "product_name": "NVIDIA-V100", "memory": "32GB"},
                        "cpu": {"arch": "x86", "core_num": cpus},
                        "memory": {"size": mem_gb, "unit": "GB"},
                    },
                },
            },
            "volumes": volumes or [],
        },
    }


def _obs_in(
    url: str, local: str = "/home/ma-user/modelarts/inputs/data_url_0/", name: str = "data_url"
) -> dict:
    return {"name": name, "local_dir": local, "remote": {"obs": {"obs_url": url}}}


def _pod(jid: str, reason: str, msg: str) -> str:
    return f"[Pod: modelarts-job-{jid}-worker-0] {reason}: {msg}"


def _ev(min_ago: float, level: str, source: str, msg: str) -> tuple[str, str, str, str]:
    return (_iso(T0 - int(min_ago * MIN)), level, source, msg)


def _stages(*spec: tuple[str, float, float | None, list[str]]) -> list:
    """(name, started min ago, ended min ago or None=open, sub-stage names)."""
    return list(spec)


def scenarios() -> dict[str, dict[str, Any]]:
    """Scenario name -> {job, events, stages, log}. Ids are ``<name>`` padded into a uuid shape."""
    out: dict[str, dict[str, Any]] = {}

    def add(key: str, job: dict, events=(), stages=(), log: str | None = None) -> None:
        out[key] = {"job": job, "events": list(events), "stages": list(stages), "log": log}

    def jid(n: int) -> str:
        return f"{n:08d}-aaaa-4bbb-8ccc-{n:012d}"

    j = jid(1)
    add(
        "queued_public",
        job_json(
            j, "llm-pretrain-64gpu", "Pending", "Queuing", created_min_ago=45, tasks=8, gpus=8
        ),
        [
            _ev(45, "Info", "Job", "Training job created."),
            _ev(45, "Info", "Job", "The training job is queuing and awaiting resource allocation."),
        ],
        _stages(("scheduling", 45, None, ["queuing"])),
    )
    j = jid(2)
    add(
        "mount_denied",
        job_json(
            j,
            "cv-finetune-obs",
            "Pending",
            "Creating",
            created_min_ago=25,
            pool="pool-gpu-a",
            inputs=[_obs_in("obs://team-data/imagenet/")],
        ),
        [
            _ev(25, "Info", "Job", "Training job created."),
            _ev(24, "Info", "K8S", _pod(j, "Scheduled", "Successfully assigned to 192.168.0.12")),
            _ev(
                23,
                "Warning",
                "K8S",
                _pod(
                    j,
                    "FailedMount",
                    'MountVolume.SetUp failed for volume "obs-data" : '
                    "mount failed: obsfs: AccessDenied: Access Denied (bucket team-data)",
                ),
            ),
        ],
        _stages(("scheduling", 25, 24, []), ("preparing", 24, None, ["volume_mounting"])),
    )
    j = jid(3)
    img = "swr.cn-north-4.myhuaweicloud.com/tema/train:1.O"
    add(
        "image_pull",
        job_json(
            j,
            "bert-custom-image",
            "Pending",
            "Creating",
            created_min_ago=18,
            pool="pool-gpu-a",
            image=img,
        ),
        [
            _ev(17, "Info", "K8S", _pod(j, "Scheduled", "Successfully assigned to 192.168.0.11")),
            _ev(
                16,
                "Warning",
                "K8S",
                _pod(
                    j,
                    "Failed",
                    f'Failed to pull image "{img}": rpc error: code = NotFound '
                    f'desc = failed to pull and unpack image "{img}": not found',
                ),
            ),
            _ev(16, "Warning", "K8S", _pod(j, "Failed", "Error: ErrImagePull")),
            _ev(15, "Warning", "K8S", _pod(j, "BackOff", f'Back-off pulling image "{img}"')),
        ],
        _stages(("scheduling", 18, 17, []), ("preparing", 17, None, ["image_pulling"])),
    )
    j = jid(4)
    add(
        "bad_paths",
        job_json(
            j,
            "paths-typo",
            "Pending",
            "Creating",
            created_min_ago=4,
            pool="pool-gpu-a",
            inputs=[_obs_in("obs://MyBucket/data/train.csv/", "/home/ma-user/data ")],
            volumes=[
                {"obs": {"obs_path": "obs://team-data/ckpt/", "local_path": "/data/ckpt"}},
                {"evs": {"evs_path": "evs-01", "local_path": "/mnt/evs"}},
            ],
        ),
        [_ev(4, "Info", "Job", "Training job created.")],
        _stages(("scheduling", 4, 3.5, []), ("preparing", 3.5, None, ["volume_mounting"])),
    )
    j = jid(5)
    add(
        "exit127",
        job_json(
            j,
            "custom-image-nobash",
            "Failed",
            "Failed",
            created_min_ago=30,
            started_min_ago=20,
            image="swr.cn-north-4.myhuaweicloud.com/team/alpine-train:2.0",
            command="bash /home/ma-user/run.sh",
            task_statuses=[
                {
                    "task": "worker-0",
                    "exit_code": 127,
                    "message": 'exec: "bash": executable file not found in $PATH',
                }
            ],
        ),
        [
            _ev(20, "Info", "K8S", _pod(j, "Started", "Started container")),
            _ev(20, "Error", "Task", "[worker-0] Training job exited with code 127."),
        ],
        (),
        "/bin/sh: bash: not found\n[Modelarts Service Log]Training end with return code: 127\n",
    )
    j = jid(6)
    add(
        "oom137",
        job_json(
            j,
            "resnet-bigbatch",
            "Failed",
            "Failed",
            created_min_ago=60,
            started_min_ago=50,
            running_records=[
                {
                    "start_at": (T0 - 50 * MIN) // 1000,
                    "end_at": (T0 - 5 * MIN) // 1000,
                    "end_reason": "exit with 137",
                }
            ],
        ),
        [],
        (),
        "epoch 3 step 100 loss=1.2\n[Modelarts Service Log]Training end with return code: 137\n",
    )
    j = jid(7)
    add(
        "nosuchkey",
        job_json(j, "moxing-copy", "Failed", "Failed", created_min_ago=40, started_min_ago=35),
        [],
        (),
        "INFO:root:Using MoXing-v2.0\nERROR:root:\nstat:404\nerrorCode:NoSuchKey\n"
        "errorMessage:The specified key does not exist.\n",
    )
    j = jid(8)
    add(
        "fragmented",
        job_json(
            j,
            "ddp-8gpu",
            "Pending",
            "Queuing",
            created_min_ago=40,
            pool="pool-frag",
            gpus=8,
            cpus=32,
            mem_gb=256,
            flavor="modelarts.pool.gpu.8v100",
        ),
        [_ev(40, "Info", "Job", "The training job is queuing and awaiting resource allocation.")],
        _stages(("scheduling", 40, None, [])),
    )
    j = jid(9)
    add(
        "stalled",
        job_json(j, "silent-boot", "Pending", "Creating", created_min_ago=30, pool="pool-gpu-a"),
        [_ev(29, "Info", "K8S", _pod(j, "Started", "Started container"))],
        _stages(("scheduling", 30, 29, []), ("preparing", 29, None, ["boot"])),
        "[boot] installing requirements\n",
    )
    j = jid(10)
    add(
        "running_ok",
        job_json(
            j,
            "bert-base-ok",
            "Running",
            "Running",
            created_min_ago=120,
            started_min_ago=110,
            pool="pool-gpu-a",
        ),
        [_ev(110, "Info", "Job", "Training job is running.")],
        _stages(
            ("scheduling", 120, 115, []), ("preparing", 115, 110, []), ("running", 110, None, [])
        ),
        "epoch 1 step 100 loss=2.31\n",
    )
    j = jid(11)
    add(
        "readonly",
        job_json(j, "write-to-input", "Failed", "Failed", created_min_ago=30, started_min_ago=25),
        [],
        (),
        "Traceback (most recent call last):\nOSError: [Errno 30] Read-only file system: "
        "'/home/ma-user/modelarts/inputs/data_url_0/out.ckpt'\n",
    )
    j = jid(12)
    add(
        "obs_timeout",
        job_json(
            j,
            "obs-slow",
            "Failed",
            "Failed",
            created_min_ago=30,
            started_min_ago=25,
            inputs=[_obs_in("obs://team-data/big/")],
        ),
        [],
        (),
        "Downloading obs://team-data/big/ (350GB)\nERROR: Read timeout on endpoint URL: "
        '"https://obs.cn-north-4.myhuaweicloud.com/team-data/big/part-0001"\n',
    )
    j = jid(13)
    add(
        "nccl",
        job_json(
            j, "ddp-2node", "Failed", "Failed", created_min_ago=90, started_min_ago=80, tasks=2
        ),
        [],
        (),
        "worker0:15:91 [3] include/socket.h 398 NCCL WARN "
        "Call to write failed : Connection reset by peer.\n",
    )
    j = jid(14)
    add(
        "cuda",
        job_json(j, "old-driver", "Failed", "Failed", created_min_ago=30, started_min_ago=28),
        [],
        (),
        "RuntimeError: The NVIDIA driver on your system is too old (found version 10010).\n"
        "CUDA driver version is insufficient for CUDA runtime version\n",
    )
    j = jid(15)
    add(
        "prep_timeout",
        job_json(j, "cross-region-algo", "Failed", "CreateFailed", created_min_ago=70),
        [
            _ev(
                10,
                "Error",
                "Job",
                "Preparations timed out. The possible cause is that the cross-region algorithm "
                "synchronization or creating shared storage timed out.",
            )
        ],
    )
    j = jid(16)
    add(
        "completed",
        job_json(j, "done", "Completed", "Completed", created_min_ago=300, started_min_ago=290),
        [],
    )
    j = jid(17)
    add(
        "queued_fresh",
        job_json(j, "just-submitted", "Pending", "Queuing", created_min_ago=2),
        [_ev(2, "Info", "Job", "The training job is queuing and awaiting resource allocation.")],
        _stages(("scheduling", 2, None, [])),
    )
    return out


def _node(
    name: str,
    pool: str,
    phase: str,
    *,
    gpus: int,
    free_gpus: int,
    cpus: int = 64,
    free_cpus: int = 32,
    mem: str = "512Gi",
    free_mem: str = "256Gi",
    ip: int = 11,
) -> dict:
    return {
        "apiVersion": "v2",
        "kind": "Node",
        "metadata": {
            "name": name,
            "creationTimestamp": "2023-10-01T04:00:00Z",
            "labels": {"os.modelarts.node/nodepool": f"{pool}-default"},
        },
        "spec": {"flavor": "modelarts.vm.gpu.8v100"},
        "status": {
            "phase": phase,
            "az": "cn-north-4a",
            "privateIp": f"192.168.0.{ip}",
            "resources": {"cpu": str(cpus), "memory": mem, "nvidia.com/gpu": str(gpus)},
            "availableResources": {
                "cpu": str(free_cpus),
                "memory": free_mem,
                "nvidia.com/gpu": str(free_gpus),
            },
        },
    }


def _pool(
    pid: str, name: str, phase: str = "Running", available: int = 2, abnormal: int | None = None
) -> dict:
    res: dict = {
        "available": {"flavor": "modelarts.vm.gpu.8v100", "count": available, "maxCount": available}
    }
    if abnormal:
        res["abnormal"] = {"flavor": "modelarts.vm.gpu.8v100", "count": abnormal}
    return {
        "apiVersion": "v2",
        "kind": "Pool",
        "metadata": {
            "name": pid,
            "creationTimestamp": "2023-10-01T03:49:41Z",
            "labels": {"os.modelarts/name": name, "os.modelarts/workspace.id": "0"},
        },
        "spec": {
            "type": "Dedicate",
            "scope": ["Train"],
            "resources": [
                {"flavor": "modelarts.vm.gpu.8v100", "count": available + (abnormal or 0)}
            ],
        },
        "status": {
            "phase": phase,
            "message": "",
            "resources": res,
            "scope": [{"scopeType": "Train", "state": "Enabled"}],
        },
    }


def default_fixtures() -> dict[str, Any]:
    sc = scenarios()
    jobs = {s["job"]["metadata"]["id"]: s["job"] for s in sc.values()}
    events = {s["job"]["metadata"]["id"]: s["events"] for s in sc.values()}
    stages = {s["job"]["metadata"]["id"]: s["stages"] for s in sc.values()}
    logs = {s["job"]["metadata"]["id"]: s["log"] for s in sc.values() if s["log"] is not None}
    pools = [
        _pool("pool-gpu-a", "gpu-a"),
        _pool("pool-frag", "frag"),
        _pool("pool-npu-b", "npu-b", "Abnormal", 1, 1),
    ]
    nodes = {
        "pool-gpu-a": [
            _node("node-0", "pool-gpu-a", "Available", gpus=8, free_gpus=2),
            _node("node-1", "pool-gpu-a", "Available", gpus=8, free_gpus=4, ip=12),
        ],
        # 4 + 4 free GPUs: enough in total for an 8-GPU flavor, but not on one node
        "pool-frag": [
            _node("frag-0", "pool-frag", "Available", gpus=8, free_gpus=4, ip=21),
            _node("frag-1", "pool-frag", "Available", gpus=8, free_gpus=4, ip=22),
        ],
        "pool-npu-b": [
            _node("npu-0", "pool-npu-b", "Available", gpus=8, free_gpus=8, ip=31),
            _node("npu-1", "pool-npu-b", "Abnormal", gpus=8, free_gpus=0, ip=32),
        ],
    }
    return {
        "jobs": jobs,
        "events": events,
        "stages": stages,
        "logs": logs,
        "pools": pools,
        "nodes": nodes,
    }


DAY_MIN = 24 * 60


def big_project(jobs: int = 10_000, active: int = 100, old_trainings: int = 10) -> dict:
    """``jobs`` training jobs: ``old_trainings`` Running since 20 days, the rest of ``active``
    recent (half running, a third queued, the rest booting with a startup log), and the others
    Completed or Failed between 1 and 19 days ago. Pools and nodes as in the default fixtures."""
    fx = default_fixtures()
    fx.update(jobs={}, events={}, stages={}, logs={})

    def add(job: dict) -> str:
        jid = job["metadata"]["id"]
        fx["jobs"][jid] = job
        return jid

    for i in range(old_trainings):
        add(
            job_json(
                f"a0000000-0000-4000-8000-{i:012d}",
                f"pretrain-long-{i}",
                "Running",
                "Running",
                created_min_ago=20 * DAY_MIN + i,
                started_min_ago=20 * DAY_MIN + i - 5,
                pool="pool-gpu-a",
            )
        )
    recent = active - old_trainings
    for i in range(recent):
        jid = f"b0000000-0000-4000-8000-{i:012d}"
        if i < recent // 2:
            add(
                job_json(
                    jid,
                    f"train-{i}",
                    "Running",
                    "Running",
                    created_min_ago=60 + i,
                    started_min_ago=55 + i,
                )
            )
        elif i < recent // 2 + recent // 3:
            add(job_json(jid, f"queued-{i}", "Pending", "Queuing", created_min_ago=10 + i))
            fx["events"][jid] = [
                (
                    (NOW - timedelta(minutes=10 + i)).isoformat(),
                    "Info",
                    "Job",
                    "The training job is queuing and awaiting resource allocation.",
                )
            ]
            fx["stages"][jid] = [("scheduling", 10 + i, None, ["queuing"])]
        else:
            add(job_json(jid, f"booting-{i}", "Pending", "Creating", created_min_ago=5 + i))
            fx["stages"][jid] = [("scheduling", 5 + i, 4 + i, []), ("preparing", 4 + i, None, [])]
            fx["logs"][jid] = "[boot] installing requirements\n"
    ended = jobs - active
    for i in range(ended):
        created = DAY_MIN + i * (18 * DAY_MIN) / ended  # 1 to 19 days ago
        phase = "Failed" if i % 3 == 0 else "Completed"
        job = job_json(
            f"c0000000-0000-4000-8000-{i:012d}",
            f"done-{i}",
            phase,
            phase,
            created_min_ago=created,
            started_min_ago=created - 2,
        )
        job["status"]["duration"] = 30 * 60_000  # ended half an hour after it started
        add(job)
    return fx


def stages_json(jid: str, spec: list) -> dict:
    rows = []
    for i, (name, start_ago, end_ago, subs) in enumerate(spec):
        start = _iso(T0 - int(start_ago * MIN))
        rows.append(
            {
                "job_id": jid,
                "name": name,
                "en_message": name.capitalize(),
                "zh_message": "",
                "stage_order": i + 1,
                "start_time": start,
                "end_time": _iso(T0 - int(end_ago * MIN)) if end_ago is not None else "",
                "sub_stages": [
                    {"name": s, "en_message": s, "zh_message": "", "create_time": start}
                    for s in subs
                ],
            }
        )
    return {"total_count": 1, "running_records": [{"record_order": 1, "stages": rows}]}


def events_json(evs: list) -> dict:
    items = [{"time": t, "level": lv, "source": src, "message": msg} for t, lv, src, msg in evs]
    items.sort(key=lambda e: e["time"], reverse=True)
    return {"total": len(items), "limit": 100, "offset": 0, "order": "desc", "events": items}


def scenario_wire(name: str) -> dict[str, Any]:
    """Wire JSON of one scenario: {job, stages, events, preview, pool, nodes} for parser tests."""
    s = scenarios()[name]
    jid = s["job"]["metadata"]["id"]
    log = s["log"]
    return {
        "job": copy.deepcopy(s["job"]),
        "stages": stages_json(jid, s["stages"]),
        "events": events_json(s["events"]),
        "preview": {"content": log, "current_size": len(log), "full_size": len(log)}
        if log is not None
        else None,
    }


def verify_signature(
    method: str, raw_path: str, headers: dict, body: bytes, sk: str
) -> tuple[bool, str]:
    """Recompute the SDK-HMAC-SHA256 signature (huaweicloudsdkcore/signer/signer.py)."""
    auth = headers.get("Authorization", "")
    m = re.fullmatch(
        r"SDK-HMAC-SHA256 Access=([^,]+), SignedHeaders=([^,]+), Signature=([0-9a-f]{64})", auth
    )
    if not m:
        return False, "missing or malformed Authorization"
    _ak, signed, sig = m.groups()
    split = urlsplit(raw_path)
    uri = "/".join(quote(s, safe="~") for s in unquote(split.path).split("/"))
    uri = uri if uri.endswith("/") else uri + "/"
    lower = {k.lower(): v for k, v in headers.items()}
    canon = "".join(f"{h}:{lower.get(h, '').strip()}\n" for h in signed.split(";"))
    payload = lower.get("x-sdk-content-sha256") or (
        hashlib.sha256(body).hexdigest() if body else EMPTY_SHA256
    )
    creq = "\n".join([method, uri, split.query, canon, signed, payload])
    sts = (
        f"SDK-HMAC-SHA256\n{lower.get('x-sdk-date', '')}\n"
        f"{hashlib.sha256(creq.encode()).hexdigest()}"
    )
    want = hmac.new(sk.encode(), sts.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(want, sig), "verify aksk signature fail"


class ModelArtsServer:
    """ThreadingHTTPServer on 127.0.0.1:<ephemeral> speaking the v2 API (see module doc)."""

    def __init__(
        self,
        fixtures: dict | None = None,
        *,
        require_signature: bool = True,
        ak: str = AK,
        sk: str = SK,
        project_id: str = PROJECT_ID,
        timeout_sleep_s: float = 1.5,
    ) -> None:
        self.fx = fixtures or default_fixtures()
        self.require_signature, self.ak, self.sk, self.project_id = (
            require_signature,
            ak,
            sk,
            project_id,
        )
        self.requests: list[tuple[str, str]] = []  # (method, path)
        self._inject: list[tuple[re.Pattern[str], Any, Any, dict]] = []
        self.timeout_sleep_s = timeout_sleep_s
        self._lock = threading.Lock()
        self._srv: ThreadingHTTPServer | None = None

    def start(self) -> ModelArtsServer:
        srv = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:
                srv._handle(self, "GET")

            def do_POST(self) -> None:
                srv._handle(self, "POST")

        self._srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self._srv.daemon_threads = True
        threading.Thread(target=self._srv.serve_forever, daemon=True).start()
        return self

    @property
    def base_url(self) -> str:
        assert self._srv is not None
        return f"http://127.0.0.1:{self._srv.server_address[1]}"

    def stop(self) -> None:
        if self._srv is not None:
            self._srv.shutdown()
            self._srv.server_close()

    def inject(
        self,
        status: int | str,
        body: Any = None,
        *,
        headers: dict | None = None,
        route: str = ".*",
        times: int = 1,
    ) -> None:
        """Fail the next ``times`` requests matching ``route`` (regex on the path after
        /v2/{project}). ``status``: an HTTP status with ``body``, or "timeout" |
        "malformed" | "truncated"."""
        with self._lock:
            for _ in range(times):
                self._inject.append((re.compile(route), status, body, headers or {}))

    def heal(self) -> None:
        with self._lock:
            self._inject.clear()

    # ------------------------------------------------------------------ plumbing

    def _raw(
        self,
        h: BaseHTTPRequestHandler,
        status: int,
        data: bytes,
        headers: dict | None = None,
        length: int | None = None,
    ) -> None:
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("X-Request-Id", uuid.uuid4().hex)
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(data) if length is None else length))
            if length is not None:
                h.send_header("Connection", "close")
                h.close_connection = True
            h.end_headers()
            h.wfile.write(data)
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(
        self, h: BaseHTTPRequestHandler, status: int, obj: Any, headers: dict | None = None
    ) -> None:
        self._raw(h, status, json.dumps(obj).encode(), headers)

    def _err(self, h: BaseHTTPRequestHandler, status: int, code: str, msg: str) -> None:
        self._send(h, status, {"error_code": code, "error_msg": msg})

    def _take(self, route: str) -> tuple[Any, Any, dict] | None:
        with self._lock:
            for i, (rx, status, body, headers) in enumerate(self._inject):
                if rx.search(route):
                    del self._inject[i]
                    return status, body, headers
        return None

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        body = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        self.requests.append((method, h.path))
        if self.require_signature:
            ok, why = verify_signature(method, h.path, dict(h.headers), body, self.sk)
            if not ok or f"Access={self.ak}," not in h.headers.get("Authorization", ""):
                return self._err(
                    h, 401, "APIGW.0301", f"Incorrect IAM authentication information: {why}"
                )
        split = urlsplit(h.path)
        m = re.fullmatch(r"/v2/([^/]+)(/.*)", split.path)
        if not m or m.group(1) != self.project_id:
            return self._err(
                h,
                404,
                "APIGW.0101",
                "The API does not exist or has not been published in the environment",
            )
        route = m.group(2)
        fail = self._take(route)
        if fail is not None:
            status, fbody, headers = fail
            if status == "timeout":
                time.sleep(self.timeout_sleep_s)
            elif status == "malformed":
                return self._raw(h, 200, b"<html>502 Bad Gateway</html>")
            elif status == "truncated":
                return self._raw(
                    h, 200, b'{"total": 3, "items": [{"kind": "job", "meta', length=4096
                )
            else:
                return self._send(h, int(status), fbody if fbody is not None else {}, headers)
        self._route(h, method, route, dict(parse_qsl(split.query)), body)

    def _route(
        self, h: BaseHTTPRequestHandler, method: str, route: str, q: dict, body: bytes
    ) -> None:
        fx = self.fx
        if method == "POST" and route == "/training-job-searches":
            req = json.loads(body or b"{}")
            limit, offset = int(req.get("limit", 10)), int(req.get("offset", 0))
            items = sorted(fx["jobs"].values(), key=lambda j: -j["metadata"]["create_time"])
            for f in req.get("filters") or []:
                # the documented `phase in [...]`; other keys/operators are not served here
                if f.get("key") != "phase" or f.get("operator") != "in":
                    return self._err(h, 400, "ModelArts.50004000", "Bad request.")
                wanted = set(f.get("value") or [])
                items = [j for j in items if j["status"].get("phase") in wanted]
            page = items[offset * limit : (offset + 1) * limit]  # page index, per the API reference
            return self._send(
                h,
                200,
                {
                    "total": len(items),
                    "count": len(page),
                    "limit": limit,
                    "offset": offset,
                    "sort_by": "create_time",
                    "order": "desc",
                    "items": page,
                },
            )
        jm = re.fullmatch(r"/training-jobs/([^/]+)(/.*)?", route)
        if method == "POST" and jm and jm.group(2) == "/actions":
            # StopTrainingJob: only jobs creating, pending or running can be stopped
            jid = jm.group(1)
            if jid not in fx["jobs"]:
                return self._err(h, 404, "ModelArts.2762", f"Training job {jid} not found.")
            action = json.loads(body or b"{}").get("action_type")
            status = fx["jobs"][jid].setdefault("status", {})
            if action != "terminate":
                return self._err(h, 400, "ModelArts.2763", f"unknown action_type {action!r}")
            if status.get("phase") not in ("Creating", "Pending", "Running"):
                return self._err(
                    h, 400, "ModelArts.2763", f"Job in phase {status.get('phase')} cannot stop."
                )
            status["phase"] = status["secondary_phase"] = "Terminating"
            return self._send(h, 200, {"kind": "job", "metadata": {"id": jid}, "status": status})
        if method == "GET" and jm:
            jid, sub = jm.group(1), jm.group(2) or ""
            if jid not in fx["jobs"]:
                return self._err(h, 404, "ModelArts.2762", f"Training job {jid} not found.")
            if sub == "":
                return self._send(h, 200, fx["jobs"][jid])
            if sub == "/events":
                return self._send(h, 200, events_json(fx["events"].get(jid, [])))
            if sub == "/stages":
                return self._send(h, 200, stages_json(jid, fx["stages"].get(jid, [])))
            lm = re.fullmatch(r"/tasks/([^/]+)/logs/preview", sub)
            if lm:
                text = fx["logs"].get(jid, "")
                return self._send(
                    h,
                    200,
                    {
                        "content": text,
                        "current_size": len(text.encode()),
                        "full_size": len(text.encode()),
                    },
                )
        if method == "GET" and route == "/pools":
            return self._send(
                h, 200, {"apiVersion": "v2", "kind": "PoolList", "items": fx["pools"]}
            )
        nm = re.fullmatch(r"/pools/([^/]+)/nodes", route)
        if method == "GET" and nm:
            if nm.group(1) not in fx["nodes"]:
                return self._err(h, 404, "ModelArts.50015001", f"Pool {nm.group(1)} not found.")
            return self._send(
                h,
                200,
                {
                    "apiVersion": "v2",
                    "kind": "NodeList",
                    "metadata": {"continue": "", "remainingItemCount": 0},
                    "items": fx["nodes"][nm.group(1)],
                },
            )
        if method == "GET" and route == "/training-pool-flavors":
            return self._send(h, 200, {"cpu_core_num": 32, "mem_size": 256})
        return self._err(h, 400, "ModelArts.50004000", "Bad request.")
