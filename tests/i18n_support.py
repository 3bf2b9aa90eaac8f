"""What counts as English left in a Chinese screen or output, for the i18n tests.

A run of three or more lowercase English words is prose a person reads; it is allowed only
when it is a fact the platform printed or the diagnosis engine's own text (job names, node
reasons, log lines and events quoted as evidence, a finding's title/explanation/remedy: the
engine's catalogue and its tests answer for those), i.e. when it occurs in the ``facts``
corpus. Evidence the engine wrote itself (``Evidence.quoted`` False: "pool p: 2 node(s)
fit", "vs good run ...") is no fact: it is the cockpit's prose and must be Chinese.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from enum import Enum
from pathlib import Path
from unittest import mock

from cockpit.model import Evidence, Finding


def engine_wrote(o: object) -> bool:
    """An evidence line the engine wrote (not a line quoted from a log, event or command)."""
    return isinstance(o, Evidence) and not o.quoted


# three or more lowercase words (a word may carry ' or -), one space apart
PROSE = re.compile(r"(?<![\w./=:@-])[a-z][a-z'-]*(?: [a-z][a-z'-]*){2,}(?![\w/=.(-])")


def strings_in(
    *objs: object, limit: int = 200_000, skip: Callable[[object], bool] = lambda o: False
) -> list[str]:
    """Every string inside ``objs`` (dataclasses, mappings, sequences), breadth first; not
    those inside an object ``skip`` says to leave out."""
    out: list[str] = []
    seen: set[int] = set()
    todo = list(objs)
    while todo and len(out) < limit:
        o = todo.pop()
        if skip(o):
            continue
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


@contextmanager
def written_out() -> Iterator[list[Finding]]:
    """The findings a command run in this process writes out as JSON (``diagnose --json``,
    ``incidents --json``), in the order written: the JSON does not say which evidence the
    engine wrote, the Finding objects do. The functions that write them are wrapped, not
    replaced: the output is the command's own."""
    import cockpit.diagnosis.engine as engine
    import cockpit.report as report

    got: list[Finding] = []
    finding_json, report_finding = engine.finding_json, report._finding

    def keep(write):  # noqa: ANN001, ANN202
        def wrapped(f: Finding):  # noqa: ANN202
            got.append(f)
            return write(f)

        return wrapped

    with (
        mock.patch.object(engine, "finding_json", keep(finding_json)),
        mock.patch.object(report, "_finding", keep(report_finding)),
    ):
        yield got


DEMO = Path(__file__).resolve().parent.parent / "cockpit" / "demo"


def demo_platform_text() -> str:
    """What the demo site's platform prints (its events, node reasons, log lines, pool
    messages): every string literal of cockpit/demo/ but the docstrings, in one text."""
    out: list[str] = []
    for path in sorted(DEMO.glob("*.py")):
        tree = ast.parse(path.read_text())
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        out += [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
        ]
    return "\n".join(out)
