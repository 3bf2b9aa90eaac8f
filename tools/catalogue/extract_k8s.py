"""Kubernetes, Volcano and Kueue messages into cockpit/diagnosis/catalogue/.

Writes kube.json (curated, below), volcano.json and kueue.json.

    python3 tools/catalogue/extract_k8s.py --volcano volcano.git --kueue kueue.git

Reads bare git mirrors (``fetch github:volcano-sh/volcano``, ``github:kubernetes-sigs/kueue``)
at the last tag of each minor release operators run (Volcano 1.8-1.15, Kueue 0.12-0.19) and
collects the Go format strings of what an operator reads on a PodGroup, a Workload or a Pod
(``kubectl describe`` events and conditions, ``vcctl``): ``fmt.Sprintf``/``fmt.Errorf``/
``errors.New``, ``Event``/``Eventf``/``RecordPodGroupEvent`` messages and message constants
of the schedulers, their plugins and the job/workload controllers, kept when they say why
something does not run (quota, resources, gang, preemption, eviction, an inactive queue).
Controller-internal errors (``failed to update/get/list/patch ...``) are left out: they stay
in the controller's own log.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import entry, git, show_many, specific_enough, write  # noqa: E402
from mapping import GENERIC, REMEDY  # noqa: E402

VOLCANO_SERIES = [f"1.{n}" for n in range(8, 16)]
KUEUE_SERIES = [f"0.{n}" for n in range(12, 20)]
VOLCANO_DIRS = (
    "pkg/scheduler",
    "pkg/controllers/job",
    "pkg/controllers/podgroup",
    "pkg/controllers/queue",
)
KUEUE_DIRS = (
    "pkg/scheduler",
    "pkg/workload",
    "pkg/controller/core",
    "pkg/cache",
    "pkg/controller/jobframework",
    "pkg/controller/tas",
    "apis/kueue",
)

_CALL = re.compile(
    r"\b(?:fmt\.Sprintf|fmt\.Errorf|errors\.New|\.Eventf?|RecordPodGroupEvent|\.appendf|\.WriteString|"
    r"UnsetQuotaReservationWithCondition|SetEvictedCondition|SetPreemptedCondition)\s*\("
)
_CONST = re.compile(r"\b\w*(?:Message|Msg|Format|Reason\w*Message)\w*\s*=\s*\"")
_GO_STR = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`([^`]*)`')
# what an operator is told about a job that does not run
USER = re.compile(
    r"(?i)quota|insufficient|not enough|unschedulable|gang|minavailable|min available|"
    r"preempt|evict|inactive|exceed|didn't fit|does not fit|doesn't fit|couldn't|could not "
    r"assign|no (?:available|feasible|suitable)|nodes? (?:are|is) (?:not )?available|"
    r"pending|not ready|overused|capacity|borrow|flavor|admission check|unhealthy node|"
    r"fail(?:ed)? to schedul|not (?:be )?schedul|deadline|maximum execution time|"
    r"resources? (?:are|is) not|idle|request"
)
INTERNAL = re.compile(
    r"(?i)failed to (?:update|get|list|patch|parse|calculate|construct|remove|add|delete|"
    r"create|convert|marshal|unmarshal|sync|apply|read|find|extract|set|build|decode|encode|"
    r"clear|compute|load|start|register|watch|retrieve|check|configure)|webhook|annotation|"
    r"kubeconfig|finalizer|\bcache\b|snapshot|informer|lister|debug|must be|should not|"
    r"can not be|cannot be|invalid|unknown|unsupported|is nil|nil |index|"
    # debug dumps, test cases, metrics queries, scripts: never an event an operator reads
    r"case %d|want:|avg_over_time|\becho |retry count|in session|orphaned|convert to|"
    r"^Job ?\(|^Node \(|idle\(%s\)|^get\w+|^select\w+|^\[capacity\]|"
    # success and progress notes (Normal events)
    r"^Quota reserved|cleared|^Admitted|waiting for quota reservation"
)
_SKIP_PATH = re.compile(r"(?i)test|fake|mock|metrics|/e2e/|example")

_NO_QUOTA = (
    "The queue's quota (ClusterQueue nominal quota / Volcano queue capability) is used up: "
    "the job waits until other jobs of the queue end, or an admin raises the quota or lets "
    "it borrow from the cohort."
)
_NO_ROOM = (
    "The cluster has no room for the whole job (all pods of a gang together): free nodes, a "
    "smaller request (GPUs/NPUs per pod, replicas) or wait; kubectl describe node shows what "
    "is allocatable."
)
_PREEMPT = (
    "A job of higher priority took its resources: resubmit it (or let the framework requeue "
    "it) and use a priority class that is not preemptible if it must not stop."
)
_INACTIVE = (
    "The queue it was submitted to is not active (stopped, closed, or missing its flavors "
    "or admission checks): kubectl describe clusterqueue/queue names why; an admin opens it."
)
RULES: tuple[tuple[str, str, str, str], ...] = (
    (r"(?i)preempt", "scheduler", "preempted", ""),
    (r"(?i)inactive|is closed|closing|not open", "scheduler", GENERIC, _INACTIVE),
    (
        r"(?i)quota|overused|nominal|borrow|capability|deserved|guarantee",
        "scheduler",
        "queued_quota_limit",
        "",
    ),
    (r"(?i)maximum execution time|deadline|time ?limit", "time", "time_limit", ""),
    (
        r"(?i)unhealthy node|node failure|node(?:s)? (?:not ready|lost)",
        "node",
        "node_not_responding",
        "",
    ),
    (r"(?i)evict", "node", GENERIC, REMEDY["node"]),
    (
        r"(?i)insufficient|not enough|gang unschedulable|minavailable|min available|"
        r"didn't fit|does not fit|doesn't fit|no (?:available|feasible|suitable)|"
        r"can possibly be assigned|resources? (?:are|is) not",
        "scheduler",
        "queued_insufficient_resources",
        "",
    ),
    (r"(?i)taint|affinity|selector|topology", "scheduler", "scheduling_constraint_unsatisfied", ""),
)
_RULES = tuple((re.compile(rx), d, lab, rem) for rx, d, lab, rem in RULES)


def go_template(s: str) -> str:
    """A Go format string as a printf template: %v, %+v, %#v, %q, %w, %T print free text."""
    s = s.replace("\\n", " ").replace('\\"', '"').replace("\\t", " ")
    return re.sub(r"%[-+# 0]*\d*(?:\.\d+)?[vqwT]", "%s", s).strip()


