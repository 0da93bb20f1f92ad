"""Every plugin package has one layout (issue 31; docs/writing-a-tool.md, "The layout"):

- ``plugin.py`` holds every ``@hookimpl`` of the package and whatever else an entry point
  names (a ``callgate.commands`` ``register``, a ``callgate.stores`` opener); the package
  re-exports its hook implementations, so the package itself is the plugin (the
  ``callgate`` entry point names it, and ``plugins=[callgate_x]`` registers the same
  object);
- ``config.py`` holds the schema of every table the package claims (``add_config``);
- ``tools/`` holds the tools, one module per tool or tool group: every tool the family
  registers executes code of ``tools/``;
- ``hookspecs.py`` the hooks it offers, ``_*.py`` private machinery.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path
from typing import Any

import pytest
from callgate import Host

ROOT = Path(__file__).resolve().parents[2]

def distributions(root: Path = ROOT) -> list[Path]:
    return sorted(p.parent for pattern in ("plugins/*/pyproject.toml",
                                           "contrib/*/pyproject.toml",
                                           "examples/*/pyproject.toml")
                  for p in root.glob(pattern))


def _package(dist: Path) -> Path:
    [package] = [p for p in dist.glob("callgate_*") if p.is_dir()]
    return package


def _entry_points(dist: Path) -> dict[str, dict[str, str]]:
    project = tomllib.loads((dist / "pyproject.toml").read_text())["project"]
    return project.get("entry-points", {})


def _is_hookimpl(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (isinstance(target, ast.Name) and target.id == "hookimpl") or \
        (isinstance(target, ast.Attribute) and target.attr == "hookimpl")


def _config_names(tree: ast.Module) -> set[str]:
    """Names a module binds from its package's ``config`` module (``from .config import X``
    and ``from . import config``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module == "config":
                names |= {a.asname or a.name for a in node.names}
            elif node.module is None:
                names |= {f"{a.asname or a.name}." for a in node.names if a.name == "config"}
    return names


def layout_problems(dist: Path, root: Path = ROOT) -> list[str]:
    """What in one distribution does not follow the layout (static checks)."""
    package = _package(dist)
    where = package.relative_to(root)
    problems = []
    if not (package / "plugin.py").is_file():
        problems.append(f"{where}: no plugin.py")
    claims_config = False
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        from_config = _config_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                    any(_is_hookimpl(d) for d in node.decorator_list) and rel != "plugin.py":
                problems.append(f"{where}/{rel}:{node.lineno}: hook implementation "
                                f"{node.name} outside plugin.py")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "add_config" and len(node.args) >= 2:
                claims_config = True
                schema = ast.unparse(node.args[1])
                if rel != "config.py" and schema not in from_config and \
                        not any(schema.startswith(n) for n in from_config if n.endswith(".")):
                    problems.append(f"{where}/{rel}:{node.lineno}: the schema {schema} of a "
                                    "claimed table does not come from config.py")
    if claims_config and not (package / "config.py").is_file():
        problems.append(f"{where}: claims a config table but has no config.py")
    for group, points in _entry_points(dist).items():
        for name, value in points.items():
            wanted = package.name if group == "callgate" else f"{package.name}.plugin:"
            if not (value == wanted if group == "callgate" else value.startswith(wanted)):
                problems.append(f"{dist.relative_to(root)}/pyproject.toml: entry point "
                                f"{group}:{name} = {value!r}, not {wanted!r}...")
    return problems


def test_every_distribution_is_checked() -> None:
    names = {d.relative_to(ROOT).as_posix() for d in distributions()}
    assert len(names) >= 23  # 18 plugins, 4 contrib packages, the example
    assert {"plugins/hooks", "plugins/lsp", "contrib/mcp-serve"} <= names


@pytest.mark.parametrize("dist", distributions(), ids=lambda d: d.relative_to(ROOT).as_posix())
def test_every_plugin_follows_the_layout(dist: Path) -> None:
    assert layout_problems(dist) == []


@pytest.mark.parametrize("dist", distributions(), ids=lambda d: d.relative_to(ROOT).as_posix())
def test_the_package_is_its_plugin_and_its_tools_run_code_of_tools(dist: Path) -> None:
    package = _package(dist)
    module = importlib.import_module(package.name)
    plugin = importlib.import_module(f"{package.name}.plugin")
    hooks = {n for n, v in vars(plugin).items()
             if n.startswith("callgate_") and callable(v) and hasattr(v, "callgate_impl")}
    exported = {n for n, v in vars(module).items()
                if n.startswith("callgate_") and callable(v) and hasattr(v, "callgate_impl")}
    assert exported == hooks and all(getattr(module, n) is getattr(plugin, n) for n in hooks)
    if not hooks:
        return
    specs: list[Any] = []
    for os_name in ("posix", "windows"):
        host = Host.boot({}, os=os_name, plugins=[module], entrypoints=False, surface="full")
        specs += [*host.registry.tools(), *host.registry.other_os_tools()]
    outside = sorted({f"{s.name}: {s.execute.__module__}" for s in specs if s.execute is not None
                      and not s.execute.__module__.startswith(f"{package.name}.tools.")})
    assert not outside, f"tools whose code is not in {package.name}/tools/: {outside}"
    if specs:
        assert (package / "tools" / "__init__.py").is_file()


def test_the_layout_check_reports_each_kind_of_departure(tmp_path: Path) -> None:
    dist = tmp_path / "plugins" / "bad"
    files = {
        "pyproject.toml": '[project]\nname = "callgate-bad"\n'
                          '[project.entry-points.callgate]\nbad = "callgate_bad._plugin"\n',
        "callgate_bad/__init__.py": "",
        "callgate_bad/_plugin.py": "from callgate import hookimpl\n"
                                   "SCHEMA = {}\n"
                                   "@hookimpl\ndef callgate_register_tools(registry):\n"
                                   "    registry.add_config('bad', SCHEMA)\n",
    }
    for name, text in files.items():
        (dist / name).parent.mkdir(parents=True, exist_ok=True)
        (dist / name).write_text(text)
    assert layout_problems(dist, tmp_path) == [
        "plugins/bad/callgate_bad: no plugin.py",
        "plugins/bad/callgate_bad/_plugin.py:4: hook implementation callgate_register_tools "
        "outside plugin.py",
        "plugins/bad/callgate_bad/_plugin.py:5: the schema SCHEMA of a claimed table does not "
        "come from config.py",
        "plugins/bad/callgate_bad: claims a config table but has no config.py",
        "plugins/bad/pyproject.toml: entry point callgate:bad = 'callgate_bad._plugin', not "
        "'callgate_bad'...",
    ]
