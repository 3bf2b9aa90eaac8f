"""Platforms beside Slurm: CANN error codes, Kubernetes/Volcano reasons, NVIDIA Xids, host
memory, MoXing and Chinese ModelArts text, from the tables as data down to the engine's
findings, plus the bundles in tests/fixtures/platform built from public reports."""

from __future__ import annotations

import json
import re
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cockpit.diagnosis import cann_codes, k8s_reasons, logscan, xid_codes
from cockpit.diagnosis.engine import diagnose
from cockpit.diagnosis.logscan import first_error
from cockpit.diagnosis.patterns import PATTERNS, classify
from cockpit.diagnosis.rules import ascend, containers, gpu_host
from cockpit.model import (
    Artifacts,
    JobEvent,
    LogText,
    SlurmNode,
    Snapshot,
    TaskStatus,
    TrainingJob,
)

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
ROOT = Path(__file__).parent
PLATFORM = ROOT / "fixtures" / "platform"
BUNDLES = sorted(p for p in PLATFORM.iterdir() if (p / "expected.toml").is_file())
LABELS = set(
    re.findall(r"^\| `([a-z_]+)` \|", (ROOT.parent / "docs" / "root-causes.md").read_text(), re.M)
)


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setenv("COCKPIT_STRICT_RULES", "1")


def _snap(**kw) -> Snapshot:
    return Snapshot(source="lab", kind=kw.pop("kind", "slurm"), taken_at=NOW, **kw)


def _run(snap: Snapshot, *logs: LogText):
    return diagnose(snap, Artifacts(logs=logs), NOW)


def _log(name: str, text: str, kind: str = "app", subject: str = "") -> LogText:
    return LogText(name=name, kind=kind, data=text.encode(), path=f"/b/{name}", subject_id=subject)


# --------------------------------------------------------------------------- CANN codes


def test_every_label_of_the_tables_is_documented():
    used = {c.label for c in cann_codes.CODES.values()}
    used |= {r.label for r in k8s_reasons.REASONS}
    used |= {p.label for p in PATTERNS}
    assert used <= LABELS, used - LABELS


@pytest.mark.parametrize("code", sorted(cann_codes.CODES), ids=str)
@pytest.mark.parametrize(
    "shape",
    [
        "{c}: [PID: 4242] 2025-06-25-10:45:23.586.187 {t}.",
        "[rank3]: {c}: 2024-08-05-18:15:21.270.506 {t}.",
        "[PID: 4242] 2025-11-03-20:18:46.447.213 Some_Error_Title({c}): {t}.",
        "ERROR 04-09 21:56:46 [engine.py:82] call failed. ErrCode={c}, {t}",
    ],
    ids=["line-start", "rank-prefix", "title(code)", "ErrCode="],
)
def test_cann_code_gives_its_label_severity_and_remedy(code, shape):
    entry = cann_codes.CODES[code]
    line = shape.format(c=code, t=entry.title)
    p = classify(line.encode())
    assert p is not None and p.label == entry.label, (line, p)
    assert p.strong == entry.strong or p.name == "gpu_oom"  # EL0004 also names device OOM
    e = ascend.explain(line)
    assert e is not None and e.label == entry.label and e.severity == entry.severity
    assert e.remedy == entry.remedy and e.phrase.startswith(code)


@pytest.mark.parametrize("family", sorted(cann_codes.LAYERS), ids=str)
def test_unknown_code_of_a_known_family_names_the_code_and_its_layer(family):
    code = f"E{family}0777"
    line = f"{code}: [PID: 1] 2025-01-01-00:00:00.000.000 something new in CANN 9"
    e = ascend.explain(line)
    assert e is not None and e.phrase.startswith(code)
    assert cann_codes.LAYERS[family] in e.phrase + e.explanation
    p = classify(line.encode())
    if family in "IJ":  # a collective failure whatever the code
        assert (p.label, p.strong) == ("nccl_communication_error", True)
    else:
        assert (p.label, p.strong) == ("application_error", False)


