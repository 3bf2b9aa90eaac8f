"""Where a job wrote its output, from what sacct keeps after slurmctld forgot the job.

``scontrol show job`` prints StdOut/StdErr only while slurmctld lists the job (MinJobAge,
300 s by default, after its end). After that slurmdbd still has WorkDir, the SubmitLine (the
submit command's argv joined with single spaces, no quoting) and, where the site stores it
(``AccountingStoreFlags=job_script``), the batch script with its ``#SBATCH`` lines; Slurm
24.05+ also keeps StdOut/StdErr. This module turns those into candidate paths, most likely
first, and expands the filename patterns as slurmstepd does. Pure: no I/O.

The SubmitLine cannot be split back into argv exactly (``-o "out dir/x"`` and ``-o out``
followed by an argument ``dir/x`` print the same), so a value may span several tokens: each
join is a candidate, the caller keeps the first that exists.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

# sbatch/salloc/srun short options that take a value (``-p debug``, ``-pdebug``); the others
# (-H -I -O -Q -s -u -v -V -W -h) take none. ``-k`` takes an optional value: never a separate
# token.
_SHORT_WITH_VALUE = frozenset("ABbcCdDeFGiJLmMnNopqSTtwx")
# long options without a value (or with an optional one, which must then be given with ``=``)
_LONG_NO_VALUE = frozenset(
    {
        "contiguous",
        "exclusive",
        "get-user-env",
        "help",
        "hold",
        "ignore-pbs",
        "kill-on-invalid-dep",
        "no-kill",
        "no-requeue",
        "nice",
        "overcommit",
        "oversubscribe",
        "parsable",
        "quiet",
        "reboot",
        "requeue",
        "spread-job",
        "test-only",
        "usage",
        "use-min-nodes",
        "verbose",
        "version",
        "wait",
        "x11",
    }
)
_OUT = ("o", "output")
_ERR = ("e", "error")
MAX_JOIN = 4  # a value is tried as at most this many space-separated tokens


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """The ``--output``/``--error`` patterns a job was given, each as candidates (most likely
    first); empty: not given there."""

    stdout: tuple[str, ...] = ()
    stderr: tuple[str, ...] = ()


def _joins(tokens: list[str], i: int) -> list[str]:
    """``tokens[i]``, then it joined with the following tokens up to the next option."""
    out = [tokens[i]]
    for k in range(i + 1, min(len(tokens), i + MAX_JOIN)):
        if tokens[k].startswith("-"):
            break
        out.append(" ".join(tokens[i : k + 1]))
    return out


def _option(tok: str) -> tuple[str, str | None, bool] | None:
    """(name, attached value or None, takes a value) of an option token; None for a word."""
    if tok.startswith("--") and len(tok) > 2:
        name, eq, val = tok[2:].partition("=")
        return name, (val if eq else None), name not in _LONG_NO_VALUE
    if tok.startswith("-") and len(tok) > 1 and tok[1] != "-":
        name = tok[1]
        takes = name in _SHORT_WITH_VALUE
        return name, (tok[2:] or None) if takes else None, takes
    return None


def submit_line_outputs(line: str, job_name: str = "") -> tuple[OutputSpec, OutputSpec]:
    """(options before the script or ``--wrap``, options after it) of a SubmitLine.

    The first are the job's own. The second are a guess: ``sbatch --wrap "cmd" -o x`` and a
    wrapped command holding ``-o x`` print alike, as do a script's arguments and options given
    after a value with a space in it. ``job_name`` (sacct's JobName) lets ``-J`` skip a name
    with spaces.
    """
    tokens = line.split(" ")[1:]  # [0] is the program (sbatch, salloc, /usr/bin/srun)
    main: dict[str, list[str]] = {"o": [], "e": []}
    late: dict[str, list[str]] = {"o": [], "e": []}
    into = main
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        opt = _option(tok)
        if opt is None:
            if tok:
                into = late  # the script (or a stray word): what follows is not sure
            i += 1
            continue
        name, value, takes = opt
        key = "o" if name in _OUT else "e" if name in _ERR else None
        if takes and value is None:
            if key is not None and i + 1 < len(tokens):
                into[key].extend(_joins(tokens, i + 1))
            span = 1
            if name in ("J", "job-name") and job_name and " " in job_name:
                if " ".join(tokens[i + 1 : i + 2 + job_name.count(" ")]) == job_name:
                    span += job_name.count(" ")
            i += 1 + span
        else:
            if key is not None and value:
                into[key].append(value)
                # --output=out dir/x: the value may go on past the token too
                if i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                    into[key].extend(value + " " + j for j in _joins(tokens, i + 1))
            i += 1
        if name == "wrap":
            into = late
    return (
        OutputSpec(tuple(dict.fromkeys(main["o"])), tuple(dict.fromkeys(main["e"]))),
        OutputSpec(tuple(dict.fromkeys(late["o"])), tuple(dict.fromkeys(late["e"]))),
    )


def script_outputs(script: str) -> OutputSpec:
    """``#SBATCH -o/-e/--output/--error`` of a batch script (read, as sbatch does, up to the
    first line that is neither blank nor a comment)."""
    out: list[str] = []
    err: list[str] = []
    for raw in script.split("\n")[:2000]:
        line = raw.strip()
        if line and not line.startswith("#"):
            break
        if not line.startswith("#SBATCH"):
            continue
        body = line[len("#SBATCH") :]
        if body and not body[0].isspace():
            continue  # "#SBATCHX" is a comment
        body = body.split(" #", 1)[0]  # a trailing comment
        try:
            words = shlex.split(body)
        except ValueError:  # an unbalanced quote: Slurm would take the words as they are
            words = body.split()
        for k, w in enumerate(words):
            opt = _option(w)
            if opt is None:
                continue
            name, value, takes = opt
            key = out if name in _OUT else err if name in _ERR else None
            if key is None or not takes:
                continue
            if value is None and k + 1 < len(words):
                value = words[k + 1]
            if value:
                key.append(value)
    # the last directive wins, as with repeated options on a command line
    return OutputSpec(tuple(reversed(out))[:1], tuple(reversed(err))[:1])


_TOKEN = re.compile(r"%(\d{0,12})([AabjJNnstux%])")


@dataclass(frozen=True, slots=True)
class JobNames:
    """What a filename pattern can name: the job as sacct prints it."""

    job_id: str  # JobID: 123, array task 123_4, het component 77+0
    raw_id: str = ""  # JobIDRaw: the task's own job id (an array task's %j)
    user: str = ""
    name: str = ""
    node: str = ""  # first node of the job (where the batch step ran)
    work_dir: str = ""


def expand(pattern: str, job: JobNames) -> str:
    """A ``--output`` pattern as slurmstepd expands it for the batch step: ``%%``, ``%A``
    array master id, ``%a`` task id, ``%b`` task id modulo 10, ``%j`` job id, ``%J`` job
    id.step (``.batch``), ``%N`` node, ``%n`` node index, ``%s`` step, ``%t`` task, ``%u``
    user, ``%x`` job name; a number pads with zeros (``%4a``). A backslash anywhere turns
    expansion off (and is dropped). A relative path is in the job's WorkDir."""
    if "\\" in pattern:
        path = pattern.replace("\\", "")
    else:
        base = re.split(r"[_+]", job.job_id, maxsplit=1)[0]
        task = job.job_id.split("_", 1)[1] if "_" in job.job_id else ""
        task = task if task.isdigit() else ""
        jid = job.raw_id if job.raw_id.isdigit() else base

        def sub(m: re.Match[str]) -> str:
            width, code = m.group(1), m.group(2)
            value = {
                "%": "%",
                "A": base,
                "a": task or "4294967294",
                "b": str(int(task) % 10) if task else "4294967294",
                "j": jid,
                "J": f"{jid}.batch",
                "N": job.node,
                "n": "0",
                "s": "batch",
                "t": "0",
                "u": job.user,
                "x": job.name,
            }[code]
            # slurmstepd caps the width at 10 (fname_create's MAX_WIDTH): %999999j is no DoS
            return value.zfill(min(int(width), 10)) if width and value.isdigit() else value

        path = _TOKEN.sub(sub, pattern)
    if not path.startswith("/") and job.work_dir:
        path = job.work_dir.rstrip("/") + "/" + path
    return path


