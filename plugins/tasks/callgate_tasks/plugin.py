"""The tasks plugin's hook implementations: the runner hook spec, config, records, tools,
and ending a closing session's background fleets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from callgate import hookimpl

from . import hookspecs
from ._keys import FLEETS, SUBAGENTS
from .config import CONFIG_SCHEMA
from .tools.specs import FLEET_TOOLS, PROFILE_TOOLS, TOOLS

if TYPE_CHECKING:
    from ._book import SubagentBook
    from .tools.fleet import FleetBook

#: What a strict read-only child never runs, whatever a tool's read-only flag says
#: (full-boot-surface.md "Strict read-only child"): questions to the user, todo lists,
#: slash commands, installs, fleets, background jobs and the recursive writers.
STRICT_DENIED = (
    "ask", "todo_write", "complete_step", "slash_command", "install_*", "connect_tool_source",
    "fleet", "parallel_tasks", "task", "run_skill", "job_output", "job_kill", "bash_output",
    "kill_shell", "wait", "set_session_title", "remember", "forget",
)


def _subagent_book(session: Any) -> SubagentBook:
    """The session's subagent records: the book is imported when a session opens (issue 38)."""
    from ._book import SubagentBook

    return SubagentBook(session)


def _fleet_book(session: Any) -> FleetBook:
    """The session's fleets: the scheduler is imported when a session opens (issue 38)."""
    from .tools.fleet import FleetBook

    return FleetBook(session)


@hookimpl
def callgate_register_tools(registry: Any) -> None:
    registry.add_hookspecs(hookspecs)
    registry.add_config("tasks", CONFIG_SCHEMA)
    registry.add_session_extension(SUBAGENTS, _subagent_book)
    registry.add_session_extension(FLEETS, _fleet_book)
    registry.deny_in_read_only_children(*STRICT_DENIED, "fleet_output")
    for spec in (*TOOLS, *PROFILE_TOOLS, *FLEET_TOOLS):
        registry.add(spec)


@hookimpl
def callgate_session_end(session: Any) -> None:
    """Cancel the session's background fleets and wait (bounded) for their children."""
    session.extension(FLEETS).close()
