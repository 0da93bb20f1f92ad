"""Every config key declares what a workspace config may do with it (issue 30, 1(b)).

Boots a host with every installed plugin (and ``callgate serve``'s approver, which claims
``[serve]``) on both OSes, walks every key of every claimed table at any depth (map entries
included), and fails on a key without an ``x-workspace`` policy (unless an enclosing table or
map is already user-only), on a policy name the layering does not know, and on a key whose
``x-kind`` (what it is: a program, an environment, a path, a store, a scope, a limit, rules)
allows a policy that could loosen it. Key names that look like one of those must carry the
matching ``x-kind``, so a new ``*_dir`` or ``command`` cannot slip in as a plain preference.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from callgate import Host
from callgate._config.layers import KIND, KIND_POLICIES, POLICIES, POLICY
from callgate_mcp_serve import ElicitationApprover

from tests.trust.config_attacks import walk_keys

#: a key whose name matches must carry one of these kinds
NAMED_KINDS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = tuple(
    (re.compile(pattern), frozenset(kinds)) for pattern, kinds in (
        (r"(^|_)(command|args|program|executable|backend|engine|force)($|_)|_path$",
         {"program", "path"}),
        (r"(^|_)env($|_)", {"env", "denylist", "scope"}),
        (r"(^|_)(dir|dirs|paths|roots|cwd|bundle|writable|readable)($|_)", {"path"}),
        (r"(^|_)store($|_)", {"store", "limit"}),
        (r"^(max|min)_|_max_|(^|_)(timeout|limit)($|_)|_(bytes|ms|s|seconds|days|mb|lines|"
         r"results|parallel|depth|writers|redirects)$", {"limit", "store"}),
        (r"^allow_|(^|_)global$|_global_|(^|_)(trust|trusted|workspaces|resolve|loopback|network|"
         r"history)($|_)", {"scope", "allowlist"}),
        (r"^(allow|deny|ask|protected|hide)$", {"denylist", "allowlist"}),
    ))


def _policy_name(policy: Any) -> str:
    return "scale" if isinstance(policy, list) else str(policy)


def policy_problems(schemas: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What is wrong with the declared policies of ``{table: schema}`` (empty: nothing)."""
    problems: list[str] = []
    for table, schema in schemas.items():
        top = schema.get(POLICY)
        if top is not None and not _known(top):
            problems.append(f"[{table}]: unknown x-workspace {top!r}")
        if not schema.get("properties") and isinstance(schema.get("additionalProperties"),
                                                       Mapping) and top is None:
            problems.append(f"[{table}]: a map table without an x-workspace policy")
        for path, sub, user_above in walk_keys(schema, (table,)):
            key = ".".join(path)
            declared = sub.get(POLICY)
            if declared is not None and not _known(declared):
                problems.append(f"{key}: unknown x-workspace {declared!r}")
            if declared is None and not user_above and not _is_table(sub):
                problems.append(f"{key}: no x-workspace policy")
            kind = sub.get(KIND)
            if kind is not None and kind not in KIND_POLICIES:
                problems.append(f"{key}: unknown x-kind {kind!r}")
            elif kind is not None:
                effective = "user" if user_above or declared is None else _policy_name(declared)
                if effective not in KIND_POLICIES[kind]:
                    problems.append(f"{key}: x-kind {kind!r} may not be {effective!r} (allowed: "
                                    f"{', '.join(sorted(KIND_POLICIES[kind]))})")
            name = path[-1]
            for pattern, kinds in NAMED_KINDS:
                if name != "<*>" and pattern.search(name) and kind not in kinds:
                    problems.append(f"{key}: its name says {'/'.join(sorted(kinds))}, but its "
                                    f"x-kind is {kind!r}")
    return problems


def _known(policy: Any) -> bool:
    return (isinstance(policy, list) and len(policy) >= 2) or policy in POLICIES


def _is_table(schema: Mapping[str, Any]) -> bool:
    return bool(schema.get("properties"))


@pytest.fixture(scope="module")
def schemas() -> dict[str, Mapping[str, Any]]:
    """``{table: schema}`` of every table an installed plugin claims, on either OS."""
    found: dict[str, Mapping[str, Any]] = {}
    for os_name in ("posix", "windows"):
        host = Host.boot(os=os_name, user_config=False, plugins=[ElicitationApprover()])
        found.update({t: s for t, (_p, s) in host.registry.config_schemas.items()})
    return found


def test_every_key_of_every_loaded_plugin_declares_a_workspace_policy(
        schemas: dict[str, Mapping[str, Any]]) -> None:
    assert {"lsp", "memory", "skills", "sessions", "sandbox", "serve", "mcp_servers"} <= \
        set(schemas)
    problems = policy_problems(schemas)
    keys = [p for table, schema in schemas.items() for p, _s, _u in walk_keys(schema, (table,))]
    print(f"config keys audited: {len(keys)} in {len(schemas)} tables")
    assert not problems, "config keys with a missing or loosening policy:\n  " + \
        "\n  ".join(problems)


