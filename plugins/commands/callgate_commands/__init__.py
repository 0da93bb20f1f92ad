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

from ._sources import Command, command_dirs, discover
from .plugin import (
    COMMAND_NAMES,
    SLASH_COMMAND,
    callgate_check_permission,
    callgate_register_tools,
)

__all__ = [
    "COMMAND_NAMES",
    "SLASH_COMMAND",
    "Command",
    "callgate_check_permission",
    "callgate_register_tools",
    "command_dirs",
    "discover",
]
