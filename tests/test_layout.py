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
        # the translation table: a leaf (it imports nothing of the cockpit), words not data
        and not (i.name == "cockpit.i18n" or i.name.startswith("cockpit.i18n."))
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
        if name not in PACKAGE_DATA_READERS:
            bad += [f"{_where(name, line)}: calls {call}" for call, line in c.io_calls]
    assert not bad, "cockpit/diagnosis must stay pure (no platform, no I/O):\n" + "\n".join(bad)


# modules of the engine that read the package's own data files (shipped with it, read once and
# cached), never a platform's: the message catalogue generated from the producers' sources
PACKAGE_DATA_READERS = frozenset({"cockpit.diagnosis.catalogue"})


def test_no_module_over_800_lines() -> None:
    long = []
    for path in MODULES.values():
        with path.open(encoding="utf-8") as fh:
            lines = sum(1 for _ in fh)
        if lines > MAX_LINES:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long, f"modules over {MAX_LINES} lines (split by meaning):\n" + "\n".join(long)


# the app's side: what draws (Textual) and what starts it; everything else is the core or a
# head that formats the core's state. The TUI's launcher (commands/tui.py) loads the app only
# when it runs, so `cockpit incidents` never loads Textual.
UI_MODULES = ("cockpit.app", "cockpit.screens", "cockpit.driver")
LAUNCHERS = ("cockpit.commands.tui",)


def _is_textual(name: str) -> bool:
    return name == "textual" or name.startswith("textual.")


def _ui(name: str) -> bool:
    if any(name == m or name.startswith(m + ".") for m in UI_MODULES):
        return True
    # widgets/ draws, except its plain-data modules (rows, status entries, formats, text)
    return name.startswith("cockpit.widgets") and any(
        _is_textual(i.name) for i in COLLECTED[name].imports
    )


def _loaded_with(name: str) -> set[str]:
    """What importing ``name`` imports: its imports outside functions (and TYPE_CHECKING)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    package = name if MODULES[name].name == "__init__.py" else name.rsplit(".", 1)[0]
    c = _Collector(package)
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            c.visit(node)
        elif isinstance(node, ast.ClassDef):  # a class body runs at import; its methods do not
            for item in node.body:
                if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    c.visit(item)
    return {i.name for i in c.imports}


def test_only_the_app_imports_textual() -> None:
    """No core module or CLI head imports Textual, nor imports (when loaded) what does; only
    the launcher starts the app, from inside its run."""
    loaded = {n: _loaded_with(n) for n in COLLECTED}
    bad = []
    for name in sorted(COLLECTED):
        if _ui(name):
            continue
        for i in COLLECTED[name].imports:
            if _is_textual(i.name):
                bad.append(f"{_where(name, i.line)}: imports {i.name}")
            elif i.name in MODULES and _ui(i.name) and name not in LAUNCHERS:
                bad.append(f"{_where(name, i.line)}: imports {i.name} (the app's)")
        # what loading it loads, module by module
        seen, todo = {name}, [name]
        while todo:
            cur = todo.pop()
            for dep in loaded[cur]:
                if _is_textual(dep) or (dep in MODULES and _ui(dep)):
                    bad.append(f"{name}: loads {dep} (through {cur})")
                elif dep in MODULES and dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
    assert not bad, "the core and the CLI heads must run without Textual:\n" + "\n".join(
        sorted(set(bad))
    )


# a head that polls a source itself runs a pipeline of its own: its verdicts drift from the
# TUI's (cockpit.runtime.hub runs one for every head). diagnose JOB and collect JOB read one
# job's records for a drill-down or a bundle, not the site: they may poll, never in a loop.
SINGLE_POLL_COMMANDS = ("cockpit.commands.diagnose", "cockpit.commands.collect")


class _Polls(ast.NodeVisitor):
    def __init__(self) -> None:
        self.loops = 0
        self.found: list[tuple[int, bool]] = []  # (line, inside a loop)

    def _loop(self, node: ast.AST) -> None:
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1

    visit_For = visit_AsyncFor = visit_While = _loop

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        named = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if named in {"poll", "refresh_and_diagnose", "diagnose_with_evidence"}:
            self.found.append((node.lineno, self.loops > 0))
        self.generic_visit(node)


def test_no_command_runs_a_pipeline_of_its_own() -> None:
    bad = []
    for name, path in MODULES.items():
        if not name.startswith("cockpit.commands."):
            continue
        v = _Polls()
        v.visit(ast.parse(path.read_text(encoding="utf-8")))
        for line, in_loop in v.found:
            if in_loop or name not in SINGLE_POLL_COMMANDS:
                bad.append(f"{_where(name, line)}" + (" (in a loop)" if in_loop else ""))
    assert not bad, "commands poll through cockpit.runtime.hub, not on their own:\n" + "\n".join(
        bad
    )
