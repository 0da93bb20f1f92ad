"""The core is layered, and its imports say so (issue 31): every module of ``callgate``
belongs to one layer, imports only its own layer and the layers below it, and no module
imports itself back through any chain (type-only and function-local imports included).

The layers, lowest first (docs/architecture.md draws them)::

    model → text → validation → config → fs → results → store
          → permissions → registry → files → pipeline → executor → session → host → top

Each of the checks below is run once on a planted violation first, so none can pass by
seeing nothing.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core" / "callgate"

#: the layers, lowest first; each names the packages and modules (relative to ``callgate``)
#: it holds. A public module sits on the layer of what it shows.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("model", ("_model", "schema", "results", "native")),
    ("text", ("_text", "text")),
    ("validation", ("_validation",)),
    ("config", ("_config",)),
    ("fs", ("_fs", "paths")),
    ("results", ("_results",)),
    ("store", ("_store", "store")),
    ("permissions", ("_permissions", "permissions")),
    ("registry", ("_registry",)),
    ("files", ("_files", "files")),
    ("pipeline", ("_pipeline", "process", "hookspecs", "suggest")),
    ("executor", ("_executor",)),
    ("session", ("_session", "rules")),
    ("host", ("_host", "host")),
    ("top", ("__init__", "sync", "testing")),
)


def layer_of(module: str, layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS) -> int | None:
    """The index of the layer ``module`` (``callgate.x.y``) is on, or ``None``."""
    parts = module.split(".")
    if parts[0] != "callgate":
        return None
    head = parts[1] if len(parts) > 1 else "__init__"
    for index, (_name, members) in enumerate(layers):
        if head in members:
            return index
    return None


def modules(root: Path) -> dict[str, Path]:
    """``{dotted name: file}`` of every module of the package at ``root``."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(module: str, path: Path, known: Mapping[str, Path]) -> Iterator[tuple[int, str]]:
    """``(line, imported module)`` for every import of ``callgate`` code in ``path``: at the
    top, under ``TYPE_CHECKING`` and inside functions alike."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "callgate":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] +
                                ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == "callgate":
                base = node.module
            else:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield node.lineno, sub if sub in known else base


def layer_violations(root: Path, layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS
                     ) -> list[str]:
    """Every import of a higher layer, and every module on no layer."""
    known = modules(root)
    problems = []
    for module, path in known.items():
        own = layer_of(module, layers)
        if own is None:
            problems.append(f"{module}: on no layer (add it to LAYERS)")
            continue
        for line, target in imports(module, path, known):
            theirs = layer_of(target, layers)
            if theirs is not None and theirs > own:
                problems.append(f"{module}:{line} ({layers[own][0]}) imports {target} "
                                f"({layers[theirs][0]})")
    return problems


def import_cycles(root: Path) -> list[list[str]]:
    """The import cycles among the modules at ``root`` (Tarjan's strongly connected
    components of more than one module, or a module importing itself)."""
    known = modules(root)
    graph = {m: {t for _line, t in imports(m, p, known) if t in known and t != m}
             for m, p in known.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


# --- the checks are not blind ------------------------------------------------------------------

PLANTED = {
    "__init__.py": "",
    "_model/__init__.py": "",
    "_model/values.py": "from __future__ import annotations\n",
    "_session/__init__.py": "",
    "_session/session.py": "from .._model.values import *\n",
    "_pipeline/__init__.py": "",
    "_pipeline/pipeline.py": """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from .._session.session import Session  # a type-only import of a higher layer
        def later():
            from .._session import session  # and a function-local one
    """,
    "_pipeline/batch.py": "from . import pipeline\n",
}


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    root = tmp_path / "callgate"
    for name, text in PLANTED.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def test_the_layer_check_sees_a_type_only_and_a_local_import_of_a_higher_layer(
        planted: Path) -> None:
    problems = layer_violations(planted)
    assert problems == [
        "callgate._pipeline.pipeline:4 (pipeline) imports callgate._session.session (session)",
        "callgate._pipeline.pipeline:6 (pipeline) imports callgate._session.session (session)",
    ]


def test_the_layer_check_names_a_module_on_no_layer(planted: Path) -> None:
    (planted / "_stray.py").write_text("")
    assert "callgate._stray: on no layer (add it to LAYERS)" in layer_violations(planted)


def test_the_cycle_check_sees_a_cycle_through_a_type_only_import(planted: Path) -> None:
    assert import_cycles(planted) == []
    (planted / "_pipeline" / "pipeline.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .batch import x\n")
    assert import_cycles(planted) == [["callgate._pipeline.batch",
                                       "callgate._pipeline.pipeline"]]


# --- the core -------------------------------------------------------------------------------


def test_every_core_module_imports_only_its_layer_and_lower_ones() -> None:
    problems = layer_violations(CORE)
    assert not problems, "layer violations:\n" + "\n".join(problems)


def test_the_core_has_no_import_cycle() -> None:
    cycles = import_cycles(CORE)
    assert not cycles, "import cycles (type-only and local imports included):\n" + \
        "\n".join(" <-> ".join(c) for c in cycles)
