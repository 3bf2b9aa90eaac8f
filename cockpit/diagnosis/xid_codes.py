"""GPU host faults as data: NVIDIA Xid codes, GPU reset requests, and host-memory ECC.

The NVIDIA driver logs ``NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus`` in
dmesg/journal. The code decides the action (NVIDIA Xid catalog, "Resolution Bucket"): some
Xids are the *application's* fault on a healthy GPU (13, 31, 43: restart the app, fix the
code), some are the *hardware's* (48, 62, 64, 74, 79, 95, 119: drain the node, reset the GPU,
replace it if it recurs), some are follow-ons of an earlier Xid (45) or informational (63,
92, 94). Xid 154 states the recovery action the driver needs (GPU reset, node reboot).

Host memory errors (mcelog, EDAC, ``DIMM``, machine checks) are a different fault with a
different remedy: they are never a GPU fault, and an ``ECC`` line that names no device is
read as host memory, the only memory every node has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cockpit.i18n import N_, _
from cockpit.model import Severity

# app: the program faulted on a healthy GPU; hw: drain + reset; info: monitor / act when
# convenient; follow: a consequence of an earlier Xid (weak).
KINDS = ("app", "hw", "info", "follow")


@dataclass(frozen=True, slots=True)
class Xid:
    code: int
    meaning: str
    kind: str
    action: str  # what the NVIDIA catalog asks first, in words


_RESET = N_(
    "drain the node, reset the GPU (nvidia-smi -r -i <gpu>) or reboot; replace it if it recurs"
)
_APP = N_("restart the application; fix the code if it repeats (compute-sanitizer)")

XIDS: dict[int, Xid] = {
    x.code: x
    for x in (
        Xid(8, N_("GPU stopped processing (channel idle timeout)"), "app", _APP),
        Xid(11, N_("invalid or corrupted push buffer stream"), "app", _APP),
        Xid(
            13,
            N_("graphics engine exception (illegal instruction/address in a kernel)"),
            "app",
            _APP,
        ),
        Xid(25, N_("invalid or illegal push buffer stream"), "app", _APP),
        Xid(31, N_("GPU memory page fault (MMU fault: illegal address)"), "app", _APP),
        Xid(32, N_("invalid or corrupted push buffer stream"), "app", _APP),
        Xid(38, N_("driver firmware error"), "hw", _RESET),
        Xid(
            43,
            N_("GPU stopped processing (follows a fault in the application)"),
            "follow",
            N_("look at the Xid or error logged just before it"),
        ),
        Xid(
            45,
            N_("preemptive cleanup after an earlier error"),
            "follow",
            N_("look at the Xid logged just before it"),
        ),
        Xid(46, N_("GPU stopped processing"), "hw", _RESET),
        Xid(
            48,
            N_("double-bit (uncorrectable) ECC error"),
            "hw",
            N_(
                "drain the node and reset the GPU to retire the page / activate the remapped row; "
                "replace the GPU if Xid 64 or a remap failure follows"
            ),
        ),
        Xid(56, N_("display engine error"), "hw", _RESET),
        Xid(57, N_("error programming video memory interface"), "hw", _RESET),
        Xid(58, N_("unstable video memory interface"), "hw", _RESET),
        Xid(61, N_("internal micro-controller breakpoint/warning"), "hw", _RESET),
        Xid(62, N_("internal micro-controller halt"), "hw", _RESET),
        Xid(
            63,
            N_("ECC page retirement or row remapping recorded"),
            "info",
            N_("reset the GPU when convenient to activate the remapping"),
        ),
        Xid(
            64,
            N_("ECC page retirement or row remapping failed"),
            "hw",
            N_("drain the node and replace the GPU (memory repair failed)"),
        ),
        Xid(69, N_("graphics engine class error"), "app", _APP),
        Xid(
            74,
            N_("NVLink error"),
            "hw",
            N_("drain the node, check nvidia-smi nvlink -e, reset the GPUs; replace if it recurs"),
        ),
        Xid(
            79,
            N_("GPU has fallen off the bus"),
            "hw",
            N_("drain the node and reboot it (power/PCIe/thermal); replace the GPU if it recurs"),
        ),
        Xid(
            92,
            N_("high single-bit ECC error rate"),
            "info",
            N_("monitor; plan a reset, and watch for Xid 48/64"),
        ),
        Xid(
            94,
            N_("contained ECC error (only the app that hit it is affected)"),
            "info",
            N_("restart the affected application; reset the GPU when convenient"),
        ),
        Xid(95, N_("uncontained ECC error (every app on the GPU is affected)"), "hw", _RESET),
        Xid(109, N_("context switch timeout"), "hw", _RESET),
        Xid(110, N_("security fault"), "hw", _RESET),
        Xid(
            119,
            N_("GSP RPC timeout"),
            "hw",
            N_(
                "drain the node, reset the GPU (nvidia-smi -r -i <gpu>) or reboot; replace it if "
                "it "
                "recurs; on repeated 119/120 after a driver change, try the GSP-off setting "
                "(NVreg_EnableGpuFirmware=0) or another driver"
            ),
        ),
        Xid(120, N_("GSP error"), "hw", _RESET),
        Xid(121, N_("C2C link corrected error"), "info", N_("monitor")),
        Xid(136, N_("link training failed"), "hw", _RESET),
        Xid(137, N_("NVLink privilege error (illegal peer access by the app)"), "app", _APP),
        Xid(140, N_("ECC unrecovered error"), "hw", _RESET),
        Xid(143, N_("GPU initialization failure"), "hw", _RESET),
        Xid(144, N_("NVLink SAW error"), "hw", _RESET),
        Xid(145, N_("NVLink RLW error"), "hw", _RESET),
        Xid(146, N_("NVLink TLW error"), "hw", _RESET),
        Xid(147, N_("NVLink TREX error"), "hw", _RESET),
        Xid(148, N_("NVLink NVLPW_CTRL error"), "hw", _RESET),
        Xid(149, N_("NVLink NETIR error"), "hw", _RESET),
        Xid(150, N_("NVLink MSE error"), "hw", _RESET),
        Xid(151, N_("key rotation error"), "hw", N_("reboot the node")),
        Xid(
            155,
            N_("NVLink software-defined error"),
            "info",
            N_("reset only if the links stay down"),
        ),
        Xid(156, N_("resource retirement event"), "info", N_("monitor")),
        Xid(
            157,
            N_("resource retirement failure (no repair capacity left)"),
            "hw",
            N_("drain the node and replace the GPU"),
        ),
        Xid(158, N_("GPU fatal timeout"), "hw", _RESET),
    )
}

# "NVRM: Xid (PCI:0000:3b:00): 79, ..." / "Xid 79" / device plugin "Xid=48"
# NVRM's "Xid (PCI:0000:3b:00): 79", and NHC's check_xid_errors: "Found XID errors: 63"
XID_PREFIX = r"\b(?:Xid(?: \((?:PCI:)?[0-9A-Fa-f:.]+\))?[:=]? ?|XID errors: )"
_XID_NUM = re.compile(XID_PREFIX + r"(\d{1,3})\b")


def xid_number(line: str) -> int | None:
    m = _XID_NUM.search(line)
    return int(m.group(1)) if m else None


def _codes(kind: str) -> str:
    return "|".join(str(c) for c, x in sorted(XIDS.items()) if x.kind == kind)


# 154 and the driver's "reset required": the action the driver needs, whatever came before.
RESET_RX = (
    r"GPU recovery action changed from \S+ \([^)]*\) to \S+ \((?:GPU Reset Required|"
    r"Node Reboot Required|OS Reboot|PF FLR|Drain and Reset|Drain P2P)\)|NV_ERR_RESET_REQUIRED|"
    r"GPU requires reset|(?:GPU|NVRM|nvidia)[^\n]*[Rr]eset [Rr]equired|requiring os reboot"
)
_GPU_ECC = (
    # PyTorch < 1.5 said "cuda runtime error (39) : uncorrectable ECC error encountered"
    r"CUDA error: uncorrectable ECC|cuda runtime error \(\d+\) : uncorrectable ECC|"
    # CUDA's own string for error 214/39, whatever wraps it (ggml's "CUDA error:" with no
    # space, Paddle's "Cuda Error:", an API's JSON answer): the host's EDAC never words it so
    r"uncorrectable ECC error encountered|"
    r"cudaErrorECCUncorrectable|ECC_UNCORRECTABLE|"
    r"GPU has fallen off the bus|infoROM is corrupted|Remapping Failure Occurred[ \t]*:[ \t]*Yes|"
    # NVML (nvidia-smi, pynvml) lost the device: no handle for a GPU the bus still lists
    r"Unable to determine the device handle for GPU ?[0-9A-Fa-f:.]+: (?:Unknown Error|GPU is lost)|"
    r"GPU is lost\. Reboot the system|NVMLError_GpuIsLost|"
    r"(?:GPU|NVRM|nvidia|HBM|SRAM)[^\n]*(?:uncorrectable ECC|double[- ]bit ECC)|"
    r"(?:uncorrectable ECC|double[- ]bit ECC)[^\n]*(?:GPU|NVRM|nvidia)"
)
# Ascend NPU hardware: the driver/HDC heartbeat and HBM multi-bit ECC.
_NPU_HW = (
    r"(?:NPU|npu|[Dd]evice|davinci)[^\n]*heartbeat (?:lost|timeout)|"
    r"[Hh][Bb][Mm][^\n]*(?:multi[- ]bit|uncorrectable)[^\n]*(?:ECC|ecc)"
)
# Host memory: uncorrectable first (critical), then corrected/machine-check noise (warning).
HOST_UE_RX = (
    r"EDAC[^\n]*\b\d+ UE\b|EDAC[^\n]*[Uu]ncorrect|\bUE memory (?:read|scrubbing|write) error|"
    r"DIMM[^\n]*(?:uncorrectable|\bUE\b)|(?:[Uu]ncorrectable|[Uu]ncorrected)[^\n]*(?:DIMM|"
    r"memory error)|Memory failure: 0x[0-9a-f]+|[Uu]ncorrectable ECC"
)
HOST_CE_RX = (
    r"EDAC[^\n]*\b\d+ CE\b|\bCE memory (?:read|scrubbing|write) error|"
    r"\bDIMM\b[^\n]*\bECC\b|\bECC\b[^\n]*\bDIMM\b|\bECC errors?\b"
)
# The kernel's machine-check headers announce an error that the EDAC/mcelog line names: weak.
HOST_MCE_RX = (
    r"mce: \[Hardware Error\]|Machine [Cc]heck (?:[Ee]vents? logged|[Ee]xception)|"
    r"HANDLING MCE MEMORY ERROR|\bmcelog\b"
)


def xid_class(code: int | None) -> Xid | None:
    return XIDS.get(code) if code is not None else None


def pattern_specs(strong: bool) -> list[tuple[str, str, str, Severity, int, bool]]:
    """(name, regex, label, severity, tier, strong) in precedence order. ``gpu_fault`` (the
    hardware Xids and GPU memory faults) keeps the name the catalogue always had; a GPU line
    comes before any host-memory one, so "uncorrectable ECC" next to NVRM stays a GPU fault."""
    x = XID_PREFIX
    if not strong:
        # unknown codes are weak too: a listed Xid or another cause in the log says more
        return [
            (
                "gpu_xid_follow_on",
                rf"{x}(?:{_codes('follow')})\b",
                "application_error",
                "warning",
                1,
                False,
            ),
            ("gpu_xid_other", rf"{x}[0-9]{{1,3}}\b", "gpu_hardware_error", "warning", 1, False),
            ("host_mce", HOST_MCE_RX, "host_memory_error", "warning", 1, False),
        ]
    return [
        ("gpu_reset_required", RESET_RX, "gpu_hardware_error", "critical", 1, True),
        ("gpu_xid_app", rf"{x}(?:{_codes('app')})\b", "application_error", "warning", 1, True),
        ("gpu_xid_info", rf"{x}(?:{_codes('info')})\b", "gpu_hardware_error", "warning", 1, True),
        (
            "gpu_fault",
            rf"{x}(?:{_codes('hw')})\b|{_GPU_ECC}|{_NPU_HW}",
            "gpu_hardware_error",
            "critical",
            1,
            True,
        ),
        ("host_memory_ue", HOST_UE_RX, "host_memory_error", "critical", 1, True),
        ("host_memory_ce", HOST_CE_RX, "host_memory_error", "warning", 1, True),
    ]


@dataclass(frozen=True, slots=True)
class GpuHostVerdict:
    label: str
    severity: Severity
    what: str
    remedy: str


_HOST_REMEDY = N_(
    "Host (CPU-side) memory, not the GPU: find the DIMM (edac-util -v, ras-mc-ctl --errors, "
    "mcelog --client or the BMC/iLO event log). Uncorrectable errors: drain the node and have "
    "the DIMM replaced before resuming it; a steady stream of corrected errors on one DIMM: "
    "schedule the replacement. If the node has GPUs and the line names none, nvidia-smi -q -d "
    "ECC rules the GPUs in or out."
)
_RECOVERY = re.compile(r"to \S+ \(([^)]*)\)")


def describe(line: str) -> GpuHostVerdict | None:
    """What a GPU/host-memory fault line means and what to do; None for other lines."""
    if re.search(RESET_RX, line):
        m = _RECOVERY.search(line)
        action = m.group(1) if m else ""
        reboot = "Reboot" in action
        return GpuHostVerdict(
            "gpu_hardware_error",
            "critical",
            (_("the driver needs a node reboot") if reboot else _("the driver needs a GPU reset"))
            + (f" (Xid 154: {action})" if action else ""),
            _(
                "Drain the node so no new job lands on it, then reboot it; check the Xid logged "
                "just before this one for the fault itself, and replace the GPU if it recurs."
            )
            if reboot
            else _(
                "Drain the node so no new job lands on it, then reset the GPU (nvidia-smi -r -i "
                "<gpu>) or reboot; check the Xid logged just before this one for the fault itself, "
                "and replace the GPU if it recurs."
            ),
        )
    code = xid_number(line)
    if code is not None:
        x = XIDS.get(code)
        if x is None:
            return GpuHostVerdict(
                "gpu_hardware_error",
                "warning",
                _("Xid {code} (not in the table)").format(code=code),
                _(
                    "Look the code up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors); "
                    "if the job died with it, drain the node and reset the GPU before reuse."
                ),
            )
        if x.kind == "app":
            return GpuHostVerdict(
                "application_error",
                "warning",
                _("Xid {code}: {meaning}, an application fault on a healthy GPU").format(
                    code=code, meaning=_(x.meaning)
                ),
                _(
                    "Usually the program's bug, not the node: {action}. Drain the node only if "
                    "different programs hit it on the same GPU."
                ).format(action=_(x.action)),
            )
        if x.kind == "follow":
            action = _(x.action)
            return GpuHostVerdict(
                "application_error", "warning", f"Xid {code}: {_(x.meaning)}", action.capitalize()
            )
        sev: Severity = "warning" if x.kind == "info" else "critical"
        return GpuHostVerdict(
            "gpu_hardware_error",
            sev,
            f"Xid {code}: {_(x.meaning)}",
            _("{action}.").format(action=(a := _(x.action))[0].upper() + a[1:]),
        )
    if re.search(_GPU_ECC, line) or re.search(_NPU_HW, line):
        return GpuHostVerdict(
            "gpu_hardware_error",
            "critical",
            _("GPU/NPU hardware fault (uncorrectable memory error or device lost)"),
            _(
                "Drain the node, check nvidia-smi -q -d ECC,ROW_REMAPPER (npu-smi info on "
                "Ascend), reset the device or reboot; replace it if it recurs."
            ),
        )
    if re.search(HOST_UE_RX, line):
        return GpuHostVerdict(
            "host_memory_error",
            "critical",
            _("uncorrectable host memory (DIMM) error"),
            _(_HOST_REMEDY),
        )
    if re.search(HOST_CE_RX, line) or re.search(HOST_MCE_RX, line):
        return GpuHostVerdict(
            "host_memory_error",
            "warning",
            _("host memory errors (corrected ECC / machine check)"),
            _(_HOST_REMEDY),
        )
    return None
