"""callgate's ``slash_command`` tool: custom slash commands where Claude Code keeps them.

``.callgate/commands`` and ``.claude/commands`` of the workspace, ``<state>/commands``
and ``~/.claude/commands`` (``*.md``, sub folders as ``a:b``, ``$ARGUMENTS``/``$1``..``$9``/
``$$``), skills of the skills plugin as commands, and prompts of the capability plugin's
MCP servers as ``mcp:<server>:<prompt>`` (listed from what an earlier connect saw;
expanded after the same gate as a connect). Hidden by default.

``session.extension(COMMAND_NAMES)()`` is every name the tool answers to (install_skill refuses
those).

Entry point: ``[project.entry-points.callgate] commands = "callgate_commands"``.
"""

from typing import TYPE_CHECKING, Any

from .plugin import (
    COMMAND_NAMES,
    SLASH_COMMAND,
    callgate_check_permission,
    callgate_register_tools,
)

if TYPE_CHECKING:
    from ._sources import Command, command_dirs, discover


def __getattr__(name: str) -> Any:
    """`Command`, `command_dirs` and `discover`, imported on first use: the discovery is no
    part of registering (issue 38)."""
    if name not in ("Command", "command_dirs", "discover"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _sources

    return getattr(_sources, name)


__all__ = [
    "COMMAND_NAMES",
    "SLASH_COMMAND",
    "Command",
    "callgate_check_permission",
    "callgate_register_tools",
    "command_dirs",
    "discover",
]
