"""Layers point one way: each package imports only from its own layer or those below it, and no
modules import each other in a cycle. Walks every import statement, those inside functions too."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parent.parent
# lowest first; the command line sits on top of everything it wires together
LAYERS = ["core", "schemas", "sources", "pipelines", "reports", "pipelines.cli", "benchmarks", "tools"]
PACKAGES = ("core", "schemas", "sources", "pipelines", "reports", "benchmarks", "tools")


def layer(module: str) -> int:
    return max(i for i, name in enumerate(LAYERS) if module == name or module.startswith(name + "."))


def imports() -> dict[str, set[str]]:
    """module -> the project modules it imports (a `from pkg import mod` names the module)."""
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
               for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    found: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                            for a in node.names}
        found[name] = {t for t in targets if t.split(".")[0] in PACKAGES and t in modules}
    return found


def test_no_module_imports_a_layer_above_it():
    upward = sorted(f"{m} -> {t}" for m, ts in imports().items() for t in ts if layer(t) > layer(m))
    assert upward == []


def test_no_import_cycle():
    graph = imports()
    state: dict[str, int] = {}
    cycles = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                cycles.append(" -> ".join(path[path.index(t):] + [t]) if t in path else f"{m} -> {t}")
            elif t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_the_ground_floor_needs_nothing_but_the_standard_library_and_itself():
    for m, ts in imports().items():
        if m.startswith("core"):
            assert all(t.startswith("core") for t in ts), (m, ts)


def resource_reaches() -> list[tuple[str, str]]:
    """(module, package) for every `files("package")` (importlib.resources) a module calls: a
    package's files are a dependency on it as much as an import is."""
    found = []
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "files"
                        and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    found.append((module, node.args[0].value))
    return found


def test_no_module_reads_the_files_of_a_layer_above_it():
    reaches = resource_reaches()
    assert ("sources.telemetry", "sources") in reaches     # the walk finds the calls it is meant to judge
    assert sorted(f"{m} -> files({p!r})" for m, p in reaches
                  if p.split(".")[0] in PACKAGES and layer(p) > layer(m)) == []


def test_reports_reach_into_pipelines_rarely():
    """Reports read marts; what else they take from pipelines (the config, the quality summary,
    the reconstruction engine's face) stays under 15 import lines: a generic helper belongs in core."""
    lines = [ln for p in (ROOT / "reports").rglob("*.py") for ln in p.read_text(encoding="utf-8").splitlines()
             if ln.lstrip().startswith(("from pipelines", "import pipelines"))]
    assert len(lines) < 15, lines
