"""The skills tools as declared data: names, descriptions, schemas and flags, with their code
named by `callgate.deferred` (issue 38). Registering the plugin imports this module (and the
skill format's limits, `_skill`) and none of the catalog, the installer or the subagent
runner; a tool's module is imported by its first call."""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec, deferred

from .._skill import MAX_DESCRIPTION, NAME_PATTERN, RUN_AS

#: an MCP server's name in a source's configuration (the installer checks it too)
SERVER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"

# --- install_skill -------------------------------------------------------------------------
INSTALL_SKILL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "description", "body"],
    "properties": {
        "name": {
            "type": "string",
            "pattern": NAME_PATTERN,
            "description": "The skill's folder name: 1-64 of a-z, 0-9 and -.",
        },
        "description": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_DESCRIPTION,
            "description": "When to use the skill (shown in the skills index).",
        },
        "body": {
            "type": "string",
            "minLength": 1,
            "description": "The instructions, Markdown. $ARGUMENTS, $1..$9 are "
            "replaced by the caller's arguments.",
        },
        "scope": {
            "type": "string",
            "enum": ["project", "user"],
            "description": "project (this workspace's .agents/skills, the default) or "
            "user (every workspace).",
        },
        "run_as": {
            "type": "string",
            "enum": list(RUN_AS),
            "description": "inline (read into this conversation, the default) or "
            "subagent (run as a child by run_skill).",
        },
        "allowed_tools": {
            "type": "array",
            "maxItems": 64,
            "items": {"type": "string", "minLength": 1, "maxLength": 64},
            "description": "A subagent skill's tools.",
        },
        "read_only": {"type": "boolean", "description": "A subagent skill that may only read."},
    },
}


INSTALL_SKILL_DESCRIPTION = (
    "Save a reusable skill (instructions for a recurring task) as <name>/SKILL.md. Never "
    "overwrites: a name already used by a skill, a slash command or an MCP prompt is "
    "refused."
)


INSTALL_SKILL_SPEC = ToolSpec(
    name="install_skill",
    runs_at="host",
    description=INSTALL_SKILL_DESCRIPTION,
    schema=INSTALL_SKILL_SCHEMA,
    execute=deferred("callgate_skills.tools.install_skill:run_install_skill"),
    groups=("skills",),
)



# --- install_source ------------------------------------------------------------------------
INSTALL_SOURCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "source": {
            "type": "string",
            "minLength": 1,
            "maxLength": 4096,
            "description": "A local folder (a git checkout too), a file (SKILL.md, a "
            "Markdown skill, .mcp.json or Claude Desktop config) or a "
            ".zip, inside the workspace's read roots.",
        },
        "kind": {
            "type": "string",
            "enum": ["auto", "skill", "mcp"],
            "description": "What to install from it (auto: whatever it holds).",
        },
        "scope": {
            "type": "string",
            "enum": ["project", "user"],
            "description": "Skills: project (.agents/skills, the default) or user "
            "(every workspace). MCP servers go to this workspace's "
            "callgate.toml.",
        },
        "name": {
            "type": "string",
            "pattern": SERVER_NAME,
            "description": "Rename the one skill or server the source holds; required "
            "with command.",
        },
        "command": {
            "type": "string",
            "minLength": 1,
            "maxLength": 4096,
            "description": "An MCP server given directly: its command (with args).",
        },
        "args": {"type": "array", "maxItems": 256, "items": {"type": "string", "maxLength": 4096}},
        "env": {
            "type": "object",
            "maxProperties": 64,
            "additionalProperties": {"type": "string", "maxLength": 4096},
        },
        "apply": {
            "type": "boolean",
            "description": "false (default): answer the plan; true: carry out the "
            "plan planId names.",
        },
        "planId": {
            "type": "string",
            "pattern": "^pl_[0-9a-f]{32}$",
            "description": "The planId of the plan to apply, as the plan gave it.",
        },
    },
}


INSTALL_SOURCE_DESCRIPTION = (
    "Install skills and MCP servers from a local folder, git checkout, file or .zip (never "
    "downloads, never runs anything from it). First call without apply: the plan (actions, "
    "targets, risk, planId); then apply=true with that planId. High-risk actions ask the user."
)


INSTALL_SOURCE_SPEC = ToolSpec(
    name="install_source",
    runs_at="host",
    description=INSTALL_SOURCE_DESCRIPTION,
    schema=INSTALL_SOURCE_SCHEMA,
    execute=deferred("callgate_skills.tools.install_source:run_install_source"),
    read_only=deferred("callgate_skills.tools.install_source:is_read_only"),
    destructive=False,
    groups=("skills",),
)



# --- read_skill ----------------------------------------------------------------------------
NAME_ARG = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "description": "The skill's name, as in the skills index.",
}


ARGUMENTS_ARG = {
    "type": "string",
    "maxLength": 20000,
    "description": "What the skill should work on; fills $ARGUMENTS and $1..$9.",
}


READ_SKILL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {"name": NAME_ARG, "arguments": ARGUMENTS_ARG},
}


READ_SKILL_DESCRIPTION = (
    "Read an inline skill: its instructions (arguments filled in) and its folder, whose "
    "scripts/ and references/ you can read with read_file. A subagent skill is run with "
    "run_skill instead."
)


READ_SKILL_SPEC = ToolSpec(
    name="read_skill",
    description=READ_SKILL_DESCRIPTION,
    schema=READ_SKILL_SCHEMA,
    execute=deferred("callgate_skills.tools.read_skill:run_read_skill"),
    read_only=True,
    groups=("skills",),
)



# --- run_skill -----------------------------------------------------------------------------
RUN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "name": NAME_ARG,
        "arguments": ARGUMENTS_ARG,
        "continue_from": {
            "type": "string",
            "pattern": "^sa_[0-9a-f]{1,64}$",
            "description": "Retry a subagent skill run that ended partial or "
            "retryable (its Subagent reference).",
        },
    },
}


READ_ONLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {"name": NAME_ARG, "arguments": ARGUMENTS_ARG},
}


RUN_DESCRIPTION = (
    "Use a skill: an inline skill's instructions are returned for you to follow; a subagent "
    "skill runs as a child with the skill's tools (arguments are its whole task) and its "
    "answer comes back."
)


READ_ONLY_DESCRIPTION = (
    "Use a skill without changing anything: inline skills are returned to follow; subagent "
    "skills run in a strict read-only child. Allowed in plan mode."
)


RUN_SPEC = ToolSpec(
    name="run_skill",
    runs_at="host",
    description=RUN_DESCRIPTION,
    schema=RUN_SCHEMA,
    execute=deferred("callgate_skills.tools.run_skill:run_run_skill"),
    groups=("skills",),
)


READ_ONLY_SPEC = ToolSpec(
    name="read_only_skill",
    runs_at="host",
    description=READ_ONLY_DESCRIPTION,
    schema=READ_ONLY_SCHEMA,
    execute=deferred("callgate_skills.tools.run_skill:run_read_only_skill"),
    read_only=True,
    groups=("skills",),
)
