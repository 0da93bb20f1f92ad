"""``slash_command`` as declared data: name, description, schema and flags, with its code named
by `callgate.deferred` (issue 38). Registering the plugin imports this module and neither the
command discovery nor the MCP prompts client; ``tools/slash_command.py`` is imported by the
first call."""

from __future__ import annotations

from typing import Any

from callgate import ToolSpec, deferred

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "command": {
            "type": "string",
            "maxLength": 300,
            "description": "The command's name (a leading / is fine), e.g. review-pr "
            "or frontend:lint or mcp:<server>:<prompt>. Empty or list: "
            "the list of commands.",
        },
        "arguments": {
            "type": "string",
            "maxLength": 20000,
            "description": "The text after the command; fills $ARGUMENTS and "
            "$1..$9 (or the MCP prompt's arguments, in order, or as "
            "key=value).",
        },
    },
}


DESCRIPTION = (
    "Slash commands: with no command (or list), the commands, skills and MCP prompts there "
    "are, with their arguments; with a command, its expanded prompt, which you then follow. "
    "Only expanding an MCP prompt (mcp:<server>:<prompt>) starts anything: that server."
)


SLASH_COMMAND = ToolSpec(
    name="slash_command",
    description=DESCRIPTION,
    schema=SCHEMA,
    execute=deferred("callgate_commands.tools.slash_command:run_slash_command"),
    read_only=deferred("callgate_commands.tools.slash_command:is_read_only"),
    destructive=False,
    groups=("commands",),
)
