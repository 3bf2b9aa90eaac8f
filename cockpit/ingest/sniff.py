"""What is this text? Each part of an operator's file is recognised by its content.

The file name and the command typed before the output (``$ sacct -j 42``) are hints that
settle ties and name logs whose content alone is plain program output (``slurm-42.out``);
the content decides: a ``sinfo -R`` table called ``nodes.txt`` is a ``sinfo -R`` table,
and ``squeue | grep bob`` without a header is squeue by the shape of its rows.

A part is either *structured* (a role whose parser turns it into records: squeue, sacct,
seff, sprio, scontrol job/node/partition, sinfo, sinfo -R, df, a ModelArts job) or a *log*
of some kind (slurmctld, slurmd, journal, dmesg, events, docker, mpi, pipeline, cann,
prolog, stdout, stderr, app) that the scanner reads for its first red error.
"""

from __future__ import annotations

import json
import re

from cockpit.ingest import slurm_text as st
from cockpit.ingest.split import command_word
from cockpit.ingest.tables import content_lines
from cockpit.text import strip_ansi

SNIFF = 16384  # bytes of a part looked at to recognise it

STRUCTURED = (
    "scontrol_job",
    "sacct",
    "seff",
    "squeue",
    "sprio",
    "scontrol_node",
    "scontrol_partition",
    "sinfo_r",
    "sinfo",
    "df",
    "modelarts_job",
)
# Log kinds the engine scans as they are; the others are program output ("app").
ENGINE_KINDS = frozenset(
    {"slurmctld", "slurmd", "journal", "dmesg", "events", "stdout", "stderr", "prolog", "app"}
)

JOURNAL = re.compile(
    rb"^(?:[A-Z][a-z]{2} [ \d]\d |\d{4}-\d\d-\d\dT)[\d:.+-]+ (\S+) [\w./@-]+(?:\[\d+\])?: ", re.M
)
_DMESG = re.compile(r"^\[\s*\d+\.\d+\] |^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} ", re.M)
_SLURMCTLD = re.compile(
    r"_slurm_rpc_|sched: Allocate JobId|_job_complete: JobId|slurmctld version|"
    r"\bbackfill: |drain_nodes: |update_node: |job_time_limit: |_pick_best_nodes|"
    r"Node \S+ has low real_memory|Setting node \S+ state to"
)
_SLURMD = re.compile(
    r"Launching batch job \d+|slurmd version|slurmd started on|_run_prolog|"
    r"launch task StepId=|\[job \d+\] "
)
_EVENTS_HEAD = re.compile(r"^(?:LAST SEEN|TYPE)\s+(?:TYPE|REASON)|^Events:\s*$", re.M | re.I)
# a Kubernetes object's reported status (not a spec): its reason/message say why it failed
_K8S_STATUS = re.compile(r"^status:\s*$(?:\n[ \t].*)*?\n[ \t]+(?:reason|message|phase): ", re.M)
_MODELARTS_EVENTS = re.compile(
    r"training job (?:is |was )?(?:created|queuing|running|failed)|训练作业|排队|"
    r"\[Modelarts Service Log\]",
    re.I,
)
# ``docker compose`` service prefix ``web_1  | `` (colour codes around it)
_DOCKER_PREFIX_B = re.compile(
    rb"^(?:\x1b\[[0-9;]*m)*[\w.-]+(?:\x1b\[[0-9;]*m)*[ \t]+\|(?:\x1b\[0m)? "
)
_DOCKER_PREFIX = re.compile(_DOCKER_PREFIX_B.pattern.decode())
_MPI = re.compile(
    r"mpirun noticed|\bORTE\b|\bPRTE\b|Open MPI|MPI_ABORT|\borted\b|HYDU_|mpiexec|"
    r"MPICH|\bPMIx?\b.*(?:error|fail)",
)
_CANN = re.compile(
    r"\[(?:ERROR|WARNING|INFO|EVENT)\] (?:HCCL|ASCENDCL|RUNTIME|DRV|GE|TBE|APP|AICPU|PROFILING)\b"
    r"|\bE[A-Z]\d{4}\b|\bAscend\w*|\bHCCL\b|\bCANN\b"
)
# an error quoted by a program that submits jobs (workflow engines, pipelines, wrappers)
_PIPELINE = re.compile(
    r"\S.*\b(?:sbatch|srun|salloc): error: |Error submitting process|"
    r"Failed to submit process|Batch job submission failed"
)
_XTRACE = re.compile(r"^\++ ", re.M)
# scontrol show node, one-line (-o) or a record over indented lines; a slurm.conf NodeName
# line has neither scontrol's runtime fields nor a State= on an indented line
_SCONTROL_NODE = re.compile(
    r"^\s*NodeName=\S+ (?=[^\n]*State=)(?=[^\n]*(?:CPUAlloc|CPUTot|Reason|Partitions)=)|"
    r"^NodeName=\S+[^\n]*(?:\n[ \t]+[^\n]*)*?\n[ \t]+(?:State|CPUAlloc)=|^NodeName=\S+\s*$",
    re.M,
)
# a batch job's default output file: slurm-<jobid>.out (arrays: slurm-<jobid>_<task>.out)
SLURM_OUT = re.compile(r"slurm-(\d+(?:_\d+)?)(?:\.\w+)?$")


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _name_hint(name: str, command: str) -> str:
    """What a name says: the file's own, or a file the command read (``tail slurmctld.log``)."""
    word = command_word(command)
    if word in {"cat", "tail", "head", "less", "more", "zcat", "grep", "tac"}:
        paths = [t for t in command.split()[1:] if not t.startswith("-")]
        if paths:
            return paths[-1].rsplit("/", 1)[-1].lower()
    return name.rsplit("/", 1)[-1].lower()


