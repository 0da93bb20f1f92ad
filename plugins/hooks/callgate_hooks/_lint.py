"""``callgate rules lint``: the rules a session applies that cannot do what they look like.

Findings, each naming the rule and where it was written:

- ``unknown-tool``: the rule names no tool loaded here (Claude Code's ``Read`` is
  ``read_file`` here, its ``WebFetch`` is ``web_fetch``);
- ``literal-glob``: a tool part with ``*`` (``mcp__github__*``): Claude Code reads it as every
  tool of the server, callgate's rule names are exact, so it matches nothing;
- ``never-matches``: a spec on a rule whose tools have no subject, a group with no subject;
- ``shadowed``: a rule that can never decide because a stricter list already decides
  everything it matches (``deny = ["Bash"]`` shadows ``allow = ["Bash(ls:*)"]``), or a rule
  another rule of the same list already covers (redundant);
- ``exact-only``: a command rule without ``:*`` or ``*`` matches that exact command only
  (``Bash(npm test)`` does not match ``npm test --watch``).
"""

from __future__ import annotations

import re
from typing import Any

from callgate import rules as cg_rules

from ._names import CLAUDE_NAMES, callgate_names

RANK = {"deny": 0, "ask": 1, "allow": 2}
_GLOB_CHARS = re.compile(r"[*?\[{]")


def _kind_of(session: Any, tool: str, groups: dict[str, list[str]]) -> set[str]:
    names = groups.get(tool, [tool])
    kinds = set()
    for name in names:
        spec = session.host.registry.get(name)
        if spec is None:
            for other in session.host.registry.other_os_tools():
                if other.name == name:
                    spec = other
        if spec is not None and spec.permission_subject is not None:
            kinds.add(spec.permission_subject.kind)
    return kinds


def _covers_tool(a: str, b: str, groups: dict[str, list[str]]) -> bool:
    return a == b or b in groups.get(a, ())


def _covers_spec(kind: str, a: str | None, b: str | None) -> bool:
    """Whether every subject spec ``b`` matches, spec ``a`` matches too (conservatively)."""
    if a is None:
        return True
    if b is None:
        return False
    if a == b:
        return True
    try:
        matcher = cg_rules.compile_spec(kind, a)
    except cg_rules.RuleError:
        return False
    if kind == "command":
        if not (a.endswith(":*") or a.endswith(" *")):
            return False
        literal = b[:-2].rstrip() if b.endswith(":*") else b
        return "*" not in literal and matcher(literal)
    if _GLOB_CHARS.search(b):
        return False
    return matcher(b)


def lint(session: Any, runner: Any) -> list[dict[str, Any]]:
    """Every finding about the rules ``session`` applies (`cg_rules.host_rules` and, with the
    plugin, the imported ones)."""
    host = session.host
    groups = cg_rules.groups_of(host)
    source = host.config_source
    entries: list[tuple[Any, str | None]] = []
    for rule in cg_rules.host_rules(host):
        file, line = source.locate(("permissions", rule.action), rule.text)
        entries.append((rule, f"{file}:{line}" if file and line else file))
    if runner is not None:
        for applied in runner.rules.applied:
            if applied.rule.startswith("mcp__") and applied.rule.endswith("__*"):
                continue  # a whole server's rule, judged by the plugin (not a literal)
            rule = _parsed(applied.action, applied.rule)
            if rule is not None:
                entries.append((rule, str(applied.origin)))
    findings: list[dict[str, Any]] = []

    def add(kind: str, rule: Any, where: str | None, message: str) -> None:
        findings.append({"kind": kind, "rule": f"{rule.action}:{rule.text}", "where": where,
                         "message": message})

    known = {s.name for s in host.registry.tools()} | \
        {s.name for s in host.registry.other_os_tools()} | set(groups)
    for rule, where in entries:
        tool = rule.tool
        if _GLOB_CHARS.search(tool):
            hint = ""
            if tool.startswith("mcp__"):
                server = tool[5:].split("__", 1)[0]
                hint = (f"; Claude Code reads it as every tool of server {server}: name each "
                        f"tool (mcp__{server}__<tool>), or deny mcp_connect__{server} to keep "
                        "the server from starting")
            add("literal-glob", rule, where, "tool names are exact here, so this matches "
                "nothing" + hint)
            continue
        if tool not in known and not tool.startswith(("mcp__", "mcp_connect__")):
            if tool in CLAUDE_NAMES or tool in ("Read", "Write", "Grep", "Glob", "LS",
                                                "WebFetch", "MultiEdit", "NotebookEdit"):
                here = [n for n in callgate_names(tool) if n in known]
                add("unknown-tool", rule, where, f"{tool} is Claude Code's name; here it is "
                    f"{', '.join(here) or 'not a tool'}" + (
                        " (file edits: the Edit group)" if tool in ("Write", "MultiEdit",
                                                                   "NotebookEdit") else ""))
            else:
                add("unknown-tool", rule, where, f"no tool or group named {tool!r} is loaded "
                    "here, so it matches nothing")
            continue
        kinds = _kind_of(session, tool, groups)
        if rule.spec is not None and not kinds and not tool.startswith("mcp"):
            add("never-matches", rule, where, f"{tool} has no permission subject, so a spec "
                "never matches; write the name alone")
            continue
        if rule.spec is not None and kinds == {"command"} and not rule.spec.endswith(":*") \
                and "*" not in rule.spec:
            add("exact-only", rule, where, f"matches the exact command {rule.spec!r} only, "
                f"with no more arguments; {tool}({rule.spec}:*) matches it with any")
    # shadowing: a stricter (or earlier, same-list) rule decides everything this one matches
    for i, (rule, where) in enumerate(entries):
        kinds = _kind_of(session, rule.tool, groups)
        kind = next(iter(kinds)) if len(kinds) == 1 else None
        for j, (other, _other_where) in enumerate(entries):
            if i == j or not _covers_tool(other.tool, rule.tool, groups):
                continue
            stricter = RANK[other.action] < RANK[rule.action]
            same = other.action == rule.action and j < i
            if not (stricter or same):
                continue
            if other.spec is None or (kind is not None and _covers_spec(kind, other.spec,
                                                                         rule.spec)):
                if same and other.text == rule.text:
                    add("shadowed", rule, where, "a duplicate of an earlier rule")
                elif same:
                    add("shadowed", rule, where, f"redundant: {other.action} rule "
                        f"{other.text!r} already matches everything it matches")
                else:
                    add("shadowed", rule, where, f"never decides: {other.action} rule "
                        f"{other.text!r} matches everything it matches, and {other.action} "
                        f"wins over {rule.action}")
                break
    for warning in cg_rules.host_rule_warnings(host):
        if not any(f["rule"].split(":", 1)[1] in warning for f in findings):
            findings.append({"kind": "warning", "rule": "", "where": None, "message": warning})
    return findings


def _parsed(action: str, text: str) -> Any:
    match = re.match(r"^([^\s()]+)(?:\((.*)\))?$", text, re.DOTALL)
    if match is None:
        return None
    return _Rule(action, text, match.group(1), match.group(2))


class _Rule:
    def __init__(self, action: str, text: str, tool: str, spec: str | None) -> None:
        self.action, self.text, self.tool, self.spec = action, text, tool, spec


__all__ = ["lint"]
