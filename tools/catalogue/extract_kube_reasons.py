"""Kubernetes' event and pod-status reasons into cockpit/diagnosis/catalogue/kube_reasons.json.

    python3 tools/catalogue/extract_kube_reasons.py --kubeedge kubeedge.git

A pod says why it is stuck or dead through a closed set of reasons: the kubelet's and the
scheduler's event reasons (``Warning  FailedMount``, ``Warning  FailedScheduling`` in
``kubectl describe`` / ``kubectl get events``) and the container and pod status reasons
(``ImagePullBackOff``, ``CrashLoopBackOff``, ``CreateContainerConfigError``, ``OOMKilled``,
``Evicted`` in ``kubectl get pods``). The kubernetes repository is too large to mirror here, so
they are read from the kubelet and scheduler sources KubeEdge vendors (``fetch
github:kubeedge/kubeedge``: ``vendor/k8s.io/kubernetes/...``), whose ``vendor/modules.txt``
names the Kubernetes release, at the last tag of each KubeEdge minor release: Kubernetes
1.27-1.32. Collected: the ``const`` reasons of ``pkg/kubelet/events/event.go``, the
``errors.New("Reason")`` of the image manager, the runtime and sync results, the eviction and
active-deadline reasons, the scheduler's ``EventTypeWarning`` reasons and the Job controller's
(``k8s.io/api/batch/v1``). Normal (progress) reasons are left out; each other reason maps to
a domain and, where the reason alone says it, a cause (:data:`MAP`); a reason found that the
map does not know keeps a domain guessed from its words and the generic label, and is listed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import entry, git, show_many, write  # noqa: E402
from mapping import GENERIC, REMEDY  # noqa: E402

K8S = "vendor/k8s.io/kubernetes/"
FILES = (
    K8S + "pkg/kubelet/events/event.go",
    K8S + "pkg/kubelet/images/types.go",
    K8S + "pkg/kubelet/container/sync_result.go",
    K8S + "pkg/kubelet/container/runtime.go",
    K8S + "pkg/kubelet/kuberuntime/kuberuntime_container.go",
    K8S + "pkg/kubelet/kuberuntime/helpers.go",
    K8S + "pkg/kubelet/eviction/helpers.go",
    K8S + "pkg/kubelet/active_deadline.go",
    K8S + "pkg/scheduler/schedule_one.go",
    K8S + "pkg/scheduler/framework/preemption/preemption.go",
    "vendor/k8s.io/api/batch/v1/types.go",
)
# Name = "Reason" in a const block, X = errors.New("Reason"), reason = "Reason",
# Eventf(obj, ..., v1.EventTypeWarning, "Reason", ...), status.Reason == "Reason"
_CONST = re.compile(r'^\s*(\w+)\s+(?:string\s+)?=\s*(?:errors\.New\()?"([A-Z][A-Za-z]{3,})"', re.M)
_EVENT = re.compile(r'EventType(Warning|Normal),\s*"([A-Z][A-Za-z]{3,})"')
_STATUS = re.compile(r'\.Reason == "([A-Z][A-Za-z]{3,})"')
# progress and informational reasons: never why a pod fails
NORMAL = frozenset(
    "Created Started Killing Pulling Pulled NodeReady NodeSchedulable NodeNotSchedulable "
    "Starting SuccessfulAttachVolume SuccessfulMountVolume VolumeResizeSuccessful "
    "FileSystemResizeSuccessful NodeAllocatableEnforced SandboxChanged ProbeWarning "
    "PossibleMemoryBackedVolumesOnDisk CgroupV1 Shutdown Preempted ResizeDeferred "
    "AlreadyMountedVolume Scheduling SuccessPolicy CompletionsReached".split()
)
_SANDBOX = (
    "The node's container runtime or network plugin could not set the pod up: kubectl describe "
    "node and the runtime's log (journalctl -u containerd / kubelet) on that node."
)
_CRASH = (
    "The container keeps exiting (CrashLoopBackOff): its log before the restart (kubectl logs "
    "--previous) says why; exit 137 is a kill (memory), 127/126 a missing command."
)
_PROBE = (
    "The container's health check failed: a process that is busy (loading, checkpointing) "
    "needs a longer initialDelaySeconds / timeoutSeconds, else read the container's log."
)
_SCHED = (
    "The message after the reason says why each node was refused: kubectl describe node for "
    "what is allocatable, the pod's requests, nodeSelector and tolerations."
)
# reason -> (kind, domain, label, remedy; "" = the label's own). kind "event": a Warning event's
# reason (read after "Warning"); "status": a pod or container status reason (a word of its own)
MAP: dict[str, tuple[str, str, str, str]] = {
    "Failed": ("event", "image", GENERIC, REMEDY["image"]),
    "BackOff": ("event", "image", GENERIC, _CRASH),
    "ExceededGracePeriod": ("event", "application", GENERIC, REMEDY["application"]),
    "Preempting": ("event", "scheduler", "preempted", ""),
    "FailedKillPod": ("event", "node", GENERIC, _SANDBOX),
    "FailedCreatePodContainer": ("event", "node", GENERIC, _SANDBOX),
    "NetworkNotReady": ("event", "node", GENERIC, _SANDBOX),
    "ResizeInfeasible": ("event", "scheduler", "queued_insufficient_resources", ""),
    "InspectFailed": ("event", "image", "image_pull_failed", ""),
    "ErrImageNeverPull": ("status", "image", "image_pull_failed", ""),
    "NodeNotReady": ("event", "node", "node_not_responding", ""),
    "KubeletSetupFailed": ("event", "node", GENERIC, REMEDY["node"]),
    "FailedAttachVolume": ("event", "storage", "storage_mount_failed", ""),
    "FailedMount": ("event", "storage", "storage_mount_failed", ""),
    "FailedMapVolume": ("event", "storage", "storage_mount_failed", ""),
    "FailedMountOnFilesystemMismatch": ("event", "storage", "storage_mount_failed", ""),
    "FailedUnMount": ("event", "storage", GENERIC, REMEDY["storage"]),
    "FailedDetachVolume": ("event", "storage", GENERIC, REMEDY["storage"]),
    "VolumeResizeFailed": ("event", "storage", GENERIC, REMEDY["storage"]),
    "FileSystemResizeFailed": ("event", "storage", GENERIC, REMEDY["storage"]),
    "Rebooted": ("event", "node", "node_down_unexpected_reboot", ""),
    "ContainerGCFailed": ("event", "node", GENERIC, REMEDY["node"]),
    "ImageGCFailed": ("event", "node", GENERIC, REMEDY["node"]),
    "FreeDiskSpaceFailed": ("event", "node", GENERIC, REMEDY["node"]),
    "InvalidDiskCapacity": ("event", "node", GENERIC, REMEDY["node"]),
    "FailedNodeAllocatableEnforcement": ("event", "node", GENERIC, REMEDY["node"]),
    "FailedCreatePodSandBox": ("event", "node", GENERIC, _SANDBOX),
    "FailedPodSandBoxStatus": ("event", "node", GENERIC, _SANDBOX),
    "FailedPrepareDynamicResources": ("event", "accelerator", GENERIC, REMEDY["accelerator"]),
    "Unhealthy": ("event", "application", GENERIC, _PROBE),
    "FailedSync": ("event", "node", GENERIC, REMEDY["node"]),
    "FailedValidation": ("event", "application", GENERIC, REMEDY["application"]),
    "FailedPostStartHook": ("event", "application", GENERIC, REMEDY["application"]),
    "FailedPreStopHook": ("event", "application", GENERIC, REMEDY["application"]),
    "FailedScheduling": ("event", "scheduler", GENERIC, _SCHED),
    "ImagePullBackOff": ("status", "image", "image_pull_failed", ""),
    "ErrImagePull": ("status", "image", "image_pull_failed", ""),
    "ImageInspectError": ("status", "image", "image_pull_failed", ""),
    "RegistryUnavailable": ("status", "image", "image_pull_failed", ""),
    "InvalidImageName": ("status", "image", "image_pull_failed", ""),
    "CrashLoopBackOff": ("status", "application", GENERIC, _CRASH),
    "RunContainerError": ("status", "image", "container_entrypoint_failed", ""),
    "KillContainerError": ("status", "node", GENERIC, _SANDBOX),
    "CreatePodSandboxError": ("status", "node", GENERIC, _SANDBOX),
    "ConfigPodSandboxError": ("status", "node", GENERIC, _SANDBOX),
    "KillPodSandboxError": ("status", "node", GENERIC, _SANDBOX),
    "ResizePodInPlaceError": ("status", "node", GENERIC, _SANDBOX),
    "RemoveContainerError": ("status", "node", GENERIC, _SANDBOX),
    "ContainerStatusUnknown": ("status", "node", GENERIC, REMEDY["node"]),
    "CreateContainerConfigError": ("status", "image", "container_entrypoint_failed", ""),
    "CreateContainerError": ("status", "image", "container_entrypoint_failed", ""),
    "PreStartHookError": ("status", "application", GENERIC, REMEDY["application"]),
    "Evicted": ("status", "node", "pod_evicted", ""),
    "OOMKilled": ("status", "memory", "oom_killed", ""),
    "DeadlineExceeded": ("status", "time", GENERIC, REMEDY["time"]),
    "BackoffLimitExceeded": ("status", "application", GENERIC, REMEDY["application"]),
    "PodFailurePolicy": ("status", "application", GENERIC, REMEDY["application"]),
    "MaxFailedIndexesExceeded": ("status", "application", GENERIC, REMEDY["application"]),
    "FailedIndexes": ("status", "application", GENERIC, REMEDY["application"]),
}
# a reason the map does not know: its domain from its words
_GUESS = (
    (re.compile(r"Volume|Mount|Attach|Disk"), "storage"),
    (re.compile(r"Image|Pull"), "image"),
    (re.compile(r"Schedul|Preempt"), "scheduler"),
)
# what stands before a reason: "Warning  <Reason>" in events; a status column, "Reason:",
# a quote or a colon before a status reason (never inside a longer word)
EVENT_PREFIX = r"\bWarning\s+"
STATUS_PREFIX = r"(?:^|[\s:=\"'(])"
# and after it: the row's next column (a count, an age: two spaces or more, as kubectl aligns
# columns), the line's end, or a quote; never a word or a count in prose ("Evicted from
# <server>" is Lustre's, "cache: Evicted 10 entries" an application's)
STATUS_SUFFIX = r"(?:\s{2,}\d|\t\d|\s*$|[\"',;)])"


def k8s_version(mirror: str, tag: str) -> str | None:
    mods = git(mirror, "show", f"{tag}:vendor/modules.txt")
    m = re.search(r"^# k8s\.io/kubernetes v(\d+\.\d+)\.\d+", mods, re.M)
    return m.group(1) if m else None


def last_tags(mirror: str) -> dict[str, str]:
    """Kubernetes minor -> the newest KubeEdge tag vendoring it."""
    best: dict[str, tuple[tuple[int, ...], str]] = {}
    for tag in git(mirror, "tag", "--list", "v1.*").split():
        m = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)", tag)
        if not m or int(m.group(2)) < 15:
            continue
        kube = k8s_version(mirror, tag)
        key = tuple(map(int, m.groups()))
        if kube and (kube not in best or key > best[kube][0]):
            best[kube] = (key, tag)
    return {k: best[k][1] for k in sorted(best, key=lambda v: tuple(map(int, v.split("."))))}


def reasons(src: str) -> list[tuple[str, int, bool]]:
    """(reason, line, is_normal_event) of one Go file."""
    out = [(m.group(2), m.start(), False) for m in _CONST.finditer(src)]
    out += [(m.group(2), m.start(), m.group(1) == "Normal") for m in _EVENT.finditer(src)]
    out += [(m.group(1), m.start(), False) for m in _STATUS.finditer(src)]
    return [(r, src.count("\n", 0, at) + 1, normal) for r, at, normal in out]


def extract(mirror: str) -> tuple[dict[str, str], list[dict], list[str]]:
    tags = last_tags(mirror)
    found: dict[str, dict] = {}
    unmapped: list[str] = []
    for kube, tag in tags.items():
        refs = [f"{tag}:{f}" for f in FILES]
        for ref, src in show_many(mirror, refs).items():
            path = ref.split(":", 1)[1].removeprefix("vendor/k8s.io/kubernetes/")
            path = path.replace("vendor/k8s.io/api/", "staging/src/k8s.io/api/")
            for reason, line, normal in reasons(src):
                if normal or reason in NORMAL:
                    continue
                origin = (
                    f"kubernetes/kubernetes v{kube} (vendored by kubeedge {tag}): {path}:{line}"
                )
                if reason in found:
                    if kube not in found[reason]["versions"]:
                        found[reason]["versions"].append(kube)
                    found[reason]["origin"] = origin
                    continue
                kind, domain, label, remedy = MAP.get(reason, ("", "", "", ""))
                if not kind:
                    if "/events/" not in path and "batch/v1" not in path:
                        continue  # a constant of another kind (an action, a field name)
                    unmapped.append(reason)
                    kind, label = "event", GENERIC
                    domain = next((d for rx, d in _GUESS if rx.search(reason)), "node")
                    remedy = REMEDY[domain]
                prefix = EVENT_PREFIX if kind == "event" else STATUS_PREFIX
                level = "warning" if kind == "event" else "error"
                e = entry(reason, level, origin, [kube], domain, label, remedy, prefix=prefix)
                if kind == "status":
                    e["regex"] += STATUS_SUFFIX
                    e["suffix"] = STATUS_SUFFIX
                found[reason] = e | {"program": "kube_reasons"}
    return tags, list(found.values()), unmapped


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kubeedge", required=True, help="git mirror of github.com/kubeedge/kubeedge")
    args = ap.parse_args()
    tags, entries, unmapped = extract(args.kubeedge)
    if not entries:
        raise SystemExit("no reason found: check the vendored paths (FILES)")
    if unmapped:
        print("reasons the map does not know (generic, domain by their words):", *unmapped)
    meta = {
        "source": "kube_reasons",
        "upstream": "https://github.com/kubernetes/kubernetes",
        "read_from": "https://github.com/kubeedge/kubeedge (vendor/k8s.io)",
        "versions": tags,
        "generator": "tools/catalogue/extract_kube_reasons.py",
    }
    print(len(entries), "templates;", write("kube_reasons", meta, entries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
