"""Open MPI, PRRTE, PMIx and UCX messages into cockpit/diagnosis/catalogue/{ompi,pmix,ucx}.json.

    python3 tools/catalogue/extract_mpi.py --ompi ompi.git --prrte prrte.git \
        --pmix openpmix.git --ucx ucx.git

Reads bare git mirrors (``fetch github:open-mpi/ompi`` etc.) at the last tag of each series
operators run: Open MPI 4.0, 4.1 (ORTE, PMIx 3.2 inside) and 5.0 (PRRTE 3.0), PMIx 3.2, 4.2
and 5.0, UCX 1.12-1.19. What an operator sees of them:

* ``show_help`` topics (``help-*.txt``): the boxed messages mpirun prints between dashed
  lines (``ORTE has lost communication with a remote daemon.``); the topic's first line is the
  template, kept when its first paragraph says something failed;
* ``ORTE_ERROR_LOG`` / ``PMIX ERROR: <status> in file <f> at line <n>``: one template per
  status string of the error tables (``UNREACHABLE``, ``PMIX_ERR_UNREACH``);
* ``BTL_ERROR((...))`` and ``MCA_COMMON_UCX_ERROR`` / ``PML_UCX_ERROR`` lines of Open MPI's
  transports;
* UCX's ``ucs_error()`` / ``ucs_fatal()`` (``[t] [host:pid:tid] file.c:N  UCX  ERROR <msg>``)
  about the transports, memory registration, the wire-up and CUDA.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import calls, entry, git, show_many, specific_enough, string_arg, write  # noqa: E402
from mapping import REMEDY, classify  # noqa: E402

OMPI_TAGS = {"4.0": "v4.0.7", "4.1": "v4.1.8", "5.0": "v5.0.10"}
PRRTE_TAGS = {"5.0": "v3.0.14"}  # the PRRTE Open MPI 5.0.x ships (3rd-party/prrte)
PMIX_TAGS = {"3.2": "v3.2.5", "4.2": "v4.2.9", "5.0": "v5.0.10"}
UCX_SERIES = [f"1.{n}" for n in range(12, 20)]

# help files no operator meets in a failed job: tools' usage, checkpointing, simulators, shmem
_SKIP_PATH = re.compile(
    r"^contrib/|^oshmem/|/pmix3x/pmix/|/tools/(?!orterun|mpirun)|/crs/|/snapc/|/sstore/|"
    r"simulator|"
    r"help-(?:cli|prte-info|pmix-info|opal_info|orte-info|oshmem-info|prun|pterm|psched|"
    r"palloc|pattrs|pctrl|pevent|plookup|pps|pquery|pmixcc|opal-wrapper|plog|pcompress)\b"
)
FAIL = re.compile(
    r"(?i)fail|error|abort|unable|cannot|can't|could not|couldn't|lost|not (?:be )?found|"
    r"not enough|insufficient|timed? ?out|refused|unreachable|denied|terminated|killed|exceed|"
    r"mismatch|incompatible|invalid|no (?:route|available|usable|active|network)|did not|"
    r"hung up|exited|died|too many|out of|not able|problem"
)
NOISE = re.compile(
    r"(?i)deprecated|usage:|\bverbose\b|is no longer|has been replaced|^warning: |"
    # a command-line option's description (prterun --help), not a message
    r"^(?:timeout|report|get|set|specify|use|enable|disable|print|display|provide|define|do "
    r"not|launch|run|map|bind|rank|output|forward|redirect|add|direct|list|number|indicate|"
    r"allow|ignore|suppress|tag|merge|comma-delimited)\b"
)

# (regex over the template, domain, label, remedy): tried before mapping.RULES
_NET = REMEDY["network"]
_LAUNCH = (
    "mpirun could not start its daemons or ranks on the allocation: run it inside the Slurm "
    "allocation (or srun --mpi=pmix), check that every node has the same Open MPI install on "
    "PATH/LD_LIBRARY_PATH and reaches the launching node over TCP."
)
_AGENT = (
    "mpirun starts its daemons with ssh/rsh (or finds no orted to start): install "
    "openssh-client and the same Open MPI on every node, set OMPI_MCA_plm_rsh_agent (e.g. to "
    "'false' for one node in a container), or launch with srun --mpi=pmix inside Slurm."
)
_SLOTS = (
    "More ranks than the allocation holds: match -np to the job's tasks (srun -n / "
    "--ntasks-per-node), or let mpirun take them from Slurm; --oversubscribe only on purpose."
)
_MEMLOCK = (
    "Registered (locked) memory is capped: set 'ulimit -l unlimited' for slurmd "
    "(LimitMEMLOCK=infinity in its unit, PropagateResourceLimitsExcept=MEMLOCK)."
)
_ABORT = (
    "A rank called MPI_Abort: its own error, printed just before this, is the cause (the "
    "other ranks were killed with it)."
)
_SIGNAL = (
    "A rank died of a signal: sacct -j <id> shows whether Slurm or the OOM killer sent it; "
    "a SIGSEGV/SIGBUS is the program's own crash."
)
_PMI = (
    "Open MPI and Slurm's PMI do not fit: launch with srun --mpi=pmix (srun --mpi=list shows "
    "what Slurm has) against an Open MPI built --with-pmix/--with-slurm, or use mpirun."
)
_UCX_MEM = (
    "UCX could not register memory with the adapter: raise the locked-memory limit (ulimit "
    "-l unlimited for slurmd), check free memory and the adapter's state (ibstat, ibv_devinfo)."
)
RULES: tuple[tuple[str, str, str, str], ...] = (
    # the launcher's way of starting its daemons is missing: no ssh/rsh agent at the path
    # given (a container without ssh), no orted for the rsh launcher to run
    (
        r"(?i)plm_(?:rsh|ssh)_agent|"
        r"executable \"orted\"",
        "launch",
        "mpi_launch_failed",
        _AGENT,
    ),
    (
        r"(?i)not enough slots|slots available in the system|oversubscri|more processes than",
        "launch",
        "mpi_launch_failed",
        _SLOTS,
    ),
    (
        r"(?i)was not built with SLURM's PMI|PMI support|pmix.*version|version.*pmix|"
        r"HANDSHAKE[-_]FAILED",
        "network",
        "mpi_pmi_mismatch",
        _PMI,
    ),
    (
        r"(?i)unable to (?:reliably )?start one or more daemons|daemon[^\n]*(?:failed|"
        r"unexpectedly)|unable to launch|failed to (?:launch|start)|could not (?:be )?launch|"
        r"could not execute|failed to spawn|launch[^\n]* failed|"
        r"not (?:able|unable) to (?:be )?(?:bound|bind)|"
        r"binding[^\n]*(?:failed|not supported|error)|could not find an executable|"
        r"exec[^\n]* (?:failed|not found)|unable to find the specified executable|"
        # the launcher's own start-up (its runtime under mpirun or a singleton) failed
        r"orte_init failed|\"prte_init\(\)\" failed",
        "launch",
        "mpi_launch_failed",
        _LAUNCH,
    ),
    (
        r"(?i)locked memory|memlock|registered memory|register(?:ing)? memory|reg_mr|"
        r"memory registration",
        "network",
        "mpi_network_error",
        _MEMLOCK,
    ),
    (
        r"(?i)lost communication|unable to establish a communication|unable to complete a TCP|"
        r"connect\(\)[^\n]*failed|connection (?:refused|reset|closed|failed|timed out)|"
        r"peer hung up|unreach|no route|retry count exceeded|retry exceeded|timed out|"
        r"(?-i:TIMEOUT)|lost[- ]connection|communication failure|remote access error|transport "
        r"(?:error|retry)|no (?:active|usable) (?:ports?|network|interfaces?)|network "
        r"interfaces?|UNREACH|COMM[-_]FAILURE|lost contact|(?:ib|ibv|rdma|ofi|fi)_\w+"
        r"[^\n]*(?:fail|error)|ibv_|completion (?:with )?error|(?:port|link) (?:is )?down",
        "network",
        "mpi_network_error",
        "",
    ),
    (r"(?i)MPI_ABORT was invoked|called MPI_Abort|MPI_ABORT", "application", "", _ABORT),
    (r"(?i)exited on signal|killed by signal|died (?:from|on) signal", "application", "", _SIGNAL),
    (r"(?i)\bcuda|\bcu[A-Z][a-zA-Z]+\b|gpu|rocm|\bhip\w*\b", "accelerator", "", ""),
    (r"(?i)INVALID[-_]CRED|credential|psec|munge", "auth", "", REMEDY["auth"]),
    (
        r"(?i)out of memory|OUT[-_]OF[-_]RESOURCE|NO[-_]MEM|NOMEM|cannot allocate memory|"
        r"unable to allocate|failed to allocate",
        "memory",
        "",
        REMEDY["memory"],
    ),
)
_RULES = tuple((re.compile(rx), d, lab, rem) for rx, d, lab, rem in RULES)


def map_template(template: str, default_domain: str) -> tuple[str, str, str]:
    """(domain, label, remedy): the MPI rules first, then the shared ones."""
    for rx, domain, label, remedy in _RULES:
        if rx.search(template):
            return domain, label or "unrecognised_failure", remedy or REMEDY.get(domain, "")
    domain, label = classify(template, default_domain)
    # a domain-only entry carries its domain's hint; a named cause has the engine's own remedy
    return domain, label, REMEDY.get(domain, "") if label == "unrecognised_failure" else ""


def _default_domain(path: str) -> str:
    if re.search(
        r"plm|odls|ras/|rmaps|ess/|orted|prted|prterun|orterun|mpirun|rtc|/state/|"
        r"schizo|hostfile|dash.host|filem|errmgr|runtime|help-prte\.txt",
        path,
    ):
        return "launch"
    if re.search(r"hwloc|shmem|timer|threads", path):
        return "node"
    return "network"


def help_topics(text: str):
    """(topic, first line, line number, first paragraph) of each ``[topic]`` of a help file."""
    topic, start, body = None, 0, []
    lines = text.splitlines()

    def flush():
        if topic is None:
            return None
        para: list[str] = []
        for ln in body:
            if not ln.strip():
                if para:
                    break
                continue
            para.append(ln.strip())
        if not para:
            return None
        first = next((p for p in para if re.search(r"[A-Za-z]{3,}", p)), "")
        return topic, first, start, " ".join(para)

    for i, ln in enumerate(lines, 1):
        if ln.startswith("#"):
            continue
        m = re.fullmatch(r"\[([^\]]+)\]\s*", ln)
        if m:
            got = flush()
            if got:
                yield got
            topic, start, body = m.group(1), i, []
        elif topic is not None:
            body.append(ln)
    got = flush()
    if got:
        yield got


def _add(found: dict, template: str, level: str, origin: str, series: str, domain: str, **kw):
    e = found.get(template)
    if e is not None:
        if series not in e["versions"]:
            e["versions"].append(series)
        e["origin"] = origin
        return
    d, label, remedy = map_template(template, domain)
    e = entry(template, level, origin, [series], d, label, remedy, prefix=kw.get("prefix", ""))
    found[template] = e | {"program": kw.get("program", "ompi")}


def help_entries(mirror: str, tags: dict[str, str], found: dict, program: str, repo: str):
    for series, tag in tags.items():
        names = git(mirror, "ls-tree", "-r", "--name-only", tag).split()
        refs = [f"{tag}:{n}" for n in names if re.search(r"help-[^/]*\.txt$", n)]
        refs = [r for r in refs if not _SKIP_PATH.search(r.split(":", 1)[1])]
        for ref, text in show_many(mirror, refs).items():
            path = ref.split(":", 1)[1]
            for topic, first, line, para in help_topics(text):
                first = first.strip()
                if not specific_enough(first, 20) or len(re.findall(r"[A-Za-z]{3,}", first)) < 4:
                    continue
                if not FAIL.search(para) or NOISE.search(first):
                    continue
                origin = f"{repo} {tag}: {path}:{line} [{topic}]"
                _add(found, first, "error", origin, series, _default_domain(path), program=program)


def macro_entries(mirror: str, tags: dict[str, str], found: dict):
    """Open MPI's transport error macros: ``BTL_ERROR(("fmt", ...))``, the UCX PML/common."""
    rx = re.compile(r"\b(?:BTL_ERROR\s*\(\s*\(|(?:MCA_COMMON_UCX|PML_UCX|OSC_UCX)_ERROR\s*\()")
    for series, tag in tags.items():
        names = git(mirror, "ls-tree", "-r", "--name-only", tag, "--", "opal", "ompi").split()
        refs = [f"{tag}:{n}" for n in names if n.endswith((".c", ".h"))]
        for ref, src in show_many(mirror, refs).items():
            path = ref.split(":", 1)[1]
            for m in rx.finditer(src):
                got = string_arg(src, m.end())
                if got is None:
                    continue
                template = got[0].rstrip("\n")
                if "\n" in template or not specific_enough(template, 16):
                    continue
                if not FAIL.search(template):
                    continue
                line = src.count("\n", 0, m.start()) + 1
                origin = f"open-mpi/ompi {tag}: {path}:{line}"
                _add(found, template, "error", origin, series, "network")


