"""What counts as English left in a Chinese screen or output, for the i18n tests.

A run of three or more lowercase English words is prose a person reads; it is allowed only
when it is a fact the platform printed or the diagnosis engine's own text (job names, node
reasons, log lines, evidence, a finding's title/explanation/remedy: the engine's catalogue
and its tests answer for those), i.e. when it occurs in the ``facts`` corpus.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from datetime import datetime
from enum import Enum

# three or more lowercase words (a word may carry ' or -), one space apart
PROSE = re.compile(r"(?<![\w./=:@-])[a-z][a-z'-]*(?: [a-z][a-z'-]*){2,}(?![\w/=.(-])")


def strings_in(*objs: object, limit: int = 200_000) -> list[str]:
    """Every string inside ``objs`` (dataclasses, mappings, sequences), breadth first."""
    out: list[str] = []
    seen: set[int] = set()
    todo = list(objs)
    while todo and len(out) < limit:
        o = todo.pop()
        if isinstance(o, str):
            out.append(o)
            continue
        if o is None or isinstance(o, int | float | bool | bytes | datetime | Enum):
            continue
        if id(o) in seen:
            continue
        seen.add(id(o))
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            todo.extend(getattr(o, f.name, None) for f in dataclasses.fields(o))
        elif isinstance(o, dict):
            todo.extend(o.keys())
            todo.extend(o.values())
        elif isinstance(o, list | tuple | set | frozenset):
            todo.extend(o)
    return out


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def english_left(lines: Iterable[str], facts: Iterable[str]) -> list[str]:
    """The runs of English prose in ``lines`` not found in ``facts`` (each with its line)."""
    corpus = "\n".join(_squash(f) for f in facts)
    found = []
    for line in lines:
        for m in PROSE.finditer(line.replace("…", " ")):
            run = m.group(0)
            if run not in corpus:
                found.append(f"{run!r} in {line.strip()!r}")
    return found
