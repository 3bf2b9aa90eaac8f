"""Slurm's failure messages, from its own sources, into cockpit/diagnosis/catalogue/slurm.json.

    python3 tools/catalogue/extract_slurm.py /path/to/slurm.git [--print]

Reads a bare git mirror of github.com/SchedMD/slurm (the ``fetch`` tool makes one) at the
newest tag of each release series operators run (22.05 to 26.05), and collects the format
strings of ``error()``, ``fatal()``, the PMIx plugin's ``PMIXP_ERROR*`` and the ``info()`` /
``verbose()`` lines that describe a failure, from slurmctld, stepmgr, slurmd, slurmstepd, srun,
sbatch, salloc and the plugins a job passes through (cgroup, task, proctrack, mpi/pmix,
auth/munge, auth/slurm, cred, prep, jobcomp, job_container, namespace); plus the message table
of ``slurm_errno.c`` (what clients print after ``error: ...: ``). Only messages that name a
failure of a job, step, node or daemon are kept; programming and config-parser noise is not.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import calls, entry, git, show_many, specific_enough, write  # noqa: E402
from mapping import GENERIC, REMEDY, classify  # noqa: E402

from cockpit.diagnosis.domains import domain_of_line  # noqa: E402

SERIES = ("22.05", "23.02", "23.11", "24.05", "24.11", "25.05", "25.11", "26.05")
DIRS = (
    "src/slurmctld",
    "src/stepmgr",
    "src/slurmd",
    "src/srun",
    "src/sbatch",
    "src/salloc",
    "src/plugins/cgroup",
    "src/plugins/task",
    "src/plugins/proctrack",
    "src/plugins/mpi/pmix",
    "src/plugins/auth/munge",
    "src/plugins/auth/slurm",
    "src/plugins/cred",
    "src/plugins/prep",
    "src/plugins/jobcomp",
    "src/plugins/job_container",
    "src/plugins/namespace",
    "src/common/slurm_cred.c",
)
ERRNO_FILE = "src/common/slurm_errno.c"
FUNCS = {
    "error": "error",
    "fatal": "fatal",
    "fatal_abort": "fatal",
    "sched_error": "error",
    "PMIXP_ERROR": "error",
    "PMIXP_ERROR_STD": "error",
    "PMIXP_ERROR_NO": "error",
    "PMIXP_ABORT": "error",
    "info": "info",
    "sched_info": "info",
    "verbose": "verbose",
    "warning": "warning",
}

# words of a failure, of what fails, and of noise (internals, config parsing, accounting)
FAIL = re.compile(
    r"(?i)fail|unable|cannot|can't|can not|could not|couldn't|denied|refused|timed? ?out|"
    r"\blost\b|exceed|killed|abort|invalid|not respond|no space|\berror\b|not found|missing|"
    r"mismatch|differs"
)
SUBJECT = re.compile(
    r"(?i)\b(?:job|step|task|batch|launch|prolog|epilog|cgroup|munge|cred|credential|spool|"
    r"pmix|memory|oom|slurmd|slurmstepd|controller|slurmctld|mount|container|gpu|gres|exec\w*|"
    r"environment|directory|signal|connect\w*|socket|node|namespace|auth\w*|token|fork|pid)\b"
)
NOISE = re.compile(
    r"(?i)unpack|\bpack|xmalloc|bitmap|\bbit_|\blist_|hostlist|state file|state save|should "
    r"never|\bBUG\b|magic|protocol version|malformed|jobacct|accounting_storage|\bassoc|\bqos\b|"
    r"\bbuf\b|\bhash|serializ|\bdump|\bparse|\bdata_|json|yaml|option|argument|usage|"
    r"plugin_context|\blua\b|reservation|trigger|license|federation|\bfed\b|\bcluster\b|burst|"
    r"topology|\bselect\b|het.?job|het_|array|priority|\bwckey|\bresv|\bpart\b|\bpartition\b|"
    r"rpc|\bmsg\b|message|\bconf\b|config|cannot be|NULL|null|\bstrtol|underflow|overflow|"
    r"\bsize\b|record|no (?:longer|more)|checkpoint|db_index|dynamic node|\bmcs\b|cray|aries|"
    r"library directory|node features|node list|invalid node name|delete|update (?:job|node)|"
    r"\bx11|sbcast|bpf|ebpf"
)
# Security violations: only those about a job's launch, steps and nodes (the rest are users
# running admin commands)
_SECURITY_KEEP = re.compile(r"(?i)step|launch|prolog|epilog|node_register|cred|ping|health")
# slurm_errno.c codes worth a template: what a job's launch, credentials, nodes and a
# submission are refused with (the rest are internal or client-usage errors)
ERRNO_KEEP = re.compile(
    r"^(?:ESLURMD_|ESLURM_(?:AUTH|CRED|.*CREDENTIAL|REQUESTED_|TOO_MANY_REQUESTED|"
    r"INVALID_(?:PARTITION_NAME|ACCOUNT|QOS|TIME_LIMIT|NODE_COUNT|TASK_MEMORY|GRES|FEATURE|"
    r"LICENSES|JOB_CREDENTIAL)|ACCOUNTING_POLICY|NODES_BUSY|PARTITION_DOWN|JOB_HELD|"
    r"PORTS_BUSY|INTERCONNECT|PROLOG|EPILOG|MISSING_TIME_LIMIT|NODE_NOT_AVAIL|"
    r"PATHNAME_TOO_LONG|NOT_SUPPORTED|INVALID_BURST)|SLURM_COMMUNICATIONS|SLURMCTLD_|"
    r"SLURM_PROTOCOL_AUTHENTICATION|SLURM_PROTOCOL_SOCKET|ESPANK)"
)
_ERRNO_ROW = re.compile(
    r'\{\s*(?:ERRTAB_ENTRY\(\s*)?(\w+)\s*\)?\s*,\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}', re.S
)


def program(path: str) -> str:
    """Which program prints a source file's messages (its log line prefix)."""
    for part, name in (
        ("slurmstepd", "slurmstepd"),
        ("src/slurmd/common", "slurmstepd"),
        ("src/slurmd", "slurmd"),
        ("src/stepmgr", "slurmctld"),
        ("src/slurmctld", "slurmctld"),
        ("src/srun", "srun"),
        ("src/sbatch", "sbatch"),
        ("src/salloc", "salloc"),
        ("mpi/pmix", "slurmstepd"),
        ("task/", "slurmstepd"),
        ("proctrack/", "slurmstepd"),
        ("cgroup/", "slurmstepd"),
        ("job_container", "slurmstepd"),
        ("namespace", "slurmstepd"),
        ("jobcomp", "slurmctld"),
        ("prep/", "slurmctld"),
    ):
        if part in path:
            return name
    return "slurmd"


