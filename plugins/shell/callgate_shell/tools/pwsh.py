"""The ``pwsh`` tool (Windows hosts): one PowerShell command per call in its own process."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from callgate import PermissionSubject, ToolContext, ToolSpec, Violation, deferred

from .._describe import file_tools_advice
from ..pwsh_dialect import (
    CHAIN_MESSAGE,
    build_argv,
    build_script,
    find_chain_operator,
    is_windows_powershell,
)
from .schema import command_schema

#: the runner's check (imported by the first validation, not while the plugin registers)
_BLANK = deferred("callgate_shell.tools.command:blank_command")

#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
PWSH_KNOWN_AS = (
    "PowerShell", "shell", "terminal", "run_shell_command", "execute_command", "run_command",
    "exec_command", "local_shell", "run_terminal_cmd", "bash", "sh", "cmd",
)

_LEAD = (
    "Windows shell: run one PowerShell command in a fresh, isolated process and get back its "
    "output and errors combined, followed by a status line with the exit code. description "
    "is required: a few words saying what the command does. timeout_ms (default 120000, at "
    "most 600000) applies to foreground commands and ends the whole process tree; "
    "run_in_background=true returns a pwsh-N job id at once (read it with job_output, stop it "
    "with job_kill). Write Windows PowerShell 5.1-compatible commands: chain with ';' and "
    "'if ($?) { ... }' rather than '&&' and '||'."
)


def describe(registered: frozenset[str], visible: frozenset[str]) -> str:
    """pwsh's description on this host: the file tools it really has, and how to reach them."""
    return _LEAD + file_tools_advice(registered, visible,
                                     "Select-String, Get-Content, Get-ChildItem or Move-Item")


#: The description on a host with every file tool on the surface.
DESCRIPTION = describe(frozenset(), frozenset({"grep", "glob", "ls", "read_file", "edit_file",
                                               "move_file"}))


def pwsh_argv(executable: str, command: str) -> list[str]:
    return build_argv(executable, build_script(command))


def pwsh_tool(executable: str, platforms: Iterable[str] = ("windows",)) -> ToolSpec:
    """The ``pwsh`` tool, running ``executable``; a ``powershell(.exe)`` gets the 5.1 check."""
    legacy = is_windows_powershell(executable)

    def validate(ctx: ToolContext, args: dict[str, Any]) -> list[Violation]:
        found = _BLANK(ctx, args)
        if not found and legacy and find_chain_operator(args["command"]):
            found.append(Violation("/command", "powershell_5_1",
                                   f"syntax that Windows PowerShell 5.1 parses: {CHAIN_MESSAGE}"))
        return found

    return ToolSpec(
        name="pwsh", known_as=PWSH_KNOWN_AS,
        description=DESCRIPTION,
        describe=describe,
        schema=command_schema(description_required=True),
        execute=deferred("callgate_shell.tools.command:run_shell", "pwsh", executable),
        read_only=False,
        visibility="surface",
        surface_order=10,
        validate=validate,
        permission_subject=PermissionSubject("command", ("command",), dialect="pwsh"),
        groups=("Bash",),
        platforms=frozenset(platforms),
    )