def literals(src: str, pos: int) -> list[str]:
    """The string literals among the arguments of the call whose '(' ends at ``pos``."""
    out, depth, i, n = [], 1, pos, len(src)
    while i < n and depth:
        c = src[i]
        if c in '"`':
            m = _GO_STR.match(src, i)
            if not m:
                break
            out.append(m.group(1) if m.group(1) is not None else m.group(2))
            i = m.end()
            continue
        depth += {"(": 1, ")": -1}.get(c, 0)
        i += 1
    return out


def go_messages(src: str):
    """(template, line) of each user-facing message in one Go file."""
    for m in _CALL.finditer(src):
        lits = [s for s in literals(src, m.end()) if s.count(" ") >= 2]
        if lits:
            yield lits[0], src.count("\n", 0, m.start()) + 1
    for m in _CONST.finditer(src):
        got = _GO_STR.match(src, m.end() - 1)
        if got and got.group(1) and got.group(1).count(" ") >= 2:
            yield got.group(1), src.count("\n", 0, m.start()) + 1


def last_tags(mirror: str, series: list[str]) -> dict[str, str]:
    out: dict[str, tuple[int, str]] = {}
    for tag in git(mirror, "tag", "--list", "v*").split():
        m = re.fullmatch(r"v(\d+\.\d+)\.(\d+)", tag)
        if m and m.group(1) in series:
            if m.group(1) not in out or int(m.group(2)) > out[m.group(1)][0]:
                out[m.group(1)] = (int(m.group(2)), tag)
    return {k: out[k][1] for k in series if k in out}