def error_log_entries(found: dict):
    """``ORTE_ERROR_LOG: %s in file %s at line %d`` (ORTE's own status strings)."""
    for series, origin in (("4.0", "v4.0.7"), ("4.1", "v4.1.8")):
        _add(
            found,
            "ORTE_ERROR_LOG: %s in file %s at line %d",
            "error",
            f"open-mpi/ompi {origin}: orte/mca/errmgr/base/errmgr_base_fns.c",
            series,
            "launch",
        )


def pmix_entries(mirror: str) -> list[dict]:
    """show_help topics of the PMIx library and one ``PMIX ERROR: <status>`` template per
    error status (3.2: ``src/util/error.c``'s strings; 4.x/5.x: the status macro names)."""
    found: dict[str, dict] = {}
    help_entries(mirror, PMIX_TAGS, found, "pmix", "openpmix/openpmix")
    for series, tag in PMIX_TAGS.items():
        if series == "3.2":
            path = "src/util/error.c"
            src = git(mirror, "show", f"{tag}:{path}")
            names = re.findall(r"case (PMIX_ERR_\w+):\s*return \"([^\"]+)\"", src)
        else:
            path = "include/pmix_common.h.in"
            src = git(mirror, "show", f"{tag}:{path}")
            names = [(n, n) for n in re.findall(r"#define (PMIX_ERR_\w+)\s+\(?-\d+", src)]
        for macro, text in names:
            if re.search(r"SILENT|READY|WOULD_BLOCK|WOULD-BLOCK|OP_IN_PROGRESS|EXISTS", macro):
                continue
            template = f"PMIX ERROR: {text} in file %s at line %d"
            _add(
                found,
                template,
                "error",
                f"openpmix/openpmix {tag}: {path}",
                series,
                "network",
                program="pmix",
            )
    return list(found.values())


