"""Kubernetes, Volcano and container-runtime failure reasons as data.

A pod reports why it is stuck or dead through a closed set of reasons (``FailedMount``,
``ErrImagePull``, ``FailedScheduling``, ``OOMKilled``, ``Evicted``, ...) followed by the
runtime's or scheduler's message, and the message decides what to do: ``ErrImagePull`` with
``manifest unknown`` is a tag that does not exist, with ``unauthorized`` a credentials
problem. The table keys on the reason *and* the structure of that message, in precedence
order (the first entry that matches a line wins, as in the pattern catalogue).

Entries whose line is a symptom (``CrashLoopBackOff``, ``BackoffLimitExceeded``, an admission
``Reason:`` line whose ``Message:`` follows) are weak: the line that says why wins over them.
The same lines arrive through ``kubectl describe``/``get events``, ModelArts events
(``[Pod: …] Reason: message``), docker/compose logs and kubelet journals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cockpit.i18n import N_
from cockpit.model import Severity


@dataclass(frozen=True, slots=True)
class K8sReason:
    """One reason: ``name`` (the pattern name), ``regex`` (str), the root-cause ``label``,
    ``what`` it means (a verdict phrase) and the ``remedy``."""

    name: str
    regex: str
    label: str
    what: str
    remedy: str
    severity: Severity = "critical"
    tier: int = 1
    strong: bool = True


# What marks a line as an image pull (a daemon error alone may be about anything: a network,
# a container); a registry API URL (/v2/) is a pull.
_PULL = r"(?:ErrImagePull|ImagePullBackOff|[Ff]ailed to pull image|[Ff]ailed to pull and unpack|"
_PULL += (
    r"Back-off pulling image|pull access denied|Error response from daemon: (?:Get|Head) \S*/v2/|"
)
_PULL += r"failed to resolve reference|error pulling image|"
# a managed trainer's own words for the pull it could not do (SageMaker's ClientError, Azure
# ML's job preparation, its events), whose message then says why as a daemon would
_PULL += r"Cannot pull algorithm container|[Rr]un docker command to pull (?:private |public )?"
_PULL += r"image failed|FailedPullingImage|Image pull failed)"
_EXIT_HINT = N_("`kubectl logs <pod> --previous` shows the last run's own error")

_EVICTED_TITLE = N_("pod evicted: the node ran low on a resource")
_EVICTED_REMEDY = N_(
    "The kubelet evicted the pod for node pressure (the message names memory or "
    "ephemeral-storage): set requests close to real use so the scheduler reserves it, set "
    "ephemeral-storage limits and write big files to a volume instead of the container "
    "layer or /tmp, and clean the node's disk; then resubmit."
)


REASONS: tuple[K8sReason, ...] = (
    # ---------------------------------------------------------------- image pulls
    K8sReason(
        "k8s_image_disk_full",
        rf"{_PULL}[^\n]*no space left on device|failed to (?:register|extract) layer[^\n]*"
        r"no space left on device",
        "disk_full",
        N_("image pull failed: the node's image store is full"),
        N_(
            "Free the node's container storage (crictl rmi --prune / docker system prune, or grow "
            "/var/lib/containerd or /var/lib/docker), or move the pod to a node with space."
        ),
    ),
    K8sReason(
        "k8s_image_not_found",
        rf"{_PULL}[^\n]*(?:manifest unknown|manifest for \S+ not found|: not found\b|"
        r"name unknown|repository \S+ not found|NotFound)|manifest for \S+ not found|"
        r"manifest unknown",
        "image_pull_failed",
        N_("image pull failed: the image or tag does not exist (manifest unknown)"),
        N_(
            "The registry has no such image:tag: check the repository path (SWR organisation) and "
            "the tag spelling (`docker manifest inspect <image>` or the registry console lists the "
            "tags), push the tag if it was never pushed, or pin an existing one."
        ),
    ),
    K8sReason(
        "k8s_image_auth",
        rf"{_PULL}[^\n]*(?:[Uu]nauthorized|denied|\b403\b|[Ff]orbidden|authentication required|"
        r"no basic auth credentials|You may not login)|pull access denied|"
        r"denied: You may not login",
        "image_pull_failed",
        N_("image pull failed: the registry refused the credentials (unauthorized/denied)"),
        N_(
            "The node has no valid credentials for this registry: add or refresh the pull secret "
            "(imagePullSecrets; SWR login keys expire), make sure the image is shared with this "
            "account or project, and `docker login` + `docker pull` it from a node to confirm."
        ),
    ),
    K8sReason(
        "k8s_image_unreachable",
        rf"{_PULL}[^\n]*(?:i/o timeout|dial tcp|no such host|connection refused|"
        r"TLS handshake timeout|x509|certificate signed by unknown authority|toomanyrequests|"
        r"rate limit|context deadline exceeded)",
        "image_pull_failed",
        N_("image pull failed: the registry is unreachable from the node"),
        N_(
            "The node cannot reach the registry: check DNS, proxy and firewall (curl -v "
            "https://<registry>/v2/ from the node); for x509 errors install the registry's CA; "
            "for toomanyrequests use a mirror or authenticated pulls."
        ),
    ),
    K8sReason(
        "k8s_image_invalid",
        r"\bInvalidImageName\b|[Ff]ailed to apply default image tag|invalid reference format",
        "image_pull_failed",
        N_("image name is malformed"),
        N_(
            "Fix the image reference in the job spec (registry/organisation/name:tag, lower case, "
            "no spaces)."
        ),
    ),
    # the registry refused the role's push (ECR's IAM words): the tag a job then pulls was
    # never pushed, so its "manifest unknown" is the consequence printed later
    K8sReason(
        "registry_push_denied",
        r"is not authorized to perform: ecr:(?:InitiateLayerUpload|UploadLayerPart|"
        r"CompleteLayerUpload|PutImage|BatchCheckLayerAvailability)\b",
        "image_pull_failed",
        N_("image push refused: the registry denied the push, so the image was never stored"),
        N_(
            "Grant the identity that builds the image the registry's push rights (ECR: "
            "ecr:InitiateLayerUpload, UploadLayerPart, CompleteLayerUpload, PutImage) or sign it "
            "in (docker login), push the image again, then rerun the job that pulls it."
        ),
    ),
    K8sReason(
        "image_pull",
        r"[Ff]ailed to pull image|pull access denied|manifest unknown|denied: You may not login|"
        # a managed trainer's pull failing with no reason on its line (SageMaker, Azure ML,
        # Vertex AI's "Failed to read the container uri")
        r"Cannot pull algorithm container|[Rr]un docker command to pull (?:private |public )?"
        r"image failed|FailedPullingImage|Image pull failed|Cannot find the requested image|"
        r"Failed to read the container uri",
        "image_pull_failed",
        N_("image pull failed"),
        N_(
            "Check the image path and tag and the registry credentials: `docker pull` the image "
            "from a node logged in to the registry."
        ),
    ),
    # the pod's state and the kubelet's retries name no reason: the pull's own message (above)
    # is the line that says why, wherever it stands; these count only when it is absent
    K8sReason(
        "image_pull_backoff",
        r"ImagePullBackOff|ErrImagePull|Back-off pulling image",
        "image_pull_failed",
        N_("image pull failed"),
        N_(
            "Check the image path and tag and the registry credentials: `docker pull` the image "
            "from a node logged in to the registry."
        ),
        strong=False,
    ),
    # ---------------------------------------------------------------- volumes
    K8sReason(
        "k8s_mount_denied",
        r"(?:FailedMount|MountVolume\.\w+ failed)[^\n]*(?:AccessDenied|\b403\b|Forbidden|"
        r"[Pp]ermission denied)",
        "storage_access_denied",
        N_("volume mount refused (access denied)"),
        N_(
            "The mount credentials lack rights on the bucket/share: grant the agency or secret "
            "read "
            "(and list) rights, check the bucket policy, then restart the pod."
        ),
    ),
    K8sReason(
        "k8s_multi_attach",
        r"Multi-Attach error for volume",
        "storage_mount_failed",
        N_("volume still attached to another node (Multi-Attach)"),
        N_(
            "A ReadWriteOnce volume is still attached elsewhere: delete the old pod (or wait for "
            "the detach), check `kubectl get volumeattachment`, or use a ReadWriteMany volume."
        ),
    ),
    K8sReason(
        "k8s_unbound_pvc",
        r"unbound immediate PersistentVolumeClaims|persistentvolumeclaim \"\S+\" not found|"
        r"waiting for a volume to be created|didn't find available persistent volumes to bind",
        "storage_mount_failed",
        N_("persistent volume claim not bound"),
        N_(
            "The claim has no volume: `kubectl describe pvc` names the StorageClass and the "
            "provisioner's error; create the PV/StorageClass or fix the claim's size/access mode."
        ),
        severity="warning",
        tier=0,
    ),
    K8sReason(
        "k8s_attach_failed",
        r"\bFailedAttachVolume\b|AttachVolume\.Attach failed",
        "storage_mount_failed",
        N_("volume could not be attached to the node (FailedAttachVolume)"),
        N_(
            "Check the disk in the cloud console (attached elsewhere, wrong zone, quota) and the "
            "CSI controller logs; the pod starts once the disk attaches."
        ),
    ),
    K8sReason(
        "k8s_mount_failed",
        r"\bFailedMount\b|MountVolume\.\w+ failed|\b[Mm]ount failed\b|wrong fs type, bad option|"
        r"obsfs: .*error",
        "storage_mount_failed",
        N_("volume mount failed (FailedMount)"),
        N_(
            "Read the mount error in the message (missing mount helper, wrong filesystem type, "
            "unreachable server); check the CSI node plugin's logs on that node (kubectl logs -n "
            "kube-system <csi-node-pod>) and dmesg."
        ),
    ),
    # ---------------------------------------------------------------- scheduling
    K8sReason(
        "k8s_quota",
        r"exceeded quota:|forbidden: exceeded quota|queue resource quota insufficient|"
        r"queue \S+ (?:is )?overused",
        "queued_quota_limit",
        N_("namespace or queue quota exhausted"),
        N_(
            "The namespace ResourceQuota or Volcano queue is full (`kubectl describe quota`, "
            "`kubectl get queue -o yaml`): wait for other jobs, or raise the quota/queue capacity."
        ),
        severity="warning",
        tier=0,
    ),
    K8sReason(
        "k8s_insufficient_accel",
        # any release's wording: lower case since 1.18's summaries, and before 1.10 the
        # alpha resource (alpha.kubernetes.io/nvidia-gpu) under "No nodes are available that
        # match all of the following predicates"
        r"\b[Ii]nsufficient (?:nvidia\.com/gpu|huawei\.com/[Aa]scend[\w-]*|amd\.com/gpu|"
        r"[\w.-]+/(?:[\w-]*-)?(?:gpu|npu)\w*)|"
        # NVIDIA's KAI scheduler: "No nodes with enough resources were found: 2 node(s)
        # didn't have enough resources: GPUs"
        r"didn't have enough resources?: (?:GPU|NPU)s?\b",
        "queued_insufficient_resources",
        N_("no node has the free accelerators the pod asks for"),
        N_(
            "Wait for accelerators to free up, or ask for fewer per pod. If *every* node reports "
            "Insufficient, check the nodes advertise them at all: `kubectl describe node | grep "
            "-A8 "
            "Allocatable` (0 means the NVIDIA/Ascend device plugin is not running on the node)."
        ),
        severity="warning",
        tier=0,
    ),
    K8sReason(
        "k8s_insufficient",
        r"nodes are available: .*[Ii]nsufficient|\b[Ii]nsufficient (?:cpu|memory|ephemeral-storage|"
        r"pods|hugepages-\w+)\b",
        "queued_insufficient_resources",
        N_("no node has the free CPU/memory the pod requests"),
        N_(
            "Wait for capacity, lower the pod's requests (resources.requests), or add nodes; "
            "`kubectl describe node` shows Allocated resources per node."
        ),
        severity="warning",
        tier=0,
    ),
    K8sReason(
        "k8s_podgroup",
        r"[Pp]od[Gg]roup[^\n]*(?:[Uu]nschedulable|not ready|Inqueue)|gang unschedulable|"
        r"minAvailable|NotEnoughResources|not enough resources",
        "queued_insufficient_resources",
        N_("the gang (Volcano PodGroup) cannot be placed as a whole"),
        N_(
            "All minAvailable pods must fit at once: wait for capacity, reduce replicas or per-pod "
            "requests, or check the queue (`kubectl describe podgroup`, `kubectl get queue`)."
        ),
        severity="warning",
        tier=0,
    ),
    K8sReason(
        "k8s_taint",
        r"had (?:untolerated )?taints?\b|untolerated taint|node\(s\) had taint",
        "scheduling_constraint_unsatisfied",
        N_("the nodes carry taints the pod does not tolerate"),
        N_(
            "`kubectl describe node | grep Taints`: add the matching toleration to the pod, or "
            "remove the taint; node.kubernetes.io/unreachable or not-ready taints mean those nodes "
            "are down."
        ),
        severity="warning",
        tier=0,
    ),
    K8sReason(
        "k8s_affinity",
        r"didn't match (?:Pod's )?node (?:affinity|selector)|didn't match pod (?:anti-)?affinity|"
        r"node\(s\) didn't satisfy|volume node affinity conflict|check Node \S+ label|"
        r"node\(s\) were unschedulable",
        "scheduling_constraint_unsatisfied",
        N_("no node satisfies the pod's node selector/affinity"),
        N_(
            "Compare the pod's nodeSelector/affinity with the labels nodes really carry (`kubectl "
            "get nodes --show-labels`, e.g. accelerator-type for Ascend); fix the label or the "
            "selector; cordoned nodes need `kubectl uncordon`."
        ),
        severity="warning",
        tier=0,
    ),
    K8sReason(
        "k8s_scheduling",
        r"\bFailedScheduling\b|[Uu]nschedulable",
        "scheduling_constraint_unsatisfied",
        N_("the scheduler cannot place the pod (FailedScheduling)"),
        N_(
            "Read the per-node reasons in the FailedScheduling message (`kubectl describe pod`) "
            "and "
            "fix the request or the nodes accordingly."
        ),
        severity="warning",
        tier=0,
    ),
    # ---------------------------------------------------------------- containers
    K8sReason(
        "k8s_nvidia_runtime_cuda",
        r"nvidia-container-cli: requirement error: unsatisfied condition: cuda",
        "cuda_driver_mismatch",
        N_("the image needs a newer CUDA than the node's driver"),
        N_(
            "Use an image whose CUDA version the node's driver supports (nvidia-smi shows the "
            "highest CUDA the driver takes), or upgrade the driver."
        ),
    ),
    K8sReason(
        "k8s_nvidia_runtime",
        r"nvidia-container-cli: (?:initialization|device|mount|detection) error|"
        r"could not select device driver \"[^\"]*\" with capabilities: \[\[gpu\]\]|"
        r"unknown or invalid runtime name: nvidia",
        "gpu_not_available",
        N_("the container runtime could not give the container a GPU"),
        N_(
            "On the node: nvidia-smi (driver loaded?), the NVIDIA container toolkit and the "
            "runtime configured in containerd/docker; drain the node until it works."
        ),
    ),
    K8sReason(
        "k8s_oom",
        r"\bOOMKilled\b",
        "oom_killed",
        N_("container killed at its memory limit (OOMKilled, exit 137)"),
        N_(
            "Raise the container's resources.limits.memory (and requests) or reduce what the "
            "program holds in memory (batch size, data loader workers, caching)."
        ),
    ),
    K8sReason(
        "k8s_evicted",
        r"\bEvicted: [A-Za-z]|"  # not a counter ("cache stats: … Evicted: 0")
        r"The node was low on resource|[Pp]od ephemeral local storage usage exceeds|"
        r"evicted due to node pressure|[Ee]victing pod|TaintManagerEviction",
        "pod_evicted",
        _EVICTED_TITLE,
        _EVICTED_REMEDY,
    ),
    # the pod's state names no resource (a `kubectl get pods` row, describe's "Reason: Evicted"
    # above its Message): the message, wherever it stands, is the line that says which; the
    # state counts only when it is absent
    K8sReason(
        "k8s_evicted_state",
        r"(?:Reason:[ \t]+|Warning[ \t]+|[ \t]{2}|\] )Evicted\b|"
        r"(?:^|[\s:=\"'(])Evicted(?:\s{2,}\d|\t\d|\s*$|[\"',;)])",
        "pod_evicted",
        _EVICTED_TITLE,
        _EVICTED_REMEDY,
        strong=False,
    ),
    # the kubelet's message names the Secret/ConfigMap (kubectl prints "secrets", plural)
    K8sReason(
        "k8s_config_error",
        r"(?:secrets?|configmaps?) \"[^\"]+\" not found|"
        r"couldn't find key \S+ in (?:Secret|ConfigMap)",
        "container_entrypoint_failed",
        N_("container config invalid: a referenced Secret/ConfigMap is missing"),
        N_(
            "Create the Secret/ConfigMap the message names in the pod's namespace (or fix the "
            "name/key in the spec); the pod starts on its own once it exists."
        ),
    ),
    # the pod's state names no Secret: the kubelet's message (above) is the line that says
    # which, wherever it stands; the state counts only when it is absent
    K8sReason(
        "k8s_config_error_state",
        r"\bCreateContainerConfigError\b",
        "container_entrypoint_failed",
        N_("container config invalid: a referenced Secret/ConfigMap is missing"),
        N_(
            "Create the Secret/ConfigMap the message names in the pod's namespace (or fix the "
            "name/key in the spec); the pod starts on its own once it exists."
        ),
        strong=False,
    ),
    K8sReason(
        "k8s_deadline",
        r"(?:Reason:[ \t]+|Warning[ \t]+)DeadlineExceeded\b|"
        r"Job was active longer than specified deadline",
        "time_limit",
        N_("the job ran past activeDeadlineSeconds"),
        N_("Raise spec.activeDeadlineSeconds or make the job faster; it was stopped, not crashed."),
    ),
    K8sReason(
        "k8s_node_lost",
        r"\bNodeNotReady\b|\bNodeLost\b|Node is not ready|\bNodeShutdown\b",
        "node_not_responding",
        N_("the pod's node stopped reporting (NotReady)"),
        N_(
            "`kubectl describe node <node>`: kubelet down, network or the machine itself; the pod "
            "is rescheduled elsewhere once the node is marked lost."
        ),
    ),
    K8sReason(
        "k8s_admission",
        r"\bUnexpectedAdmissionError\b|\bOutOf(?:nvidia\.com/gpu|cpu|memory|pods)\b",
        "gpu_not_available",
        N_("the node refused the pod at admission (device allocation)"),
        N_(
            "The kubelet could not allocate the devices it had promised: restart the device plugin "
            "on that node (or the kubelet), and check `kubectl describe node` Allocatable vs "
            "Capacity; delete the failed pod so it is recreated."
        ),
        strong=False,
    ),
    K8sReason(
        "k8s_crashloop",
        r"\bCrashLoopBackOff\b|Back-off restarting failed container",
        "application_error",
        N_("container keeps crashing and restarting (CrashLoopBackOff)"),
        N_(
            "The container starts and exits again: `kubectl logs <pod> --previous` shows the "
            "last run's own error; the Last State block gives its exit code."
        ),
        strong=False,
    ),
    K8sReason(
        "k8s_probe",
        r"(?:Liveness|Readiness|Startup) probe failed",
        "application_error",
        N_("health probe failing"),
        N_(
            "The probe's endpoint does not answer in time: check the program is up and listening, "
            "or relax the probe (initialDelaySeconds, timeoutSeconds) for slow starts."
        ),
        severity="warning",
        strong=False,
    ),
    K8sReason(
        "k8s_backoff_limit",
        r"\bBackoffLimitExceeded\b|Job has reached the specified backoff limit",
        "application_error",
        N_("the job failed backoffLimit times"),
        N_("Every retry failed: `kubectl logs <pod> --previous` shows the last run's own error."),
        strong=False,
    ),
    K8sReason(
        "compose_exit",
        r"exited with code [1-9][0-9]*\b",
        "application_error",
        N_("a container exited with an error"),
        N_(
            "Read the service's own log lines just before the exit (docker compose logs <service>)."
        ),
        strong=False,
    ),
)

_BY_NAME = {r.name: r for r in REASONS}
_COMPILED = [(r, re.compile(r.regex, re.MULTILINE)) for r in REASONS]


def reason(name: str) -> K8sReason | None:
    return _BY_NAME.get(name)


def describe(line: str) -> K8sReason | None:
    """The first table entry matching one line, or None."""
    for r, rx in _COMPILED:
        if rx.search(line):
            return r
    return None


_RESOURCE = re.compile(r"low on resource: ([\w./-]+)|Insufficient ([\w./-]+)")


def resources(line: str) -> list[str]:
    """Resources a FailedScheduling/Evicted message names (``nvidia.com/gpu``, ``memory``)."""
    out: list[str] = []
    for m in _RESOURCE.finditer(line):
        r = (m.group(1) or m.group(2)).rstrip(".,")
        if r not in out:
            out.append(r)
    return out


def pattern_specs(strong: bool) -> list[tuple[str, str, str, Severity, int, bool]]:
    """(name, regex, label, severity, tier, strong) of the entries of that strength, in order."""
    return [
        (r.name, r.regex, r.label, r.severity, r.tier, r.strong)
        for r in REASONS
        if r.strong == strong
    ]
