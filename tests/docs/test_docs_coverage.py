"""The docs cannot drift: every hook, built-in tool and config key has an entry in ``docs/``.

The hook reference is checked against the hook specifications the booted host knows (the core's
and the plugins' own), the tool reference against what the built-in plugins register on either
OS, and the config reference against every table and key the core and the plugins claim.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from callgate import Host

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def sections(text: str, level: str) -> dict[str, str]:
    """``{heading text: body}`` for every heading of exactly ``level`` (``"###"``)."""
    out: dict[str, str] = {}
    pattern = re.compile(rf"^{level} (.+)$", re.M)
    matches = list(pattern.finditer(text))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        body = text[m.end():end]
        body = re.split(rf"^#{{1,{len(level)}}} ", body, maxsplit=1, flags=re.M)[0]
        out[m.group(1).strip()] = body
    return out


@pytest.fixture(scope="module")
def hosts() -> dict[str, Host]:
    return {os_name: Host.boot({}, os=os_name, surface="full") for os_name in ("posix", "windows")}


# --- hooks -----------------------------------------------------------------------------------


def hook_specs(host: Host) -> dict[str, Any]:
    specs = {}
    for name, caller in vars(host.pm.hook).items():
        spec = getattr(caller, "spec", None)
        if name.startswith("callgate_") and spec is not None:
            specs[name] = spec
    return specs


def test_every_hook_has_an_entry_with_its_exact_signature(hosts: dict[str, Host]) -> None:
    specs = hook_specs(hosts["posix"])
    assert "callgate_register_tools" in specs and len(specs) >= 9
    documented = {}
    for heading, body in sections((DOCS / "hooks.md").read_text(), "###").items():
        m = re.fullmatch(r"`(callgate_\w+)\(([^)]*)\)`", heading)
        assert m, f"hooks.md heading {heading!r} is not `callgate_name(args)`"
        args = tuple(a.strip() for a in m.group(2).split(",") if a.strip())
        documented[m.group(1)] = (args, body)

    missing = sorted(set(specs) - set(documented))
    assert not missing, f"hooks without an entry in docs/hooks.md: {missing}"
    stale = sorted(set(documented) - set(specs))
    assert not stale, f"docs/hooks.md documents hooks that do not exist: {stale}"
    for name, spec in specs.items():
        args, body = documented[name]
        assert args == tuple(spec.argnames), f"{name}: docs say {args}, spec says {spec.argnames}"
        module = getattr(spec.namespace, "__name__", "")
        assert f"Spec: `{module}`" in body, f"{name}: its entry must name its spec module {module}"
        first = bool(spec.opts.get("firstresult"))
        assert ("First answer wins" in body) == first, \
            f"{name}: 'First answer wins' must appear exactly when the spec is firstresult"


# --- built-in tools ------------------------------------------------------------------------------


def builtin_distributions() -> set[str]:
    names = set()
    for pyproject in (ROOT / "plugins").glob("*/pyproject.toml"):
        names.add(tomllib.loads(pyproject.read_text())["project"]["name"])
    return names


def builtin_tools(host: Host) -> dict[str, str]:
    """``{tool: distribution}`` for every tool a built-in plugin registered (any visibility)."""
    builtin = builtin_distributions()
    dist_of = {}
    for info in host.plugins():
        m = re.search(r"\(([^()]+)\)$", info.source)
        if m and m.group(1) in builtin:
            dist_of[info.name] = m.group(1)
    specs = [*host.registry.tools(), *host.registry.other_os_tools()]
    return {s.name: dist_of[s.plugin] for s in specs if s.plugin in dist_of}


def documented_tools() -> dict[str, str]:
    """``{tool: distribution}`` from docs/tools.md's family headings and tool headings."""
    out, dist = {}, None
    for line in (DOCS / "tools.md").read_text().splitlines():
        family = re.fullmatch(r"## .* — `(callgate-[\w-]+)`", line)
        if family:
            dist = family.group(1)
        tool = re.fullmatch(r"### `(\w+)`", line)
        if tool:
            assert dist, f"tool {tool.group(1)} is documented outside a family section"
            out[tool.group(1)] = dist
    return out


def test_every_builtin_tool_has_an_entry(hosts: dict[str, Host]) -> None:
    registered = {**builtin_tools(hosts["windows"]), **builtin_tools(hosts["posix"])}
    assert {"read_file", "bash", "pwsh", "use_capability"} <= set(registered)
    documented = documented_tools()
    missing = sorted(set(registered) - set(documented))
    assert not missing, f"built-in tools without an entry in docs/tools.md: {missing}"
    for name, dist in registered.items():
        assert documented[name] == dist, f"{name} is documented under {documented[name]}, " \
                                         f"but {dist} registers it"
    # no stale entries for the families that are installed and register tools
    loaded = set(registered.values())
    stale = sorted(n for n, d in documented.items() if d in loaded and n not in registered)
    assert not stale, f"docs/tools.md documents tools nobody registers: {stale}"
    assert set(documented.values()) <= builtin_distributions()


# --- config ---------------------------------------------------------------------------------------


def test_every_config_table_and_key_has_an_entry(hosts: dict[str, Host]) -> None:
    doc = sections((DOCS / "config.md").read_text(), "###")
    tables = {}
    for heading, body in doc.items():
        m = re.match(r"`\[([\w.<>-]+)\]`", heading)
        assert m, f"config.md heading {heading!r} does not name a table"
        tables[m.group(1).split(".")[0]] = body
    claimed = {}
    for host in hosts.values():
        claimed.update(host.registry.config_schemas)
    missing = sorted(set(claimed) - set(tables))
    assert not missing, f"config tables without an entry in docs/config.md: {missing}"
    stale = sorted(set(tables) - set(claimed))
    assert not stale, f"docs/config.md documents tables nobody claims: {stale}"
    for table, (_plugin, schema) in claimed.items():
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        if not props and isinstance(extra, dict):  # [mcp_servers.<name>]: keys per entry
            props = extra.get("properties") or {}
        documented_keys = set(re.findall(r"^\| `(\w+)` \|", tables[table], re.M))
        assert set(props) == documented_keys, \
            f"[{table}]: code has {sorted(props)}, docs/config.md has {sorted(documented_keys)}"