def sniff(name: str, data: bytes, command: str = "") -> tuple[str, str]:
    """(role, log kind) of one part: role is a structured kind (squeue, sinfo_r, ...) with
    kind "", or ``log`` with the log's kind, or ``script``."""
    low = _name_hint(name, command)
    word = command_word(command)
    head = data[:SNIFF]
    text = strip_ansi(_text(head))
    lines = content_lines(text)
    first = lines[0].strip() if lines else ""
    got = _json(low, data, head)
    if got:
        return got
    if low.endswith(".conf"):  # slurm.conf's NodeName/PartitionName lines are not state
        return "script", ""
    got = _table(first, lines, text, word, command)
    if got:
        return got, ""
    return _log(low, command, head, text, lines)


def _json(low: str, data: bytes, head: bytes) -> tuple[str, str] | None:
    if not (low.endswith(".json") or head.lstrip()[:1] in (b"{", b"[")):
        return None
    try:
        obj = json.loads(_text(data))
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, dict) and isinstance(obj.get("metadata"), dict) and "status" in obj:
        return "modelarts_job", ""
    if isinstance(obj, (dict, list)) and (
        "event" in low or (isinstance(obj, dict) and ("events" in obj or "items" in obj))
    ):
        return "log", "events"
    return None


def _table(first: str, lines: list[str], text: str, word: str, command: str) -> str:
    """The structured role of a table or record dump, "" when the text is none."""
    if st.is_sinfo_r_header(first):
        return "sinfo_r"
    if st.is_sprio_header(first):
        return "sprio"
    if st.is_sacct_header(first):
        return "sacct"
    if st.is_squeue_header(first):
        return "squeue"
    if st.is_sinfo_header(first):
        return "sinfo"
    if st.is_seff(text):
        return "seff"
    if re.search(r"^\s*JobId=\d+", text, re.M):
        return "scontrol_job"
    if _SCONTROL_NODE.search(text):
        return "scontrol_node"
    if re.search(r"^\s*PartitionName=\S+", text, re.M):
        return "scontrol_partition"
    if re.match(r"FILESYSTEM\s+(SIZE|1K-BLOCKS|INODES|1024-BLOCKS)", first.upper()):
        return "df"
    rows = lines[:200]
    if rows:
        # headerless rows: the command says which tool; without it, most rows must fit
        need = 1 if word in {"sacct", "squeue", "myjobs"} else max(1, int(len(rows) * 0.6))
        if word != "squeue" and sum(map(st.sacct_row_shape, rows)) >= need:
            return "sacct"
        if word != "sacct" and sum(map(st.squeue_row_shape, rows)) >= need:
            return "squeue"
    return ""


def _log(low: str, command: str, head: bytes, text: str, lines: list[str]) -> tuple[str, str]:
    word = command_word(command)
    if "prolog" in low or "epilog" in low:
        return "log", "prolog"
    if word == "journalctl":
        return "log", "journal"
    if word == "dmesg":
        return "log", "dmesg"
    if "slurmctld" in low or _SLURMCTLD.search(text):
        return "log", "slurmctld"
    if JOURNAL.search(head):
        return "log", "journal"
    if ("slurmd" in low and "status" not in low) or _SLURMD.search(text):
        return "log", "slurmd"
    if "dmesg" in low or len(_DMESG.findall(text)) >= 2:
        return "log", "dmesg"
    if (
        "event" in low
        or _EVENTS_HEAD.search(text)
        or (word == "kubectl" and re.search(r"\b(?:describe|events)\b", command))
    ):
        return "log", "events"
    if lines and sum(1 for ln in lines[:50] if _DOCKER_PREFIX.match(ln)) >= len(lines[:50]) / 2:
        return "log", "docker"
    if word in {"docker", "docker-compose", "podman"}:
        return "log", "docker"
    if _MODELARTS_EVENTS.search(text) and len(lines) <= 200:
        return "log", "events" if "event" in low else "app"
    if word in {"mpirun", "mpiexec"} or _MPI.search(text):
        return "log", "mpi"
    if _CANN.search(text):
        return "log", "cann"
    if _PIPELINE.search(text):
        return "log", "pipeline"
    if _XTRACE.search(text) and re.search(r"prolog|epilog", text, re.I):
        return "log", "prolog"
    if SLURM_OUT.search(low):
        return "log", "stderr" if low.endswith(".err") else "stdout"
    if low.endswith((".yaml", ".yml")) and _K8S_STATUS.search(text):
        return "log", "events"  # `kubectl get -o yaml` of a failed object: its status says why
    if re.match(r"^\s*(#!|#SBATCH)", text) or low.endswith(
        (".sbatch", ".slurm", ".job", ".def", ".yaml", ".cfg")
    ):
        return "script", ""
    return "log", "app"


def engine_kind(kind: str) -> str:
    """The log kind the engine scans a part as (docker/mpi/... output is program output)."""
    return kind if kind in ENGINE_KINDS else "app"


def scan_kind(kind: str) -> str:
    """The pattern set a log of ``kind`` is scanned with, as the engine's context does: the
    daemon logs, events and prolog output have their own; everything else is program output."""
    return kind if kind in {"slurmctld", "slurmd", "events", "prolog"} else "app"


def docker_prefix_len(line: bytes) -> int:
    """Length of a ``docker compose`` service prefix (``web_1  | ``) at the start of a line,
    ANSI colour codes included; 0 when there is none."""
    m = _DOCKER_PREFIX_B.match(line)
    return m.end() if m else 0