@pytest.mark.parametrize("family", sorted(cann_codes.LAYERS), ids=str)
def test_internal_codes_are_weak_and_say_the_cause_is_printed_before(family):
    line = f"E{family}9999: Inner Error!"
    p = classify(line.encode())
    assert (p.label, p.strong) == ("application_error", False)
    v = cann_codes.lookup(f"E{family}9999")
    assert v.internal and "before" in v.remedy


def test_a_specific_code_later_wins_over_an_inner_error_earlier():
    log = (
        b"[ERROR] RecentErrMsg: EZ9999: Inner Error!\n"
        b"Traceback (most recent call last):\n"
        b"EL0004: [PID: 9] 2025-01-01-00:00:00.000.000 Failed to allocate memory.\n"
    )
    h = first_error(log)
    assert (h.line, h.label) == (3, "gpu_out_of_memory")


@pytest.mark.parametrize(
    "text",
    [
        "address 0xE10000) mapped",
        "sha=EI0006abc",
        "NODE=E20001 ready",
        "ITEM-E10001 shipped",
        "see table E19999x",
    ],
)
def test_code_shapes_do_not_fire_on_ids(text):
    assert cann_codes.find_codes(text) == []


def test_best_code_prefers_a_strong_user_code_over_an_inner_one():
    v = cann_codes.best_code("EE9999: Inner Error!\nEI0002: [PID: 1] notify wait timed out")
    assert v is not None and v.code == "EI0002"


def test_hccl_plog_line_without_a_code_is_a_collective_failure():
    line = (
        "[ERROR] HCCL(17528,python3):2026-03-18-10:33:52.113.403 [hccl_socket_manager.cc:797] "
        "[18744][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[1] timeout[120 s]"
    )
    assert classify(line.encode()).label == "nccl_communication_error"
    e = ascend.explain(line)
    assert "HCCL_CONNECT_TIMEOUT" in e.remedy


# --------------------------------------------------------------------------- Kubernetes

