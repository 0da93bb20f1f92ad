"""Other agents' permission rules as callgate rules, never wider than the original.

`translate_claude` maps a Claude Code rule (``Bash(npm test:*)``, ``Read(./.env)``,
``Edit(/src/**)``, ``WebFetch(domain:x)``, ``mcp__github``) onto callgate rules;
`translate_codex` maps a Codex ``prefix_rule`` (one ``Bash(words:*)`` rule per alternative).
Each answer says whether the translation is exact. When it is not:

- a **deny** or **ask** rule is translated to something at least as broad (it refuses more:
  ``Write(x)`` denies every structured edit of ``x``), and the note says so; where callgate
  can only do less, the note says that too;
- an **allow** rule that would allow more than the original is **not imported**; the note
  says why.

`translate_modes` does the same for ``defaultMode``, ``additionalDirectories``, Codex's
``sandbox_mode``, ``approval_policy`` and ``network_access``: what callgate applies (a
stricter permission fallback, plan mode) and what it does not.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

import attrs

from ._sources import ImportedRule, Note

_RULE = re.compile(r"^([^\s()]+)(?:\((.*)\))?$", re.DOTALL)
#: Claude Code's file-reading tools and callgate's tools whose path rules stand for them.
READERS = ("read_file", "view_image", "ls")
#: Claude Code's tools, for an exact callgate equivalent (tool or group).
SIMPLE = {
    "WebFetch": "web_fetch", "TodoWrite": "todo_write", "Task": "task", "Agent": "task",
    "BashOutput": "job_output", "KillShell": "job_kill", "KillBash": "job_kill",
    "AskUserQuestion": "ask", "SlashCommand": "slash_command", "Skill": "run_skill",
}
WRITERS = {"Write": "write_file", "MultiEdit": "multi_edit", "NotebookEdit": "notebook_edit"}
NO_TOOL = {"WebSearch", "ExitPlanMode", "EnterPlanMode", "ListMcpResourcesTool",
           "ReadMcpResourceTool", "LSP", "ToolSearch"}


@attrs.frozen
class Translation:
    """A rule as callgate applies it: ``rules`` (callgate rule texts in the same list),
    ``prefixes`` (MCP tool-name prefixes a whole server's rule stands for, judged by the
    plugin), and ``note`` (what the boot report says; ``None``: exact)."""

    action: str
    rules: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    note: str | None = None

    @property
    def applied(self) -> bool:
        return bool(self.rules or self.prefixes)


def _path(spec: str) -> str:
    """A Claude Code path pattern as a callgate path glob: ``//x`` absolute, ``~/x`` home,
    ``/x`` and ``./x`` and ``x`` workspace-relative; a pattern without a ``/`` matches at any
    depth (gitignore's rule, which Claude Code follows)."""
    if spec.startswith("//"):
        return spec[1:]
    if spec.startswith("~"):
        return spec
    rel = spec[1:] if spec.startswith("/") else spec[2:] if spec.startswith("./") else spec
    if spec.startswith(("/", "./")):
        return rel or "."
    if "/" not in rel.rstrip("/"):
        return f"**/{rel}"
    return rel


def translate_claude(rule: ImportedRule) -> Translation:
    """One Claude Code ``permissions`` rule as callgate rules (see the module)."""
    action = rule.action
    found = _RULE.match(rule.text)
    if found is None:
        return Translation(action, note="not a rule (Tool or Tool(spec)); not applied")
    tool, spec = found.group(1), found.group(2)
    spec = spec.strip() if spec is not None else None
    if spec == "":
        spec = None
    if tool == "Bash":
        if spec is not None and ":*" in spec[:-2]:
            return Translation(action, note=":* is only allowed at the end; not applied")
        return Translation(action, (f"Bash({spec})" if spec else "Bash",))
    if tool.startswith("mcp__"):
        return _mcp(action, tool, spec)
    if tool in ("Read", "Grep", "Glob", "LS", "NotebookRead"):
        if spec is None:
            readers = ("read_file", "view_image", "ls", "grep", "glob")
            return Translation(action, readers if tool == "Read" else
                               ({"Grep": ("grep",), "Glob": ("glob",), "LS": ("ls",),
                                 "NotebookRead": ("read_file",)}[tool]))
        path = _path(spec)
        rules = tuple(f"{name}({path})" for name in READERS)
        if action == "allow":
            return Translation(action, rules, note=None if tool == "Read" else
                               f"{tool}(...) is imported as a read rule on read_file, "
                               "view_image and ls")
        return Translation(action, rules, note=(
            f"{tool}({spec}) applies to read_file, view_image and ls; grep and glob over a "
            "directory that holds it still read it (callgate's [files] read_denylist hides "
            "files from every reader)"))
    if tool == "Edit":
        return Translation(action, (f"Edit({_path(spec)})" if spec else "Edit",))
    if tool in WRITERS:
        if action == "allow":
            name = WRITERS[tool]
            return Translation(action, (f"{name}({_path(spec)})" if spec else name,))
        return Translation(action, (f"Edit({_path(spec)})" if spec else "Edit",),
                           note=f"{tool}(...) {action} covers every structured edit here "
                                "(callgate's Edit group), not only " + tool)
    if tool in SIMPLE:
        name = SIMPLE[tool]
        if spec is None:
            return Translation(action, (name,))
        if tool == "WebFetch":
            return Translation(action, (f"web_fetch({spec})",))
        if action == "allow":
            return Translation(action, note=f"{tool}({spec}): callgate's {name} has no such "
                               "spec; an allow rule is not imported (it would allow more)")
        return Translation(action, (name,), note=f"{tool}({spec}) {action} covers every "
                           f"{name} call here (callgate's {name} has no such spec)")
    if tool in NO_TOOL:
        return Translation(action, note=f"callgate has no {tool} tool; nothing to apply")
    return Translation(action, note=f"{tool} is not a Claude Code tool callgate knows; not "
                       "applied")


def _mcp(action: str, tool: str, spec: str | None) -> Translation:
    parts = tool[5:].split("__", 1)
    server = parts[0]
    name = parts[1] if len(parts) > 1 else ""
    if not server:
        return Translation(action, note="an MCP rule names mcp__<server> or "
                           "mcp__<server>__<tool>; not applied")
    if spec is not None:
        return Translation(action, note="MCP rules take no spec; not applied")
    if name in ("", "*"):  # the whole server
        return Translation(action, prefixes=(f"mcp__{server}__",))
    if "*" in name:
        if action == "allow":
            return Translation(action, note=f"{tool}: a wildcard inside an MCP tool name is "
                               "not a Claude Code pattern (only mcp__server or "
                               "mcp__server__*); an allow rule is not imported")
        return Translation(action, prefixes=(f"mcp__{server}__",), note=f"{tool} {action} "
                           f"covers every tool of server {server} here")
    return Translation(action, (tool,))


_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_./@%+=,-]+$")


