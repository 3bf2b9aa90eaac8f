"""Huawei Ascend CANN error codes as data: the layer a code names, and what it means for a job.

A CANN code is six characters (CANN error code reference, "Description"): the level (``E``
error; ``W``/``I`` are not failures), one character for the module that raised it, and four
digits, 0000-8999 for user errors and 9000-9999 for internal ones (``E*9999 Inner Error``).
Message wording changes between CANN versions and the same code appears as ``EI0006: ...``,
``Communication_Error_Get_Socket(EI0006)`` or ``ErrCode=EI0006``, so everything here keys on
the code and the few shapes that print it, never on the sentence.

:data:`CODES` covers the codes that name a cause; any other code of a known module falls
back to :data:`FAMILIES` (a layer-level finding that still names the code). Internal codes
are *weak*: a specific code or cause elsewhere in the log wins over them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cockpit.i18n import N_, _
from cockpit.model import Severity

# Second character -> the layer (CANN "Error Code Reference: Description").
LAYERS: dict[str, str] = {
    "1": N_("GE (graph engine)"),
    "2": N_("FE (fusion engine)"),
    "3": N_("AI CPU"),
    "4": N_("TE fusion"),
    "7": N_("vector operator plugin"),
    "8": N_("vector operator"),
    "B": N_("TBE pass compiler"),
    "C": N_("Auto Tune"),
    "D": N_("RL Tune"),
    "E": N_("runtime (RTS)"),
    "F": N_("LxFusion/AutoDeploy"),
    "G": N_("AOE tuning"),
    "H": N_("ACL (AscendCL API)"),
    "I": N_("HCCL (collective communication)"),
    "J": N_("HCCP (device network, RoCE)"),
    "K": N_("profiling"),
    "L": N_("NPU driver"),
    "M": N_("queue scheduling"),
    "N": N_("DVPP (media processing)"),
    "O": N_("AMCT (model compression)"),
    "P": N_("dump"),
    "Z": N_("operators (aclnn / AI Core kernels)"),
}

CODE = r"E[1-9A-PZ][0-9]{4}"
# The shapes CANN and torch_npu print a code in: at a line start or after a log prefix
# ("EI0006: 2024-...", "[rank1]: EI0006: [PID: 1]"), in parentheses after a title
# ("Communication_Error_Get_Socket(EI0006)", "(EZ9999):"), or named as a field
# ("ErrCode=EE1001", "RecentErrMsg: EZ9999"). No lookarounds (the scanner compiles these
# with RE2) and no newline in the prefix (the scanner finds the line where the match starts).
_BEFORE = r"(?:^|[ \t:\[(|])"
_AFTER = r"(?::(?: |$)|\)| ?\[PID)"
_FIELD = r"(?:ErrCode|ErrorCode|[Ee]rror code|RecentErrMsg)[=: ]+"


def code_regex(codes: str = CODE) -> str:
    """Regex (str) matching one of ``codes`` (an alternation) where CANN prints a code."""
    return rf"{_BEFORE}(?:{codes}){_AFTER}|{_FIELD}(?:{codes})\b"


_FIND = re.compile(rf"{_BEFORE}(?P<a>{CODE}){_AFTER}|{_FIELD}(?P<b>{CODE})\b", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class CannCode:
    """What one code means: ``label`` (docs/root-causes.md), a short ``title``, the remedy.
    ``strong`` False: a symptom or generic code, used only when nothing better is in the log."""

    code: str
    title: str
    label: str
    remedy: str
    severity: Severity = "critical"
    strong: bool = True


_HCCL_PEER = N_(
    "This rank waited for a peer: the rank that failed first is usually elsewhere. Compare "
    "the earliest error time in every worker's log (a rank that crashed, ran out of memory or "
    "stalled); fix that rank's cause. "
)
_HCCL_NET = N_(
    "Check the device network between the nodes: hccn_tool -i <dev> -link -g, -net_health -g "
    "and -tls -g on each NPU, switch ports, and that every node runs the same image."
)
_RANKTABLE = N_(
    "The rank table (RANK_TABLE_FILE / hccl json) does not match the devices: regenerate it "
    "(server_count, device_ip from hccn_tool -i <dev> -ip -g, rank_id) or let the platform "
    "generate it."
)
_NPU_OOM = N_(
    "NPU (HBM) memory ran out: use a smaller batch with gradient accumulation, activation "
    "recomputation, mixed precision, or more NPUs (shard the model); check npu-smi info for "
    "other processes holding device memory."
)
_BUSY = N_(
    "Another process holds the NPU: npu-smi info lists it; stop the leftover processes of an "
    "earlier run on that node (or wait ~10 s after killing them) and resubmit."
)


def _c(
    code: str,
    title: str,
    label: str,
    remedy: str,
    severity: Severity = "critical",
    strong: bool = True,
) -> CannCode:
    return CannCode(code, title, label, remedy, severity, strong)


_LIST: tuple[CannCode, ...] = (
    # ---- HCCL (collective communication)
    _c(
        "EI0001",
        N_("HCCL environment variable invalid"),
        "nccl_communication_error",
        N_(
            "The message names the HCCL_* variable and its valid range: fix it in the job "
            "environment (HCCL_CONNECT_TIMEOUT, HCCL_EXEC_TIMEOUT, HCCL_BUFFSIZE, HCCL_IF_IP) and "
            "resubmit."
        ),
    ),
    _c(
        "EI0002",
        N_("HCCL collective timed out (notify wait)"),
        "nccl_communication_error",
        _HCCL_PEER
        + N_(
            "If every rank times out at about the same time, a step took longer than "
            "HCCL_EXEC_TIMEOUT (default 1800 s; raise it only for a known slow step such as a "
            "checkpoint save on one rank), the ranks ran different numbers of steps (uneven data "
            "per rank), or the network dropped packets. "
        )
        + _HCCL_NET,
    ),
    _c(
        "EI0003",
        N_("invalid collective operator argument"),
        "application_error",
        N_(
            "A collective call got an invalid argument (data type, count, reduce op, root rank): "
            "fix the call in the training code."
        ),
    ),
    _c("EI0004", N_("rank table or HCCL config invalid"), "nccl_communication_error", _RANKTABLE),
    _c(
        "EI0005",
        N_("ranks passed different collective arguments"),
        "application_error",
        N_(
            "Ranks called a collective with different arguments or in a different order (tensor "
            "sizes, dtypes): make every rank issue the same collectives with equal shapes (an "
            "uneven last batch: drop_last=True)."
        ),
    ),
    _c(
        "EI0006",
        N_("HCCL connection setup timed out (socket)"),
        "nccl_communication_error",
        _HCCL_PEER
        + N_(
            "If all ranks report it, compare their start times (slow data loading, a "
            "late pod) and raise HCCL_CONNECT_TIMEOUT (default 120 s, e.g. 1200); check that port "
            "16666 and up is free (a leftover process) and the device network. "
        )
        + _HCCL_NET,
    ),
    _c(
        "EI0007",
        N_("HCCL could not allocate memory/notify resources"),
        "gpu_out_of_memory",
        N_(
            "HCCL ran out of device memory or notify resources: lower HCCL_BUFFSIZE or the model's "
            "memory use; "
        )
        + _NPU_OOM,
    ),
    _c(
        "EI0008",
        N_("CANN/HCCL versions differ between ranks"),
        "nccl_communication_error",
        N_(
            "Ranks run different CANN/HCCL versions: use one image for every node and check the "
            "CANN version on each (cat /usr/local/Ascend/ascend-toolkit/latest/version.cfg)."
        ),
    ),
    _c(
        "EI0009",
        N_("HCCL transport initialisation failed"),
        "nccl_communication_error",
        _HCCL_PEER + _HCCL_NET,
    ),
    _c(
        "EI0010",
        N_("HCCL point-to-point communication failed"),
        "nccl_communication_error",
        _HCCL_PEER + _HCCL_NET,
    ),
    _c(
        "EI0011",
        N_("not enough NPU memory for HCCL links (QP)"),
        "gpu_out_of_memory",
        N_(
            "HCCL could not allocate device memory for its RoCE connections: reduce the batch or "
            "the number of connections, or free memory; "
        )
        + _NPU_OOM,
    ),
    _c(
        "EI0012",
        N_("SDMA execution error in a collective"),
        "nccl_communication_error",
        _HCCL_PEER + _HCCL_NET,
    ),
    _c(
        "EI0013",
        N_("RoCE error CQE (retransmissions exceeded)"),
        "nccl_communication_error",
        N_(
            "The link between two NPUs dropped packets beyond the retry limit, or the peer process "
            "exited first. Check whether the peer rank died (its log), then the NIC/switch port: "
        )
        + _HCCL_NET,
    ),
    _c("EI0014", N_("rank table config invalid"), "nccl_communication_error", _RANKTABLE),
    _c("EI0015", N_("rank table detection failed"), "nccl_communication_error", _RANKTABLE),
    _c(
        "EI0016",
        N_("HCCL configuration error"),
        "nccl_communication_error",
        N_("Fix the HCCL setting the message names (environment or rank table) and resubmit."),
    ),
    _c("EI0017", N_("rank table config invalid"), "nccl_communication_error", _RANKTABLE),
    _c("EI0018", N_("UB error CQE"), "nccl_communication_error", _HCCL_PEER + _HCCL_NET),
    _c(
        "EI0019",
        N_("HCCL could not bind IP/port"),
        "nccl_communication_error",
        N_(
            "The port is taken (a previous training process still runs on the node: kill it) or "
            "HCCL_IF_IP names an address the node does not have."
        ),
    ),
    _c(
        "EI0020",
        N_("HCCL could not bind IP/port"),
        "nccl_communication_error",
        N_(
            "The port is taken (a previous training process still runs on the node: kill it) or "
            "HCCL_IF_IP names an address the node does not have."
        ),
    ),
    # ---- HCCP (device network)
    _c(
        "EJ0001",
        N_("HCCP process initialisation failed: the NPU is still held by a previous process"),
        # CANN's own reason text: "Maybe the last training process is running"
        "accelerator_busy",
        N_(
            "A previous training process probably still holds the device network: kill it, wait "
            "about 10 s and resubmit."
        ),
    ),
    _c(
        "EJ0004",
        N_("rank table IP differs from the NPU NIC"),
        "nccl_communication_error",
        _RANKTABLE,
    ),
    # ---- driver
    _c(
        "EL0001",
        N_("NPU absent or abnormal"),
        "gpu_hardware_error",
        N_(
            "npu-smi info on the node shows a missing or unhealthy NPU: drain the node, reset the "
            "device (npu-smi set -t reset -i <id> -c 0) or replace it, then rerun."
        ),
    ),
    _c(
        "EL0002",
        N_("invalid NPU device ID"),
        "gpu_not_available",
        N_(
            "The job asked for an NPU the container does not see: compare "
            "ASCEND_RT_VISIBLE_DEVICES "
            "/ device_id with the devices allotted to the job (npu-smi info)."
        ),
    ),
    _c(
        "EL0003",
        N_("invalid argument to the NPU driver"),
        "application_error",
        N_("A driver call got an invalid argument: see the message and the CANN plog."),
        strong=False,
    ),
    _c("EL0004", N_("NPU memory allocation failed"), "gpu_out_of_memory", _NPU_OOM),
    _c("EL0005", N_("NPU busy (held by another process)"), "accelerator_busy", _BUSY),
    _c(
        "EL0006",
        N_("NPU driver resources exhausted"),
        "application_error",
        N_(
            "Device resources ran out (memory, streams or events): check npu-smi info for other "
            "processes and reduce what the program creates per device."
        ),
        strong=False,
    ),
    _c(
        "EL0007",
        N_("no permission to open the NPU"),
        "gpu_not_available",
        N_(
            "The process cannot open /dev/davinci*: run as a user of the HwHiAiUser group, or "
            "mount "
            "the devices into the container (Ascend docker runtime, ASCEND_VISIBLE_DEVICES)."
        ),
    ),
    _c(
        "EL0008",
        N_("not enough NPU event resources"),
        "application_error",
        N_("The program created more events than the device has: reuse or free them."),
    ),
    _c(
        "EL0009",
        N_("not enough NPU stream resources"),
        "application_error",
        N_("The program created more streams than the device has: use fewer parallel streams."),
    ),
    _c(
        "EL0010",
        N_("not enough NPU notify resources"),
        "application_error",
        N_(
            "The program (or HCCL) used up the device's notify resources: fewer communicators or "
            "streams per device."
        ),
    ),
    _c(
        "EL0011",
        N_("not enough NPU model resources"),
        "application_error",
        N_("Too many models are loaded on the device: unload unused ones."),
    ),
    _c(
        "EL0015",
        N_("invalid NPU device access"),
        "application_error",
        N_(
            "The program accessed device memory it does not own: check the operator inputs; rerun "
            "with ASCEND_LAUNCH_BLOCKING=1 to find the operator."
        ),
    ),
    _c("EL0019", N_("not enough NPU device memory"), "gpu_out_of_memory", _NPU_OOM),
    # ---- runtime
    _c(
        "EE1002",
        N_("stream synchronize timeout"),
        "application_error",
        N_(
            "Work on the device did not finish in time: usually a collective waiting on a stuck "
            "peer (look for HCCL EI0002/EI0006 on any rank) or a hung operator."
        ),
        strong=False,
    ),
    _c(
        "EE1019",
        N_("too many tasks on one stream"),
        "application_error",
        N_("Deliver fewer tasks per stream (synchronise the stream or use more streams)."),
        strong=False,
    ),
    # ---- ACL
    _c(
        "EH0004",
        N_("file named in the message is invalid"),
        "application_error",
        N_("Fix the file the message names (acl.json, a model or config file)."),
        strong=False,
    ),
)
CODES: dict[str, CannCode] = {c.code: c for c in _LIST}

_GENERIC_REMEDY = {
    "I": N_("HCCL failed: ") + _HCCL_PEER + _HCCL_NET,
    "J": N_("The device network (HCCP/RoCE) failed: ") + _HCCL_NET,
    "L": N_(
        "The NPU driver reported an error: npu-smi info on the node (device health, other "
        "processes), the device log (/var/log/npu/slog), then rerun; drain the node if the device "
        "is unhealthy."
    ),
    "E": N_(
        "The Ascend runtime failed: read the first CANN code before this one and the plog "
        "(~/ascend/log); rerun with ASCEND_LAUNCH_BLOCKING=1 to find the operator."
    ),
    "Z": N_(
        "An operator failed on the NPU: rerun with ASCEND_LAUNCH_BLOCKING=1 to find it, check "
        "its input shapes/dtypes, and try the CANN/torch_npu versions that match each other."
    ),
    "1": N_(
        "Graph compilation/execution failed in GE: the message names the operator or parameter; "
        "check the model's unsupported operators and input shapes."
    ),
    "H": N_("An AscendCL call failed: the message names the argument; fix the call or its inputs."),
    "K": N_("Profiling failed: rerun without profiling, or fix the profiling output path."),
}


@dataclass(frozen=True, slots=True)
class CannVerdict:
    """A code found in a line: its table entry (or the family default) and the layer."""

    code: str
    layer: str
    title: str
    label: str
    severity: Severity
    strong: bool
    remedy: str
    internal: bool


def translated(text: str) -> str:
    """A remedy of the table in the current language: its shared sentences (the HCCL peer and
    network checks, the rank table, NPU memory, a busy NPU) and the code's own words between
    them are each a message of the catalogue."""
    if not text:
        return text
    for frag in _FRAGMENTS:
        at = text.find(frag)
        if at >= 0:
            return translated(text[:at]) + _(frag) + translated(text[at + len(frag) :])
    return _(text)


def family_remedy(family: str) -> str:
    """The remedy for a code of module ``family`` (its second character) the table lacks."""
    return translated(
        _GENERIC_REMEDY.get(
            family, N_("The message and the CANN plog (~/ascend/log) say why; fix what it names.")
        )
    )


def layer(code: str) -> str:
    got = LAYERS.get(code[1])
    return _(got) if got else _("CANN module {family}").format(family=code[1])


def lookup(code: str) -> CannVerdict:
    """The verdict for one code: the table entry, else a layer-level one naming the code (in
    the current language)."""
    lay = layer(code)
    internal = code[2] == "9"
    c = CODES.get(code)
    if c is not None:
        return CannVerdict(
            code, lay, _(c.title), c.label, c.severity, c.strong, translated(c.remedy), internal
        )
    fam = code[1]
    label = "nccl_communication_error" if fam in "IJ" and not internal else "application_error"
    remedy = (
        translated(_GENERIC_REMEDY[fam])
        if fam in _GENERIC_REMEDY
        else _(
            "The {layer} layer failed: the message and the CANN plog (~/ascend/log) say why."
        ).format(layer=lay)
    )
    if internal:
        title = _("internal error in {layer}").format(layer=lay)
        remedy = _(
            "An internal CANN error: the cause is usually the first other code or error "
            "printed before it."
        )
        remedy += " " + translated(_GENERIC_REMEDY.get(fam, ""))
    else:
        title = _("{layer} error").format(layer=lay)
    sev: Severity = "warning" if fam == "K" else "critical"
    strong = fam in "IJ" and not internal
    return CannVerdict(code, lay, title, label, sev, strong, remedy.strip(), internal)


# the shared sentences of the remedies, longest first (translated() splits on them)
_FRAGMENTS = sorted((_HCCL_PEER, _HCCL_NET, _RANKTABLE, _NPU_OOM, _BUSY), key=len, reverse=True)


def find_codes(text: str) -> list[str]:
    """CANN codes printed in ``text``, in order, each once."""
    out: list[str] = []
    for m in _FIND.finditer(text):
        c = m.group("a") or m.group("b")
        if c not in out:
            out.append(c)
    return out


def best_code(text: str) -> CannVerdict | None:
    """The code of ``text`` that says most: a strong one first, else a user code before an
    internal one; None if ``text`` prints no code."""
    verdicts = [lookup(c) for c in find_codes(text)]
    if not verdicts:
        return None
    return min(verdicts, key=lambda v: (not v.strong, v.internal))


# ----------------------------------------------------------------- patterns for the scanner


def pattern_specs(strong: bool) -> list[tuple[str, str, str, Severity, int, bool]]:
    """(name, regex, label, severity, tier, strong) for :mod:`cockpit.diagnosis.patterns`:
    one pattern per (label, severity) group of :data:`CODES` of that strength, then the
    family default (strong: the collective families; weak: any other code). Order =
    precedence; the weak ones belong after every strong pattern of the catalogue."""
    groups: dict[tuple[str, Severity], list[str]] = {}
    for c in _LIST:
        if c.strong == strong:
            groups.setdefault((c.label, c.severity), []).append(c.code)
    suffix = "" if strong else "_weak"
    out = [
        (f"cann_{label}{suffix}", code_regex("|".join(codes)), label, sev, 2, strong)
        for (label, sev), codes in groups.items()
    ]
    if strong:
        fam = code_regex(r"E[IJ][0-8][0-9]{3}")
        out.append(("cann_hccl_family", fam, "nccl_communication_error", "critical", 2, True))
    else:
        out.append(("cann_code", code_regex(), "application_error", "critical", 2, False))
    return out