# One realistic line per table entry: every reason is exercised.
K8S_LINES = {
    "k8s_image_disk_full": (
        "  Warning  Failed  2m  kubelet  Failed to pull image "
        '"nvcr.io/nvidia/pytorch:24.01-py3": rpc error: code = Unknown desc = failed to '
        "register layer: write /usr/lib/x: no space left on device"
    ),
    "k8s_image_not_found": (
        '  Warning  Failed  3m  kubelet  Failed to pull image "team/train:1.O": rpc error: '
        "code = NotFound desc = failed to pull and unpack image: failed to resolve reference "
        '"docker.io/team/train:1.O": docker.io/team/train:1.O: not found'
    ),
    "k8s_image_auth": (
        "  Warning  Failed  1m  kubelet  Failed to pull image "
        '"swr.cn-north-4.myhuaweicloud.com/team/train:1.0": rpc error: code = Unknown desc = '
        "Error response from daemon: Get "
        "https://swr.cn-north-4.myhuaweicloud.com/v2/team/train/manifests/1.0: unauthorized: "
        "authentication required"
    ),
    "k8s_image_unreachable": (
        '  Warning  Failed  1m  kubelet  Failed to pull image "registry.lab:5000/a:1": rpc '
        "error: code = Unknown desc = Get https://registry.lab:5000/v2/: dial tcp "
        "10.0.0.9:5000: i/o timeout"
    ),
    "k8s_image_invalid": (
        "  Warning  InspectFailed  10s  kubelet  Failed to apply default image tag "
        '"Team/Train:1.0": couldn\'t parse image reference: invalid reference format'
    ),
    "registry_push_denied": (
        "denied: User: arn:aws:sts::123456789012:assumed-role/Builder/ci is not authorized to "
        "perform: ecr:InitiateLayerUpload on resource: "
        "arn:aws:ecr:us-west-2:123456789012:repository/train"
    ),
    "image_pull": (
        '  Warning  Failed  4m  kubelet  Failed to pull image "busybox:1.36": rpc error: '
        "code = Canceled desc = context canceled"
    ),
    # the kubelet's retry names no reason: weak, so the pull's own message wins where present
    "image_pull_backoff": (
        '  Normal   BackOff  4m (x6 over 6m)  kubelet  Back-off pulling image "busybox:1.36"'
    ),
    "k8s_mount_denied": (
        '  Warning  FailedMount  2m  kubelet  MountVolume.SetUp failed for volume "obs" : '
        "rpc error: code = Internal desc = obsfs: AccessDenied: Access Denied (HTTP 403)"
    ),
    "k8s_multi_attach": (
        "  Warning  FailedAttachVolume  5m  attachdetach-controller  Multi-Attach error for "
        'volume "pvc-1" Volume is already exclusively attached to one node and can\'t be '
        "attached to another"
    ),
    "k8s_unbound_pvc": (
        "  Warning  FailedScheduling  30s  default-scheduler  0/3 nodes are available: pod "
        "has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available"
    ),
    "k8s_attach_failed": (
        "  Warning  FailedAttachVolume  1m  attachdetach-controller  AttachVolume.Attach "
        'failed for volume "pvc-2" : rpc error: code = Internal desc = disk is in another '
        "zone"
    ),
    "k8s_mount_failed": (
        "  Warning  FailedMount  18m  kubelet  MountVolume.MountDevice failed for volume "
        '"pvc-f8" : mount failed: exit status 32'
    ),
    "k8s_quota": (
        '  Warning  FailedCreate  1m  job-controller  Error creating: pods "t-1" is '
        "forbidden: exceeded quota: gpu-quota, requested: nvidia.com/gpu=8, used: "
        "nvidia.com/gpu=8, limited: nvidia.com/gpu=8"
    ),
    "k8s_insufficient_accel": (
        "  Warning  FailedScheduling  5m  volcano  0/4 nodes are available: 4 Insufficient "
        "huawei.com/Ascend910."
    ),
    "k8s_insufficient": (
        "  Warning  FailedScheduling  2m  default-scheduler  0/3 nodes are available: 1 "
        "Insufficient memory, 2 Insufficient cpu."
    ),
    "k8s_podgroup": (
        "  Warning  Unschedulable  1m  volcano  1/2 tasks in gang unschedulable: pod group "
        "is not ready, 2 Pending, 2 minAvailable"
    ),
    "k8s_taint": (
        "  Warning  FailedScheduling  1m  default-scheduler  0/2 nodes are available: 2 "
        "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }."
    ),
    "k8s_affinity": (
        "  Warning  FailedScheduling  3m  default-scheduler  0/5 nodes are available: 5 "
        "node(s) didn't match Pod's node affinity/selector."
    ),
    "k8s_scheduling": (
        "  Warning  FailedScheduling  11m  volcano  all nodes are unavailable: 1 plugin rejected."
    ),
    "k8s_nvidia_runtime_cuda": (
        "Error: failed to create containerd task: OCI runtime create failed: "
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please "
        "update your driver to a newer version"
    ),
    "k8s_nvidia_runtime": (
        'docker: Error response from daemon: could not select device driver "" with '
        "capabilities: [[gpu]]."
    ),
    "k8s_oom": ("      Reason:       OOMKilled"),
    "k8s_evicted": (
        "  Warning  Evicted  3m  kubelet  The node was low on resource: memory. Threshold "
        "quantity: 100Mi, available: 21412Ki."
    ),
    "k8s_config_error": (
        '  Warning  Failed  8s  kubelet  Error: secret "obs-credentials" not found'
    ),
    "k8s_config_error_state": ("      Reason:       CreateContainerConfigError"),
    "k8s_evicted_state": ("agents-ppo-master-0-9st9r   0/1     Evicted   0          19h"),
    "k8s_deadline": (
        "  Warning  DeadlineExceeded  2s  job-controller  Job was active longer than "
        "specified deadline"
    ),
    "k8s_node_lost": ("  Warning  NodeNotReady  4m  node-controller  Node is not ready"),
    "k8s_admission": ("Reason:         UnexpectedAdmissionError"),
    "k8s_crashloop": ("      Reason:       CrashLoopBackOff"),
    "k8s_probe": (
        "  Warning  Unhealthy  2m  kubelet  Liveness probe failed: Get "
        '"http://10.1.0.5:8080/healthz": context deadline exceeded'
    ),
    "k8s_backoff_limit": (
        "  Warning  BackoffLimitExceeded  1m  job-controller  Job has reached the specified "
        "backoff limit"
    ),
    "compose_exit": ("trainer_1 exited with code 1"),
}


