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
PUBLIC_SUBMODULES = ("files", "text", "paths", "permissions", "schema", "store", "hookspecs",
                     "sync", "testing")


@pytest.fixture(scope="module")
def builtin_tools() -> set[str]:
    """Every tool a built-in family registers, on either OS, aliases included."""
    names: set[str] = set()
    for os_name in ("posix", "windows"):
        host = Host.boot({}, os=os_name, surface="full", entrypoints=list(callgate_families()))
        names |= set(host.registry.names()) | {s.name for s in host.registry.other_os_tools()}
    return names


def callgate_families() -> list[str]:
    from callgate._contract import builtin_families

    families = builtin_families()
    assert {"files", "shell", "capability"} <= set(families) and "word_count" not in families
    return families


# --- the public API ----------------------------------------------------------------------


def test_the_top_level_api_is_small_and_every_name_resolves() -> None:
    assert len(callgate.__all__) <= 30
    for name in callgate.__all__:
        assert getattr(callgate, name) is not None
    for module in PUBLIC_SUBMODULES:
        sub = __import__(f"callgate.{module}", fromlist=["_"])
        for name in getattr(sub, "__all__", ()):
            assert getattr(sub, name) is not None, (module, name)


def test_a_name_that_moved_says_where_it_lives_now() -> None:
    with pytest.raises(ImportError, match=r"callgate\.decode_text is now callgate\.text\."
                                          r"decode_text"):
        from callgate import decode_text  # noqa: F401
    from callgate.text import decode_text as moved

    assert moved(b"x").text == "x"
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
    for path in sorted(CORE.glob("*.py")):
        for line, value in _code_strings(path):
            if value in builtin_tools - VERDICTS:
                found.append(f"{path.name}:{line}: {value!r}")
        found += [f"{path.name}: identifier {n}" for n in _identifiers(path) & builtin_tools
                  if "_" in n]  # short words (ls, glob, task, wait) are ordinary names
    assert not found, "the core names built-in tools:\n" + "\n".join(found)


# --- no plugin imports another ---------------------------------------------------------------


def test_no_plugin_imports_another_plugin() -> None:
    packages = {p.name for p in ROOT.glob("plugins/*/callgate_*") if p.is_dir()} | \
        {p.name for p in ROOT.glob("contrib/*/callgate_*") if p.is_dir()}
    found = []
    for package in [*ROOT.glob("plugins/*/callgate_*"), *ROOT.glob("contrib/*/callgate_*")]:
        for path in package.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level \
                    else []
                for name in names:
                    top = name.split(".")[0]
                    if top in packages and top != package.name:
                        found.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not found, "\n".join(found)


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
