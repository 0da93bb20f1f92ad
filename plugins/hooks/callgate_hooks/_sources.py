"""Where hooks and rules come from, read without running anything.

- ``[hooks]`` in callgate's own config (Claude Code's shape, in TOML);
- Claude Code's settings files: ``~/.claude/settings.json`` (the user's) and, for a workspace
  the user config trusts (``[trust] workspaces``), ``.claude/settings.json`` and
  ``.claude/settings.local.json`` in it: ``hooks`` and ``permissions``;
- Codex's: ``~/.codex/hooks.json`` and ``[hooks]`` in ``~/.codex/config.toml`` (with its
  ``sandbox_mode``, ``approval_policy`` and ``network_access``), ``~/.codex/rules/*.rules``, and
  the same under ``.codex/`` of a trusted workspace.

Each file is parsed as data (JSON, TOML; Starlark with Python's own parser, never executed:
`_codex_rules`). Everything callgate cannot do as the file says is a `Note` naming the file
and line; nothing is dropped without one.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from .config import DEFAULT_TIMEOUT_S, EVENTS, NOT_HERE, TOOL_EVENTS

USER, WORKSPACE = "user", "workspace"
#: The settings files of a workspace (relative to its root), by agent.
PROJECT_FILES = {
    "claude": (".claude/settings.json", ".claude/settings.local.json"),
    "codex": (".codex/hooks.json", ".codex/config.toml", ".codex/rules"),
}
#: What a workspace's files are protected as (`Registry.protect`), by agent.
PROTECTED = {
    "claude": (".claude/settings.json", ".claude/settings.local.json", ".claude/hooks/**"),
    "codex": (".codex/**",),
}
#: Handler types Claude Code has and callgate does not run.
NOT_RUN_TYPES = {
    "prompt": "a prompt hook asks a model, and callgate has none of its own",
    "agent": "an agent hook starts a subagent, and callgate has no model of its own",
    "mcp_tool": "an mcp_tool hook calls an MCP tool, which callgate's hooks do not do",
}
_SIMPLE = re.compile(r"^[A-Za-z0-9_|]*$")


@attrs.frozen
class Origin:
    """Where something was read: a file and a 1-based line (when known)."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{_home(self.file)}:{self.line}" if self.line else _home(self.file)


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home != "/" and path.startswith(home + os.sep) else path


@attrs.frozen
class Note:
    """One line of the boot report: where, and what callgate does (not) do with it."""

    origin: Origin
    text: str

    def __str__(self) -> str:
        return f"{self.origin}: {self.text}"


@attrs.frozen(eq=False)  # identity: a handler is one definition, kept per session by identity
class Handler:
    """One hook handler: the event and matcher it runs for, and what runs."""

    event: str
    type: str
    level: str  # USER: the user's own program; WORKSPACE: a trusted workspace's
    origin: Origin
    matcher: str | None = None
    command: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    allowed_env: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT_S
    fail_closed: bool = False
    condition: str | None = None  # Claude Code's ``if``: a permission rule on the call
    background: bool = False  # ``async``: started, never waited for
    once: bool = False

    @property
    def label(self) -> str:
        """How records and signatures name it: the event, where it was defined, what runs."""
        what = self.command if self.type == "command" else self.url
        what = (what or "")[:60]
        return f"{self.event} hook {what!r} ({self.origin})"

    @property
    def source(self) -> str:
        """The name that decides in a refusal's signature (``hook:<source>``)."""
        return f"hooks ({self.origin})"

    def matches(self, subject: str | None) -> bool:
        """Whether the matcher selects ``subject`` (a tool name, ``startup``, an agent type):
        no matcher, ``""`` or ``"*"`` select everything; a plain name (``Write``,
        ``Edit|Write``) selects exactly those; anything else is a regular expression searched
        in the subject (``Notebook.*``, ``mcp__memory__.*``), as Claude Code does."""
        matcher = self.matcher
        if matcher in (None, "", "*"):
            return True
        if subject is None:
            return False
        if _SIMPLE.match(matcher):
            return subject in matcher.split("|")
        try:
            return re.search(matcher, subject) is not None
        except re.error:
            return False


@attrs.frozen
class ImportedRule:
    """A permission rule read from another agent's settings (before translation)."""

    action: str  # allow, ask, deny
    text: str
    origin: Origin
    level: str
    agent: str  # claude, codex
    #: Codex's own examples (``match``/``not_match``) and justification
    match: tuple[Any, ...] = ()
    not_match: tuple[Any, ...] = ()
    justification: str | None = None
    pattern: tuple[Any, ...] = ()