@pytest.mark.parametrize(("schema", "complaint"), [
    ({"type": "object", "properties": {"colour": {"type": "string"}}}, "no x-workspace"),
    ({"type": "object", "properties": {"c": {"type": "string", "x-workspace": "mni"}}},
     "unknown x-workspace"),
    ({"type": "object", "properties": {"command": {"type": "string", "x-workspace": "any",
                                                   "x-kind": "program"}}},
     "x-kind 'program' may not be 'any'"),
    ({"type": "object", "properties": {"command": {"type": "string", "x-workspace": "user"}}},
     "its name says path/program"),
    ({"type": "object", "properties": {"cache_dir": {"type": "string", "x-workspace": "any",
                                                     "x-kind": "path"}}},
     "x-kind 'path' may not be 'any'"),
    ({"type": "object", "properties": {"max_bytes": {"type": "integer", "x-workspace": "max",
                                                     "x-kind": "limit"}}}, None),
    ({"type": "object", "properties": {"timeout_s": {"type": "number", "x-workspace": "any",
                                                     "x-kind": "limit"}}},
     "x-kind 'limit' may not be 'any'"),
    ({"type": "object", "properties": {"env": {"type": "object", "x-workspace": "add",
                                               "x-kind": "env",
                                               "additionalProperties": {"type": "string"}}}},
     "x-kind 'env' may not be 'add'"),
    ({"type": "object", "properties": {"servers": {
        "type": "object", "x-workspace": "add", "additionalProperties": {
            "type": "object", "properties": {"command": {"type": "string"}}}}}},
     "knobs.servers.<*>.command: no x-workspace"),
    ({"type": "object", "properties": {"servers": {
        "type": "object", "x-workspace": "user", "additionalProperties": {
            "type": "object", "properties": {"command": {"type": "string",
                                                         "x-kind": "program"}}}}}}, None),
    ({"type": "object", "additionalProperties": {"type": "string"}},
     "a map table without an x-workspace policy"),
])
def test_the_policy_check_catches_each_mistake(schema: dict[str, Any],
                                               complaint: str | None) -> None:
    """The check above is not vacuous: each kind of mistake is reported (None: none is)."""
    problems = policy_problems({"knobs": schema})
    if complaint is None:
        assert problems == []
    else:
        assert any(complaint in p for p in problems), problems


# --- docs/config.md says the same ------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "config.md"
#: the rows of the policy table, by the policy each stands for
ROWS = {"add rules, never remove any": "add", "only make it stricter": "scale",
        "only lower it": "min", "only narrow the user's list": "subset",
        "not set it at all": "user"}


def documented_policies() -> dict[str, str]:
    """``{"table.key": policy}`` from the policy table of docs/config.md (a table named
    alone stands for all its keys; ``<name>`` for any entry of a map)."""
    out: dict[str, str] = {}
    for line in DOCS.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] not in ROWS:
            continue
        policy = ROWS[cells[0]]
        text = re.sub(r"\([^)]*\)", "", cells[1])  # the parentheticals: no keys
        for group in text.split(";"):
            tables = list(re.finditer(r"`\[([\w.<>-]+)\]", group))  # `[files] protected`
            for n, table in enumerate(tables):
                end = tables[n + 1].start() if n + 1 < len(tables) else len(group)
                name = re.sub(r"<\w+>", "<*>", table.group(1))
                keys = re.findall(r"`(\w+)`", "`" + group[table.end():end].lstrip())
                for key in keys or [""]:
                    out[f"{name}.{key}" if key else name] = policy
                if not keys and name.endswith(".<*>"):  # [lsp.servers.<language>]: the map
                    out[name[:-4]] = policy
    return out


def test_the_policy_table_of_the_docs_matches_the_schemas(
        schemas: dict[str, Mapping[str, Any]]) -> None:
    documented = documented_policies()
    wrong = []
    for table, schema in schemas.items():
        for path, sub, user_above in walk_keys(schema, (table,)):
            key = ".".join(path)
            declared = sub.get(POLICY)
            if declared is None and (user_above or sub.get("properties")):
                continue  # a table's keys, or one inside a user-only table: said above
            policy = "user" if declared is None else _policy_name(declared)
            if policy == "max":
                policy = "min"  # no built-in key uses "max"; it would need its own row
            found = next((documented[prefix] for end in range(len(path), 0, -1)
                          if (prefix := ".".join(path[:end])) in documented), None)
            if found != policy:
                wrong.append(f"{key}: {policy} in the code, {found} in docs/config.md")
    assert not wrong, "\n".join(wrong)
