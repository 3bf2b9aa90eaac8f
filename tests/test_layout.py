"""The dependency rules of docs/ARCHITECTURE.md, checked on the source with ``ast``.

* no import cycles among the cockpit's modules (``widgets/`` ships as ``cockpit.widgets``);
* ``widgets/`` imports nothing from the cockpit: generic widgets, plain data in;
* ``cockpit/diagnosis`` does no I/O: it imports no platform, transport, runtime or ingest
  module and reads no file, so ``diagnose()`` stays a function of (snapshot, evidence, now);
* no module over 800 lines: split along meaning before it gets there.

Imports are collected at module level and inside functions and classes; the body of an
``if TYPE_CHECKING:`` block never runs, so it is skipped. Nothing is imported to check.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 800

# what the engine must not depend on: everything that talks to the outside world
DIAGNOSIS_FORBIDDEN = (
    "cockpit.slurm",
    "cockpit.modelarts",
    "cockpit.demo",
    "cockpit.transport",
    "cockpit.runtime",
    "cockpit.ingest",
    "cockpit.source",
    "cockpit.connect",
)
# standard and third-party modules that only exist to do I/O
IO_MODULES = ("subprocess", "socket", "asyncssh", "urllib", "http", "huaweicloudsdk")
# calls that open or read a file: open(), Path.read_text(), os.open(), io.open(), mmap.mmap()
IO_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "fdopen", "mmap"}


@dataclass(frozen=True)
class Import:
    name: str  # absolute dotted name as written (``from a import b`` gives ``a`` and ``a.b``)
    line: int


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for cockpit/ and widgets/ (as ``cockpit.widgets``)."""
    out: dict[str, Path] = {}
    for top in ("cockpit", "widgets"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[0] == "widgets":
                parts = ["cockpit", "widgets", *parts[1:]]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


class _Collector(ast.NodeVisitor):
    def __init__(self, package: str) -> None:
        self.package = package
        self.imports: list[Import] = []
        self.io_calls: list[tuple[str, int]] = []

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.append(Import(alias.name, node.lineno))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        self.imports.append(Import(module, node.lineno))
        for alias in node.names:
            self.imports.append(Import(f"{module}.{alias.name}", node.lineno))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            self.io_calls.append(("open()", node.lineno))
        elif isinstance(func, ast.Attribute) and func.attr in IO_CALLS:
            self.io_calls.append((f".{func.attr}()", node.lineno))
        self.generic_visit(node)


def _collect(name: str, path: Path) -> _Collector:
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    collector = _Collector(package)
    collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return collector


COLLECTED = {name: _collect(name, path) for name, path in MODULES.items()}


def _where(name: str, line: int) -> str:
    return f"{MODULES[name].relative_to(ROOT)}:{line}"


def _graph() -> dict[str, set[str]]:
    return {
        name: {i.name for i in c.imports if i.name in MODULES and i.name != name}
        for name, c in COLLECTED.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_module_map_is_found() -> None:
    # a wrong ROOT would make every other test here pass on nothing
    assert {"cockpit.model", "cockpit.diagnosis.engine", "cockpit.widgets.table"} <= set(MODULES)


def test_no_import_cycles() -> None:
    graph = _graph()
    cycles = _cycles(graph)
    detail = [
        ", ".join(c) + "; edges: " + ", ".join(f"{a}->{b}" for a in c for b in graph[a] if b in c)
        for c in cycles
    ]
    assert not cycles, "import cycles:\n" + "\n".join(detail)


def test_widgets_import_nothing_from_the_cockpit() -> None:
    bad = [
        f"{_where(name, i.line)}: {i.name}"
        for name, c in COLLECTED.items()
        if name.startswith("cockpit.widgets")
        for i in c.imports
        if (i.name == "cockpit" or i.name.startswith("cockpit."))
        and not (i.name == "cockpit.widgets" or i.name.startswith("cockpit.widgets."))
    ]
    assert not bad, "widgets/ must take plain data, not cockpit imports:\n" + "\n".join(bad)


def test_diagnosis_does_no_io() -> None:
    bad = []
    for name, c in COLLECTED.items():
        if not (name == "cockpit.diagnosis" or name.startswith("cockpit.diagnosis.")):
            continue
        for i in c.imports:
            if any(i.name == f or i.name.startswith(f + ".") for f in DIAGNOSIS_FORBIDDEN):
                bad.append(f"{_where(name, i.line)}: imports {i.name}")
            elif any(i.name.startswith(m) for m in IO_MODULES):
                bad.append(f"{_where(name, i.line)}: imports {i.name}")
        bad += [f"{_where(name, line)}: calls {call}" for call, line in c.io_calls]
    assert not bad, "cockpit/diagnosis must stay pure (no platform, no I/O):\n" + "\n".join(bad)


def test_no_module_over_800_lines() -> None:
    long = []
    for path in MODULES.values():
        with path.open(encoding="utf-8") as fh:
            lines = sum(1 for _ in fh)
        if lines > MAX_LINES:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long, f"modules over {MAX_LINES} lines (split by meaning):\n" + "\n".join(long)
