"""The skills plugin's hook implementations: config, session extensions, tools."""

from __future__ import annotations

from typing import Any

from callgate import Decision, ToolCall, ToolSpec, hookimpl

from . import _install_skill, _install_source, _read, _run
from ._session import SKILLS, SessionSkills

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # may point outside the workspace (~ expands): a workspace config that is not
        # trusted may only narrow the user's list (x-workspace, callgate's config layering)
        "paths": {"type": "array", "items": {"type": "string", "minLength": 1}, "default": [],
                  "x-workspace": "subset", "x-kind": "path"},
    },
}

TOOLS = (
    ToolSpec(
        name="read_skill",
        description=_read.DESCRIPTION,
        schema=_read.SCHEMA,
        execute=_read.run_read_skill,
        read_only=True,
        groups=("skills",),
    ),
    ToolSpec(
        name="install_skill",
        runs_at="host",
        description=_install_skill.DESCRIPTION,
        schema=_install_skill.SCHEMA,
        execute=_install_skill.run_install_skill,
        groups=("skills",),
    ),
    ToolSpec(
        name="install_source",
        runs_at="host",
        description=_install_source.DESCRIPTION,
        schema=_install_source.SCHEMA,
        execute=_install_source.run_install_source,
        read_only=_install_source.is_read_only,
        destructive=False,
        groups=("skills",),
    ),
)
INSTALL_SOURCE = TOOLS[2]
TOOLS += (
    ToolSpec(
        name="run_skill",
        runs_at="host",
        description=_run.RUN_DESCRIPTION,
        schema=_run.RUN_SCHEMA,
        execute=_run.run_run_skill,
        groups=("skills",),
    ),
    ToolSpec(
        name="read_only_skill",
        runs_at="host",
        description=_run.READ_ONLY_DESCRIPTION,
        schema=_run.READ_ONLY_SCHEMA,
        execute=_run.run_read_only_skill,
        read_only=True,
        groups=("skills",),
    ),
)
#: never in a strict read-only child (read_only_skill nests: its children are strict too)
STRICT_DENIED = ("run_skill", "install_skill", "install_source")


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("skills", CONFIG_SCHEMA)
    registry.add_session_extension(SKILLS, SessionSkills)
    registry.deny_in_read_only_children(*STRICT_DENIED)
    for spec in TOOLS:
        registry.add(spec)


@hookimpl
def callgate_check_permission(call: ToolCall, tool: ToolSpec, session: Any) -> Decision | None:
    """An install_source apply with a high-risk action (an MCP server, a skill with code)
    always asks, whatever the rules allow (ask outranks allow)."""
    if tool.name != INSTALL_SOURCE.name or tool.execute is not INSTALL_SOURCE.execute:
        return None
    args = call.arguments if isinstance(call.arguments, dict) else {}
    return _install_source.permission(session, args)