def ucx_entries(mirror: str) -> tuple[dict[str, str], list[dict]]:
    tags: dict[str, str] = {}
    for tag in git(mirror, "tag", "--list", "v1.*").split():
        m = re.fullmatch(r"v(1\.\d+)\.(\d+)", tag)
        if m and m.group(1) in UCX_SERIES:
            if m.group(1) not in tags or int(m.group(2)) > int(tags[m.group(1)].rsplit(".", 1)[1]):
                tags[m.group(1)] = tag
    tags = dict(sorted(tags.items(), key=lambda kv: int(kv[0].split(".")[1])))
    keep = re.compile(r"^src/(?:ucp|uct/(?!ugni)|ucs/(?:memory|sys|async))/")
    found: dict[str, dict] = {}
    for series, tag in tags.items():
        names = git(mirror, "ls-tree", "-r", "--name-only", tag, "--", "src").split()
        refs = [f"{tag}:{n}" for n in names if n.endswith((".c", ".h", ".inl")) and keep.match(n)]
        for ref, src in show_many(mirror, refs).items():
            path = ref.split(":", 1)[1]
            for level, template, line in calls(src, {"ucs_error": "error", "ucs_fatal": "fatal"}):
                template = template.rstrip("\n")
                if "\n" in template or not specific_enough(template, 14):
                    continue
                if not FAIL.search(template) or NOISE.search(template):
                    continue
                domain = "accelerator" if re.search(r"/cuda|/rocm|/ze/|gdr", path) else "network"
                _add(
                    found,
                    template,
                    level,
                    f"openucx/ucx {tag}: {path}:{line}",
                    series,
                    domain,
                    program="ucx",
                    prefix=r"UCX +(?:ERROR|FATAL) [^\n]*?",
                )
    return tags, list(found.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ompi", required=True, help="bare git mirror of github.com/open-mpi/ompi")
    ap.add_argument("--prrte", required=True, help="bare git mirror of github.com/openpmix/prrte")
    ap.add_argument("--pmix", required=True, help="bare mirror of github.com/openpmix/openpmix")
    ap.add_argument("--ucx", required=True, help="bare git mirror of github.com/openucx/ucx")
    args = ap.parse_args()
    gen = "tools/catalogue/extract_mpi.py"

    # PMIx first: PRRTE repeats some of PMIx's help topics, which stay PMIx's
    pmix = pmix_entries(args.pmix)
    meta = {
        "source": "pmix",
        "upstream": "https://github.com/openpmix/openpmix",
        "versions": PMIX_TAGS,
        "generator": gen,
    }
    print(len(pmix), "templates;", write("pmix", meta, pmix))

    found: dict[str, dict] = {}
    help_entries(args.ompi, OMPI_TAGS, found, "ompi", "open-mpi/ompi")
    help_entries(args.prrte, PRRTE_TAGS, found, "ompi", "openpmix/prrte")
    macro_entries(args.ompi, OMPI_TAGS, found)
    error_log_entries(found)
    ours = [e for t, e in found.items() if t not in {p["template"] for p in pmix}]
    meta = {
        "source": "ompi",
        "upstream": "https://github.com/open-mpi/ompi",
        "also": {"prrte": "https://github.com/openpmix/prrte " + PRRTE_TAGS["5.0"]},
        "versions": OMPI_TAGS,
        "generator": gen,
    }
    print(len(ours), "templates;", write("ompi", meta, ours))

    tags, ucx = ucx_entries(args.ucx)
    meta = {
        "source": "ucx",
        "upstream": "https://github.com/openucx/ucx",
        "versions": tags,
        "generator": gen,
    }
    print(len(ucx), "templates;", write("ucx", meta, ucx))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