def test_every_k8s_reason_has_a_sample_line():
    assert set(K8S_LINES) == {r.name for r in k8s_reasons.REASONS}


@pytest.mark.parametrize("name", [r.name for r in k8s_reasons.REASONS])
def test_k8s_reason_gives_its_label_severity_and_remedy(name):
    r = k8s_reasons.reason(name)
    line = K8S_LINES[name]
    p = classify(line.encode(), "events")
    assert p is not None and p.name == name, (line, p and p.name)
    assert (p.label, p.severity, p.strong) == (r.label, r.severity, r.strong)
    e = containers.explain(line, p.name)
    assert e.label == r.label and e.remedy == r.remedy and e.phrase.startswith(r.what)


def test_image_tag_missing_and_credentials_get_different_remedies():
    missing = containers.explain(K8S_LINES["k8s_image_not_found"])
    creds = containers.explain(K8S_LINES["k8s_image_auth"])
    assert missing.label == creds.label == "image_pull_failed"
    assert "tag" in missing.remedy and "pull secret" in creds.remedy
    assert "team/train:1.O" in missing.phrase  # the image the message names


def test_scheduling_message_with_a_busy_gpu_node_is_capacity_not_constraint():
    line = (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match "
        "Pod's node affinity/selector."
    )
    assert classify(line.encode()).label == "queued_insufficient_resources"
    assert "nvidia.com/gpu" in containers.explain(line).phrase


@pytest.mark.parametrize(
    "line",
    [
        "cache: Evicted 10 entries (lru)",
        "grpc: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
        "Error response from daemon: network trainnet not found",
        "worker node n3 not ready yet, retrying",
    ],
)
def test_application_words_that_are_not_pod_reasons(line):
    p = classify(line.encode())
    assert p is None or p.label not in {
        "pod_evicted",
        "time_limit",
        "image_pull_failed",
        "node_not_responding",
    }


def _describe(reason: str, code: int) -> str:
    return (
        "Containers:\n  trainer:\n    State:          Waiting\n"
        "      Reason:       CrashLoopBackOff\n"
        "    Last State:     Terminated\n"
        f"      Reason:       {reason}\n"
        f"      Exit Code:    {code}\n"
        "    Ready:          False\n"
    )


@pytest.mark.parametrize(
    ("reason", "code", "label"),
    [
        ("StartError", 128, "container_entrypoint_failed"),
        ("Error", 127, "container_entrypoint_failed"),
        ("Error", 139, "application_error"),
        ("Error", 1, "application_error"),
        ("OOMKilled", 137, "oom_killed"),
    ],
)
def test_crash_loop_is_refined_by_the_last_exit(reason, code, label):
    fs = _run(_snap(), _log("describe-pod.txt", _describe(reason, code), "events"))
    top = fs[0]
    assert top.root_cause == label and top.severity == "critical"
    if label != "oom_killed":
        assert f"exit {code}" in top.title
        assert any("Exit Code" in e.text and e.line == 7 for e in top.evidence)


# --------------------------------------------------------------------------- NVIDIA Xid


@pytest.mark.parametrize("code", sorted(xid_codes.XIDS), ids=str)
def test_xid_class_decides_label_and_severity(code):
    x = xid_codes.XIDS[code]
    line = (
        f"[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): {code}, pid=1797828, name=python"
    )
    p = classify(line.encode())
    e = gpu_host.explain(line)
    want = {
        "app": ("application_error", "warning", True),
        "follow": ("application_error", "warning", False),
        "info": ("gpu_hardware_error", "warning", True),
        "hw": ("gpu_hardware_error", "critical", True),
    }[x.kind]
    assert (p.label, p.severity, p.strong) == want
    assert (e.label, e.severity) == want[:2]
    assert e.phrase.startswith(f"Xid {code}:")
    if x.kind == "hw":
        assert "drain" in e.remedy.lower() or "reboot" in e.remedy.lower()
    if x.kind == "app":
        assert "not the node" in e.remedy