def default_output(job: JobNames) -> str:
    """sbatch's output file when none is given: ``slurm-%j.out``, ``slurm-%A_%a.out`` for an
    array task, in the WorkDir."""
    return "slurm-%A_%a.out" if "_" in job.job_id else "slurm-%j.out"


def output_candidates(
    job: JobNames,
    *,
    submit_line: str = "",
    script: str = "",
    stdout_field: str = "",
    stderr_field: str = "",
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(stdout paths, stderr paths), expanded and absolute, most likely first.

    Order: sacct's StdOut/StdErr (24.05+) alone when present; else the SubmitLine's options
    (a command line overrides the script), the script's ``#SBATCH`` lines, options after a
    ``--wrap`` (a guess), and sbatch's default. No ``--error``: stderr goes with stdout.
    """
    if stdout_field:
        out = (expand(stdout_field, job),)
        return out, (expand(stderr_field, job),) if stderr_field else out
    main, late = (
        submit_line_outputs(submit_line, job.name) if submit_line else (OutputSpec(), OutputSpec())
    )
    directives = script_outputs(script) if script else OutputSpec()
    outs = [*main.stdout, *directives.stdout, *late.stdout, default_output(job)]
    errs = [*main.stderr, *directives.stderr, *late.stderr]
    out_paths = tuple(dict.fromkeys(expand(p, job) for p in outs))
    err_paths = tuple(dict.fromkeys(expand(p, job) for p in errs)) or out_paths
    return out_paths, err_paths
