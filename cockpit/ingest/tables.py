"""Human-format tables as operators paste them: header-driven, tolerant of column layout.

Slurm's tools and the wrappers sites put around them print whitespace-aligned tables whose
columns may be right-aligned (squeue's JOBID), left-aligned with spaces inside a value
(``sinfo -R``'s ``Kill task failed``), cut by a ``----`` ruler (sacct), truncated in the
header (``TIME_LIMI``), collapsed to single spaces by a chat or web page, or ``|``-separated
(``-P``, ``--parsable2``). Rows come back as dicts keyed by the upper-case header word;
:func:`col` looks a value up by any of a column's usual names.
"""

from __future__ import annotations

import re

_RULER = re.compile(r"^[\s-]*-{3,}[\s-]*$")


def content_lines(text: str) -> list[str]:
    """Non-blank lines without trailing CR/space (prompts are cut off by the splitter)."""
    return [ln.rstrip() for ln in text.split("\n") if ln.strip()]


def _tokens(line: str) -> list[tuple[str, int, int]]:
    """Whitespace-separated tokens with their spans; a ``( ... )`` run is one token (squeue's
    ``(ReqNodeNotAvail, UnavailableNodes:c1)``)."""
    out: list[tuple[str, int, int]] = []
    for m in re.finditer(r"\([^()]*\)|\S+", line):
        out.append((m.group(0), m.start(), m.end()))
    return out


def _phrases(toks: list[tuple[str, int, int]], starts: list[int]) -> list[tuple[str, int, int]]:
    """Tokens separated by a single space joined (``Kill task failed`` is one value), unless
    a header column starts between them."""
    out: list[tuple[str, int, int]] = []
    for t, a, b in toks:
        if out and a - out[-1][2] == 1 and not any(out[-1][2] < h <= a for h in starts):
            pt, pa, _ = out[-1]
            out[-1] = (f"{pt} {t}", pa, b)
        else:
            out.append((t, a, b))
    return out


def _assign(heads: list[tuple[str, int, int]], vals: list[tuple[str, int, int]]) -> dict[str, str]:
    """Each value to the header column it overlaps most, else the nearest one."""
    got: dict[int, list[str]] = {}
    for v, a, b in vals:
        best, key = 0, None
        for i, (_, ha, hb) in enumerate(heads):
            overlap = min(b, hb) - max(a, ha)
            dist = 0 if overlap > 0 else max(ha - b, a - hb)
            k = (-overlap if overlap > 0 else 0, dist)
            if key is None or k < key:
                best, key = i, k
        got.setdefault(best, []).append(v)
    return {h[0].upper(): " ".join(got.get(i, [])) for i, h in enumerate(heads)}


def _cuts_a_value(row: str, spans: list[tuple[int, int]]) -> bool:
    """Whether slicing ``row`` at the ruler's column starts would cut a token in two."""
    for a, _ in spans[1:]:
        if 0 < a < len(row) and not row[a - 1].isspace() and not row[a].isspace():
            return True
    return False


def parse_fixed_table(text: str) -> list[dict[str, str]]:
    """A whitespace-aligned table with a header -> one dict per row (keys upper-case).

    Rows whose values match the header one for one are zipped; others (empty cells, values
    with spaces) are placed by column position. A ``----`` ruler under the header (sacct)
    gives exact column spans.
    """
    # columns are where a terminal draws them: an editor that saved runs of spaces as tabs
    # (``unexpand``, vim's noexpandtab) kept them at tab stops of 8
    lines = [ln.expandtabs() for ln in content_lines(text)]
    if not lines:
        return []
    header, rows = lines[0], lines[1:]
    if rows and _RULER.match(rows[0]):
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rows[0])]
        names = [header[a:b].strip().upper() or f"COL{i}" for i, (a, b) in enumerate(spans)]
        words = header.split()
        if len(words) == len(spans) and _cuts_a_value(header, spans):
            # a header re-aligned in the paste (a ticket's editor, a hand-typed -o list): its
            # words name the columns in order, not the ruler's slices of them ("STATE E")
            names = [w.upper() for w in words]
        heads = [(n, a, b) for n, (a, b) in zip(names, spans, strict=False)]
        out = []
        for r in rows[1:]:
            if _RULER.match(r):
                continue
            if _cuts_a_value(r, spans):
                # a value wider than its ruler (OUT_OF_MEMORY under "----------"), as when
                # sacct's --format widths are set too small or the paste was re-aligned:
                # place whole tokens instead of slicing them apart
                out.append(_by_tokens(heads, r))
                continue
            out.append(
                {
                    n: r[a : b if i + 1 < len(spans) else None].strip()
                    for i, (n, (a, b)) in enumerate(zip(names, spans, strict=False))
                }
            )
        return out
    heads = _tokens(header)
    return [_by_tokens(heads, r) for r in rows]


