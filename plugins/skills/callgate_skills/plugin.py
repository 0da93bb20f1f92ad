"""The skills plugin's hook implementations: config, `SKILLS`, tools."""

from __future__ import annotations

from typing import Any

from callgate import Decision, ToolCall, ToolSpec, hookimpl

from ._session import SKILLS, SessionSkills
from .config import CONFIG_SCHEMA
from .tools import install_skill, install_source, read_skill, run_skill

TOOLS = (read_skill.SPEC, install_skill.SPEC, install_source.SPEC, run_skill.RUN_SPEC,
         run_skill.READ_ONLY_SPEC)
INSTALL_SOURCE = install_source.SPEC
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
    return install_source.permission(session, args)
