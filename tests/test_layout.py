"""The shape of the house, checked: imports run one way (store <- agents <- app <- CLI / server /
hooks), the three agents never import each other, and package __init__ files stay cheap.

Imports are read from the source (top-level and inside functions alike), so a lazy import that
runs back up the layers is caught as well as an eager one.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ("memory.retrieval", "memory.extraction", "memory.maintenance")
ADAPTERS = ("memory.cli", "server", "hooks")
# Shared helpers every layer may use: errors, settings, project identity, embedders, the LLM
# provider, the engine's socket protocol (memory.remote), and pure text (memory.lang).
BASE = (
    "memory",
    "memory.errors",
    "memory.config",
    "memory.scope",
    "memory.embed",
    "memory.llm",
    "memory.remote",
    "memory.lang",
)
HEAVY = ("numpy", "torch", "sentence_transformers", "jieba", "mcp", "pydantic", "sqlite_vec")


def _modules() -> dict[str, Path]:
    out = {}
    for top in ("memory", "server", "hooks"):
        for path in (ROOT / top).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


MODULES = _modules()


def _imports(name: str) -> set[str]:
    """The project modules `name` imports, anywhere in its source."""
    path = MODULES[name]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def _within(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def _layer(name: str) -> str:
    if _within(name, *ADAPTERS):
        return "adapter"
    if _within(name, "memory.app"):
        return "app"
    for agent in AGENTS:
        if _within(name, agent):
            return agent
    if _within(name, "memory.store"):
        return "store"
    if name in BASE or _within(name, "memory.lang"):
        return "base"
    raise AssertionError(f"{name} belongs to no layer; place it in one")


ALLOWED = {  # layer -> the layers it may import
    "base": {"base"},
    "store": {"base", "store"},
    **{agent: {"base", "store", agent} for agent in AGENTS},
    "app": {"base", "store", *AGENTS, "app"},
    "adapter": {"base", "store", *AGENTS, "app", "adapter"},
}


def test_every_module_belongs_to_a_layer() -> None:
    for name in MODULES:
        _layer(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_run_one_way_store_agents_app_adapters(name: str) -> None:
    upward = sorted(t for t in _imports(name) if _layer(t) not in ALLOWED[_layer(name)])
    assert upward == [], f"{name} ({_layer(name)}) imports {upward}"


def test_the_language_helpers_are_pure_text() -> None:
    for name in (n for n in MODULES if _within(n, "memory.lang")):
        assert not (_imports(name) - {n for n in MODULES if _within(n, "memory.lang")} - {"memory", "memory.errors"}), (
            name
        )
        assert "sqlean" not in MODULES[name].read_text(encoding="utf-8"), name


def test_the_app_is_imported_by_the_adapters_only() -> None:
    importers = {n for n in MODULES if any(_within(t, "memory.app") for t in _imports(n))}
    assert {_layer(n) for n in importers} <= {"app", "adapter"}


def test_package_init_files_only_hand_on_names() -> None:
    for _name, path in MODULES.items():
        if path.name != "__init__.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            ok = (
                isinstance(node, (ast.ImportFrom, ast.Import))
                or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
                or (
                    isinstance(node, ast.Assign)
                    and all(isinstance(t, ast.Name) and t.id in ("__all__", "__version__") for t in node.targets)
                )
            )
            assert ok, f"{path.relative_to(ROOT)} line {node.lineno} does more than hand on names"


def test_importing_any_package_loads_nothing_heavy() -> None:
    packages = sorted(n for n, p in MODULES.items() if p.name == "__init__.py")
    code = (
        "import sys, importlib\n"
        f"for p in {packages!r}: importlib.import_module(p)\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_no_module_imports_itself_back_through_others() -> None:
    graph = {n: _imports(n) for n in MODULES}
    cycles = []
    for start in graph:  # a cycle through `start`: can `start` be reached again from what it imports?
        seen, todo = set(), list(graph[start])
        while todo:
            n = todo.pop()
            if n == start:
                cycles.append(start)
                break
            if n not in seen:
                seen.add(n)
                todo.extend(graph[n])
    assert cycles == []