def test_unknown_xid_is_a_weak_hardware_warning_naming_the_code():
    line = "NVRM: Xid (PCI:0000:3b:00): 222, pid=1, something new"
    p = classify(line.encode())
    assert (p.label, p.strong) == ("gpu_hardware_error", False)
    assert "Xid 222" in gpu_host.explain(line).phrase


@pytest.mark.parametrize(
    ("line", "need"),
    [
        (
            "NVRM: Xid (PCI:0000:02:00): 154, GPU recovery action changed from 0x0 (None) to "
            "0x2 (Node Reboot Required)",
            "node reboot",
        ),
        (
            "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x0 (None) to "
            "0x1 (GPU Reset Required)",
            "GPU reset",
        ),
        (
            "NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] "
            "(0x00000062) returned from status @ kernel_channel.c:2874",
            "GPU reset",
        ),
    ],
)
def test_reset_required_means_drain_and_reset(line, need):
    p = classify(line.encode())
    e = gpu_host.explain(line)
    assert (p.name, p.label, p.severity) == ("gpu_reset_required", "gpu_hardware_error", "critical")
    assert need in e.phrase and e.remedy.startswith("Drain the node")


# --------------------------------------------------------------------------- host memory vs GPU


@pytest.mark.parametrize(
    ("line", "label", "severity"),
    [
        ("DIMM B2 uncorrectable ECC errors (mcelog)", "host_memory_error", "critical"),
        ("lab: ECC errors on DIMM B2", "host_memory_error", "warning"),
        (
            "EDAC MC3: 1 UE memory read error on CPU_SrcID#1_MC#1_Chan#2_DIMM#0 (channel:2 slot:0)",
            "host_memory_error",
            "critical",
        ),
        (
            "EDAC MC1: 1 CE memory scrubbing error on CPU_SrcID#1_Ha#0_Chan#0_DIMM#0",
            "host_memory_error",
            "warning",
        ),
        ("Memory failure: 0xe16677: already hardware poisoned", "host_memory_error", "critical"),
        ("uncorrectable ECC errors", "host_memory_error", "critical"),
        (
            "RuntimeError: CUDA error: uncorrectable ECC error encountered",
            "gpu_hardware_error",
            "critical",
        ),
        ("NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.", "gpu_hardware_error", "critical"),
        ("dcgm: GPU 3 double-bit ECC error in SRAM", "gpu_hardware_error", "critical"),
    ],
)
def test_host_memory_is_never_a_gpu_fault(line, label, severity):
    p = classify(line.encode())
    e = gpu_host.explain(line)
    assert (p.label, p.severity) == (label, severity)
    assert (e.label, e.severity) == (label, severity)
    if label == "host_memory_error":
        assert "DIMM" in e.remedy and "reset the GPU" not in e.remedy


def test_machine_check_header_is_weak_the_edac_line_names_the_dimm():
    log = (
        b"mce: [Hardware Error]: Machine check events logged\n"
        b"EDAC sbridge MC1: HANDLING MCE MEMORY ERROR\n"
        b"EDAC MC1: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#2_DIMM#0 (channel:2)\n"
    )
    h = first_error(log, kind="app")
    assert (h.line, h.label) == (3, "host_memory_error")


# --------------------------------------------------------------------------- MoXing, Chinese


@pytest.mark.parametrize(
    ("line", "label"),
    [
        (
            "MoxFileNotExistsException: obs://bucket-a/data/train does not exist",
            "input_path_not_found",
        ),
        ("OSError: [Errno 20] Not a directory: '/cache/data_url/112.jpg'", "input_data_invalid"),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: 's3://dataset-ml/Facial/anger'",
            "storage_path_invalid",
        ),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '/cache/data/train.csv'",
            "input_path_not_found",
        ),
        ("FileNotFoundError: [Errno 2] No such file or directory: 'samtools'", "command_not_found"),
        (
            "ERROR - uncaught exception during training: An error occurred (403) when calling the "
            "HeadObject operation: Forbidden",
            "storage_access_denied",
        ),
        (
            "botocore.exceptions.ClientError: An error occurred (404) when calling the HeadObject "
            "operation: Not Found",
            "input_path_not_found",
        ),
    ],
)
def test_moxing_and_object_storage_lines(line, label):
    assert classify(line.encode()).label == label


