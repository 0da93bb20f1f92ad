"""What the core promises plugin authors about itself (issue 17): a small public API, no
built-in tool named in its source, no plugin importing another, every hook implemented by a
test plugin, and design-note citations that resolve to files in the repository."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import callgate
import pytest
from callgate import Host

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core" / "callgate"
PUBLIC_SUBMODULES = ("host", "files", "text", "paths", "permissions", "results", "schema",
                     "store", "process", "native", "hookspecs", "sync", "testing")


@pytest.fixture(scope="module")
def builtin_tools() -> set[str]:
    """Every tool a built-in family registers, on either OS, aliases included."""
    names: set[str] = set()
    for os_name in ("posix", "windows"):
        host = Host.boot({}, os=os_name, surface="full", entrypoints=list(callgate_families()))
        names |= set(host.registry.names()) | {s.name for s in host.registry.other_os_tools()}
    return names


def callgate_families() -> list[str]:
    from callgate_cli._contract import builtin_families

    families = builtin_families()
    assert {"files", "shell", "capability"} <= set(families) and "word_count" not in families
    return families


# --- the public API ----------------------------------------------------------------------


def test_the_top_level_api_is_small_and_every_name_resolves() -> None:
    assert len(callgate.__all__) <= 20
    for name in callgate.__all__:
        assert getattr(callgate, name) is not None
    for module in PUBLIC_SUBMODULES:
        sub = __import__(f"callgate.{module}", fromlist=["_"])
        for name in getattr(sub, "__all__", ()):
            assert getattr(sub, name) is not None, (module, name)


def test_the_package_has_no_shim_for_names_it_no_longer_exports() -> None:
    """A name that is not public is not there: no module ``__getattr__`` answers for it."""
    assert not hasattr(callgate, "__getattr__")
    with pytest.raises(ImportError):
        from callgate import decode_text  # noqa: F401
    with pytest.raises(ImportError):
        from callgate import Session  # noqa: F401  (callgate.host.Session)
    assert not hasattr(callgate, "no_such_name")


# --- no tool names in the core ---------------------------------------------------------------


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """``(line, value)`` of every string literal in code (docstrings and comments excluded)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef |
                                ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


def _identifiers(path: Path) -> set[str]:
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return {t.string for t in tokens if t.type == tokenize.NAME}


#: The permission verdicts: ``"ask"`` there is the rule engine's word (allow / ask / deny),
#: not the ``ask`` tool of callgate-ask that shares it.
VERDICTS = {"allow", "ask", "deny"}


def test_the_core_names_no_builtin_tool(builtin_tools: set[str]) -> None:
    """The core decides nothing by a tool's name: no string in its code is a built-in tool's
    name (permission groups, surface order, the proxy's advice, MCP and shell names come
    from ToolSpec fields or from the plugin that owns them), and no identifier is one."""
    assert {"bash", "pwsh", "read_file", "use_capability", "delete_symbol"} <= builtin_tools
    found = []
    for path in sorted(CORE.rglob("*.py")):
        for line, value in _code_strings(path):
            if value in builtin_tools - VERDICTS:
                found.append(f"{path.name}:{line}: {value!r}")
        found += [f"{path.name}: identifier {n}" for n in _identifiers(path) & builtin_tools
                  if "_" in n]  # short words (ls, glob, task, wait) are ordinary names
    assert not found, "the core names built-in tools:\n" + "\n".join(found)


# --- who may import what ---------------------------------------------------------------------


def _packages(root: Path, *patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in root.glob(pattern) if p.is_dir())


def _imports(path: Path) -> list[tuple[int, str]]:
    """``(line, name)`` of every absolute import in ``path``: ``import m`` gives ``m``, ``from
    m import a`` gives ``m.a`` (so a private name from a public module shows)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _private(module: str) -> bool:
    """``callgate._x`` (or deeper): the core's private modules and names (dunders aside)."""
    parts = module.split(".")
    return parts[0] == "callgate" and any(
        p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts[1:])


def import_violations(root: Path) -> list[str]:
    """The import rule of the tiers (issue 31): plugins import ``callgate`` and libraries,
    never each other, never ``callgate._*``; libraries (``libs/``) the same, and never a
    plugin; the command line (``cli/``) as a plugin; the core never a library, a plugin or
    the command line."""
    plugins = _packages(root, "plugins/*/callgate_*", "contrib/*/callgate_*",
                        "examples/*/callgate_*", "cli/callgate_*")
    libraries = _packages(root, "libs/*/callgate_*")
    plugin_names = {p.name for p in plugins}
    library_names = {p.name for p in libraries}
    found = []

    def check(package: Path | None, files: list[Path], banned: set[str], what: str) -> None:
        for path in files:
            for line, module in _imports(path):
                top = module.split(".")[0]
                where = f"{path.relative_to(root)}:{line}"
                if top in banned and (package is None or top != package.name):
                    found.append(f"{where}: {what} imports {module}")
                elif package is not None and _private(module):
                    found.append(f"{where}: {what} imports the core's private {module}")

    for package in plugins:
        check(package, sorted(package.rglob("*.py")), plugin_names, "a plugin")
    for package in libraries:
        check(package, sorted(package.rglob("*.py")), plugin_names, "a library")
    check(None, sorted((root / "core" / "callgate").rglob("*.py")),
          plugin_names | library_names, "the core")
    return sorted(set(found))


