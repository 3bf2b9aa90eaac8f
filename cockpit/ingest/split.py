"""Split a pasted terminal session into the outputs of the commands typed in it.

An operator's file is whatever the terminal showed: a prompt line (``$ squeue``,
``[user1@login01 ~]$ sacct -j 42``, ``user@host:~$ seff 42``, ``# journalctl -u slurmd``)
before each output, several commands in one file, or a bare command echo (``squeue -u bob``
on a line of its own). Each :class:`Part` keeps the command typed (a hint for recognising
the output, never the only one) and where its first line sits in the file, so an error
found in a part is reported at the file's own line number.

Only the lines a shell prints as prompts split a file: a log line that merely contains
``$`` or ``#`` does not, and ``# comment`` lines split only when a known command follows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cockpit.text import strip_ansi

# Commands whose output operators paste; a bare ``#``/``%`` prompt or an echo line must name
# one of them (a ``# comment`` in a script or config is not a prompt).
KNOWN_COMMANDS = frozenset(
    "squeue sacct sinfo scontrol seff sprio sshare sacctmgr sstat sbatch srun salloc scancel "
    "sdiag sreport journalctl dmesg kubectl docker docker-compose podman mpirun mpiexec "
    "nvidia-smi npu-smi df du mmlsquota lfs quota cat tail head less more grep zcat ls module "
    "ml systemctl python python3 bash sh myjobs ldd free ulimit env ssh".split()
)


# A prompt: optional "(env) ", then [user@host dir]$ | user@host:dir$ | bash-4.2$ | bare $ # %.
_PROMPT = re.compile(
    r"^\s{0,4}(?:\([\w.@-]{1,40}\)\s+)?"
    r"(?:(?P<full>\[[^\[\]\n]{0,80}[@~/ ][^\[\]\n]{0,80}\]\s?"
    r"|[\w.-]+@[\w.-]+(?::[^\s$#%]*)?\s*"
    r"|(?:bash|sh|zsh|ksh)-\d[\d.]*)[$#%]"
    r"|(?P<bare>[$#%]))"
    r"(?:\s+(?P<cmd>\S.*?))?\s*$"
)
# A command echoed on its own line: a known command followed by options, a job id or a verb.
_ECHO = re.compile(
    r"^\s*(?:sudo\s+(?:-u\s+\S+\s+)?)?(?P<cmd>(?P<word>[\w.-]+)"
    r"(?:\s+(?:-\S*|\d[\w.,\[\]-]*|show|describe|get|logs|compose|list)(?:\s.*)?)?)\s*$"
)
# Only diagnostic tools: a job's own output often echoes its sbatch/srun/mpirun/python lines.
_ECHO_WORDS = frozenset(
    "squeue sacct sinfo scontrol seff sprio sshare sacctmgr sstat sdiag sreport journalctl dmesg "
    "kubectl nvidia-smi npu-smi mmlsquota df myjobs".split()
)
# Cheap pre-filter over the whole bytes (one C-level pass, no per-line Python): lines whose
# start may be a prompt or an echo; prompt_command() decides.
_CANDIDATE = re.compile(
    rb"(?m)^[ \t]{0,4}(?:\([\w.@-]{1,40}\)[ \t]+)?(?:\x1b\[[0-9;]*m)*(?:"
    rb"\[[^\]\n]{0,160}\][ \t]?[$#%]|[\w.-]+@[\w.-]+|(?:bash|sh|zsh|ksh)-\d|[$#%](?:[ \t]|\r?$)|"
    rb"(?:sudo[ \t]+(?:-u[ \t]+\S+[ \t]+)?)?(?:"
    + "|".join(sorted(_ECHO_WORDS)).replace(".", r"\.").encode()
    + rb")(?:[ \t]|\r?$))[^\n]*"
)
try:  # RE2 runs the pre-filter at a few hundred MB/s; the stdlib engine tries every byte
    import re2 as _re2

    _opts = _re2.Options()
    _opts.encoding = _re2.Options.Encoding.LATIN1  # bytes are bytes: invalid UTF-8 safe
    _CANDIDATE = _re2.compile(_CANDIDATE.pattern, _opts)
except ImportError:  # pragma: no cover - correct, only slower on big pastes
    pass


@dataclass(frozen=True, slots=True)
class Part:
    """The output of one command (or a whole file when no prompt is seen).

    ``data``: the part's lines, the prompt line excluded; ``command``: what was typed at the
    prompt ("" when none); ``line``/``offset``: 1-based file line and byte offset of the
    part's first line.
    """

    data: bytes
    command: str = ""
    line: int = 1
    offset: int = 0


def prompt_command(line: str) -> str | None:
    """The command typed on a prompt line ("" for a prompt with nothing typed), or None
    when the line is not a prompt or a command echo."""
    line = strip_ansi(line).rstrip("\r")
    m = _PROMPT.match(line)
    if m:
        cmd = (m.group("cmd") or "").strip()
        if m.group("bare") and m.group("bare") != "$":
            # "# comment" / "% done": only a known command makes a root or zsh prompt
            if not cmd or command_word(cmd) not in KNOWN_COMMANDS:
                return None
        return cmd
    m = _ECHO.match(line)
    if m and m.group("word") in _ECHO_WORDS:
        return m.group("cmd").strip()
    return None


def command_word(cmd: str) -> str:
    """The program of a command line: ``sudo -u slurm scontrol show job 4`` -> ``scontrol``."""
    toks = cmd.split()
    while toks and (toks[0] in {"sudo", "time", "nohup", "command"} or "=" in toks[0]):
        toks = toks[1:]
        if toks and toks[0] == "-u" and len(toks) > 1:
            toks = toks[2:]
    # run inside a container (test clusters, Slurm on Kubernetes): the program after it counts
    if len(toks) > 2 and toks[0] in {"docker", "podman", "kubectl"} and toks[1] == "exec":
        rest = toks[2:]
        if "--" in rest:
            rest = rest[rest.index("--") + 1 :]
        else:  # docker exec [-it] <container> <program> ...
            rest = [t for t in rest if not t.startswith("-")][1:]
        if rest:
            return command_word(" ".join(rest))
    return toks[0].rsplit("/", 1)[-1] if toks else ""


def split_parts(data: bytes) -> list[Part]:
    """``data`` cut at prompt lines and command echoes into parts, in file order.

    A file without prompts is one part. Parts with only blank lines are dropped (a command
    that printed nothing). The pipeline of a prompt (``squeue | grep bob``) stays in
    ``command``.
    """
    cuts: list[tuple[int, int, str]] = []  # (line start offset, line end offset, command)
    for m in _CANDIDATE.finditer(data):
        cmd = prompt_command(m.group(0).decode("utf-8", "replace"))
        if cmd is not None:
            cuts.append((m.start(), m.end(), cmd))
    if not cuts:
        return [Part(data)] if data.strip() else []
    parts: list[Part] = []
    start, line, command = 0, 1, ""
    for ls, le, cmd in cuts:
        _add(parts, data, start, ls, line, command)
        line += data.count(b"\n", start, le) + 1
        start, command = min(le + 1, len(data)), cmd
    _add(parts, data, start, len(data), line, command)
    return parts


def _add(parts: list[Part], data: bytes, a: int, b: int, line: int, command: str) -> None:
    body = data[a:b]
    if body.strip():
        parts.append(Part(body, command, line, a))