def default_domain(path: str) -> str:
    """A message's domain when no rule names a cause: its component's."""
    if "mpi/pmix" in path:
        return "network"
    if "/auth/" in path or "/cred" in path or "slurm_cred" in path:
        return "auth"
    if re.search(r"/(?:cgroup|task|proctrack|job_container|namespace|prep)/", path):
        return "launch"
    if "slurmstepd" in path or "src/slurmd/common" in path or "slurmd/req.c" in path:
        return "launch"
    if "src/stepmgr" in path or "src/srun" in path:
        return "launch"
    if "src/slurmd" in path:
        return "node"
    return "scheduler"


def last_tags(mirror: str) -> dict[str, str]:
    """series -> newest release tag of that series (``slurm-24-11-7-1``)."""
    out: dict[str, tuple[tuple[int, ...], str]] = {}
    for tag in git(mirror, "tag", "--list", "slurm-2*").split():
        m = re.fullmatch(r"slurm-(\d+)-(\d+)-(\d+)-(\d+)", tag)
        if not m:
            continue
        series = f"{m.group(1)}.{m.group(2)}"
        key = tuple(int(x) for x in m.groups()[2:])
        if series in SERIES and (series not in out or key > out[series][0]):
            out[series] = (key, tag)
    return {s: t for s, (_, t) in sorted(out.items())}