@attrs.define
class Found:
    """Everything one set of files holds: handlers, rules, modes and the notes about them."""

    handlers: list[Handler] = attrs.field(factory=list)
    rules: list[ImportedRule] = attrs.field(factory=list)
    #: ``(agent setting, value, origin)``: defaultMode, sandbox_mode, approval_policy, ...
    modes: list[tuple[str, Any, Origin]] = attrs.field(factory=list)
    notes: list[Note] = attrs.field(factory=list)
    files: list[str] = attrs.field(factory=list)

    def extend(self, other: Found) -> None:
        self.handlers += other.handlers
        self.rules += other.rules
        self.modes += other.modes
        self.notes += other.notes
        self.files += other.files


Locate = Callable[[Sequence[Any]], "int | None"]


# --- JSON with lines ---------------------------------------------------------------------


def _json_locator(text: str) -> Locate:
    import json_source_map

    try:
        entries = json_source_map.calculate(text)
    except Exception:  # the map is only for messages
        entries = {}

    def locate(path: Sequence[Any]) -> int | None:
        pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
        entry = entries.get(pointer)
        if entry is None:
            return None
        start = entry.key_start or entry.value_start
        return start.line + 1

    return locate


def read_json(path: str) -> tuple[Any, Locate] | Note:
    """A JSON file and its line locator, or a `Note` saying why it cannot be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        return Note(Origin(path), f"cannot be read ({exc.strerror or exc}); nothing in it is "
                    "applied")
    try:
        data = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        return Note(Origin(path, line), f"is not valid JSON ({getattr(exc, 'msg', exc)}); "
                    "nothing in it is applied")
    return data, _json_locator(text)


def toml_locator(text: str) -> Locate:
    """A line locator for TOML: the header of the n-th ``[[table]]`` for a path with an index
    (``("hooks", "PreToolUse", 1)``), else a table's header or a key's first assignment."""
    lines = text.splitlines()

    def header(names: Sequence[str], nth: int | None) -> int | None:
        table = r"\s*\.\s*".join(re.escape(n) for n in names)
        seen = 0
        for number, line in enumerate(lines, 1):
            if re.match(rf"^\s*\[\[?\s*{table}\s*\]\]?\s*(#.*)?$", line):
                if nth is None or seen == nth:
                    return number
                seen += 1
        return None

    def locate(path: Sequence[Any]) -> int | None:
        names: list[str] = []
        nth: int | None = None
        for part in path:
            if isinstance(part, int):
                nth = part
                break
            names.append(str(part))
        if not names:
            return None
        found = header(names, nth)
        if found is not None:
            return found
        last = re.escape(names[-1])
        for number, line in enumerate(lines, 1):
            if re.match(rf"^\s*[\"']?{last}[\"']?\s*=", line):
                return number
        return header(names[:-1], None) if len(names) > 1 else None

    return locate


# --- hooks in Claude Code's shape ----------------------------------------------------------


def parse_hooks(hooks: Any, file: str, locate: Locate, level: str, *, base: Sequence[Any] = (),
                default_timeout: float = DEFAULT_TIMEOUT_S,
                default_fail_closed: bool = False) -> Found:
    """The handlers of one ``hooks`` object (``{Event: [{matcher, hooks: [...]}]}``), with a
    note for each entry that is not run (an event callgate has no moment for, a handler type
    it does not run, a malformed entry)."""
    found = Found()

    def where(*path: Any) -> Origin:
        return Origin(file, locate([*base, *path]))

    if not isinstance(hooks, Mapping):
        found.notes.append(Note(where(), "hooks must be an object of events; none is run"))
        return found
    for event, groups in hooks.items():
        if event not in EVENTS:
            why = NOT_HERE.get(event, "it is not a hook event callgate knows")
            found.notes.append(Note(where(event), f"{event} hooks are not run: {why}"))
            continue
        if not isinstance(groups, list):
            found.notes.append(Note(where(event), f"{event} must be a list of matcher groups; "
                                    "none of its hooks is run"))
            continue
        for g, group in enumerate(groups):
            if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
                found.notes.append(Note(where(event, g), "a matcher group needs a hooks list; "
                                        "it is not run"))
                continue
            matcher = group.get("matcher")
            if matcher is not None and not isinstance(matcher, str):
                found.notes.append(Note(where(event, g, "matcher"), "matcher must be a "
                                        "string; the group is not run"))
                continue
            if matcher and not _SIMPLE.match(matcher) and matcher != "*":
                try:
                    re.compile(matcher)
                except re.error as exc:
                    found.notes.append(Note(where(event, g, "matcher"), f"matcher {matcher!r} "
                                            f"is not a regular expression ({exc}); the group "
                                            "is not run"))
                    continue
            if matcher not in (None, "", "*") and event not in TOOL_EVENTS and event not in (
                    "SessionStart", "SessionEnd", "SubagentStart", "SubagentStop",
                    "PreCompact"):
                found.notes.append(Note(where(event, g, "matcher"), f"{event} has no "
                                        "matcher: the group runs for every prompt"))
                matcher = None
            for h, spec in enumerate(group["hooks"]):
                handler = _handler(event, matcher, spec, level, where(event, g, "hooks", h),
                                   default_timeout, default_fail_closed, found)
                if handler is not None:
                    found.handlers.append(handler)
    return found


def _handler(event: str, matcher: str | None, spec: Any, level: str, origin: Origin,
             default_timeout: float, default_fail_closed: bool, found: Found) -> Handler | None:
    if not isinstance(spec, Mapping):
        found.notes.append(Note(origin, "a hook must be an object; it is not run"))
        return None
    kind = spec.get("type", "command")
    if kind in NOT_RUN_TYPES:
        found.notes.append(Note(origin, f"this {kind} hook is not run: {NOT_RUN_TYPES[kind]}"))
        return None
    if kind not in ("command", "http"):
        found.notes.append(Note(origin, f"hook type {kind!r} is unknown; it is not run"))
        return None
    target = spec.get("command" if kind == "command" else "url")
    if not isinstance(target, str) or not target.strip():
        found.notes.append(Note(origin, f"a {kind} hook needs "
                                f"{'command' if kind == 'command' else 'url'}; it is not run"))
        return None
    timeout = spec.get("timeout", default_timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        found.notes.append(Note(origin, f"timeout {timeout!r} is not a positive number of "
                                "seconds; it is not run"))
        return None
    condition = spec.get("if")
    if condition is not None and not isinstance(condition, str):
        found.notes.append(Note(origin, "if must be a permission rule (a string); it is not "
                                "run"))
        return None
    if condition is not None and event not in TOOL_EVENTS:
        found.notes.append(Note(origin, f"if applies to tool events only; on {event} it is "
                                "ignored"))
        condition = None
    headers = spec.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(isinstance(v, str) for v in headers.values()):
        found.notes.append(Note(origin, "headers must map names to strings; it is not run"))
        return None
    allowed = spec.get("allowedEnvVars") or ()
    if not isinstance(allowed, list | tuple) or not all(isinstance(v, str) for v in allowed):
        found.notes.append(Note(origin, "allowedEnvVars must be a list of names; it is not run"))
        return None
    fail_closed = spec.get("fail_closed", default_fail_closed)
    if not isinstance(fail_closed, bool):
        found.notes.append(Note(origin, "fail_closed must be true or false; it is not run"))
        return None
    unknown = sorted(set(spec) - {"type", "command", "url", "headers", "allowedEnvVars",
                                  "timeout", "fail_closed", "if", "async", "once",
                                  "statusMessage", "shell"})
    if unknown:
        found.notes.append(Note(origin, f"{', '.join(unknown)}: not understood by callgate "
                                "and ignored; the hook runs without it"))
    if spec.get("shell") not in (None, "bash"):
        found.notes.append(Note(origin, f"shell {spec.get('shell')!r}: callgate runs commands "
                                "with bash (else sh)"))
    return Handler(event=event, type=kind, level=level, origin=origin, matcher=matcher,
                   command=target if kind == "command" else None,
                   url=target if kind == "http" else None, headers=dict(headers),
                   allowed_env=tuple(allowed), timeout=float(timeout),
                   fail_closed=fail_closed, condition=condition,
                   background=bool(spec.get("async", False)), once=bool(spec.get("once", False)))


# --- Claude Code's settings files ------------------------------------------------------------

_MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions", "auto")


def read_claude_settings(path: str, level: str, *, default_timeout: float = DEFAULT_TIMEOUT_S,
                         default_fail_closed: bool = False) -> Found:
    """``hooks`` and ``permissions`` of one Claude Code settings file (absent: nothing)."""
    found = Found()
    if not os.path.isfile(path):
        return found
    found.files.append(path)
    read = read_json(path)
    if isinstance(read, Note):
        found.notes.append(read)
        return found
    data, locate = read
    if not isinstance(data, Mapping):
        found.notes.append(Note(Origin(path, 1), "is not a JSON object; nothing in it is "
                                "applied"))
        return found
    if "hooks" in data:
        found.extend(parse_hooks(data["hooks"], path, locate, level, base=("hooks",),
                                 default_timeout=default_timeout,
                                 default_fail_closed=default_fail_closed))
    if data.get("disableAllHooks") is True:
        found.handlers.clear()
        found.notes.append(Note(Origin(path, locate(("disableAllHooks",))),
                                "disableAllHooks: none of this file's hooks run"))
    permissions = data.get("permissions")
    if permissions is None:
        return found
    if not isinstance(permissions, Mapping):
        found.notes.append(Note(Origin(path, locate(("permissions",))), "permissions must be an "
                                "object; none of it is applied"))
        return found
    for action in ("allow", "ask", "deny"):
        rules = permissions.get(action, [])
        if not isinstance(rules, list):
            found.notes.append(Note(Origin(path, locate(("permissions", action))),
                                    f"permissions.{action} must be a list; none of it is "
                                    "applied"))
            continue
        for index, text in enumerate(rules):
            origin = Origin(path, locate(("permissions", action, index)))
            if not isinstance(text, str) or not text.strip():
                found.notes.append(Note(origin, f"{text!r} is not a rule; not applied"))
                continue
            found.rules.append(ImportedRule(action, text.strip(), origin, level, "claude"))
    if "defaultMode" not in permissions:
        # Claude Code's own default: what is not read-only asks unless a rule allows it (a
        # file that imports rules behaves as it did there; the origin has no line: not set)
        found.modes.append(("defaultMode", "default", Origin(path)))
    for key in ("defaultMode", "additionalDirectories", "disableBypassPermissionsMode"):
        if key in permissions:
            found.modes.append((key, permissions[key],
                                Origin(path, locate(("permissions", key)))))
    for key in sorted(set(permissions) - {"allow", "ask", "deny", "defaultMode",
                                          "additionalDirectories",
                                          "disableBypassPermissionsMode"}):
        found.notes.append(Note(Origin(path, locate(("permissions", key))),
                                f"permissions.{key} is not understood by callgate; not "
                                "applied"))
    return found


# --- Codex's ---------------------------------------------------------------------------------


def read_codex_hooks(path: str, level: str, *, default_timeout: float = 600,
                     default_fail_closed: bool = False) -> Found:
    """The hooks of a Codex ``hooks.json`` (Claude Code's shape; Codex's default timeout,
    600 s, applies to its hooks)."""
    found = Found()
    if not os.path.isfile(path):
        return found
    found.files.append(path)
    read = read_json(path)
    if isinstance(read, Note):
        found.notes.append(read)
        return found
    data, locate = read
    hooks = data.get("hooks") if isinstance(data, Mapping) else None
    if hooks is None:
        found.notes.append(Note(Origin(path, 1), "has no hooks object; nothing is run"))
        return found
    found.extend(parse_hooks(hooks, path, locate, level, base=("hooks",),
                             default_timeout=default_timeout,
                             default_fail_closed=default_fail_closed))
    return found


def read_codex_config(path: str, level: str, *, default_timeout: float = 600,
                      default_fail_closed: bool = False) -> Found:
    """``[hooks]``, ``sandbox_mode``, ``approval_policy`` and
    ``[sandbox_workspace_write] network_access`` of a Codex ``config.toml``."""
    found = Found()
    if not os.path.isfile(path):
        return found
    found.files.append(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        data = tomllib.loads(text)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        found.notes.append(Note(Origin(path), f"cannot be read as TOML ({exc}); nothing in it "
                                "is applied"))
        return found
    locate = toml_locator(text)
    if "hooks" in data:
        found.extend(parse_hooks(data["hooks"], path, locate, level, base=("hooks",),
                                 default_timeout=default_timeout,
                                 default_fail_closed=default_fail_closed))
    for key in ("sandbox_mode", "approval_policy"):
        if key in data:
            found.modes.append((key, data[key], Origin(path, locate((key,)))))
    workspace_write = data.get("sandbox_workspace_write")
    if isinstance(workspace_write, Mapping) and "network_access" in workspace_write:
        found.modes.append(("network_access", workspace_write["network_access"],
                            Origin(path, locate(("sandbox_workspace_write", "network_access")))))
    return found


def codex_home(configured: str) -> str:
    """Codex's directory: ``[claude_code] codex_dir``, else ``$CODEX_HOME``, else ``~/.codex``."""
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    return os.path.abspath(os.path.expanduser(os.environ.get("CODEX_HOME") or "~/.codex"))


__all__ = ["NOT_RUN_TYPES", "PROJECT_FILES", "PROTECTED", "USER", "WORKSPACE", "Found",
           "Handler", "ImportedRule", "Note", "Origin", "codex_home", "parse_hooks",
           "read_claude_settings", "read_codex_config", "read_codex_hooks", "read_json",
           "toml_locator"]