def _by_tokens(heads: list[tuple[str, int, int]], row: str) -> dict[str, str]:
    """One row placed under ``heads`` by its whitespace tokens: zipped when they match the
    header one for one (alone or joined into phrases), else each by column position."""
    toks = _tokens(row)
    if len(toks) == len(heads):
        return {h[0].upper(): t[0] for h, t in zip(heads, toks, strict=True)}
    ph = _phrases(toks, [h[1] for h in heads])
    if len(ph) == len(heads):
        return {h[0].upper(): t[0] for h, t in zip(heads, ph, strict=True)}
    return _assign(heads, ph)


def parse_pipe_table(text: str) -> list[dict[str, str]]:
    """``-P``/``|``-separated output with a header row -> dicts keyed by upper-case column."""
    lines = content_lines(text)
    if not lines:
        return []
    sep = "\x1f" if "\x1f" in lines[0] else "|"
    header = [h.strip().upper() for h in lines[0].split(sep)]
    return [dict(zip(header, (v.strip() for v in ln.split(sep)), strict=False)) for ln in lines[1:]]


def parse_table(text: str) -> list[dict[str, str]]:
    """A pipe table when the header has ``|``, else an aligned one."""
    lines = content_lines(text)
    first = lines[0] if lines else ""
    return parse_pipe_table(text) if ("|" in first or "\x1f" in first) else parse_fixed_table(text)


# canonical column -> header words sites print for it (squeue/sacct/sinfo and wrappers)
ALIASES: dict[str, tuple[str, ...]] = {
    "JOBID": ("JOBID", "JOB_ID", "JOB", "ID", "JOBIDRAW"),
    "STATE": ("STATE", "ST", "STATUS"),
    "PARTITION": ("PARTITION", "PARTITION/QOS", "PART"),
    "NAME": ("NAME", "JOBNAME", "JOB_NAME"),
    "USER": ("USER", "USERNAME", "USER_NAME"),
    "TIME": ("TIME", "TIME_USED", "ELAPSED"),
    "TIME_LIMIT": ("TIME_LIMIT", "TIME_LIMI", "TIME_LIM", "TIMELIMIT", "LIMIT"),
    "NODES": ("NODES", "NODE/CORE/GPU", "NNODES", "NUM_NODES"),
    "CPUS": ("CPUS", "CPU", "NCPUS", "ALLOCCPUS", "REQCPUS", "NODE/CORE/GPU"),
    "NODELIST(REASON)": ("NODELIST(REASON)",),
    "NODELIST": ("NODELIST", "NODE_LIST", "SCHEDNODES"),
    "REASON": ("REASON",),
    "PRIORITY": ("PRIORITY", "PRIO"),
    "ACCOUNT": ("ACCOUNT",),
    "QOS": ("QOS",),
    "START_TIME": ("START_TIME", "START", "STARTTIME"),
    "SUBMIT_TIME": ("SUBMIT_TIME", "SUBMIT", "SUBMITTIME"),
    "END_TIME": ("END_TIME", "END", "ENDTIME"),
    "MIN_MEMORY": ("MIN_MEMORY", "MIN_MEMOR", "MEMORY", "REQMEM"),
    "EXITCODE": ("EXITCODE", "EXIT_CODE", "EXIT"),
    "MAXRSS": ("MAXRSS",),
    "WORK_DIR": ("WORK_DIR", "WORKDIR"),
}


def col(row: dict[str, str], name: str) -> str:
    """The row's value for canonical column ``name`` under any of its usual header words;
    a combined header (``PARTITION/QOS``, ``Node/Core/GPU``) gives its matching piece."""
    for alias in ALIASES.get(name, (name,)):
        v = row.get(alias)
        if v is None:
            continue
        if "/" in alias and "(" not in alias and "/" in v:
            pieces = v.split("/")
            heads = alias.split("/")
            want = {"PARTITION": "PARTITION", "NODES": "NODE", "CPUS": "CORE"}.get(name)
            if want in heads and len(pieces) == len(heads):
                return pieces[heads.index(want)]
        return v
    return ""