def translate_codex(rule: ImportedRule) -> Translation:
    """One Codex ``prefix_rule`` as ``Bash(words:*)`` rules, one per alternative of its
    pattern. A word the shell would quote (spaces, quotes, ``*``) makes it inexact: a deny or
    ask rule is still applied (it is then broader), an allow rule is not."""
    action = rule.action
    alternatives: list[list[str]] = [[]]
    for element in rule.pattern:
        options = [element] if isinstance(element, str) else list(element)
        alternatives = [[*prefix, o] for prefix in alternatives for o in options]
    odd = sorted({w for words in alternatives for w in words if not _PLAIN_WORD.match(w)})
    rules = tuple(f"Bash({' '.join(words)}:*)" for words in alternatives)
    if odd:
        shown = ", ".join(repr(w) for w in odd)
        if action == "allow":
            return Translation(action, note=f"the words {shown} are not plain shell words "
                               "(callgate matches commands as written); an allow rule is not "
                               "imported")
        return Translation(action, rules, note=f"the words {shown} are not plain shell words: "
                           f"callgate's rule may match more or fewer commands than Codex's")
    return Translation(action, rules)


def example_line(example: Any) -> str:
    """A Codex example as the command line callgate judges (words joined as a shell would)."""
    return example if isinstance(example, str) else shlex.join(example)


