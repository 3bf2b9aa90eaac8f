"""The demo's simulated ModelArts project as wire JSON: what the ModelArts API would answer.

Shapes follow ``docs/modelarts-api.md`` (what ``resp.to_json_object()`` returns with
huaweicloudsdkmodelarts 3.1.219). The jobs and pools themselves are in
:mod:`cockpit.demo.modelarts_jobs`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from cockpit.demo.modelarts_jobs import CST, FLAVORS, MaJob, build_jobs, build_pools


class ModelArtsProject:
    """Answers the ModelArtsApi calls for an instant ``t`` (seconds after ``start``)."""

    def __init__(self, start: datetime) -> None:
        self.start = start
        self.jobs = build_jobs()
        self.by_id = {j.job_id: j for j in self.jobs}
        self.pools = build_pools()

    def _ms(self, t: float) -> int:
        return int((self.start + timedelta(seconds=t)).timestamp() * 1000)

    def _iso(self, t: float) -> str:
        return (self.start + timedelta(seconds=t)).astimezone(CST).isoformat(timespec="seconds")

    def visible(self, t: int) -> list[MaJob]:
        return sorted((j for j in self.jobs if j.created <= t), key=lambda j: -j.created)

    def job_json(self, j: MaJob, t: int) -> dict:
        _, phase, secondary = j.phase_at(t) or (0, "Creating", "Creating")
        run_start = next((p[0] for p in j.phases if p[1] == "Running" and p[0] <= t), None)
        ended = next(
            (p[0] for p in j.phases if p[1] in ("Failed", "Completed") and p[0] <= t), None
        )
        duration = (
            0 if run_start is None else ((ended if ended is not None else t) - run_start) * 1000
        )
        cpus, gpus, mem_gb, product = FLAVORS.get(j.flavor, (8, 1, 64, "NVIDIA-A100"))
        pool_name = self.pools[j.pool][0] if j.pool in self.pools else ""
        statuses = []
        if ended is not None and j.exit_code is not None:
            statuses = [{"task": "worker-0", "exit_code": j.exit_code, "message": j.exit_message}]
        tasks = [f"worker-{i}" for i in range(j.nodes)]
        status = {
            "phase": phase,
            "secondary_phase": secondary,
            "duration": duration,
            "start_time": self._ms(run_start) if run_start is not None else 0,
            "tasks": tasks,
            "node_count_metrics": [],
            "task_statuses": statuses,
        }
        if run_start is not None:
            rec = {"start_at": self._ms(run_start) // 1000, "start_type": "init_or_rescheduled"}
            if ended is not None:
                rec |= {
                    "end_at": self._ms(ended) // 1000,
                    "end_reason": f"exit with {j.exit_code}" if j.exit_code else "completed",
                }
            status["running_records"] = [rec]
        return {
            "kind": "job",
            "metadata": {
                "id": j.job_id,
                "name": j.name,
                "workspace_id": "0",
                "description": "",
                "create_time": self._ms(j.created),
                "user_name": j.user,
                "annotations": {},
            },
            "status": status,
            "algorithm": {
                "command": j.command,
                "code_dir": "/ml-code/train/",
                "boot_file": "",
                "parameters": [{"name": k, "value": v} for k, v in j.params],
                "inputs": [
                    {"name": n, "remote": {"obs": {"obs_url": u}}, "local_dir": d}
                    for n, u, d in j.inputs
                ],
                "outputs": [
                    {"name": n, "remote": {"obs": {"obs_url": u}}, "local_dir": d}
                    for n, u, d in j.outputs
                ],
                "engine": {"image_url": j.image},
            },
            "spec": {
                "resource": {
                    "policy": "regular",
                    "flavor_id": j.flavor,
                    "flavor_name": j.flavor,
                    "node_count": j.nodes,
                    "pool_id": j.pool,
                    "pool_name": pool_name,
                    "flavor_detail": {
                        "flavor_type": "GPU" if gpus else "CPU",
                        "flavor_info": {
                            "cpu": {"arch": "x86", "core_num": cpus},
                            **(
                                {
                                    "gpu": {
                                        "unit_num": gpus,
                                        "product_name": product,
                                        "memory": "80GB",
                                    }
                                }
                                if gpus
                                else {}
                            ),
                            "memory": {"size": mem_gb, "unit": "GB"},
                        },
                    },
                },
                "volumes": list(j.volumes),
                "log_export_path": {"obs_url": f"/ml-logs/{j.name}/"},
            },
        }

    def events_json(self, j: MaJob, t: int) -> dict:
        evs = [
            {"time": self._iso(at), "level": lv, "source": src, "message": msg}
            for at, lv, src, msg in j.events
            if at <= t
        ]
        evs.reverse()  # newest first, the API's default order (desc)
        return {"total": len(evs), "limit": 50, "offset": 0, "order": "desc", "events": evs[:50]}

    def stages_json(self, j: MaJob, t: int) -> dict:
        stages = []
        for i, (name, s, e) in enumerate(j.stages):
            if s > t:
                break
            open_ = e is None or e > t
            start = self._iso(s)
            stages.append(
                {
                    "job_id": j.job_id,
                    "name": name,
                    "en_message": _STAGE_TEXT.get(name, name),
                    "zh_message": "",
                    "stage_order": i + 1,
                    "start_time": start,
                    "end_time": "" if open_ else self._iso(e or s),
                    "sub_stages": [
                        {"name": sub, "en_message": sub, "zh_message": "", "create_time": start}
                        for sub in j.extra.get("sub_stages", {}).get(name, ())
                    ],
                }
            )
        return {"total_count": 1, "running_records": [{"record_order": 1, "stages": stages}]}

    def preview_json(self, j: MaJob, t: int) -> dict:
        # a stamp only where the line has one: formatting one per line was ~12 ms per preview,
        # on the event loop (the demo's API answers there)
        text = "".join(
            (line.replace("{ts}", self._iso(at)) if "{ts}" in line else line) + "\n"
            for at, line in j.log
            if at <= t
        )
        size = len(text.encode())
        return {"content": text, "current_size": size, "full_size": size}

    def pools_json(self) -> dict:
        items = []
        for pid, (name, flavor, nodes) in self.pools.items():
            ok = sum(1 for n in nodes if n.phase == "Available")
            bad = len(nodes) - ok
            resources = {"available": {"flavor": flavor, "count": ok, "maxCount": len(nodes)}}
            if bad:
                resources["abnormal"] = {"flavor": flavor, "count": bad, "maxCount": len(nodes)}
            items.append(
                {
                    "apiVersion": "v2",
                    "kind": "Pool",
                    "metadata": {
                        "name": pid,
                        "creationTimestamp": "2026-09-01T03:49:41Z",
                        "labels": {"os.modelarts/name": name, "os.modelarts/workspace.id": "0"},
                    },
                    "spec": {
                        "type": "Dedicate",
                        "scope": ["Train"],
                        "resources": [
                            {"flavor": flavor, "count": len(nodes), "maxCount": len(nodes)}
                        ],
                    },
                    "status": {
                        "phase": "Running",
                        "message": "",
                        "resources": resources,
                        "scope": [{"scopeType": "Train", "state": "Enabled"}],
                    },
                }
            )
        return {"apiVersion": "v2", "kind": "PoolList", "items": items}

    def nodes_json(self, pool_id: str) -> dict | None:
        if pool_id not in self.pools:
            return None
        _, flavor, nodes = self.pools[pool_id]
        items = [
            {
                "apiVersion": "v2",
                "kind": "Node",
                "metadata": {
                    "name": n.name,
                    "creationTimestamp": "2026-09-01T04:00:00Z",
                    "labels": {"os.modelarts.node/nodepool": f"{pool_id}-default"},
                },
                "spec": {"flavor": flavor},
                "status": {
                    "phase": n.phase,
                    "az": "cn-north-4a",
                    "privateIp": n.ip,
                    "resources": {
                        "cpu": str(n.cpu),
                        "memory": f"{n.mem_gi}Gi",
                        "nvidia.com/gpu": str(n.gpus),
                    },
                    "availableResources": {
                        "cpu": str(n.free_cpu),
                        "memory": f"{n.free_mem_gi}Gi",
                        "nvidia.com/gpu": str(n.free_gpus),
                    },
                },
            }
            for n in nodes
        ]
        return {
            "apiVersion": "v2",
            "kind": "NodeList",
            "metadata": {"continue": "", "remainingItemCount": 0},
            "items": items,
        }

    def max_available(self, flavor_id: str, pool_id: str) -> dict:
        """Largest amount of the flavor one node can still host (0 in the full public pool)."""
        if pool_id in self.pools:
            nodes = [n for n in self.pools[pool_id][2] if n.phase == "Available"]
            best = max(nodes, key=lambda n: (n.free_gpus, n.free_cpu), default=None)
            return {
                "cpu_core_num": best.free_cpu if best else 0,
                "mem_size": best.free_mem_gi if best else 0,
            }
        return {"cpu_core_num": 0, "mem_size": 0}


_STAGE_TEXT = {
    "scheduling": "Job scheduling",
    "preparing": "Environment preparing",
    "running": "Job running",
    "end": "Job ended",
}