def map_message(template: str) -> tuple[str, str, str]:
    for rx, domain, label, remedy in _RULES:
        if rx.search(template):
            return domain, label, remedy
    return (
        "scheduler",
        GENERIC,
        REMEDY["scheduler"].replace(
            "slurmctld.log around the time; scontrol show job <id> for the job's view.",
            "kubectl describe on the job, its PodGroup/Workload and its pods: the events say why.",
        ),
    )


def extract(mirror: str, series: list[str], dirs: tuple[str, ...], repo: str, program: str):
    tags = last_tags(mirror, series)
    found: dict[str, dict] = {}
    for ver, tag in tags.items():
        names = git(mirror, "ls-tree", "-r", "--name-only", tag, "--", *dirs).split()
        refs = [f"{tag}:{n}" for n in names if n.endswith(".go") and not _SKIP_PATH.search(n)]
        for ref, src in show_many(mirror, refs).items():
            path = ref.split(":", 1)[1]
            for raw, line in go_messages(src):
                template = go_template(raw)
                origin = f"{repo} {tag}: {path}:{line}"
                e = found.get(template)
                if e is not None:
                    if ver not in e["versions"]:
                        e["versions"].append(ver)
                    e["origin"] = origin
                    continue
                if not re.match(r"[A-Za-z%]", template) or "\n" in raw:
                    continue  # a fragment appended to another message, or a script
                if not specific_enough(template, 18) or not USER.search(template):
                    continue
                if INTERNAL.search(template):
                    continue
                domain, label, remedy = map_message(template)
                if label != GENERIC and not remedy:
                    remedy = {
                        "queued_quota_limit": _NO_QUOTA,
                        "queued_insufficient_resources": _NO_ROOM,
                        "preempted": _PREEMPT,
                    }.get(label, "")
                e = entry(template, "warning", origin, [ver], domain, label, remedy)
                found[template] = e | {"program": program}
    return tags, list(found.values())


