"""Shared by the catalogue extractors: C call sites -> message templates, git reads, output.

The extractors read a bare git mirror of each producer (``fetch github:SchedMD/slurm`` gives
one) at release tags, and write ``cockpit/diagnosis/catalogue/<source>.json``: one entry per
message template with its regex, origin (file:line at the newest version that has it), the
versions it appears in, and the domain, label and remedy it maps to
(:mod:`tools.catalogue.mapping`). CI has no network to GitHub: the output is committed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cockpit.diagnosis.catalogue.printf import literal_chars, to_regex  # noqa: E402

OUT_DIR = ROOT / "cockpit" / "diagnosis" / "catalogue"

# <inttypes.h> macros spliced between literals: "%" PRIu64 " bytes" -> "%lu bytes"
_PRI = re.compile(r"PRI([diouxX])(?:8|16|32|64|PTR|MAX|LEAST\d+|FAST\d+)")
_STR = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_ESC = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "r": "\r", "0": ""}


def git(mirror: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", mirror, *args],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout


def show_many(mirror: str, refs: list[str]) -> dict[str, str]:
    """``git cat-file --batch`` for many ``tag:path`` at once (one process, not thousands)."""
    proc = subprocess.run(
        ["git", "-C", mirror, "cat-file", "--batch"],
        input=("\n".join(refs) + "\n").encode(),
        capture_output=True,
        check=True,
    )
    out, data, pos = {}, proc.stdout, 0
    for ref in refs:
        nl = data.index(b"\n", pos)
        head = data[pos:nl].split()
        pos = nl + 1
        if len(head) < 3 or head[1] == b"missing":
            continue
        size = int(head[2])
        out[ref] = data[pos : pos + size].decode("utf-8", "replace")
        pos += size + 1
    return out


def unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESC.get(m.group(1), m.group(1)), s)


def string_arg(src: str, pos: int) -> tuple[str, int] | None:
    """The concatenated string literal starting at ``pos`` (spaces, comments and PRI macros
    between pieces allowed), and where it ends; None when the argument is not a literal."""
    out: list[str] = []
    i, n = pos, len(src)
    while i < n:
        while i < n and src[i] in " \t\r\n\\":
            i += 1
        if src.startswith("/*", i):
            j = src.find("*/", i)
            i = n if j < 0 else j + 2
            continue
        m = _PRI.match(src, i)
        if m:
            out.append({"d": "ld", "i": "li"}.get(m.group(1), "l" + m.group(1)))
            i = m.end()
            continue
        if i < n and src[i] == '"':
            m = _STR.match(src, i)
            if not m:
                return None
            out.append(unescape(m.group(1)))
            i = m.end()
            continue
        break
    return ("".join(out), i) if out else None


def calls(
    src: str, funcs: dict[str, str], skip_args: dict[str, int] | None = None
) -> Iterator[tuple[str, str, int]]:
    """(level, template, line) for each call ``func("literal" ...)`` in C source ``src``;
    ``funcs`` maps a function or macro name to the level it logs at, ``skip_args`` names
    those whose format is not the first argument (``PMIXP_ERROR_NO(err, fmt, ...)``)."""
    skip_args = skip_args or {}
    rx = re.compile(r"\b(" + "|".join(map(re.escape, funcs)) + r")\s*\(")
    for m in rx.finditer(src):
        pos = m.end()
        for _ in range(skip_args.get(m.group(1), 0)):
            comma = src.find(",", pos)
            if comma < 0:
                break
            pos = comma + 1
        got = string_arg(src, pos)
        if got is None:
            continue
        line = src.count("\n", 0, m.start()) + 1
        yield funcs[m.group(1)], got[0], line


def entry(
    template: str,
    level: str,
    origin: str,
    versions: list[str],
    domain: str,
    label: str,
    remedy: str = "",
    prefix: str = "",
) -> dict:
    """One catalogue entry (the JSON shape :mod:`cockpit.diagnosis.catalogue` loads)."""
    e = {
        "template": template,
        "regex": prefix + to_regex(template),
        "level": level,
        "origin": origin,
        "versions": versions,
        "domain": domain,
        "label": label,
    }
    if remedy:
        e["remedy"] = remedy
    return e


def specific_enough(template: str, minimum: int = 16) -> bool:
    """A template worth a regex: enough of its own words that it names one message."""
    return literal_chars(template) >= minimum and len(re.findall(r"[A-Za-z]{3,}", template)) >= 3


def _hand_classify(line: str, kind: str):
    """The first hand-written pattern (not the catalogue's own) recognising ``line``, as the
    scanner's classify() would; None for none or a harmless line."""
    from cockpit.diagnosis import patterns

    raw = line.encode()
    if patterns.is_harmless(raw):
        return "harmless"
    for p in patterns.PATTERNS:
        if p.name.startswith("catalogue_") or (p.kinds is not None and kind not in p.kinds):
            continue
        if re.search(p.regex, raw, re.MULTILINE):
            return p
    return None


def annotate(source: str, entries: list[dict]) -> list[dict]:
    """What the engine said of each template's example line before the catalogue: ``known``
    (the hand-written pattern that recognised it) and ``known_label``. A hand-written strong
    pattern keeps its verdict (the entry takes its label and that label's domain); lines the
    scanner calls harmless (printed on healthy runs) are dropped."""
    from cockpit.diagnosis.catalogue import KIND, Template, example_line, own_words
    from cockpit.diagnosis.domains import domain_of

    out = []
    for e in entries:
        e.pop("known", None)
        e.pop("known_label", None)
        e.pop("known_strong", None)
        t = Template(
            source,
            e["template"],
            e["regex"],
            e["level"],
            e["origin"],
            tuple(e["versions"]),
            e["domain"],
            e["label"],
            e.get("program", source),
            code=e.get("code", "") if source == "cann" else "",
        )
        p = _hand_classify(example_line(t), KIND.get(t.program, "app"))
        if p == "harmless":
            continue
        if p is not None and not p.strong and _hand_classify(own_words(t), "app") is None:
            p = None  # only the line's prefix ("Warning Failed", "error:") made it an error
        if p is not None:
            e["known"], e["known_label"] = p.name, p.label
            e["known_strong"] = p.strong
            if p.strong:  # the engine's verdict stands
                e["label"], e["domain"] = p.label, domain_of(p.label)
                e.pop("remedy", None)
        out.append(e)
    return out


def write(source: str, meta: dict, entries: list[dict]) -> Path:
    path = OUT_DIR / f"{source}.json"
    entries = annotate(source, entries)
    entries = sorted(entries, key=lambda e: (e["domain"], e["label"], e["template"]))
    doc = {**meta, "count": len(entries), "templates": entries}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
