"""``slash_command``: list the commands there are, or expand one into its prompt.

Names resolve in this order: a command file, then a skill (``session.extension(SKILLS)``, when
the skills plugin is loaded: a command wins over a skill of the same name), then
``mcp:<server>:<prompt>``. The answer is text for the model to follow; nothing
runs (a ``!`command` `` line in a command file stays text).
"""

from __future__ import annotations

from typing import Any

from callgate import SessionKey, ToolContext, ToolError
from callgate_toolkit.placeholders import (
    has_placeholders,
    split_arguments,
    substitute_arguments,
)

from .. import _mcp_prompts as mcp
from .._sources import Command, discover

#: the skills plugin's catalog, when it is loaded (a key of the same name)
SKILLS: SessionKey[Any] = SessionKey("skills")

def command_of(args: Any) -> str:
    raw = args.get("command", "") if isinstance(args, dict) else ""
    return str(raw or "").strip().lstrip("/").strip()


def is_read_only(args: Any) -> bool:
    """Expanding an MCP prompt starts a server; everything else only reads."""
    return not command_of(args).startswith("mcp:")


def _skills(session: Any) -> dict[str, Any]:
    extension = session.find_extension(SKILLS)
    if extension is None:
        return {}
    return dict(extension.catalog().skills)


def _skill_problems(session: Any) -> list[str]:
    extension = session.find_extension(SKILLS)
    if extension is None:
        return []
    return [p.reason for p in extension.catalog().problems]


def _where(ctx: ToolContext, path: str) -> str:
    root = ctx.workspace.root.rstrip("/") + "/"
    return path[len(root) :] if path.startswith(root) else path


def names(session: Any) -> set[str]:
    """Every name slash_command answers to (``session.extension(COMMAND_NAMES)()``)."""
    commands, _ = discover(session.workspace.root)
    found = set(commands) | set(_skills(session))
    for server, config in mcp.servers(session).items():
        for prompt in mcp.cached_prompts(config) or ():
            found.add(f"mcp:{server}:{prompt.name}")
    return found


def _line(name: str, hint: str | None, description: str, where: str) -> str:
    head = f"/{name}" + (f" {hint}" if hint else "")
    return f"{head} — {description}" + (f"  ({where})" if where else "")


def listing(ctx: ToolContext) -> str:
    commands, problems = discover(ctx.workspace.root)
    lines = [f"Slash commands ({len(commands)}):"]
    for name in sorted(commands):
        c = commands[name]
        lines.append(
            _line(name, c.argument_hint, c.description, f"{c.scope} · {_where(ctx, c.path)}")
        )
    skills = {n: s for n, s in _skills(ctx.session).items() if n not in commands}
    if skills:
        lines += ["", f"Skills ({len(skills)}):"]
        for name in sorted(skills):
            s = skills[name]
            kind = "subagent skill" if s.is_subagent else "skill"
            lines.append(_line(name, s.argument_hint, s.description, kind))
    servers = mcp.servers(ctx.session)
    if servers:
        lines += ["", "MCP prompts:"]
        for server, config in servers.items():
            prompts = mcp.cached_prompts(config)
            if prompts is None:
                lines.append(
                    f"/mcp:{server}:… — prompts not listed yet: slash_command "
                    f"mcp:{server} starts the server (it may ask first) and lists "
                    "them"
                )
                continue
            if not prompts:
                lines.append(f"/mcp:{server}:… — the server has no prompts")
            for p in prompts:
                lines.append(
                    _line(f"mcp:{server}:{p.name}", p.hint, p.description or "", "MCP prompt")
                )
    skipped = [p.reason for p in problems] + _skill_problems(ctx.session)
    if skipped:
        lines += ["", "Skipped:"] + [f"- {reason}" for reason in skipped[:20]]
    if len(lines) == 1:
        lines.append("(none: add .claude/commands/<name>.md or .callgate/commands/<name>.md)")
    return "\n".join(lines)


def _expanded(name: str, text: str) -> str:
    return f"Expanded /{name} — follow these instructions now:\n\n{text.strip()}"