# Kubernetes itself (kubelet, kube-scheduler, the node lifecycle and Job controllers): the
# repository is too large to mirror here, so its event messages are curated, each with the
# file that prints it; they read the same in 1.27-1.32 (the scheduler's "0/N nodes are
# available" counts each reason below it).
KUBE_V = ["1.27", "1.28", "1.29", "1.30", "1.31", "1.32"]
_SCHED = "pkg/scheduler/framework/plugins/"
_EVICT = (
    "The kubelet evicted the pod because its node ran short (memory, disk, PIDs): give the pod "
    "requests close to its real use and ephemeral-storage limits, keep big files on a volume, "
    "and clean the node's disk."
)
_PROBE = (
    "The container's health check failed (the kubelet restarts it after a failed liveness "
    "probe): a process that is busy (loading, checkpointing) needs a longer initialDelaySeconds "
    "/ timeoutSeconds, else read the container's log before the restart."
)
_SANDBOX = (
    "The node's container runtime or network plugin could not set the pod up: kubectl describe "
    "node and the runtime's log (journalctl -u containerd / kubelet) on that node."
)
KUBE: list[tuple[str, str, str, str, str]] = [
    (
        "0/%s nodes are available: %s.",
        "pkg/scheduler/framework/types.go",
        "scheduler",
        GENERIC,  # the reasons after it decide ("3 Insufficient nvidia.com/gpu", a taint)
        "The reasons after the count say why each node was refused: kubectl describe node "
        "for what is allocatable, the pod's requests, nodeSelector and tolerations.",
    ),
    (
        "node(s) didn't match Pod's node affinity/selector",
        _SCHED + "nodeaffinity/node_affinity.go",
        "scheduler",
        "scheduling_constraint_unsatisfied",
        "",
    ),
    (
        "node(s) had untolerated taint {%s: %s}",
        _SCHED + "tainttoleration/taint_toleration.go",
        "scheduler",
        "scheduling_constraint_unsatisfied",
        "",
    ),
    (
        "node(s) were unschedulable",
        _SCHED + "nodeunschedulable/node_unschedulable.go",
        "scheduler",
        "scheduling_constraint_unsatisfied",
        "",
    ),
    (
        "node(s) didn't have free ports for the requested pod ports",
        _SCHED + "nodeports/node_ports.go",
        "scheduler",
        "scheduling_constraint_unsatisfied",
        "",
    ),
    (
        "node(s) didn't match pod topology spread constraints",
        _SCHED + "podtopologyspread/filtering.go",
        "scheduler",
        "scheduling_constraint_unsatisfied",
        "",
    ),
    (
        "node(s) didn't match pod affinity rules",
        _SCHED + "interpodaffinity/filtering.go",
        "scheduler",
        "scheduling_constraint_unsatisfied",
        "",
    ),
    (
        "node(s) didn't match pod anti-affinity rules",
        _SCHED + "interpodaffinity/filtering.go",
        "scheduler",
        "scheduling_constraint_unsatisfied",
        "",
    ),
    (
        "pod has unbound immediate PersistentVolumeClaims",
        _SCHED + "volumebinding/volume_binding.go",
        "storage",
        "storage_mount_failed",
        "",
    ),
    (
        "node(s) had volume node affinity conflict",
        _SCHED + "volumebinding/volume_binding.go",
        "scheduler",
        "scheduling_constraint_unsatisfied",
        "",
    ),
    (
        "node(s) exceed max volume count",
        _SCHED + "nodevolumelimits/csi.go",
        "scheduler",
        "queued_insufficient_resources",
        _NO_ROOM,
    ),
    (
        "Back-off restarting failed container %s in pod %s",
        "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
        "image",
        GENERIC,
        "The container keeps exiting at start (CrashLoopBackOff): its log before the restart "
        "(kubectl logs --previous) says why; exit 127/126 is a missing command.",
    ),
    (
        "Failed to pull image %s: %s",
        "pkg/kubelet/images/image_manager.go",
        "image",
        "image_pull_failed",
        "",
    ),
    (
        "Back-off pulling image %s",
        "pkg/kubelet/images/image_manager.go",
        "image",
        "image_pull_failed",
        "",
    ),
    (
        "Container image %s is not present with pull policy of Never",
        "pkg/kubelet/images/image_manager.go",
        "image",
        "image_pull_failed",
        "",
    ),
    (
        "MountVolume.SetUp failed for volume %s : %s",
        "pkg/volume/util/operationexecutor/operation_generator.go",
        "storage",
        "storage_mount_failed",
        "",
    ),
    (
        "Unable to attach or mount volumes: unmounted volumes=%s, unattached volumes=%s",
        "pkg/kubelet/volumemanager/volume_manager.go",
        "storage",
        "storage_mount_failed",
        "",
    ),
    (
        "Multi-Attach error for volume %s Volume is already exclusively attached to one node and "
        "can't be attached to another",
        "pkg/controller/volume/attachdetach/reconciler/reconciler.go",
        "storage",
        "storage_mount_failed",
        "",
    ),
    (
        "AttachVolume.Attach failed for volume %s : %s",
        "pkg/volume/util/operationexecutor/operation_generator.go",
        "storage",
        "storage_mount_failed",
        "",
    ),
    ("Liveness probe failed: %s", "pkg/kubelet/prober/prober.go", "application", GENERIC, _PROBE),
    ("Readiness probe failed: %s", "pkg/kubelet/prober/prober.go", "application", GENERIC, _PROBE),
    ("Startup probe failed: %s", "pkg/kubelet/prober/prober.go", "application", GENERIC, _PROBE),
    (
        "Container %s failed liveness probe, will be restarted",
        "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
        "application",
        GENERIC,
        _PROBE,
    ),
    (
        "The node was low on resource: %s.",
        "pkg/kubelet/eviction/helpers.go",
        "node",
        "pod_evicted",
        "",
    ),
    ("The node had condition: %s.", "pkg/kubelet/eviction/helpers.go", "node", "pod_evicted", ""),
    (
        "Pod ephemeral local storage usage exceeds the total limit of containers %s.",
        "pkg/kubelet/eviction/helpers.go",
        "node",
        "pod_evicted",
        "",
    ),
    (
        "Usage of EmptyDir volume %s exceeds the limit %s.",
        "pkg/kubelet/eviction/helpers.go",
        "node",
        "pod_evicted",
        "",
    ),
    (
        "Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
        "pkg/kubelet/lifecycle/predicate.go",
        "scheduler",
        "queued_insufficient_resources",
        _NO_ROOM,
    ),
    (
        "Allocate failed due to %s, which is unexpected",
        "pkg/kubelet/cm/devicemanager/manager.go",
        "accelerator",
        "gpu_not_available",
        "",
    ),
    (
        "Pod was terminated in response to imminent node shutdown.",
        "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go",
        "node",
        "node_not_responding",
        "",
    ),
    (
        "Failed to create pod sandbox: %s",
        "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
        "image",
        GENERIC,
        _SANDBOX,
    ),
    (
        "Pod sandbox changed, it will be killed and re-created.",
        "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
        "node",
        GENERIC,
        _SANDBOX,
    ),
    (
        "Marking for deletion Pod %s from Node %s",
        "pkg/controller/tainteviction/taint_eviction.go",
        "node",
        "node_not_responding",
        "",
    ),
    (
        "Node %s status is now: NodeNotReady",
        "pkg/kubelet/kubelet_node_status.go",
        "node",
        "node_not_responding",
        "",
    ),
    (
        "PLEG is not healthy: pleg was last seen active %s ago; threshold is %s",
        "pkg/kubelet/kubelet.go, pkg/kubelet/pleg/generic.go",
        "node",
        "node_not_responding",
        "",
    ),
    (
        "couldn't find key %s in Secret %s/%s",
        "pkg/kubelet/kubelet_pods.go",
        "image",
        "container_entrypoint_failed",
        "",
    ),
    (
        "couldn't find key %s in ConfigMap %s/%s",
        "pkg/kubelet/kubelet_pods.go",
        "image",
        "container_entrypoint_failed",
        "",
    ),
    (
        "exceeded quota: %s, requested: %s, used: %s, limited: %s",
        "staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go",
        "scheduler",
        "queued_quota_limit",
        "",
    ),
    (
        "Job has reached the specified backoff limit",
        "pkg/controller/job/job_controller.go",
        "application",
        GENERIC,
        "Every retry of the Job's pod failed: the first failed pod's "
        "log (kubectl logs job/<name> --previous) has the cause.",
    ),
    (
        "Job was active longer than specified deadline",
        "pkg/controller/job/job_controller.go",
        "time",
        "time_limit",
        "",
    ),
]