# --- modes ---------------------------------------------------------------------------------


@attrs.frozen
class ModeEffect:
    """What a mode setting does in callgate: a stricter fallback, plan mode, an extra allow
    rule, or only a note."""

    fallback: str | None = None
    plan: bool = False
    allow: tuple[str, ...] = ()
    note: str | None = None


def translate_mode(setting: str, value: Any) -> ModeEffect:
    """One of ``defaultMode``, ``additionalDirectories``, ``disableBypassPermissionsMode``,
    ``sandbox_mode``, ``approval_policy`` or ``network_access``."""
    if setting == "defaultMode":
        return {
            "default": ModeEffect("ask"),
            "acceptEdits": ModeEffect("ask", allow=("Edit",), note=(
                "acceptEdits: structured edits are allowed, everything else that is not "
                "read-only asks (the shell's file commands too, which Claude Code also "
                "accepts in this mode)")),
            "plan": ModeEffect(plan=True),
            "dontAsk": ModeEffect("deny"),
            "bypassPermissions": ModeEffect(note=(
                "bypassPermissions: callgate's [permissions] mode stays as configured (an "
                "imported mode never loosens it)")),
            "auto": ModeEffect("ask", note="auto: callgate has no classifier; calls that are "
                               "not read-only ask"),
        }.get(value, ModeEffect("ask", note=f"defaultMode {value!r} is unknown; treated as "
                                "default (ask)"))
    if setting == "additionalDirectories":
        dirs = value if isinstance(value, list) else [value]
        shown = ", ".join(repr(d) for d in dirs)
        return ModeEffect(note=f"additionalDirectories {shown}: not applied (a session's "
                          "roots are fixed at boot); add them to [workspace] extra_roots in "
                          "your user config")
    if setting == "disableBypassPermissionsMode":
        return ModeEffect(note="disableBypassPermissionsMode: nothing to do (an imported mode "
                          "never loosens callgate's)")
    if setting == "sandbox_mode":
        return {
            "read-only": ModeEffect(plan=True, note="sandbox_mode read-only: sessions start "
                                    "in plan mode (only read-only calls run)"),
            "workspace-write": ModeEffect(note="sandbox_mode workspace-write: callgate's "
                                         "[sandbox] decides (with callgate-sandbox loaded and "
                                         "enabled, programs write only the workspace)"),
            "danger-full-access": ModeEffect(note="sandbox_mode danger-full-access: callgate's "
                                             "[sandbox] stays as configured (never loosened)"),
        }.get(value, ModeEffect(note=f"sandbox_mode {value!r} is unknown; nothing applied"))
    if setting == "approval_policy":
        return {
            "untrusted": ModeEffect("ask"),
            "on-request": ModeEffect(note="approval_policy on-request: callgate decides by its "
                                     "rules; a model cannot ask to leave the sandbox"),
            "on-failure": ModeEffect(note="approval_policy on-failure: callgate never retries a "
                                     "failed command outside the sandbox"),
            "never": ModeEffect(note="approval_policy never: callgate's rules decide; nothing "
                                "runs outside the sandbox to avoid a question"),
        }.get(value, ModeEffect(note=f"approval_policy {value!r} is unknown; nothing applied"))
    if setting == "network_access":
        if value is False:
            return ModeEffect(note="network_access false: not applied here; set [sandbox] "
                              "network = false in your user config for the same")
        return ModeEffect()
    return ModeEffect(note=f"{setting}: not understood; nothing applied")


def mode_note(origin: Any, effect: ModeEffect) -> Note | None:
    return Note(origin, effect.note) if effect.note else None


__all__ = ["ModeEffect", "Translation", "example_line", "mode_note", "translate_claude",
           "translate_codex", "translate_mode"]
