"""The failure catalogue from the producers themselves: message templates as data.

Each ``*.json`` file here is one producer's messages (Slurm, MUNGE, NCCL, PyTorch
distributed, the Linux kernel), extracted from its sources at the versions operators run by
``tools/catalogue/`` (see docs/root-causes.md, "The catalogue"): the template as the source
writes it, the regex it prints as, where it comes from (file:line), the versions that have it,
and the failure domain and cause label it maps to.

The engine uses it two ways. A template that names a cause becomes a strong scanner pattern
(after the hand-written ones, so those keep precedence); a template that only names a domain
becomes a weak pattern, so the line is never "nothing wrong", and :func:`domain_of` routes an
unrecognised line by the template it matches before falling back to its words.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cockpit.diagnosis.catalogue.printf import instantiate

GENERIC = "unrecognised_failure"
SOURCES = (
    "slurm",
    "munge",
    "nccl",
    "torch",
    "kernel",
    "ompi",
    "pmix",
    "ucx",
    "cann",
    "torch_npu",
    "npusmi",
    "volcano",
    "kueue",
    "kube",
    "lustre",
    "nfs",
    "gpfs",
    "obs",
    "hccl",
    "kube_reasons",
    "moxing",
    "cuda",
    "nvml",
    "cuda_libs",
)
_DIR = Path(__file__).parent
# how each program's lines look in the logs operators have (for generated examples)
_PREFIX = {
    "slurmctld": "[2026-12-04T10:00:00.123] {lvl}",
    "slurmd": "[2026-12-04T10:00:00.123] {lvl}",
    "slurmstepd": "[2026-12-04T10:00:00.123] [4242.0] {lvl}",
    "srun": "srun: {lvl}",
    "sbatch": "sbatch: {lvl}",
    "salloc": "salloc: {lvl}",
    "munged": "2026-12-04 10:00:00 +0800 {Lvl}",
    "nccl": "gpu-node-07:12345:12399 [0] NCCL WARN ",
    "torch": "[rank0]:[E1204 10:00:00.123456789 ProcessGroupNCCL.cpp:629] ",
    "kernel": "[183424.512345] ",
    "ompi": "",  # mpirun's show_help box: the message's lines stand alone
    "pmix": "[gpu-node-07:12345] ",
    "ucx": "[1733390400.123456] [gpu-node-07:12345:0]       ib_iface.c:123  UCX  ERROR ",
    # CANN prints the code, then the process and a stamp, then the message
    "cann": "{code}: [PID: 4242] 2026-12-04-10:00:00.123.456 ",
    "torch_npu": "[rank3]: RuntimeError: ",
    "npusmi": "",
    # volcano-scheduler's klog line; Kueue's Pending event row in kubectl describe
    "volcano": "E1204 10:00:00.123456       1 session.go:123] ",
    "kueue": "  Warning  Pending  30s  kueue-admission  ",
    "kube": "  Warning  Failed     2m (x4 over 6m)  kubelet  ",
    "lustre": "[183424.512345] LustreError: 4242:0:(client.c:1234:ptlrpc_check_set()) ",
    "gpfs": "2026-12-04_10:00:00.123+0800: [X] ",
    "nfs": "",
    "obs": "2026-12-04 10:00:00,123|process:4242|thread:139872|ERROR|HTTP(s)+XML|",
    # the plog: [LEVEL] HCCL(pid,process):stamp [file:line][pid][tid]
    "hccl": "[ERROR] HCCL(4242,python):2026-12-04-10:00:00.123.456 [hccl_socket.cc:1][4242][4250]",
}
# sources whose lines only job logs hold (never slurmctld/slurmd logs): the hand-written weak
# patterns that recognised them at extraction time apply wherever they appear
_JOB_LOG_SOURCES = frozenset(
    {
        "ompi",
        "pmix",
        "ucx",
        "cann",
        "torch_npu",
        "npusmi",
        "volcano",
        "kueue",
        "kube",
        "hccl",
        "kube_reasons",
        "moxing",
        "cuda",
        "nvml",
        "cuda_libs",
    }
)
# a log kind the scanner is told for each program's lines
KIND = {"slurmctld": "slurmctld", "slurmd": "slurmd", "slurmstepd": "slurmd", "munged": "journal"}


@dataclass(frozen=True, slots=True)
class Template:
    source: str
    template: str
    regex: str
    level: str
    origin: str
    versions: tuple[str, ...]
    domain: str
    label: str
    program: str
    remedy: str = ""
    known: str = ""  # the hand-written pattern that already recognised it (extraction time)
    known_label: str = ""  # and the label it gave
    known_strong: bool = False  # and whether it was a strong (cause-naming) pattern
    code: str = ""  # the error code the line carries beside the message (CANN's E-codes)
    message: str = ""  # what a code name prints after it (CUDA, NVML: cudaGetErrorString's)

    @property
    def specific(self) -> bool:
        return self.label != GENERIC

    @property
    def tier(self) -> int:
        return {"slurmctld": 0, "srun": 0, "sbatch": 0, "salloc": 0}.get(
            self.program, 2 if self.program in ("torch", "nccl", "cuda", "cuda_libs") else 1
        )


def example_line(t: Template) -> str:
    """The template printed with realistic values inside a realistic line of its program."""
    msg = instantiate(t.template)
    if t.source == "munge" and t.level == "errno":  # Slurm's auth/munge prints munge_strerror()
        return f"[2026-12-04T10:00:00.123] error: Munge decode failed: {msg}"
    if t.program == "kube_reasons":  # a row of kubectl describe's events, or of get pods
        if t.level == "warning":
            return f"  Warning  {msg}  2m (x4 over 6m)  kubelet"
        return f"train-worker-0   0/1     {msg}   4 (62s ago)   6m"
    if t.program == "moxing":  # its OBS error block's lines, an exception, or a root log line
        if t.template.startswith(("errorCode:", "errorMessage:")):
            return "    " + msg
        if t.template.startswith("Mox"):
            return "moxing.framework.file.file_io." + msg
        return ("WARNING:root:" if t.level == "warning" else "ERROR:root:") + msg
    if t.source in _CUDA_LINE:
        return _cuda_line(t, msg)
    if t.level == "errno":  # a client prints slurm_strerror() after its own words
        return f"srun: error: Unable to create step for job 4242: {msg}"
    lvl = {"error": "error: ", "fatal": "fatal: ", "warning": "warning: "}.get(t.level, "")
    head = _PREFIX.get(t.program, "").format(
        lvl=lvl, Lvl=lvl.capitalize().replace(": ", ": "), code=t.code
    )
    if t.program == "munged" and not lvl:
        head = head.format(Lvl="Notice: ")
    return head + msg


# how the CUDA stack's lines reach a job log: a code name with the message after it as CuPy
# (the runtime's) and TensorFlow (the driver API's) print it, nvidia-smi's line alone, a
# library's status inside PyTorch's RuntimeError
_CUDA_LINE = {
    "cuda": {
        "runtime_name": "cupy_backends.cuda.api.runtime.CUDARuntimeError: {msg}: {message}",
        "driver_name": "2026-12-04 10:00:00.123456: E external/local_xla/xla/stream_executor/"
        "cuda/cuda_driver.cc:152] failed call to cuInit: {msg}: {message}",
        "error": "RuntimeError: CUDA error: {msg}",
    },
    "nvml": {"runtime_name": "pynvml.NVMLError_{bare}: {message}", "error": "{msg}"},
    "cuda_libs": {
        "CUBLAS": "RuntimeError: CUDA error: {msg} when calling `cublasCreate(handle)`",
        "CUDNN": "RuntimeError: cuDNN error: {msg}",
        "CUFFT": "RuntimeError: cuFFT error: {msg}",
        "CUSOLVER": "RuntimeError: cusolver error: {msg}, when calling `cusolverDnCreate(handle)`",
    },
}


def _cuda_line(t: Template, msg: str) -> str:
    forms = _CUDA_LINE[t.source]
    form = forms[t.template.split("_")[0]] if t.source == "cuda_libs" else forms[t.level]
    msg = msg.removeprefix("CUDA error: ")
    bare = msg.removeprefix("NVMLError_")
    return form.format(msg=msg, message=t.message, bare=bare)


@lru_cache(maxsize=1)
def templates() -> tuple[Template, ...]:
    out: list[Template] = []
    # JSON gives each template its own copy of the values many share (its level, domain,
    # label, release list, remedy): one object per distinct value (~2 of the catalogue's
    # ~4 MB, held by every cockpit process)
    shared: dict = {}
    one = shared.setdefault
    for source in SOURCES:
        path = _DIR / f"{source}.json"
        if not path.is_file():
            continue
        doc = json.loads(path.read_text(encoding="utf-8"))
        for e in doc["templates"]:
            versions = tuple(one(v, v) for v in e["versions"])
            out.append(
                Template(
                    source=source,
                    template=e["template"],
                    # CANN may print a message without the reference's final period (E30006
                    # "Failed to verify the OPP" under torch_npu, batch 27): the words match,
                    # not the stop
                    regex=e["regex"].removesuffix(r"\.") if source == "cann" else e["regex"],
                    level=one(e["level"], e["level"]),
                    origin=e["origin"],
                    versions=one(versions, versions),
                    domain=one(e["domain"], e["domain"]),
                    label=one(e["label"], e["label"]),
                    program=one(p := e.get("program", source), p),
                    remedy=one(r := e.get("remedy", ""), r),
                    known=one(k := e.get("known", ""), k),
                    known_label=one(kl := e.get("known_label", ""), kl),
                    known_strong=e.get("known_strong", False),
                    code=e.get("code", "") if source == "cann" else "",
                    message=e.get("message", ""),
                )
            )
    return tuple(out)


def pattern_specs(strong: bool) -> list[tuple[str, str, str, str, int, bool]]:
    """(name, regex, label, severity, tier, strong) rows for the scanner: one pattern per
    source, label and tier (an alternation of its templates), only for templates no
    hand-written pattern already recognised. Strong: the templates naming a cause; weak: those
    naming only a domain (labelled ``application_error`` like the other weak symptoms; their
    domain comes from :func:`domain_of`)."""
    groups: dict[tuple[str, str, int], list[str]] = {}
    for t in templates():
        if t.specific != strong:
            continue
        if not strong and t.known and t.source in _JOB_LOG_SOURCES:
            # a hand-written weak pattern already makes it an error line in every job log
            # (its domain still comes from domain_of): one regex less for the scanner's DFA
            continue
        if t.specific and t.known_label == t.label and not t.known_strong:
            continue  # a hand-written pattern keeps it weak on purpose (a symptom)
        label = t.label if strong else "application_error"
        groups.setdefault((t.source, label, t.tier), []).append(t.regex)
    rows = []
    for (source, label, tier), rxs in groups.items():
        sev = "warning" if label == "preempted" or not strong else "critical"
        name = f"catalogue_{source}_{label}_t{tier}" + ("" if strong else "_domain")
        rows.append((name, "|".join(f"(?:{r})" for r in rxs), label, sev, tier, strong))
    return rows


@lru_cache(maxsize=2)
def _by_domain(specific: bool) -> re.Pattern[str] | None:
    """One regex whose named groups are the domains, over the templates naming a cause
    (``specific``) or only a domain."""
    alts: dict[str, list[str]] = {}
    for t in templates():
        if t.specific == specific:
            alts.setdefault(t.domain, []).append(t.regex)
    if not alts:
        return None
    return re.compile("|".join(f"(?P<{d}>{'|'.join(rx)})" for d, rx in alts.items()))


def domain_of(text: str) -> str | None:
    """The domain of the catalogue template ``text`` holds, None when it holds none. A template
    naming a cause routes before one naming only a domain (in ``Unable to create step for job
    7: Invalid job credential`` the cause, not the context it failed in); among several, the
    longest match."""
    for specific in (True, False):
        rx = _by_domain(specific)
        m = rx.search(text) if rx is not None else None
        if m is None:
            continue
        best = m
        while (m := rx.search(text, m.start() + 1)) is not None:
            if m.end() - m.start() >= best.end() - best.start():
                best = m
        return best.lastgroup
    return None


def own_words(t: Template) -> str:
    """The message alone as its program prints it, without the log line's stamp (NCCL's
    ``NCCL WARN`` and a MUNGE error's ``munge`` are part of the words)."""
    msg = instantiate(t.template)
    if t.program == "nccl":
        return "NCCL WARN " + msg
    if t.program == "ucx":
        return "UCX  ERROR " + msg
    if t.code:
        return f"{t.code}: {msg}"
    if t.program == "kube_reasons" and t.level == "warning":  # an event's reason and type
        return "Warning  " + msg
    if t.program == "moxing" and t.regex.startswith("ERROR:root:"):  # the logger's own header
        return "ERROR:root:" + msg
    if t.source == "munge" and t.level == "errno":
        return "Munge decode failed: " + msg
    return msg


def match(text: str) -> Template | None:
    """The catalogue template a line holds (the first in catalogue order), for tests and docs."""
    for t in templates():
        if _compiled(t.regex).search(text):
            return t
    return None


@lru_cache(maxsize=4096)
def _compiled(rx: str) -> re.Pattern[str]:
    return re.compile(rx)