ZH = [
    ("镜像拉取失败：swr.cn-north-4.myhuaweicloud.com/team/train:1.0", "image_pull_failed"),
    ("存储卷挂载失败，请检查OBS路径", "storage_mount_failed"),
    ("OBS路径不存在: obs://bucket-a/data/", "input_path_not_found"),
    ("访问OBS桶失败：权限不足", "storage_access_denied"),
    ("训练作业排队中，等待资源分配。", "queued_insufficient_resources"),
    ("资源池资源不足", "queued_insufficient_resources"),
    ("NPU显存不足，请减小batch size", "gpu_out_of_memory"),
    ("容器内存不足，进程被终止", "oom_killed"),
    ("磁盘空间不足", "disk_full"),
    ("准备超时，可能是跨区域算法同步或创建共享存储超时", "init_timeout"),
    ("HCCL通信超时", "nccl_communication_error"),
    ("训练作业运行失败", "application_error"),
]


@pytest.mark.parametrize("encoding", ["utf-8", "gbk"])
@pytest.mark.parametrize(("line", "label"), ZH, ids=[z[1] + str(i) for i, z in enumerate(ZH)])
def test_chinese_lines_in_utf8_and_gbk(line, label, encoding):
    p = classify(line.encode(encoding))
    assert p is not None and p.label == label
    assert logscan.first_error(b"ok\n" + line.encode(encoding) + b"\n").line == 2


def test_scanner_still_uses_re2_with_the_platform_patterns():
    re2 = pytest.importorskip("re2")
    for strong in (True, False, None):
        assert type(logscan._combined("app", strong)).__module__.startswith(re2.__name__)


# --------------------------------------------------------------------------- engine: rules


def test_cann_code_in_an_unclaimed_file_gets_the_code_remedy():
    fs = _run(
        _snap(),
        _log(
            "plog.txt",
            "INFO start\nEI0006: 2024-08-05-18:15:21.270.506 Getting socket times out. Reason: x\n",
        ),
    )
    top = fs[0]
    assert top.root_cause == "nccl_communication_error" and top.title.startswith("EI0006 ")
    assert "HCCL_CONNECT_TIMEOUT" in top.remedy and top.evidence[0].line == 2
    assert top.subject.kind == "file"


def test_inner_error_alone_is_a_warning_naming_the_layer():
    fs = _run(_snap(), _log("w.log", "Traceback (most recent call last):\nEZ9999: Inner Error!\n"))
    f = next(f for f in fs if f.title.startswith("EZ9999"))
    assert f.severity == "warning" and "operators" in f.title and f.evidence[0].line == 2


def test_gpu_fault_on_an_idle_node_is_the_nodes_finding():
    node = SlurmNode("gpu7", "IDLE")
    log = _log(
        "dmesg",
        "[ 12.0] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n",
        "dmesg",
        subject="gpu7",
    )
    fs = _run(_snap(nodes=(node,)), log)
    f = next(f for f in fs if f.root_cause == "gpu_hardware_error")
    assert (f.subject.kind, f.subject.id, f.severity) == ("node", "gpu7", "critical")
    assert "Drain" in f.remedy or "drain" in f.remedy


def test_dimm_error_in_a_node_journal_is_host_memory_not_gpu():
    node = SlurmNode("c2", "IDLE", flags=("DRAIN",), reason="lab: ECC errors on DIMM B2")
    log = _log(
        "journal",
        "Nov 29 20:28:30 c2 kernel: EDAC MC0: 1 UE memory read error on CPU_SrcID#0_DIMM#B2\n",
        "journal",
        subject="c2",
    )
    fs = [f for f in _run(_snap(nodes=(node,)), log) if f.subject.id == "c2"]
    assert fs[0].root_cause == "host_memory_error" and fs[0].severity == "critical"
    assert all(f.root_cause != "gpu_hardware_error" for f in fs)


def _tjob(**kw) -> TrainingJob:
    base = dict(
        job_id="job-1",
        name="qwen-sft",
        phase="Failed",
        secondary_phase="Failed",
        create_time=NOW,
        task_statuses=(TaskStatus("worker-0", 1, ""),),
        log_task="worker-0",
    )
    base.update(kw)
    return TrainingJob(**base)