def expand_command(command: Command, arguments: str) -> str:
    body = command.body
    if has_placeholders(body):
        body = substitute_arguments(body, arguments)
    elif arguments:
        body = f"{body.rstrip()}\n\nArguments: {arguments}"
    return _expanded(command.name, body)


def _prompt_arguments(prompt: mcp.PromptInfo, arguments: str) -> dict[str, str]:
    declared = [a for a, _, _ in prompt.arguments]
    words = split_arguments(arguments)
    values: dict[str, str] = {}
    if words and all("=" in w and w.split("=", 1)[0] in declared for w in words):
        values = dict(w.split("=", 1) for w in words)
    elif words:
        if len(words) > len(declared) and declared:
            words = [*words[: len(declared) - 1], " ".join(words[len(declared) - 1 :])]
        elif not declared:
            raise ToolError(
                "invalid_arguments",
                f"mcp prompt {prompt.name} takes no arguments",
                "COMMAND_ARGUMENTS",
            )
        values = dict(zip(declared, words, strict=False))
    missing = [a for a, _, req in prompt.arguments if req and a not in values]
    if missing:
        raise ToolError(
            "invalid_arguments",
            f"mcp prompt {prompt.name} needs {', '.join(missing)} (arguments: {prompt.hint})",
            "COMMAND_ARGUMENTS",
        )
    return values


def expand_mcp(ctx: ToolContext, name: str, arguments: str) -> str:
    parts = name.split(":", 2)
    server = parts[1] if len(parts) > 1 else ""
    config = mcp.servers(ctx.session).get(server)
    if config is None:
        known = ", ".join(sorted(mcp.servers(ctx.session))) or "none"
        raise ToolError(
            "not_found",
            f"no enabled MCP server {server!r} is configured "
            f"([mcp_servers] in callgate.toml); servers: {known}",
            "COMMAND_NOT_FOUND",
        )
    wanted = parts[2] if len(parts) > 2 and parts[2] not in ("", "…") else None
    if wanted is not None:
        cached = {p.name: p for p in mcp.cached_prompts(config) or ()}.get(wanted)
        if cached is not None:  # known arguments: check them before anything starts
            _prompt_arguments(cached, arguments)
    prompts, answer = mcp.fetch(
        ctx.session,
        config,
        wanted,
        lambda p: _prompt_arguments(p, arguments),
        ctx.cancelled,
    )
    mcp.save_prompts(config, prompts)
    if wanted is None:
        lines = [f"MCP prompts of {server} ({len(prompts)}):"]
        lines += [
            _line(f"mcp:{server}:{p.name}", p.hint, p.description, "MCP prompt") for p in prompts
        ]
        return "\n".join(lines)
    if answer is None:
        raise ToolError(
            "not_found",
            f"MCP server {server} has no prompt {wanted!r}; its "
            f"prompts: {', '.join(sorted(p.name for p in prompts)) or 'none'}",
            "COMMAND_NOT_FOUND",
        )
    return _expanded(f"mcp:{server}:{wanted}", mcp.prompt_text(answer))


def run_slash_command(ctx: ToolContext, args: dict[str, Any]) -> str:
    name = command_of(args)
    arguments = str(args.get("arguments", "") or "")
    if name in ("", "list"):
        return listing(ctx)
    if name.startswith("mcp:"):
        return expand_mcp(ctx, name, arguments)
    commands, _ = discover(ctx.workspace.root)
    command = commands.get(name)
    if command is not None:
        return expand_command(command, arguments)
    skill = _skills(ctx.session).get(name)
    if skill is not None:
        if skill.is_subagent:
            return _expanded(
                name,
                f"/{name} is a subagent skill: call run_skill with name "
                f"{name!r} and arguments {arguments!r}.",
            )
        return _expanded(name, ctx.session.extension(SKILLS).render(skill, arguments))
    known = sorted(set(commands) | set(_skills(ctx.session)))
    raise ToolError(
        "not_found",
        f"no slash command /{name}; commands: "
        f"{', '.join(known) or 'none'} (slash_command with no command lists them "
        "with their arguments)",
        "COMMAND_NOT_FOUND",
    )