def test_plugins_import_callgate_and_libraries_never_each_other_nor_callgate_private() -> None:
    assert _packages(ROOT, "libs/*/callgate_*"), "no library found in libs/"
    found = import_violations(ROOT)
    assert not found, "\n".join(found)


def test_the_import_rule_catches_each_kind_of_violation(tmp_path: Path) -> None:
    """Planted violations: one of each kind is reported, and only those."""
    files = {
        "plugins/a/callgate_a/__init__.py": "from callgate import ToolSpec, __version__\n"
                                            "from callgate_toolkit.walk import walk_files\n"
                                            "from . import _own\n",
        "plugins/a/callgate_a/bad.py": "import callgate_b.tools\n"
                                       "from callgate._model import ToolResult\n"
                                       "from callgate.files import _gate_private\n",
        "plugins/b/callgate_b/__init__.py": "from callgate_a import x\n",
        "libs/callgate-toolkit/callgate_toolkit/walk.py": "import callgate_a\n"
                                                           "from callgate import _errors\n",
        "core/callgate/_host.py": "from callgate_toolkit import fifo\n",
        "cli/callgate_cli/cli.py": "from callgate._host.worker import serve\n",
        "core/callgate/_sync.py": "from callgate_cli.cli import main\n",
        "core/callgate/_ok.py": "from ._model import ToolResult\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = [line.split(": ", 1)[1] for line in import_violations(tmp_path)]
    assert found == [
        "a plugin imports the core's private callgate._host.worker.serve",
        "the core imports callgate_toolkit.fifo",
        "the core imports callgate_cli.cli.main",
        "a library imports callgate_a",
        "a library imports the core's private callgate._errors",
        "a plugin imports callgate_b.tools",
        "a plugin imports the core's private callgate._model.ToolResult",
        "a plugin imports the core's private callgate.files._gate_private",
        "a plugin imports callgate_a.x",
    ], found


#: What only plugins and libraries need (issue 31): the shell-line parser, the walker's
#: .gitignore rules, the file watcher's and the directory watches' kernel bindings.
PLUGIN_ONLY = {"tree-sitter": "tree_sitter", "tree-sitter-bash": "tree_sitter_bash",
               "pathspec": "pathspec", "watchfiles": "watchfiles",
               "inotify-simple": "inotify_simple"}


def test_the_bare_core_neither_declares_nor_imports_what_only_plugins_need() -> None:
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[\s\[<>=;~!]", d)[0] for d in declared}
    assert not names & set(PLUGIN_ONLY), names & set(PLUGIN_ONLY)
    found = [f"{path.relative_to(ROOT)}:{line}: {module}"
             for path in sorted(CORE.rglob("*.py")) for line, module in _imports(path)
             if module.split(".")[0] in PLUGIN_ONLY.values()]
    assert not found, found


# --- every hook has a test plugin ----------------------------------------------------------------


def test_every_hookspec_is_implemented_by_a_test_plugin() -> None:
    """datasette's meta-test: a hook nobody implements in a test is a hook nobody tests."""
    host = Host.boot({}, surface="full")
    specs = {name for name, caller in vars(host.pm.hook).items()
             if name.startswith("callgate_") and getattr(caller, "spec", None) is not None}
    assert {"callgate_register_tools", "callgate_shape_result", "callgate_confine_process"} <= specs
    implemented: set[str] = set()
    marker = re.compile(r"@hookimpl[^\n]*\n(?:\s*@[^\n]*\n)*\s*(?:async\s+)?def (callgate_\w+)")
    for path in (ROOT / "tests").rglob("*.py"):
        implemented |= set(marker.findall(path.read_text(encoding="utf-8")))
    missing = sorted(specs - implemented)
    assert not missing, f"hooks no test plugin implements: {missing}"


# --- the design notes the code cites ship with it ------------------------------------------------


def test_every_cited_design_note_ships_in_design() -> None:
    cited: dict[str, str] = {}
    pattern = re.compile(r"\b([a-z][a-z-]*\.md) §")
    for folder in ("core", "plugins", "contrib", "examples", "benchmarks", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            for name in pattern.findall(path.read_text(encoding="utf-8")):
                cited.setdefault(name, str(path.relative_to(ROOT)))
    assert {"host.md", "files.md"} <= set(cited)
    shipped = {p.name for p in (ROOT / "design").glob("*.md")}
    missing = {name: where for name, where in cited.items() if name not in shipped}
    assert not missing, f"cited but not in design/: {missing}"


# --- installable the way users install ---------------------------------------------------------


def test_callgate_all_brings_every_builtin_family_and_serve() -> None:
    import tomllib

    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extra = {re.split(r"[\[<>=]", d)[0] for d in root["project"]["optional-dependencies"]["all"]}
    families = {tomllib.loads(p.read_text())["project"]["name"]
                for p in ROOT.glob("plugins/*/pyproject.toml")}
    assert families <= extra, f"callgate[all] lacks {sorted(families - extra)}"
    assert "callgate-mcp-serve" in extra
    assert "callgate-capability[mcp]" in root["project"]["optional-dependencies"]["all"]