def kube_entries() -> list[dict]:
    out = []
    for template, path, domain, label, remedy in KUBE:
        e = entry(
            template, "warning", f"kubernetes/kubernetes: {path}", KUBE_V, domain, label, remedy
        )
        out.append(e | {"program": "kube"})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--volcano", required=True, help="bare mirror of github.com/volcano-sh/volcano")
    ap.add_argument("--kueue", required=True, help="mirror of github.com/kubernetes-sigs/kueue")
    args = ap.parse_args()
    gen = "tools/catalogue/extract_k8s.py"
    meta = {
        "source": "kube",
        "upstream": "https://github.com/kubernetes/kubernetes",
        "versions": dict.fromkeys(KUBE_V, "release"),
        "generator": gen,
        "curated": True,
    }
    print(len(KUBE), "templates;", write("kube", meta, kube_entries()))
    for source, mirror, series, dirs, repo in (
        ("volcano", args.volcano, VOLCANO_SERIES, VOLCANO_DIRS, "volcano-sh/volcano"),
        ("kueue", args.kueue, KUEUE_SERIES, KUEUE_DIRS, "kubernetes-sigs/kueue"),
    ):
        tags, entries = extract(mirror, series, dirs, repo, source)
        meta = {
            "source": source,
            "upstream": f"https://github.com/{repo}",
            "versions": tags,
            "generator": gen,
        }
        print(len(entries), "templates;", write(source, meta, entries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
