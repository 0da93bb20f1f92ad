"""The skills plugin's hook implementations: config, `SKILLS`, tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from callgate import Decision, ToolCall, ToolSpec, hookimpl

from ._keys import SKILLS
from .config import CONFIG_SCHEMA
from .tools.specs import (
    INSTALL_SKILL_SPEC,
    INSTALL_SOURCE_SPEC,
    READ_ONLY_SPEC,
    READ_SKILL_SPEC,
    RUN_SPEC,
)

if TYPE_CHECKING:
    from ._session import SessionSkills

# declared data: each tool's module is imported by its first call (callgate.deferred)
TOOLS = (READ_SKILL_SPEC, INSTALL_SKILL_SPEC, INSTALL_SOURCE_SPEC, RUN_SPEC, READ_ONLY_SPEC)
INSTALL_SOURCE = INSTALL_SOURCE_SPEC
#: never in a strict read-only child (read_only_skill nests: its children are strict too)
STRICT_DENIED = ("run_skill", "install_skill", "install_source")


def _session_skills(session: Any) -> SessionSkills:
    """The session's skills: the catalog is imported when a session opens (issue 38)."""
    from ._session import SessionSkills

    return SessionSkills(session)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_config("skills", CONFIG_SCHEMA)
    registry.add_session_extension(SKILLS, _session_skills)
    registry.deny_in_read_only_children(*STRICT_DENIED)
    for spec in TOOLS:
        registry.add(spec)


@hookimpl
def callgate_check_permission(call: ToolCall, tool: ToolSpec, session: Any) -> Decision | None:
    """An install_source apply with a high-risk action (an MCP server, a skill with code)
    always asks, whatever the rules allow (ask outranks allow)."""
    if tool.name != INSTALL_SOURCE.name or tool.execute is not INSTALL_SOURCE.execute:
        return None
    from .tools import install_source

    args = call.arguments if isinstance(call.arguments, dict) else {}
    return install_source.permission(session, args)
