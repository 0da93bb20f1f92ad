"""The tasks plugin's hook implementations: the runner hook spec, config, records, tools,
and ending a closing session's background fleets."""

from __future__ import annotations

from typing import Any

from callgate import hookimpl

from . import hookspecs
from ._book import SUBAGENTS, SubagentBook
from .config import CONFIG_SCHEMA
from .tools.builtin import TOOLS as PROFILE_TOOLS
from .tools.fleet import FLEET_TOOLS, FLEETS, FleetBook
from .tools.task import TOOLS

#: What a strict read-only child never runs, whatever a tool's read-only flag says
#: (full-boot-surface.md "Strict read-only child"): questions to the user, todo lists,
#: slash commands, installs, fleets, background jobs and the recursive writers.
STRICT_DENIED = (
    "ask", "todo_write", "complete_step", "slash_command", "install_*", "connect_tool_source",
    "fleet", "parallel_tasks", "task", "run_skill", "job_output", "job_kill", "bash_output",
    "kill_shell", "wait", "set_session_title", "remember", "forget",
)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_hookspecs(hookspecs)
    registry.add_config("tasks", CONFIG_SCHEMA)
    registry.add_session_extension(SUBAGENTS, SubagentBook)
    registry.add_session_extension(FLEETS, FleetBook)
    registry.deny_in_read_only_children(*STRICT_DENIED, "fleet_output")
    for spec in (*TOOLS, *PROFILE_TOOLS, *FLEET_TOOLS):
        registry.add(spec)


@hookimpl
def callgate_session_end(session: Any) -> None:
    """Cancel the session's background fleets and wait (bounded) for their children."""
    session.extension(FLEETS).close()