def _tj_findings(job: TrainingJob, *logs: LogText):
    return [
        f
        for f in _run(_snap(kind="modelarts", training_jobs=(job,)), *logs)
        if f.subject.kind == "training_job"
    ]


def test_training_job_log_with_hccl_code_names_it_in_the_title():
    log = "step 10\n[rank3]: EI0002: [PID: 7] 2025-01-01-00:00:00.000.000 notify wait timed out\n"
    (f,) = _tj_findings(_tjob(log_preview=log))
    assert f.root_cause == "nccl_communication_error"
    assert f.title == "Failed: EI0002 HCCL collective timed out (notify wait)"
    assert "HCCL_EXEC_TIMEOUT" in f.remedy and f.evidence[0].line == 2


def test_training_job_with_only_an_inner_error_still_gets_a_cause():
    (f,) = _tj_findings(_tjob(log_preview="EZ9999: Inner Error!\n aicore exception\n"))
    assert f.root_cause == "application_error" and f.title.startswith("Failed: EZ9999")


def test_failed_training_job_with_no_known_cause_says_so():
    (f,) = _tj_findings(_tjob(log_preview="epoch 1\nValueError: bad shape (3, 4)\n"))
    assert f.root_cause == "application_error" and f.severity == "critical"
    assert f.title.startswith("Failed: worker-0 exit 1; first error: ")
    assert any(e.line == 2 for e in f.evidence)


def test_chinese_console_events_are_read():
    ev = (
        JobEvent(
            time=NOW,
            level="Warning",
            source="K8S",
            message="[Pod: modelarts-job-1-worker-0] 镜像拉取失败",
        ),
    )
    job = _tjob(phase="Pending", secondary_phase="Creating", events=ev, task_statuses=())
    fs = _tj_findings(job)
    assert fs[0].root_cause == "image_pull_failed"


def test_chinese_events_say_where_an_initializing_job_is():
    from cockpit.diagnosis.rules import modelarts

    def ev(msg):
        return (JobEvent(time=NOW, level="Warning", source="K8S", message=msg),)

    queued = _tjob(phase="Pending", secondary_phase="", events=ev("训练作业排队中，等待资源分配。"))
    assert modelarts.stuck_where(queued) == "scheduling"
    mount = _tjob(phase="Pending", events=ev("[Pod: modelarts-job-1-worker-0] 存储卷挂载失败"))
    assert modelarts.stuck_where(mount) == "mount"


def test_k8s_scheduling_event_on_a_training_job_names_the_constraint():
    msg = (
        "[Pod: modelarts-job-1-worker-0] FailedScheduling: 0/4 nodes are available: "
        "4 node(s) didn't match Pod's node affinity/selector."
    )
    ev = (JobEvent(time=NOW, level="Warning", source="K8S", message=msg),)
    job = _tjob(phase="Pending", secondary_phase="Creating", events=ev, task_statuses=())
    f = _tj_findings(job)[0]
    assert f.root_cause == "scheduling_constraint_unsatisfied"
    assert "node selector" in f.title and "show-labels" in f.remedy


# --------------------------------------------------------------------------- public reports


@pytest.mark.parametrize("case", BUNDLES, ids=lambda p: p.name)
def test_platform_bundle(case: Path):
    from cockpit.ingest.bundle import diagnose_bundle

    exp = tomllib.loads((case / "expected.toml").read_text())
    assert exp["source_url"].startswith("https://")
    report = diagnose_bundle(str(case)).to_json()
    json.dumps(report)
    top = report["findings"][0]
    assert top["root_cause"] in {exp["root_cause"], *exp.get("also_acceptable", [])}, top["title"]
    assert all(f["root_cause"] in LABELS for f in report["findings"])
    fe = report["first_error"]
    assert (fe["file"], fe["text"].strip()) == (
        exp["first_error_file"],
        exp["first_error_line"].strip(),
    )
    lines = (case / fe["file"]).read_bytes().split(b"\n")
    assert lines[fe["line"] - 1].decode().strip() == fe["text"].strip()
