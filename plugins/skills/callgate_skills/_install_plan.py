"""``install_source``'s plan: what a source would install, where, at what risk, and its id.

The plan is computed from the source's bytes, the targets and the current
``callgate.toml``; its ``planId`` is a digest of all of it (file digests, the MCP
entries with their env values, the config file's digest). Applying recomputes the
plan and refuses unless the ids match, so a plan can be applied in a later session,
and any change to the source, the targets or the config yields a new id.

Risk: ``high`` for an MCP server (its command runs once connected) and for a skill
with code (a ``scripts/`` folder, an executable file, or a script file); ``low``
for a skill of instructions only.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import stat
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from callgate.paths import READ_FLAGS, ResolvedPath

from ._install_tree import Entry, Tree, read_file, read_folder, read_zip, source_error
from ._roots import install_dir
from ._skill import NAME_RULE, SkillFormatError, parse_front_matter, parse_skill
from .tools.specs import SERVER_NAME

MCP_FILES = (".mcp.json", "mcp.json", "claude_desktop_config.json")
CODE_SUFFIXES = (
    ".py",
    ".sh",
    ".bash",
    ".js",
    ".mjs",
    ".ts",
    ".rb",
    ".pl",
    ".ps1",
    ".bat",
    ".cmd",
    ".exe",
    ".so",
    ".dll",
)
CONFIG_NAME = "callgate.toml"


@attrs.frozen
class SkillAction:
    name: str
    files: dict[str, Entry]
    target: str  # the absolute folder it becomes
    scope: str
    risk: str
    why: str
    blocked: str | None = None


@attrs.frozen
class McpAction:
    name: str
    command: str
    args: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None
    risk: str = "high"
    why: str = ""
    blocked: str | None = None


@attrs.frozen
class Plan:
    source: str
    kind: str
    skills: tuple[SkillAction, ...]
    servers: tuple[McpAction, ...]
    config_path: str
    config_digest: str | None
    skipped: tuple[str, ...]
    git_head: str | None
    plan_id: str

    @property
    def actions(self) -> tuple[SkillAction | McpAction, ...]:
        return (*self.skills, *self.servers)

    @property
    def blocked(self) -> list[str]:
        return [f"{a.name}: {a.blocked}" for a in self.actions if a.blocked]

    @property
    def high_risk(self) -> bool:
        return any(a.risk == "high" for a in self.actions)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _has_code(files: Mapping[str, Entry]) -> list[str]:
    return sorted(
        p
        for p, e in files.items()
        if p.startswith("scripts/") or e.executable or p.lower().endswith(CODE_SUFFIXES)
    )


# --- finding what a tree holds ----------------------------------------------------------


def _skill_folders(tree: Tree) -> list[str]:
    """Folders holding a SKILL.md (``""`` for the tree's top), at most three levels down."""
    found = []
    for path in tree.files:
        if posixpath.basename(path) == "SKILL.md" and path.count("/") <= 3:
            found.append(posixpath.dirname(path))
    found.sort(key=lambda f: (f.count("/"), f))
    # a folder inside another skill (its references/) is part of that skill
    kept: list[str] = []
    for folder in found:
        if not any(folder.startswith(k + "/") or k == "" for k in kept):
            kept.append(folder)
    return kept


def _skills_of(tree: Tree, source_name: str) -> list[tuple[str, dict[str, Entry]]]:
    """``(name, files)`` of every skill in the tree; a bad SKILL.md is refused."""
    out = []
    for folder in _skill_folders(tree):
        files = tree.under(folder)
        text = files["SKILL.md"].data.decode("utf-8", "replace")
        where = (
            posixpath.join(source_name, folder, "SKILL.md")
            if folder
            else posixpath.join(source_name, "SKILL.md")
        )
        try:
            meta, _ = parse_front_matter(text, where)
            name = meta.get("name")
            folder_name = posixpath.basename(folder) if folder else str(name)
            skill = parse_skill(
                text, folder=folder_name, path=where, directory="", scope="source", where=where
            )
        except SkillFormatError as exc:
            raise source_error("BAD_SKILL", str(exc)) from None
        out.append((skill.name, files))
    if not out and len(tree.files) == 1:
        ((path, entry),) = tree.files.items()
        if path.lower().endswith(".md"):
            text = entry.data.decode("utf-8", "replace")
            try:
                meta, _ = parse_front_matter(text, path)
                name = meta.get("name")
                skill = parse_skill(
                    text, folder=str(name), path=path, directory="", scope="source", where=path
                )
            except SkillFormatError as exc:
                raise source_error("BAD_SKILL", str(exc)) from None
            out.append((skill.name, {"SKILL.md": entry}))
    return out


def _entry(
    name: str, table: Any, where: str
) -> tuple[str, tuple[str, ...], dict[str, str], str | None] | str:
    """A stdio server entry, or the reason it cannot be installed."""
    if not isinstance(table, Mapping):
        return f"{where}: {name} is not an object"
    if "url" in table or table.get("type") in ("http", "sse", "streamable-http"):
        return f"{where}: {name} is a remote (url) server; callgate runs stdio servers only"
    command = table.get("command")
    if not isinstance(command, str) or not command:
        return f"{where}: {name} has no command"
    args = table.get("args", [])
    env = table.get("env", {})
    cwd = table.get("cwd")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return f"{where}: {name}: args must be a list of strings"
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        return f"{where}: {name}: env must map names to strings"
    if cwd is not None and not isinstance(cwd, str):
        return f"{where}: {name}: cwd must be a string"
    return command, tuple(args), dict(env), cwd


def _servers_of(tree: Tree, single_file: bool) -> tuple[list[McpAction], list[str]]:
    actions: list[McpAction] = []
    skipped: list[str] = []
    for path, entry in sorted(tree.files.items()):
        base = posixpath.basename(path)
        if path.count("/") > 1 or not (
            base in MCP_FILES or (single_file and base.endswith(".json"))
        ):
            continue
        try:
            data = json.loads(entry.data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise source_error("BAD_MCP", f"{path} is not valid JSON ({exc})") from None
        servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
        if not isinstance(servers, Mapping):
            raise source_error("BAD_MCP", f"{path} has no mcpServers object")
        for name, table in servers.items():
            if not re.match(SERVER_NAME, str(name)):
                skipped.append(f"{path}: server name {name!r} is not a valid name")
                continue
            found = _entry(str(name), table, path)
            if isinstance(found, str):
                skipped.append(found)
                continue
            command, args, env, cwd = found
            actions.append(McpAction(str(name), command, args, env, cwd))
    return actions, skipped


# --- the plan -----------------------------------------------------------------------------


def load_tree(
    path: ResolvedPath, denied: Callable[[str], bool] | None = None
) -> tuple[Tree, bool]:
    """The source's tree and whether it was a single file (read beneath its root, never
    through a symlink: see `_install_tree`)."""
    try:
        is_dir = stat.S_ISDIR(path.stat().st_mode)
    except OSError as exc:
        raise source_error("UNREADABLE", f"{path.display} cannot be read "
                           f"({exc.strerror or exc})") from None
    if is_dir:
        return read_folder(path, denied), False
    if path.path.lower().endswith(".zip"):
        return read_zip(path), False
    return read_file(path), True


def read_config(path: str) -> bytes | None:
    """The workspace's ``callgate.toml``, never through a symlink (``None``: none there)."""
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise source_error(
            "BAD_CONFIG", f"{CONFIG_NAME} cannot be read ({exc.strerror or exc}); it must be "
            "a regular file"
        ) from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise source_error("BAD_CONFIG", f"{CONFIG_NAME} is not a regular file")
        return fh.read()


def _config_digest(path: str) -> str | None:
    data = read_config(path)
    return None if data is None else _digest(data)


def _existing_servers(path: str) -> set[str]:
    import tomlkit

    data = read_config(path)
    if data is None:
        return set()
    try:
        doc = tomlkit.parse(data.decode("utf-8"))
    except Exception as exc:
        raise source_error(
            "BAD_CONFIG", f"{CONFIG_NAME} does not parse as TOML ({exc}); fix it first"
        ) from None
    table = doc.get("mcp_servers")
    return set(table) if isinstance(table, Mapping) else set()


def build_plan(
    *,
    source: ResolvedPath | None,
    display: str,
    kind: str,
    scope: str,
    name: str | None,
    command: str | None,
    args: list[str] | None,
    env: dict[str, str] | None,
    workspace_root: str,
    taken: set[str],
    configured_servers: set[str],
    denied: Callable[[str], bool] | None = None,
) -> Plan:
    """The plan for one call's arguments (``source`` a confined path, or ``None`` for a
    ``command`` + ``args`` server)."""
    tree = Tree({})
    single = False
    if source is not None:
        tree, single = load_tree(source, denied)
    skills: list[SkillAction] = []
    servers: list[McpAction] = []
    skipped = list(tree.skipped)
    if kind in ("auto", "skill") and source is not None:
        root = install_dir(scope, workspace_root)
        for skill_name, files in _skills_of(tree, display):
            code = _has_code(files)
            risk, why = (
                ("high", "it holds code: " + ", ".join(code[:8]))
                if code
                else ("low", "instructions only")
            )
            skills.append(
                SkillAction(skill_name, files, os.path.join(root, skill_name), scope, risk, why)
            )
    if kind in ("auto", "mcp"):
        if command is not None:
            if not name:
                raise source_error(
                    "NAME_REQUIRED", "an MCP server given as command + args needs a name"
                )
            servers.append(McpAction(name, command, tuple(args or ()), dict(env or {}), None))
        elif source is not None:
            found, more = _servers_of(tree, single)
            servers += found
            skipped += more
    if name and command is None:
        if len(skills) + len(servers) != 1:
            raise source_error(
                "NAME_AMBIGUOUS",
                "name renames the only thing a source "
                f"installs; this one has {len(skills) + len(servers)}",
            )
        if skills and not NAME_RULE.match(name):
            raise source_error("BAD_NAME", "a skill name is 1-64 of a-z, 0-9 and -")
        if skills:
            only = skills[0]
            skills = [
                attrs.evolve(
                    only, name=name, target=os.path.join(os.path.dirname(only.target), name)
                )
            ]
        else:
            servers = [attrs.evolve(servers[0], name=name)]
    if not skills and not servers:
        what = {"auto": "a skill or an MCP server", "skill": "a skill", "mcp": "an MCP server"}
        raise source_error(
            "NOTHING",
            f"{display} holds no {what[kind]} (a SKILL.md with name "
            "and description front matter, or an .mcp.json with mcpServers)"
            + (f"; skipped: {'; '.join(skipped[:5])}" if skipped else ""),
        )
    config_path = os.path.join(workspace_root, CONFIG_NAME)
    existing = _existing_servers(config_path) if servers else set()
    checked_skills = []
    for action in skills:
        blocked = None
        if action.name in taken:
            blocked = "a skill, slash command or MCP prompt already has this name"
        elif os.path.lexists(action.target):
            blocked = f"{action.target} already exists (install never overwrites)"
        checked_skills.append(attrs.evolve(action, blocked=blocked))
    checked_servers = []
    for action in servers:
        blocked = None
        if action.name in existing or action.name in configured_servers:
            blocked = f"[mcp_servers.{action.name}] is already configured"
        why = f"connecting it runs: {' '.join([action.command, *action.args])[:300]}"
        checked_servers.append(attrs.evolve(action, why=why, blocked=blocked))
    digest_doc = {
        "source": source.path if source is not None else None,
        "kind": kind,
        "scope": scope,
        "skills": [
            {
                "name": a.name,
                "target": a.target,
                "files": {p: [_digest(e.data), e.executable] for p, e in sorted(a.files.items())},
                "blocked": a.blocked,
            }
            for a in checked_skills
        ],
        "servers": [
            {
                "name": a.name,
                "command": a.command,
                "args": list(a.args),
                "env": a.env,
                "cwd": a.cwd,
                "blocked": a.blocked,
            }
            for a in checked_servers
        ],
        "config": _config_digest(config_path) if servers else None,
    }
    raw = json.dumps(digest_doc, sort_keys=True, separators=(",", ":")).encode()
    return Plan(
        display,
        kind,
        tuple(checked_skills),
        tuple(checked_servers),
        config_path,
        digest_doc["config"],
        tuple(skipped),
        tree.git_head,
        "pl_" + _digest(raw)[:32],
    )