def keep(level: str, template: str, label: str) -> bool:
    if "\n" in template.rstrip("\n") or not specific_enough(template):
        return False
    if level in ("info", "verbose", "warning") and not FAIL.search(template):
        return False
    if re.search(r"(?i)security violation", template) and not _SECURITY_KEEP.search(template):
        return False
    if label != GENERIC:
        return True
    return bool(FAIL.search(template) and SUBJECT.search(template) and not NOISE.search(template))


def extract(mirror: str) -> tuple[dict, list[dict]]:
    tags = last_tags(mirror)
    found: dict[str, dict] = {}  # template -> entry (origin: newest version holding it)
    for series, tag in sorted(tags.items(), key=lambda kv: [int(x) for x in kv[0].split(".")]):
        names = git(mirror, "ls-tree", "-r", "--name-only", tag, "--", *DIRS).split()
        files = [f for f in names if f.endswith(".c")]
        srcs = show_many(mirror, [f"{tag}:{f}" for f in files] + [f"{tag}:{ERRNO_FILE}"])
        for ref, src in srcs.items():
            path = ref.split(":", 1)[1]
            if path == ERRNO_FILE:
                rows = _errno_rows(src)
            else:
                rows = [
                    (lvl, t.rstrip("\n"), f"{path}:{line}", program(path), default_domain(path))
                    for lvl, t, line in calls(src, FUNCS, {"PMIXP_ERROR_NO": 1})
                ]
            for level, template, origin, prog, dom in rows:
                _add(found, level, template, origin, prog, dom, series)
    meta = {
        "source": "slurm",
        "upstream": "https://github.com/SchedMD/slurm",
        "versions": {s: t for s, t in tags.items()},
        "generator": "tools/catalogue/extract_slurm.py",
    }
    return meta, list(found.values())


def _errno_rows(src: str) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for m in _ERRNO_ROW.finditer(src):
        code, lits = m.group(1), m.group(2)
        if not ERRNO_KEEP.match(code):
            continue
        text = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', lits))
        line = src.count("\n", 0, m.start()) + 1
        dom = (
            "auth"
            if "CRED" in code or "AUTH" in code
            else ("launch" if code.startswith("ESLURMD_") else "scheduler")
        )
        rows.append(("errno", text, f"{ERRNO_FILE}:{line} ({code})", "srun", dom))
    return rows


def _add(found: dict, level, template, origin, prog, dom, series) -> None:
    e = found.get(template)
    if e is not None:
        if series not in e["versions"]:
            e["versions"].append(series)
        e["origin"] = origin  # the newest version's file:line
        return
    domain, label = classify(template, dom)
    if dom == "auth" and domain != "auth":  # the auth plugins' own words are about auth
        domain, label = "auth", GENERIC
    if label == GENERIC and dom in ("scheduler", "node", "launch"):
        words = domain_of_line(template)  # a core daemon's message about munge, NCCL, memory…
        if words in ("auth", "network", "memory", "accelerator", "storage"):
            domain = words
    if level == "errno":
        if label == GENERIC and (dom == "scheduler" or len(template) < 30):
            return  # a refusal the engine reads from the job's state and reason instead, or
            # words too few to tell from the client's own context
    elif not keep(level, template, label):
        return
    found[template] = entry(
        template,
        level,
        origin,
        [series],
        domain,
        label,
        REMEDY.get(domain, "") if label == GENERIC else "",
    ) | {"program": prog}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mirror", help="bare git mirror of github.com/SchedMD/slurm")
    ap.add_argument("--print", action="store_true", help="print counts only, write nothing")
    args = ap.parse_args()
    meta, entries = extract(args.mirror)
    by_level: dict[str, int] = {}
    for e in entries:
        by_level[e["level"]] = by_level.get(e["level"], 0) + 1
    print(f"{len(entries)} templates {by_level} from {meta['versions']}")
    if not args.print:
        print(write("slurm", meta, entries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
